// nvcc builds in CUDA 13's atomic builtins and their constants; clang 22
// has neither, and rejected the whole file. The parse now declares them
// (tool/ParsePrelude.cpp), so the file's stencil is rewritten; the
// declarations never reach the rewritten file, which nvcc compiles.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

// REMARK-NOT: error
// REMARK: remark: rewritten: 'smooth' runs as smooth_systolic

__device__ unsigned long long counted(unsigned long long *counter) {
  __nv_atomic_fetch_add(counter, 1, __NV_ATOMIC_RELAXED,
                        __NV_THREAD_SCOPE_DEVICE);
  return __nv_atomic_load_n(counter, __NV_ATOMIC_ACQUIRE);
}

__global__ void count(unsigned long long *counter, unsigned long long *seen) {
  seen[threadIdx.x] = counted(counter);
}

#pragma cuda_rewrite systolic
__global__ void smooth(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  smooth<<<grid, block>>>(in, out, W, H);
}

// CHECK-NOT: cuda-rewrite's parse only
// CHECK-NOT: enum {
// CHECK: __nv_atomic_fetch_add(counter, 1, __NV_ATOMIC_RELAXED,
// CHECK: smooth_systolic
// CHECK-NOT: enum {
