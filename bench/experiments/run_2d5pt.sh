#!/bin/bash
# Device script for systolic_2d5pt.cu: times the variants, then profiles the
# generated kernel (v0), its 32-bit form (v1) and the strip form (v3) with ncu.
# Usage (device machine): bench/experiments/run_2d5pt.sh OUTDIR
set -u
Out=${1:-/tmp}
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/x5 bench/experiments/systolic_2d5pt.cu || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv
/tmp/x5 | tee "$Out/variants.txt"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum
for K in v0 v12 v3 plain copyKernel; do
  timeout 120 ncu --clock-control none --metrics $M --section WarpStateStats -k regex:"^$K" -c 1 /tmp/x5 > "$Out/ncu_$K.txt" 2>&1
  echo "== $K"; grep -E "v0|v12|v3|plain|copyKernel|duration|bytes|sectors|warps_active|throughput|inst_executed|Stall|stall" "$Out/ncu_$K.txt" | grep -v "^==PROF" | head -30
done
