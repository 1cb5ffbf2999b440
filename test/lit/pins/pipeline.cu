// Pipeline pins the rank loop's bound it matched against a stage's
// threads(n): with another -D the loop would run a different number of ranks
// than the queued stage, so the rewrite must fail to compile.
// REQUIRES: nvcc
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// RUN: not %nvcc-compile -rdc=true %t.cu -o %t.o -DLANES=16 2>&1 | FileCheck %s --check-prefix=OTHER

#include <cuda_runtime.h>

#ifndef LANES
#define LANES 8
#endif

struct Item {
  int index;
};

__device__ int *counts;

__device__ void spread(Item it, int rank);

#pragma cuda_rewrite stage
__device__ void visit(Item it) {
  atomicAdd(&counts[it.index], 1);
  for (int r = 0; r < LANES; ++r)
    spread(it, r);
}

#pragma cuda_rewrite stage threads(8)
__device__ void spread(Item it, int rank) {
  atomicAdd(&counts[it.index], rank);
}

__global__ void start(int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    visit(Item{i});
}

int main() {
  // REMARK: pipeline.cu:[[@LINE+2]]:3: remark: rewritten: pipeline 'start'
#pragma cuda_rewrite pipeline
  start<<<4, 128>>>(512);
  return cudaDeviceSynchronize() != cudaSuccess;
}

// CHECK: static_assert((LANES) == 8,

// OTHER: rewritten for LANES == 8; rerun cuda-rewrite
