# A stand-in program: "builds" prog.out from values.txt and prints a result
# and a timing.
cp values.txt prog.out
echo "sum 6.0"
echo "kernel time 3.1 ms"
