// Launches the aggregate pass cannot rewrite correctly are left alone, with
// a remark saying why; a granularity asked for but not legal is refused,
// while the default falls back to warp granularity and says why.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=LOOP
// RUN: FileCheck %s --check-prefix=OUT < %t.cu
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=NESTED

__global__ void leaf(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

__device__ int globalIndex() { return blockIdx.x * blockDim.x + threadIdx.x; }
__global__ void usesHelper(int *p) { p[globalIndex()] = 1; }

__global__ void withBarrier(int *p) {
  __shared__ int s[256];
  s[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = s[255 - threadIdx.x];
}

__global__ void nested(int *p, int depth) {
  if (depth > 0)
    nested<<<1, 32>>>(p, depth - 1);
}

#pragma cuda_rewrite aggregate
__global__ void parent(int *p, const int *sizes, int n, cudaStream_t stream) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: calls 'globalIndex', which reads blockIdx itself: it would see the aggregated launch's value, not the original one [aggregate] [-Wcuda-rewrite-refused]
  usesHelper<<<1, 32>>>(p);
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: the child uses __syncthreads and the launch's block size is not a compile-time constant
  withBarrier<<<1, sizes[i]>>>(p);
  // A child that launches kernels is aggregated only if its own launches
  // are aggregated at block or kernel granularity (see recursion.cu).
  // NESTED: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: the child kernel 'nested' launches kernels itself, and those launches are not aggregated at block or kernel granularity [aggregate] [-Wcuda-rewrite-refused]
  nested<<<1, 32>>>(p, 3);
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: the launch names a stream that may order it after or before other work (only a stream the thread creates for this launch alone, next to it, and at most destroys, orders nothing) [aggregate] [-Wcuda-rewrite-refused]
  leaf<<<1, 32, 0, stream>>>(p);
  // The refused launches above stay, made by every thread: waiting at a
  // block-wide barrier with them in flight hung, so this one is aggregated
  // per warp.
  for (int k = 0; k < sizes[i]; ++k)
    // LOOP: refusals.cu:[[@LINE+1]]:5: remark: rewritten: aggregated at warp granularity into 'leaf_aggregated' (not kernel or block granularity: 'parent' also launches kernels that stay launches, from more than one thread (line 30): {{.*}}); scalar arguments: none; per-launch arguments: p
    leaf<<<1, 32>>>(p + k);
}
// OUT: usesHelper<<<1, 32>>>(p);
// OUT: withBarrier<<<1, sizes[i]>>>(p);
// OUT: leaf_launch_warp(1, 32, 0, leaf_args{p + k}, __LINE__);
// OUT: cr_pending_0.request(1, 32, 0, leaf_args{p + k}, __FILE__, __LINE__);


// Launches in loops at kernel granularity: each block appends its threads'
// lists to the grid's table as one chunk.
#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void wholeGrid(int *p, int n) {
  for (int k = 0; k < n; ++k)
    // LOOP: refusals.cu:[[@LINE+1]]:5: remark: rewritten: aggregated at kernel granularity into 'leaf_aggregated'; scalar arguments: none; per-launch arguments: p [aggregate]
    leaf<<<1, 32>>>(p + k);
}
// OUT:      __global__ void wholeGrid(int *p, int n) {
// OUT-NEXT:   cuda_rewrite::PendingLaunchList<leaf_args> cr_pending_0;

#pragma cuda_rewrite aggregate granularity(block)
__global__ void barrierAndReturn(int *p, int n) {
  if (threadIdx.x >= n)
    return;
  __syncthreads();
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: block granularity: the parent kernel uses __syncthreads and returns early (line [[@LINE-2]]) where the condition at line [[@LINE-3]] may differ between the block's threads: a thread that returned would wait
  leaf<<<1, 32>>>(p);
}

// A child with barriers is never packed several blocks to one.
#pragma cuda_rewrite aggregate
__global__ void fixedBlocks(int *p) {
  withBarrier<<<1, 256>>>(p);
}
// OUT: cr_launch.configure(/*packable=*/false, cr_aggregated_grid,

// The pool reset before a host launch repeats its stream argument: one with
// side effects would be evaluated twice.
__global__ void leafParent(int *p) { leaf<<<1, 32>>>(p); }
#pragma cuda_rewrite aggregate
__global__ void streamed(int *p) {
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: the host launch of 'streamed' at line [[#@LINE+5]] passes a stream expression with side effects, which the pool reset before it would evaluate again [aggregate] [-Wcuda-rewrite-refused]
  leaf<<<1, 32>>>(p);
}
void runStreamed(int *p, cudaStream_t *streams, int &next) {
  // OUT: streamed<<<1, 32, 0, streams[next++]>>>(p);
  streamed<<<1, 32, 0, streams[next++]>>>(p);
}

// A child defined in another translation unit, or in an included file: its
// body is not here to copy.
__global__ void elsewhere(int *p);
#include "../Inputs/aggregate/child.cuh"

#pragma cuda_rewrite aggregate
__global__ void remoteChildren(int *p) {
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: the child kernel 'elsewhere' is defined in another translation unit (this file only declares it, at refusals.cu:[[@LINE-5]]); aggregation copies the child's body, so it must be defined in this file [aggregate]
  elsewhere<<<1, 32>>>(p);
  // CHECK: refusals.cu:[[@LINE+1]]:3: warning: not rewritten: the child kernel 'headerChild' is defined in an included file (child.cuh:2), which is not rewritten yet [aggregate]
  headerChild<<<1, 32>>>(p);
}
