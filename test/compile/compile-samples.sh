#!/usr/bin/env bash
# Rewrites every sample and compiles original and rewritten with nvcc, as
# users build them (relocatable device code for dynamic parallelism). No GPU
# is needed. Usage: compile-samples.sh <cuda-rewrite> <work dir>
set -uo pipefail
tool=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
flags=(-O3 -arch=sm_90 -rdc=true -I "$root/samples/common" -I "$root/runtime/include")
passed=0
failed=0
rm -rf "$work" && mkdir -p "$work"
for sample in "$root"/samples/*/*.cu; do
  name=$(basename "$(dirname "$sample")")/$(basename "$sample" .cu)
  out="$work/$name.rewritten.cu"
  mkdir -p "$(dirname "$out")"
  if "$tool" "$sample" -o "$out" -- -I "$root/samples/common" -I "$root/runtime/include" &&
     "$nvcc" "${flags[@]}" "$sample" -o "$work/$name.original" -lcudadevrt &&
     "$nvcc" "${flags[@]}" "$out" -o "$work/$name.rewritten" -lcudadevrt; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
