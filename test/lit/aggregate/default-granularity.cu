// The granularity a launch gets when none is asked for. Kernel granularity
// makes one launch per parent grid, but waits for the grid's last block: a
// parent launched only from the host in grids of at most 8 warps, known at
// compile time, takes warp granularity (NVIDIA's cdpBezierTessellation: 4
// blocks of 64, its grid spelled with ceil()). Grids larger, known only at
// run time, or launched from the device, and recursive parents, take kernel.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

#include <math.h>

#define N_LINES 256
#define BLOCK_DIM 64

__global__ void child(int *p) { p[threadIdx.x] += 1; }

#pragma cuda_rewrite aggregate
__global__ void small(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK-DAG: :[[@LINE-1]]:{{.*}} remark: rewritten: aggregated at warp granularity into 'child_aggregated' (the default for this parent: its grids have at most 8 warps, so each warp launches as soon as it is done)

#pragma cuda_rewrite aggregate
__global__ void large(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK-DAG: :[[@LINE-1]]:{{.*}} remark: rewritten: aggregated at kernel granularity

#pragma cuda_rewrite aggregate
__global__ void sized(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK-DAG: :[[@LINE-1]]:{{.*}} remark: rewritten: aggregated at kernel granularity

#pragma cuda_rewrite aggregate
__global__ void nested(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK-DAG: :[[@LINE-1]]:{{.*}} remark: rewritten: aggregated at kernel granularity

__global__ void outer(int *p) { nested<<<1, 32>>>(p); }

void run(int *p, int n) {
  small<<<(unsigned int)ceil((float)N_LINES / (float)BLOCK_DIM), BLOCK_DIM>>>(p);
  large<<<9, 32>>>(p);
  sized<<<n, 32>>>(p);
  nested<<<1, 32>>>(p);
}
