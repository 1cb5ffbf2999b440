// --list finds every kind of candidate, with file:line:col, and lists the
// pragmas with their targets.
// RUN: %cuda-rewrite --list %s -- 2>&1 | FileCheck %s -DFILE=%s --implicit-check-not=warning:

__global__ void child(int *data, int n) { data[threadIdx.x] = n; }

#define LAUNCH_CHILD(p) child<<<1, 32>>>(p, 7)

// CHECK: [[FILE]]:[[@LINE+1]]:1: pragma: aggregate granularity(block) -> function 'parent' at [[@LINE+2]]:1
#pragma cuda_rewrite aggregate granularity(block)
__global__ void parent(int *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // CHECK: [[FILE]]:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'parent' -> aggregate [#pragma cuda_rewrite aggregate granularity(block)]{{$}}
  child<<<1, 32>>>(data + i * 32, n);
  if (i < n)
    // CHECK: [[FILE]]:[[@LINE+1]]:5: device-launch: 'child' launched from kernel 'parent' [in branch] -> aggregate
    child<<<1, 32>>>(data, i);
  for (int k = 0; k < i; ++k)
    // CHECK: [[FILE]]:[[@LINE+1]]:5: device-launch: 'child' launched from kernel 'parent' [in loop, in macro] -> aggregate
    LAUNCH_CHILD(data);
}

template <typename T> __global__ void generic_parent(T *data) {
  // CHECK: [[FILE]]:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'generic_parent' [in template] -> aggregate: not annotated; add '#pragma cuda_rewrite aggregate' or pass --auto
  child<<<1, 32>>>(data, 1);
}
template __global__ void generic_parent<int>(int *);

// CHECK: [[FILE]]:[[@LINE+1]]:17: recursive-kernel: kernel 'walk' launches itself -> promote
__global__ void walk(int depth) {
  // CHECK: [[FILE]]:[[@LINE+1]]:18: device-launch: 'walk' launched from kernel 'walk' [in branch] -> aggregate
  if (depth > 0) walk<<<1, 1>>>(depth - 1);
}

// CHECK: [[FILE]]:[[@LINE+2]]:17: stencil: kernel 'jacobi': 2D star radius 1: 5 points
// CHECK-SAME: -> systolic: not annotated
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
// CHECK: [[FILE]]:[[@LINE+1]]:17: pipeline-stage: __device__ stage 'shade' -> pipeline [#pragma cuda_rewrite stage threads(4)]
__device__ void shade(int item, int rank) {}

__global__ void entry(int *items) { shade(items[threadIdx.x], 0); }

void host(float *a, float *b, float *c, int *items, int W, int H) {
  dim3 grid(W / 16, H / 16), block(16, 16);
  // CHECK: [[FILE]]:[[@LINE+1]]:3: stage-chain: 3 launches jacobi -> scale -> jacobi via 'b', 'c' -> fuse: not annotated
  jacobi<<<grid, block>>>(a, b, W, H);
  scale<<<W * H / 256, 256>>>(b, c, 2.0f);
  jacobi<<<grid, block>>>(c, a, W, H);
  // CHECK: [[FILE]]:[[@LINE+2]]:3: pragma: pipeline model(megakernel) -> statement at [[@LINE+3]]:3 in 'host'
  // CHECK: [[FILE]]:[[@LINE+2]]:3: pipeline-entry: pipeline launched from 'host' -> pipeline
  #pragma cuda_rewrite pipeline model(megakernel)
  entry<<<1, 32>>>(items);
}
