#!/bin/bash
# P sweep of systolic samples: rewrites each sample with `p(N)` added to its
# pragma (stage, on the machine with the tool), then builds and runs every
# rewritten file and prints one line per file (run, on the GPU machine).
#
#   bench/experiments/p_sweep.sh stage "3d7pt 3d13pt" "2 4 8" [float double]
#   bench/experiments/p_sweep.sh run [OUTDIR]
#
# Staged files: build-bench/sweep/<name>.p<N>.<type>.cu (carry build-bench/sweep).
set -u
Dir=build-bench/sweep
Tool=${CUDA_REWRITE:-build/tool/cuda-rewrite}
case "$1" in
stage)
  rm -rf "$Dir" && mkdir -p "$Dir"
  Types="${*:4}"
  for Name in $2; do
    for P in $3; do
      sed "s/^#pragma cuda_rewrite systolic.*/#pragma cuda_rewrite systolic p($P)/" \
        "samples/systolic/$Name.cu" >"$Dir/src.cu"
      for T in ${Types:-float}; do
        "$Tool" "$Dir/src.cu" -o "$Dir/$Name.p$P.$T.cu" -- -I samples/common \
          -DSAMPLE_REAL=$T || echo "p_sweep: $Name p($P) $T refused"
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
    nvcc -O2 -arch=sm_90 -I samples/common -DSAMPLE_REAL=$T -o "/tmp/$B" "$F" &
  done
  wait
  for F in "$Dir"/*.cu; do
    B=$(basename "$F" .cu)
    R=$("/tmp/$B" 2>&1 | tee -a "$Out/sweep.log" | grep '^RESULT')
    printf '%-24s %s\n' "$B" "$(echo "$R" | grep -o 'median_ms=[^ ]*\|status=[^ ]*' | tr '\n' ' ')"
  done
  ;;
esac
