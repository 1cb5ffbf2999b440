#!/usr/bin/env bash
# Rewrites every sample and compiles original and rewritten with nvcc, as
# users build them (relocatable device code for dynamic parallelism). No GPU
# is needed. Aggregate samples are rewritten at each granularity; one the
# tool refuses (it says why in a remark) is skipped, one it fails on is a
# failure. Usage: compile-samples.sh <cuda-rewrite> <work dir>
set -uo pipefail
tool=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
includes=(-I "$root/samples/common" -I "$root/runtime/include")
flags=(-O3 -arch=sm_90 -rdc=true "${includes[@]}")
passed=0
failed=0
rm -rf "$work" && mkdir -p "$work"

# compile <source> <binary>
compile() {
  "$nvcc" "${flags[@]}" "$1" -o "$2" -lcudadevrt
}

# check <name> <ok?>
check() {
  if [ "$2" -eq 0 ]; then
    echo "PASS $1"
    passed=$((passed + 1))
  else
    echo "FAIL $1"
    failed=$((failed + 1))
  fi
}

for sample in "$root"/samples/*/*.cu; do
  pass=$(basename "$(dirname "$sample")")
  name=$pass/$(basename "$sample" .cu)
  mkdir -p "$work/$pass"
  compile "$sample" "$work/$name.original"
  check "$name original" $?
  variants=(default)
  [ "$pass" = aggregate ] && variants=(warp block kernel)
  for variant in "${variants[@]}"; do
    option=()
    [ "$variant" != default ] && option=(--aggregate-granularity="$variant")
    out="$work/$name.$variant.cu"
    if ! "$tool" --remarks "${option[@]}" "$sample" -o "$out" -- \
        "${includes[@]}" 2>"$out.log"; then
      check "$name $variant (tool failed: $(grep -m1 error "$out.log"))" 1
      continue
    fi
    if [ "$variant" != default ] && ! grep -q "remark: rewritten: .*\[aggregate\]" "$out.log"; then
      echo "SKIP $name $variant (refused: $(grep -m1 'not rewritten: .*\[aggregate\]' "$out.log" | sed 's/.*not rewritten: //'))"
      continue
    fi
    compile "$out" "$work/$name.$variant"
    check "$name $variant" $?
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
