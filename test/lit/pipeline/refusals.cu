// Pipelines the pass refuses, each with the reason; nothing is generated for
// them (the output is the input without its pragmas).
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUT < %t.cu
// OUT-NOT: {{_run}}Pipeline
// OUT-NOT: {{^}}#pragma

#include <cuda_runtime.h>

struct Item {
  int index;
};
__device__ int *out;

#pragma cuda_rewrite stage
__device__ void barrier(Item it) {
  __syncthreads();
  out[it.index] = 1;
}
__global__ void entryBarrier() { barrier(Item{int(threadIdx.x)}); }

#pragma cuda_rewrite stage
__device__ void position(Item it) { out[it.index] = threadIdx.x; }
__global__ void entryPosition() { position(Item{0}); }

#pragma cuda_rewrite stage
__device__ void shared(Item it) {
  __shared__ int scratch[32];
  scratch[it.index % 32] = it.index;
  out[it.index] = scratch[0];
}
__global__ void entryShared() { shared(Item{0}); }

#pragma cuda_rewrite stage threads(16)
__device__ void shuffle(Item it, int rank) {
  out[it.index] = __shfl_sync(0xffffffffu, rank, 0);
}
__global__ void entryShuffle() { shuffle(Item{0}, threadIdx.x % 16); }

struct Pointer {
  int *at;
};
#pragma cuda_rewrite stage
__device__ void keep(Pointer p) { *p.at = 1; }
__global__ void entryLocal() {
  int local = 0;
  keep(Pointer{&local});
}

#pragma cuda_rewrite stage
__device__ void last(Item it) { out[it.index] = 2; }
__device__ void helper(Item it) { last(it); }
#pragma cuda_rewrite stage
__device__ void first(Item it) { helper(it); }
__global__ void entryHelper() { first(Item{0}); }

#pragma cuda_rewrite stage threads(32)
__device__ void wide(Item it, int rank) { out[it.index + rank] = 3; }
#pragma cuda_rewrite stage
__device__ void narrow(Item it) { wide(it, 0); }
__global__ void entryNarrow() { narrow(Item{0}); }

#pragma cuda_rewrite stage
__device__ void byReference(const Item &it) { out[it.index] = 4; }
__global__ void entryReference() { byReference(Item{0}); }

__global__ void entryNone() { out[0] = 5; }

int main() {
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: 'barrier' calls __syncthreads, a barrier that the other groups of the block, running other items, never reach [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryBarrier<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: 'position' reads 'threadIdx', which means another thread or block once the stage runs from a queue [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryPosition<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: 'shared' declares __shared__ 'scratch', which items of other stages in the same block would share [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryShared<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: 'shuffle' calls __shfl_sync in a threads(16) stage; warp intrinsics need threads(32), where a group is exactly one warp [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryShuffle<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: the call of stage 'keep' passes the address of a local variable; the item outlives the caller once it is queued [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryLocal<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: 'helper', a device function that the pipeline calls, calls a stage; only stages and the entry kernel may [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryHelper<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: the call of stage 'wide' comes from 'narrow', whose groups are not threads(32); a threads(n) stage is called by n threads together, or by one thread in a loop over its ranks, 'for (int r = 0; r < n; ++r) stage(item, r);' [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryNarrow<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: stage 'byReference' must take its item by value, of a trivially copyable type [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryReference<<<1, 32>>>();
  // CHECK: refusals.cu:[[@LINE+2]]:3: warning: not rewritten: cannot run the pipeline from queues: the entry kernel 'entryNone' calls no stage; mark the stages with '#pragma cuda_rewrite stage' [pipeline] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite pipeline
  entryNone<<<1, 32>>>();
  return cudaDeviceSynchronize() != cudaSuccess;
}

// The stages of refused pipelines say so.
// CHECK: refusals.cu:16:17: warning: not rewritten: stage 'barrier' is in no pipeline that was rewritten (none reaches it, or its pipeline was refused) [pipeline] [-Wcuda-rewrite-refused]
