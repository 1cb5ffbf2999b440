#!/bin/bash
# Clause sweep of systolic (or, named <pass>/<name>, other passes')
# samples: rewrites each sample with the given
# clauses in its pragma (stage, on the machine with the tool), then builds and
# runs every rewritten file and prints one line per file (run, on the GPU
# machine). A word of CLAUSES is one configuration; commas join clauses.
#
#   bench/experiments/clause_sweep.sh stage "3d7pt 3d13pt" "p(2) p(4) p(8)" [float double]
#   bench/experiments/clause_sweep.sh stage "2d5pt" "vector(1) vector(4),p(8)"
#   bench/experiments/clause_sweep.sh stage "fuse/harris" "tile(1,4) tile(2,8)"
#   bench/experiments/clause_sweep.sh run [OUTDIR]
#
# Staged files: build-bench/sweep/<name>.<clauses>.<type>.cu, clauses with
# their parentheses and commas turned into letters (carry build-bench/sweep).
set -u
Dir=build-bench/sweep
Tool=${CUDA_REWRITE:-build/tool/cuda-rewrite}
case "$1" in
stage)
  rm -rf "$Dir" && mkdir -p "$Dir"
  Types="${*:4}"
  for Sample in $2; do
    Pass=systolic
    Name=$Sample
    if [[ $Sample == */* ]]; then
      Pass=${Sample%%/*}
      Name=${Sample#*/}
    fi
    for Clauses in $3; do
      Tag=$(echo "$Clauses" | tr '(),' '__-' | tr -d '_')
      # tile(1,4) is one clause; a comma after a parenthesis joins two.
      Pragma=$(echo "$Clauses" | sed 's/),/) /g')
      sed "s/^#pragma cuda_rewrite $Pass.*/#pragma cuda_rewrite $Pass $Pragma/" \
        "samples/$Pass/$Name.cu" >"$Dir/src.cu"
      for T in ${Types:-float}; do
        "$Tool" "$Dir/src.cu" -o "$Dir/$Name.$Tag.$T.cu" -- -I samples/common \
          -I runtime/include -DSAMPLE_REAL=$T ||
          echo "clause_sweep: $Name $Clauses $T refused"
      done
    done
  done
  rm -f "$Dir/src.cu"
  ls "$Dir" | wc -l
  ;;
run)
  Out=${2:-/tmp}
  for F in "$Dir"/*.cu; do
    B=$(basename "$F" .cu)
    T=${B##*.}
    nvcc -O2 -arch=sm_90 -I samples/common -I runtime/include -DSAMPLE_REAL=$T \
      -o "/tmp/$B" "$F" &
  done
  wait
  for F in "$Dir"/*.cu; do
    B=$(basename "$F" .cu)
    R=$("/tmp/$B" 2>&1 | tee -a "$Out/sweep.log" | grep '^RESULT')
    printf '%-28s %s\n' "$B" "$(echo "$R" | grep -o 'median_ms=[^ ]*\|status=[^ ]*' | tr '\n' ' ')"
  done
  ;;
esac
