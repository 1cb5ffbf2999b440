#!/usr/bin/env bash
# Rewrites every sample and compiles the rewritten files with nvcc, as users
# build them (relocatable device code for dynamic parallelism), and the
# original where no rewritten file contains it (below). No GPU
# is needed. Aggregate samples are rewritten at each granularity; one the
# tool refuses (it says why in a remark) is skipped, one it fails on is a
# failure. Every systolic sample must be rewritten (a refusal fails: the
# unchanged file would compile and prove nothing); one whose line
# `// bench-types: float double` lists more element types than float is also
# rewritten and compiled with -DSAMPLE_REAL=<type> for each other type.
# Fuse samples are rewritten once; one whose block keeps every stage
# separate (it says why) is skipped. Every pipeline sample must be
# rewritten (a refusal fails).
# Promote samples are rewritten in every variant (p, pa2, pa128, po,
# pao128): the script stages a copy whose `#pragma cuda_rewrite promote`
# line asks for the variant (the bench does the same). Plain P must be
# rewritten; another variant the tool refuses (it says why) is skipped.
# Every rewritten compile is also checked for registers (its own verdict,
# `<sample> <variant> (register bound)`): each kernel of the linked image
# must fit a block of the most threads it can be launched with, its
# __launch_bounds__ or else 1024 (check-registers.py says how), but for the
# kernels register-bound-known.txt lists (printed as known). nvcc reports the
# linked registers (--resource-usage) and keeps the PTX (-keep), which gives
# the bounds, from the compile the script makes anyway.
# A compile is whole (host compiler and link) for each sample's first
# rewrite (systolic: one sample of each family) and for an original no
# rewrite contains; the other variants and originals compile their device
# side only and link it against the device runtime: nvcc's front end still
# checks their host code, and the host compiler, which does not run, was 60%
# of each compile (compile_device).
# Usage: compile-samples.sh <cuda-rewrite> <work dir>
# SAMPLES='aggregate/* systolic/2d5pt' limits the run to the samples
# (<pass>/<name>) that match one of its patterns.
set -uo pipefail
tool=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
includes=(-I "$root/samples/common" -I "$root/runtime/include")
# No -O3: it only optimises host code, and whether that compiles does not
# depend on it; it cost a third of each compile. ptxas optimises device code
# at -O3 anyway.
flags=(-arch=sm_90 -rdc=true "${includes[@]}")
# The interpreter itself, looked up once: a version manager's python3 shim
# costs seconds a call on a loaded machine.
python=$(python3 -c 'import sys; print(sys.executable)')
passed=0
failed=0
rm -rf "$work" && mkdir -p "$work"

# compile <source> <binary> [<nvcc args>...]: the whole program, host
# compiler and link included.
compile() {
  local source=$1 binary=$2
  shift 2
  "$nvcc" "${flags[@]}" "$@" "$source" -o "$binary" -lcudadevrt
}

# compile_device <source> <binary> [<nvcc args>...]: the device side only,
# linked against the device runtime (nvlink reports the linked registers as
# in a whole compile). nvcc's front end still checks the host code, template
# instantiations included; the host compiler does not run, and it is most of
# a whole compile's time (bfs.kernel: 4.4 s against 11.6 s). Used where
# another compile of the sample checked the host side (below).
compile_device() {
  local source=$1 binary=$2 args=() report=() arg
  shift 2
  # The registers are final only once linked: the linker reports them.
  for arg in "$@"; do
    if [ "$arg" = --resource-usage ]; then
      report=(--resource-usage)
    else
      args+=("$arg")
    fi
  done
  "$nvcc" "${flags[@]}" "${args[@]}" -cubin "$source" -o "$binary.cubin" &&
    "$nvcc" -arch=sm_90 -dlink "$binary.cubin" -o "$binary.o" -lcudadevrt \
      "${report[@]}"
}

# Compiles run in the background, as many at a time as there are cores
# (COMPILE_JOBS overrides): nvcc dominates the script's time. Each job leaves
# its output and verdict in $results, read in order at the end.
jobs_max=${COMPILE_JOBS:-$(nproc)}
results=$work/.results
mkdir -p "$results"
job=0

# compile_checked [--device-only] [--registers] <name> <source> <binary>
#                 [<nvcc args>...]
# --device-only compiles with compile_device, else with compile. With
# --registers, a compile that passes is checked for registers too: a second
# verdict line. nvcc's report (<binary>.resources) and the PTX
# (<binary>.ptx) stay; its other kept intermediates are removed.
compile_checked() {
  local how=compile registers=
  if [ "$1" = --device-only ]; then
    how=compile_device
    shift
  fi
  if [ "$1" = --registers ]; then
    registers=1
    shift
  fi
  local name=$1 source=$2 binary=$3
  shift 3
  job=$((job + 1))
  local out
  out=$(printf '%s/%05d' "$results" "$job")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
    wait -n
  done
  (
    if [ -z "$registers" ]; then
      if "$how" "$source" "$binary" "$@" >"$out.log" 2>&1; then
        echo "PASS $name" >"$out"
      else
        echo "FAIL $name" >"$out"
      fi
      exit
    fi
    keep=$binary.keep
    rm -rf "$keep" && mkdir -p "$keep"
    "$how" "$source" "$binary" "$@" --resource-usage -keep --keep-dir "$keep" \
      >"$binary.resources" 2>&1
    status=$?
    # The log keeps nvcc's messages, not its report of every function.
    grep -v '^nvlink info *:' "$binary.resources" >"$out.log"
    if [ "$status" -ne 0 ]; then
      echo "FAIL $name" >"$out"
    else
      echo "PASS $name" >"$out"
      mv "$keep"/*.ptx "$binary.ptx"
      if "$python" "$root/test/compile/check-registers.py" --name "$name" \
          --known "$root/test/compile/register-bound-known.txt" \
          "$binary.resources" "$binary.ptx" >>"$out.log" 2>&1; then
        echo "PASS $name (register bound)" >>"$out"
      else
        echo "FAIL $name (register bound)" >>"$out"
      fi
    fi
    rm -rf "$keep"
  ) &
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

# The element types other than float that a sample's `// bench-types:`
# line lists (see bench/run.py), one a line.
extra_types() {
  sed -n 's|^// bench-types: ||p' "$1" | tr ' ' '\n' | grep -vx -e float -e ''
}

. "$root/scripts/promote-variants.sh"

# selected <pass>/<name>: whether SAMPLES (unset: every sample) names it.
selected() {
  [ -z "${SAMPLES:-}" ] && return 0
  local pattern patterns
  read -ra patterns <<<"$SAMPLES" # split, not expanded against files
  for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2053 # a pattern, on purpose
    [[ $1 == $pattern ]] && return 0
  done
  return 1
}

declare -A whole_families
for sample in "$root"/samples/*/*.cu; do
  pass=$(basename "$(dirname "$sample")")
  name=$pass/$(basename "$sample" .cu)
  selected "$name" || continue
  mkdir -p "$work/$pass"
  compiled_rewrite=0
  variants=(default)
  [ "$pass" = aggregate ] && variants=(warp block kernel)
  [ "$pass" = promote ] && variants=("${PROMOTE_VARIANTS[@]}")
  if [ "$pass" = systolic ]; then
    for type in $(extra_types "$sample"); do
      variants+=("$type")
    done
  fi
  # Other configurations the sample names (`// compile-defines: N=V`):
  # rewritten and compiled with -DN=V, each with the pass's default.
  for define in $(sed -n 's|^// compile-defines: ||p' "$sample"); do
    variants+=("define:$define")
  done
  # Whether the sample's first compiled rewrite is built whole (below).
  # Systolic's samples differ in their stencils, not in the host code made
  # for them (one launcher each, from one generator), so the host compiler
  # runs on one sample of each family: 2d, 2ds, 3d, conv (the name without
  # its size).
  whole_first=1
  if [ "$pass" = systolic ]; then
    family=$(basename "$sample" .cu | sed 's/[0-9x]*\(pt\)\{0,1\}$//')
    [ -n "${whole_families[$family]:-}" ] && whole_first=0
    whole_families[$family]=1
  fi
  for variant in "${variants[@]}"; do
    option=()
    defines=()
    case $pass/$variant in
    */default) ;;
    */define:*) defines=(-D"${variant#define:}") ;;
    aggregate/*) option=(--aggregate-granularity="$variant") ;;
    systolic/*) defines=(-DSAMPLE_REAL="$variant") ;;
    esac
    out="$work/$name.$variant.cu"
    input=$sample
    if [ "$pass" = promote ]; then
      input="$work/$name.$variant.input.cu"
      promote_variant_source "$variant" "$sample" "$input"
    fi
    if ! "$tool" --remarks "${option[@]}" "$input" -o "$out" -- \
        "${includes[@]}" "${defines[@]}" 2>"$out.log"; then
      check "$name $variant (tool failed: $(grep -m1 error "$out.log"))" 1
      continue
    fi
    if [ "$pass" = aggregate ] && ! grep -q "remark: rewritten: .*\[aggregate\]" "$out.log"; then
      echo "SKIP $name $variant (refused: $(grep -m1 'not rewritten: .*\[aggregate\]' "$out.log" | sed 's/.*not rewritten: //'))"
      continue
    fi
    if [ "$pass" = promote ] && ! grep -q "remark: rewritten: .*\[promote\]" "$out.log"; then
      why=$(grep -m1 'not rewritten: .*\[promote\]' "$out.log" | sed 's/.*not rewritten: //')
      if [ "$variant" = p ]; then
        check "$name $variant (not rewritten: $why)" 1
      else
        echo "SKIP $name $variant (refused: $why)"
      fi
      continue
    fi
    # A fuse block whose stages all stay separate (bilateral's grid) is
    # the same file again: nothing new to compile.
    if [ "$pass" = fuse ] && ! grep -q "remark: rewritten: .*\[fuse\]" "$out.log"; then
      echo "SKIP $name $variant (no stages fused: $(grep -m1 'not rewritten: .*\[fuse\]' "$out.log" | sed 's/.*not rewritten: //'))"
      continue
    fi
    if [ "$pass" = pipeline ] && ! grep -q "remark: rewritten: pipeline .*\[pipeline\]" "$out.log"; then
      check "$name $variant (not rewritten: $(grep -m1 'not rewritten: .*\[pipeline\]' "$out.log" | sed 's/.*not rewritten: //'))" 1
      continue
    fi
    if [ "$pass" = systolic ] && ! grep -q "remark: rewritten: .*\[systolic\]" "$out.log"; then
      check "$name $variant (not rewritten: $(grep -m1 'not rewritten: .*\[systolic\]' "$out.log" | sed 's/.*not rewritten: //'))" 1
      continue
    fi
    # Rewriting the tool's own output changes nothing (docs/design.md
    # section 2), --auto included; checked on each sample's first variant.
    if [ "$variant" = "${variants[0]}" ]; then
      if "$tool" --auto "$out" -o "$out.again.cu" -- "${includes[@]}" \
          "${defines[@]}" 2>"$out.again.log" && cmp -s "$out" "$out.again.cu"; then
        check "$name $variant (second run changes nothing)" 0
      else
        check "$name $variant (second run changed the file or failed)" 1
      fi
    fi
    # The rewritten file keeps the original kernel and the whole program, so
    # compiling it compiles the original in this element type too: the
    # double configurations skip a separate compile of the original. All 15
    # of them then add about a minute to the script's 7 (2 cores, measured);
    # the originals would add another.
    # The sample's first compiled rewrite is built whole (but see
    # whole_first); its other variants differ from it in device code
    # (aggregate's granularities, promote's pools) or in definitions
    # (element types), so their device side is compiled, linked and
    # checked, and nvcc's front end checks their host code without the host
    # compiler running again.
    whole=()
    if [ "$compiled_rewrite" -eq 1 ] || [ "$whole_first" -eq 0 ]; then
      whole=(--device-only)
    fi
    compile_checked "${whole[@]}" --registers "$name $variant" "$out" \
      "$work/$name.$variant" "${defines[@]}"
    compiled_rewrite=1
  done
  # The original on its own: where no rewrite of it was compiled, and for
  # aggregate, whose rewrite changes the parent kernels in place. The other
  # passes' rewritten files keep the original kernels and the whole program
  # beside the generated code, so their compile covers the original's: 56
  # compiles fewer, 6-8 s each on a quiet core (three samples, measured).
  # Where a rewrite was compiled whole, the original's host code is the
  # rewrite's, and its device side is enough.
  if [ "$pass" = aggregate ] || [ "$compiled_rewrite" -eq 0 ]; then
    whole=()
    [ "$compiled_rewrite" -eq 1 ] && whole=(--device-only)
    compile_checked "${whole[@]}" "$name original" "$sample" \
      "$work/$name.original"
  fi
done
wait
for verdict in "$results"/?????; do
  cat "$verdict.log"
  while read -r status name; do
    [ "$status" = PASS ]
    check "$name" $?
  done <"$verdict"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
