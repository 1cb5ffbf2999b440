#!/usr/bin/env bash
# Everything this project runs on the GPU machine, in one call (device time
# is scarce): the runtime's GPU tests, the GPU probe, and the benchmark
# driver over every sample that bench/stage.sh staged here (carried in
# build-bench/rewritten: each variant's file and stage.log), so a partial
# staging benches just those samples.
#
#   bash bench/gpu-session.sh [OUT [RUN.PY ARGS...]]
#
# Logs and results go to OUT (default $OUT); 6 files (7 if the probe failed
# and run.py probed again), within the 8 that come back. Extra arguments go
# to bench/run.py, e.g. `aggregate --run-args=--reps=50`, `--strict` or
# `--part 2/4` (one of four calls: bench/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:?give an output directory}}
shift $(($# > 0))
mkdir -p "$out/bench"
export PATH=/usr/local/cuda/bin:$PATH
status=0

echo "== runtime GPU tests"
{ cmake -S test/gpu -B /tmp/cr-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  ninja -C /tmp/cr-gpu &&
  ctest --test-dir /tmp/cr-gpu --output-on-failure; } >"$out/gpu-tests.log" 2>&1 || status=1
grep -E "passed, .* failed|tests passed|FAIL" "$out/gpu-tests.log" | tail -12

echo "== GPU probe"
{ nvcc -O2 -arch=sm_90 -o /tmp/cr-probe gpu/probe/cuda-rewrite-probe.cu &&
  /tmp/cr-probe "$out/gpu-spec.json"; } >"$out/probe.log" 2>&1 || status=1
cat "$out/gpu-spec.json" 2>/dev/null || tail -5 "$out/probe.log"

echo "== bench"
# Without a spec from the probe, run.py probes once more, or goes without.
spec=()
[[ -s $out/gpu-spec.json ]] && spec=(--gpu-spec "$out/gpu-spec.json")
python3 bench/run.py --staged "${spec[@]}" --log-dir "$out/bench" "$@" ||
  status=1
exit $status
