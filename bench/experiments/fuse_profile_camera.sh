#!/bin/bash
# Nsight Compute on camera's fused kernels: run on the GPU machine after
# bench/stage.sh fuse (carry build-bench/rewritten). Writes the reports
# under $OUT and prints the lines bench/RESULTS.md quotes.
set -u
OUT=${OUT:-/tmp}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p /tmp/fp
nvcc -O3 -arch=sm_90 -lineinfo -I samples/common -I runtime/include \
  build-bench/rewritten/rewritten/fuse/camera.cu -o /tmp/fp/camera -Xptxas -v \
  >"$OUT/ptxas-camera.txt" 2>&1 || { tail -5 "$OUT/ptxas-camera.txt"; exit 1; }
"$NCU" --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section WarpStateStats --section MemoryWorkloadAnalysis \
  --section SchedulerStats -k regex:kernel --launch-skip 4 --launch-count 2 \
  /tmp/fp/camera --reps=1 --warmup=2 >"$OUT/ncu-camera.txt" 2>&1
grep -E '^  [a-zA-Z_<].*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Grid Size|Warp Cycles Per Issued|Mem Pipes Busy|Static Shared|stalled waiting|represents about' \
  "$OUT/ncu-camera.txt"
