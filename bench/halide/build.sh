#!/usr/bin/env bash
# Builds the Halide peers of samples/fuse/ (bench/halide/README.md).
#
#   bench/halide/build.sh [--host-check] [NAME...]     # from anywhere
#   bench/halide/build.sh --drivers-only [NAME...]     # no Halide needed
#
# NAME: blur unsharp harris bilateral pyramid interpolate camera (default:
# all). For each, on a machine with Halide 14 (libhalide14-0-dev) and nvcc,
# no GPU needed:
#  1. compiles bench/halide/NAME_generator.cpp into build-bench/halide/gen/;
#  2. runs it to AOT-compile the pipeline for $CUDA_TARGET into
#     build-bench/halide/cuda/NAME.a and NAME.h (and NAME.stmt, the lowered
#     pipeline with its PTX, to read), once Halide's runtime for that target
#     (cuda/halide_runtime.a) and Halide's two runtime headers beside them;
#  3. links bench/halide/NAME_run.cu with both into build-bench/halide/NAME,
#     the binary to run on the GPU machine (Halide is inside; it needs only
#     the driver's libcuda.so.1, glibc >= 2.34 and a libstdc++ of GCC >= 11).
# With all seven, it then builds and runs build-bench/halide/dry_run, which
# runs the host side of every CUDA pipeline against a stand-in for libcuda:
# every bounds check and constraint of the GPU schedules, every launch's
# grid, block and shared memory checked against the GPU's limits.
#
# --host-check also builds every pipeline for the host CPU
# (build-bench/halide/host/, with a plain CPU schedule) with its driver in
# host mode (-DHLBENCH_HOST) and runs it once (--seed=1 at the default size;
# HOST_CHECK_ARGS adds arguments) against the sample's float64 reference:
# it checks the algorithm, which a schedule cannot change.
#
# --drivers-only relinks only step 3, from the .a and .h files already in
# build-bench/halide/cuda/: on the GPU machine, should the binaries built
# here not load there (an older glibc or libstdc++), carry
# build-bench/halide/cuda and run this with that machine's nvcc.
#
# Environment: HALIDE_INCLUDE (/usr/include/halide14), HALIDE_LIB (-lHalide14),
# GENGEN (/usr/src/halide14/GenGen.cpp), NVCC, CXX (g++), JOBS (nproc),
# CUDA_TARGET, HOST_TARGET, NVCC_ARCH (sm_90).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

ALL_NAMES="blur unsharp harris bilateral pyramid interpolate camera"
HOST_CHECK=0
DRIVERS_ONLY=0
NAMES=()
for Arg in "$@"; do
  case "$Arg" in
    --host-check) HOST_CHECK=1 ;;
    --drivers-only) DRIVERS_ONLY=1 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    -*) echo "build.sh: unknown option $Arg" >&2; exit 2 ;;
    *) NAMES+=("$Arg") ;;
  esac
done
[ ${#NAMES[@]} -gt 0 ] || read -r -a NAMES <<<"$ALL_NAMES"
for N in "${NAMES[@]}"; do
  [ -f "bench/halide/${N}_run.cu" ] || { echo "build.sh: unknown pipeline $N" >&2; exit 2; }
done
if [ $DRIVERS_ONLY = 1 ] && [ $HOST_CHECK = 1 ]; then
  echo "build.sh: --host-check needs Halide: not with --drivers-only" >&2; exit 2
fi

export HALIDE_INCLUDE=${HALIDE_INCLUDE:-/usr/include/halide14}
export HALIDE_LIB=${HALIDE_LIB:--lHalide14}
export GENGEN=${GENGEN:-/usr/src/halide14/GenGen.cpp}
export CXX=${CXX:-g++}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export NVCC
export NVCC_ARCH=${NVCC_ARCH:-sm_90}
export CUDA_TARGET=${CUDA_TARGET:-x86-64-linux-avx-avx2-f16c-fma-sse41-cuda-cuda_capability_86}
export HOST_TARGET=${HOST_TARGET:-x86-64-linux-avx-avx2-f16c-fma-sse41}
JOBS=${JOBS:-$(nproc)}
export OUT=build-bench/halide
mkdir -p "$OUT/cuda" "$OUT/logs"

# Runs "$@" with its output in $OUT/logs/<log>.log; prints the log on failure.
logged() {
  local Log="$OUT/logs/$1.log"; shift
  if ! "$@" >"$Log" 2>&1; then
    echo "build.sh: FAILED: $*" >&2
    tail -n 40 "$Log" >&2
    return 1
  fi
}
export -f logged

# 1. A generator (one process each: Halide.h is slow to compile).
gen_one() {
  local N=$1
  logged "gen-$N" "$CXX" -std=c++17 -O1 -fno-rtti -I"$HALIDE_INCLUDE" -Ibench/halide \
    "bench/halide/${N}_generator.cpp" "$GENGEN" -o "$OUT/gen/${N}_gen" \
    $HALIDE_LIB -ldl -lpthread
}
export -f gen_one

# 2. A pipeline: NAME.a (without Halide's runtime), NAME.h, NAME.stmt for
# TARGET into DIR.
aot_one() {
  local N=$1 Dir=$2 Target=$3
  logged "aot-$N-$(basename "$Dir")" "$OUT/gen/${N}_gen" -g "$N" -o "$Dir" \
    -e static_library,h,stmt "target=$Target-no_runtime"
}
export -f aot_one

# 3. A driver: the GPU binary, or the host check.
driver_one() {
  local N=$1 Mode=$2
  if [ "$Mode" = cuda ]; then
    logged "driver-$N" "$NVCC" -O3 -std=c++17 -arch="$NVCC_ARCH" \
      -Isamples/common -Iruntime/include -I"$OUT/cuda" -Ibench/halide \
      "bench/halide/${N}_run.cu" "$OUT/cuda/$N.a" "$OUT/cuda/halide_runtime.a" \
      -o "$OUT/$N" -Xlinker --no-as-needed -lcuda -ldl -lpthread
  else
    logged "driver-$N-host" "$NVCC" -O3 -std=c++17 -arch="$NVCC_ARCH" -DHLBENCH_HOST \
      -Isamples/common -Iruntime/include -I"$OUT/host" -Ibench/halide \
      "bench/halide/${N}_run.cu" "$OUT/host/$N.a" "$OUT/host/halide_runtime.a" \
      -o "$OUT/host/${N}_check" -ldl -lpthread
  fi
}
export -f driver_one

# One line per pipeline, "NAME $1", and with --host-check also "NAME $2":
# the jobs of steps 2 and 3.
jobs_of() {
  for N in "${NAMES[@]}"; do
    echo "$N $1"
    if [ $HOST_CHECK = 1 ]; then echo "$N $2"; fi
  done
}

if [ $DRIVERS_ONLY = 0 ]; then
  [ -f "$HALIDE_INCLUDE/Halide.h" ] || {
    echo "build.sh: no $HALIDE_INCLUDE/Halide.h: apt-get install -y libhalide14-0-dev" >&2; exit 1; }
  mkdir -p "$OUT/gen"
  if [ $HOST_CHECK = 1 ]; then mkdir -p "$OUT/host"; fi

  echo "build.sh: generators: ${NAMES[*]} (logs in $OUT/logs)"
  printf '%s\n' "${NAMES[@]}" | xargs -P "$JOBS" -I{} bash -c 'gen_one {}'

  # Halide's runtime and its headers, once per target (any generator emits
  # the runtime).
  First=${NAMES[0]}
  logged runtime-cuda "$OUT/gen/${First}_gen" -r halide_runtime -o "$OUT/cuda" \
    -e static_library "target=$CUDA_TARGET" &
  cp "$HALIDE_INCLUDE/HalideRuntime.h" "$HALIDE_INCLUDE/HalideRuntimeCuda.h" "$OUT/cuda/"
  if [ $HOST_CHECK = 1 ]; then
    logged runtime-host "$OUT/gen/${First}_gen" -r halide_runtime -o "$OUT/host" \
      -e static_library "target=$HOST_TARGET" &
    cp "$HALIDE_INCLUDE/HalideRuntime.h" "$OUT/host/"
  fi

  echo "build.sh: AOT-compiling for $CUDA_TARGET"
  jobs_of "$OUT/cuda $CUDA_TARGET" "$OUT/host $HOST_TARGET" |
    xargs -P "$JOBS" -L1 bash -c 'aot_one "$0" "$1" "$2"'
  wait # The runtimes.
fi
for F in halide_runtime.a HalideRuntime.h HalideRuntimeCuda.h; do
  [ -f "$OUT/cuda/$F" ] || { echo "build.sh: no $OUT/cuda/$F: build without --drivers-only first" >&2; exit 1; }
done

echo "build.sh: drivers (nvcc -arch=$NVCC_ARCH)"
jobs_of cuda host | xargs -P "$JOBS" -L1 bash -c 'driver_one "$0" "$1"'
for N in "${NAMES[@]}"; do
  echo "build.sh: built $OUT/$N"
done

# ptxas's register and spill report of every kernel, for sm_90 (what the
# driver's JIT compiles the PTX into on an H100 or H200), where ptxas and
# python3 are at hand: logs/ptxas-NAME.log, one summary line per pipeline.
PTXAS=${PTXAS:-$(dirname "$NVCC")/ptxas}
if [ $DRIVERS_ONLY = 0 ] && [ -x "$PTXAS" ] && command -v python3 >/dev/null; then
  for N in "${NAMES[@]}"; do
    python3 - "$OUT/cuda/$N.stmt" "$OUT/logs/$N.ptx" <<'PY'
import sys
s = open(sys.argv[1], errors="replace").read()
b = s.find("// Generated by LLVM NVPTX Back-End")
e = s.rfind("// -- End function")
e = s.find("\n", s.find("}", e)) + 1
ptx = s[b:e].replace(".target sm_86", ".target sm_90").replace(".version 7.1", ".version 7.8")
open(sys.argv[2], "w").write(ptx)
PY
    if "$PTXAS" -arch=sm_90 -O3 -v "$OUT/logs/$N.ptx" -o /dev/null >"$OUT/logs/ptxas-$N.log" 2>&1; then
      Regs=$(grep -o 'Used [0-9]* registers' "$OUT/logs/ptxas-$N.log" | awk '{print $2}' | sort -n | tail -1)
      Spills=$(grep -o '[0-9]* bytes spill stores' "$OUT/logs/ptxas-$N.log" | awk '{s+=$1} END {print s+0}')
      echo "build.sh: $N: $(grep -c 'Used' "$OUT/logs/ptxas-$N.log") kernels, at most $Regs registers per thread, $Spills bytes of spill stores (ptxas sm_90)"
    else
      echo "build.sh: $N: ptxas could not compile the PTX for sm_90 (logs/ptxas-$N.log); not an error for the build"
    fi
  done
fi

# The dry run of the CUDA pipelines' host side, when all seven are there.
if [ $DRIVERS_ONLY = 0 ] && [ "${NAMES[*]}" = "$ALL_NAMES" ]; then
  logged dry_run-build "$CXX" -std=c++17 -O1 -I"$OUT/cuda" bench/halide/dry_run.cpp \
    "$OUT"/cuda/{blur,unsharp,harris,bilateral,pyramid,interpolate,camera}.a \
    "$OUT/cuda/halide_runtime.a" -rdynamic -ldl -lpthread -o "$OUT/dry_run"
  if "$OUT/dry_run" >"$OUT/logs/dry_run.log" 2>&1; then
    echo "build.sh: dry run of the CUDA pipelines' host side passed ($OUT/logs/dry_run.log)"
  else
    cat "$OUT/logs/dry_run.log" >&2
    echo "build.sh: dry run FAILED" >&2
    exit 1
  fi
fi

if [ $HOST_CHECK = 1 ]; then
  Status=0
  for N in "${NAMES[@]}"; do
    echo "build.sh: host check: $OUT/host/${N}_check --seed=1 ${HOST_CHECK_ARGS:-}"
    # shellcheck disable=SC2086
    "$OUT/host/${N}_check" --seed=1 ${HOST_CHECK_ARGS:-} >"$OUT/logs/check-$N.log" 2>&1 || Status=1
    grep -E '^RESULT|first bad|error' "$OUT/logs/check-$N.log" || true
    grep -q 'status=ok' "$OUT/logs/check-$N.log" || Status=1
  done
  if [ $Status = 0 ]; then echo "build.sh: host checks passed"; else echo "build.sh: host check FAILED" >&2; exit 1; fi
fi
