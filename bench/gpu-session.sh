#!/usr/bin/env bash
# Everything this project runs on the GPU machine, in one call (device time
# is scarce): the runtime's GPU tests, the GPU probe, and the benchmark
# driver over the samples rewritten here by bench/stage.sh (carried in
# build-bench/rewritten). Logs and results go to $1 (default $OUT).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:?give an output directory}}
mkdir -p "$out/bench"
export PATH=/usr/local/cuda/bin:$PATH
status=0

echo "== runtime GPU tests"
{ cmake -S test/gpu -B /tmp/cr-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  ninja -C /tmp/cr-gpu &&
  ctest --test-dir /tmp/cr-gpu --output-on-failure; } >"$out/gpu-tests.log" 2>&1 || status=1
grep -E "passed, .* failed|tests passed|FAIL" "$out/gpu-tests.log" | tail -12

echo "== GPU probe"
{ nvcc -O2 -arch=sm_90 -o /tmp/cr-probe tool/probe/cuda-rewrite-probe.cu &&
  /tmp/cr-probe "$out/gpu-spec.json"; } >"$out/probe.log" 2>&1 || status=1
cat "$out/gpu-spec.json" 2>/dev/null || tail -5 "$out/probe.log"

echo "== bench"
python3 bench/run.py --gpu-spec "$out/gpu-spec.json" --log-dir "$out/bench" || status=1
exit $status
