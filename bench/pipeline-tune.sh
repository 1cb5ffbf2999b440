#!/usr/bin/env bash
# Tunes every staged pipeline sample on this GPU (scripts/pipeline-tune.py):
# builds each rewritten sample that bench/stage.sh staged, runs the tuner on
# it with the bench's input (--seed, default 1, and the sample's default
# size, or SAMPLE_ARGS) and writes build-bench/pipeline-tuned/<name>.cfg,
# which bench/run.py's "tuned" rows read. Prints one TUNED line per sample.
#
#   bash bench/pipeline-tune.sh [--seed=N] [SAMPLE...]
set -uo pipefail
cd "$(dirname "$0")/.."
seed=--seed=1
names=()
for a in "$@"; do
  case $a in
  --seed=*) seed=$a ;;
  *) names+=("$a") ;;
  esac
done
staged=build-bench/rewritten/megakernel/pipeline
out=build-bench/pipeline-tuned
build=/tmp/cr-pipeline-tune
mkdir -p "$out" "$build"
[[ ${#names[@]} -gt 0 ]] || names=($(cd "$staged" && ls *.cu | sed 's/\.cu$//'))
status=0
for name in "${names[@]}"; do
  exe=$build/$name
  nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include \
    "$staged/$name.cu" -lcudadevrt -o "$exe" 2>&1 | grep -v "Stack size" >&2
  [[ -x $exe ]] || { echo "TUNED pipeline/$name status=BUILD-FAIL"; status=1; continue; }
  python3 scripts/pipeline-tune.py --out "$out/$name.cfg" -- \
    "$exe" "$seed" ${SAMPLE_ARGS:-} | sed "s|^TUNED |TUNED sample=pipeline/$name |" ||
    status=1
done
exit $status
