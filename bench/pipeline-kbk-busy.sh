#!/usr/bin/env bash
# Where KBK's time goes, per staged pipeline sample: builds each rewritten
# sample that bench/stage.sh staged, runs it under the kbk and megakernel
# models with CUDA_REWRITE_PIPELINE_TIMES, and prints, from the median run,
# KBK's rounds, the time its kernels kept the GPU busy (busy_ms) and what the
# host round trips cost (kbk ms - busy ms): the most a persistent model saves
# by removing them.
#
#   bash bench/pipeline-kbk-busy.sh [--seed=N] [SAMPLE[:ARGS]...]
#
# e.g. `pyramid:32` runs pyramid with 32 frames. Default: every staged sample.
set -uo pipefail
cd "$(dirname "$0")/.."
seed=--seed=1
specs=()
for a in "$@"; do
  case $a in
  --seed=*) seed=$a ;;
  *) specs+=("$a") ;;
  esac
done
staged=build-bench/rewritten/megakernel/pipeline
build=/tmp/cr-pipeline-kbk
mkdir -p "$build"
[[ ${#specs[@]} -gt 0 ]] || specs=($(cd "$staged" && ls *.cu | sed 's/\.cu$//'))
printf '| sample | kbk ms | rounds | busy ms | round trips ms | us per round | megakernel ms |\n'
printf '|---|---|---|---|---|---|---|\n'
for spec in "${specs[@]}"; do
  name=${spec%%:*}
  args=""
  [[ $spec == *:* ]] && args=${spec#*:}
  exe=$build/$name
  [[ -x $exe ]] || nvcc -O3 -arch=sm_90 -rdc=true -I samples/common \
    -I runtime/include "$staged/$name.cu" -lcudadevrt -o "$exe" 2>&1 |
    grep -v "Stack size" >&2
  [[ -x $exe ]] || { echo "| $spec | build failed |"; continue; }
  for model in kbk megakernel; do
    rm -f "$build/$model.times"
    CUDA_REWRITE_PIPELINE_MODEL=$model \
      CUDA_REWRITE_PIPELINE_TIMES=$build/$model.times \
      "$exe" "$seed" $args > "$build/$name.$model.log" 2>&1 ||
      echo "$spec $model: FAILED (see $build/$name.$model.log)" >&2
  done
  python3 - "$spec" "$build/kbk.times" "$build/megakernel.times" <<'PY'
import statistics, sys
def runs(path):
    out = []
    for line in open(path):
        f = dict(w.split("=", 1) for w in line.split() if "=" in w)
        out.append(f)
    return out
kbk = sorted(runs(sys.argv[2]), key=lambda f: float(f["ms"]))
mid = kbk[len(kbk) // 2]
ms, busy, rounds = float(mid["ms"]), float(mid["busy_ms"]), int(mid["rounds"])
mega = statistics.median(float(f["ms"]) for f in runs(sys.argv[3]))
print(f"| {sys.argv[1]} | {ms:.3f} | {rounds} | {busy:.3f} | {ms - busy:.3f} "
      f"| {1000 * (ms - busy) / max(rounds, 1):.1f} | {mega:.3f} |")
PY
done
