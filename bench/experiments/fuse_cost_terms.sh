#!/bin/bash
# The calibration table of the fuse cost model: for each fuse sample and
# each tile/hybrid clause set, the model's seven terms (summed over the
# sample's fused groups, from CUDA_REWRITE_FUSE_COST_LOG) joined with the
# time a clause sweep measured on the GPU.
#
#   bench/experiments/fuse_cost_terms.sh TIMES.txt... > calibration.csv
#   bench/experiments/fuse_calibrate.py calibration.csv
#
# TIMES.txt: the lines build-bench/fuse-gpu/timing.sh (or sweep.sh) prints,
# `<sample>.<tag>.float ... median_ms=<ms>`, tags as clause_sweep.sh names
# them (tile2-8-hybrid0.5). A clause set under which the pass fuses fewer
# groups than under tile(1,8) (a group refused for its shared memory) is
# left out: its time includes unfused stages.
set -eu
Tool=${CUDA_REWRITE:-build/tool/cuda-rewrite}
Tmp=$(mktemp -d)
trap 'rm -rf "$Tmp"' EXIT
echo "sample,config,ms,t1,t2,t3,t4,t5,t6,t7"
# tile2-8-hybrid0.5 -> "tile(2,8) hybrid(0.5)"; tile1-8-2 -> "tile(1,8,2)"
clauses() {
  echo "$1" | sed -E 's/tile([0-9]+)-([0-9]+)-([0-9]+)/tile(\1,\2,\3)/;
    s/tile([0-9]+)-([0-9]+)($|-)/tile(\1,\2)\3/; s/-hybrid([0-9.]+)/ hybrid(\1)/'
}
groups() { # sample clauses -> number of logged groups (terms in $Tmp/log)
  rm -f "$Tmp/log"
  sed "s/^#pragma cuda_rewrite fuse.*/#pragma cuda_rewrite fuse $2/" \
    "samples/fuse/$1.cu" >"$Tmp/$1.cu"
  CUDA_REWRITE_FUSE_COST_LOG="$Tmp/log" "$Tool" "$Tmp/$1.cu" -o /dev/null -- \
    -I samples/common -I runtime/include 2>/dev/null
  [ -f "$Tmp/log" ] && wc -l <"$Tmp/log" || echo 0
}
cat "$@" | grep -E '^[a-z]+\.tile[0-9]+-[0-9]+' | grep median_ms= |
  while read -r Name Rest; do
    Sample=${Name%%.*}
    Tag=${Name#*.}
    Tag=${Tag%.float}
    Ms=$(echo "$Rest" | grep -o 'median_ms=[^ ]*' | cut -d= -f2)
    # The groups of the sample (cached): tile(1,8) fits every group.
    [ -f "$Tmp/full-$Sample" ] || groups "$Sample" "tile(1,8)" >"$Tmp/full-$Sample"
    Full=$(cat "$Tmp/full-$Sample")
    N=$(groups "$Sample" "$(clauses "$Tag")")
    [ "$N" = "$Full" ] && [ "$N" != 0 ] || continue
    awk -F, -v S="$Sample" -v C="$Tag" -v M="$Ms" '
      { for (i = 4; i <= 10; ++i) t[i] += $i }
      END { printf "%s,%s,%s", S, C, M; for (i = 4; i <= 10; ++i) printf ",%g", t[i]; print "" }' \
      "$Tmp/log"
  done
