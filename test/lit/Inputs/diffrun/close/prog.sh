# Rewritten: the same results to a few ulps, another timing.
printf '1.0\n2.0000000001\n3.0\n' > prog.out
echo "sum 6.0000000001"
echo "kernel time 1.2 ms"
