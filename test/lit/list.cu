// --list finds every kind of candidate, with file:line:col, and lists the
// pragmas with their targets; each candidate with the verdict the rewrite
// reaches (its pass's remark), and what --auto would do with one that only
// lacks a pragma.
// RUN: %cuda-rewrite --list %s -- 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=warning:

__global__ void child(int *data, int n) { data[threadIdx.x] = n; }

#define LAUNCH_CHILD(p) child<<<1, 32>>>(p, 7)

// CHECK: [[FILE]]:[[@LINE+1]]:1: pragma: aggregate granularity(block) -> function 'parent' at [[@LINE+2]]:1
#pragma cuda_rewrite aggregate granularity(block)
__global__ void parent(int *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // CHECK: [[FILE]]:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'parent' -> aggregate [#pragma cuda_rewrite aggregate granularity(block)]: would refuse: block granularity: 'parent' also launches kernels that stay launches, from more than one thread (line [[@LINE+7]]): {{.*}}{{$}}
  child<<<1, 32>>>(data + i * 32, n);
  if (i < n)
    // CHECK: [[FILE]]:[[@LINE+1]]:5: device-launch: 'child' launched from kernel 'parent' [in branch] -> aggregate [#pragma cuda_rewrite aggregate granularity(block)]: would refuse: block granularity: 'parent' also launches
    child<<<1, 32>>>(data, i);
  for (int k = 0; k < i; ++k)
    // CHECK: [[FILE]]:[[@LINE+1]]:5: device-launch: 'child' launched from kernel 'parent' [in loop, in macro] -> aggregate [#pragma cuda_rewrite aggregate granularity(block)]: would refuse: written inside a macro expansion; {{.*}}{{$}}
    LAUNCH_CHILD(data);
}

template <typename T> __global__ void generic_parent(T *data) {
  // CHECK: [[FILE]]:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'generic_parent' [in template] -> aggregate: not rewritten: not annotated; add '#pragma cuda_rewrite aggregate' or pass --auto; under --auto: would refuse: inside a template; the 'aggregate' pass does not rewrite templates yet{{$}}
  child<<<1, 32>>>(data, 1);
}
template __global__ void generic_parent<int>(int *);

// CHECK: [[FILE]]:[[@LINE+1]]:17: recursive-kernel: kernel 'walk' launches itself -> promote: not rewritten: not annotated; add '#pragma cuda_rewrite promote' or pass --auto; under --auto: would refuse: cannot promote 'walk' (P): no host launch of 'walk' in this file{{.*}}
__global__ void walk(int depth) {
  // CHECK: [[FILE]]:[[@LINE+1]]:18: device-launch: 'walk' launched from kernel 'walk' [in branch] -> aggregate: not rewritten: not annotated; add '#pragma cuda_rewrite aggregate' or pass --auto; under --auto: would rewrite: aggregated at kernel granularity into 'walk_aggregated'{{.*}}
  if (depth > 0) walk<<<1, 1>>>(depth - 1);
}

// CHECK: [[FILE]]:[[@LINE+2]]:17: stencil: kernel 'jacobi': 2D star radius 1: 5 points
// CHECK-SAME: -> systolic: not rewritten: not annotated; add '#pragma cuda_rewrite systolic' or pass --auto; under --auto: would
__global__ void jacobi(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.2f * (in[y * W + x] + in[y * W + x - 1] +
                             in[y * W + x + 1] + in[(y - 1) * W + x] +
                             in[(y + 1) * W + x]);
}

__global__ void scale(const float *in, float *out, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = s * in[i];
}

// CHECK: [[FILE]]:[[@LINE+1]]:1: pragma: stage threads(4) -> function 'shade' at [[@LINE+3]]:1
#pragma cuda_rewrite stage threads(4)
// CHECK: [[FILE]]:[[@LINE+1]]:17: pipeline-stage: __device__ stage 'shade' -> pipeline [#pragma cuda_rewrite stage threads(4)]: would rewrite: 'shade' runs from a queue as stage 0 of pipeline 'entry'{{$}}
__device__ void shade(int item, int rank) {}

__global__ void entry(int *items) { shade(items[threadIdx.x], 0); }

void host(float *a, float *b, float *c, int *items, int W, int H) {
  dim3 grid(W / 16, H / 16), block(16, 16);
  // CHECK: [[FILE]]:[[@LINE+1]]:3: stage-chain: 3 launches jacobi -> scale -> jacobi via 'b', 'c' -> fuse: not rewritten: not annotated; add '#pragma cuda_rewrite fuse' or pass --auto; under --auto: would
  jacobi<<<grid, block>>>(a, b, W, H);
  scale<<<W * H / 256, 256>>>(b, c, 2.0f);
  jacobi<<<grid, block>>>(c, a, W, H);
  // CHECK: [[FILE]]:[[@LINE+2]]:3: pragma: pipeline model(megakernel) -> statement at [[@LINE+3]]:3 in 'host'
  // CHECK: [[FILE]]:[[@LINE+2]]:3: pipeline-entry: pipeline launched from 'host' -> pipeline [#pragma cuda_rewrite pipeline model(megakernel)]: would rewrite: pipeline 'entry' runs its 1 stages from queues: {{.*}} model megakernel
  #pragma cuda_rewrite pipeline model(megakernel)
  entry<<<1, 32>>>(items);
}
