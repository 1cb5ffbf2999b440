// A fused chain whose stencil reach is a macro: the tiles' halos are sized
// for RADIUS = 1, so the fused code pins RADIUS, and a build with another
// RADIUS fails to compile instead of reading outside its tiles. (A macro
// written where the fused kernel edits the text, `clampTo(x - RADIUS, ...)`,
// is refused instead.)
// REQUIRES: nvcc
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o
// RUN: not %nvcc-compile %t.cu -o %t.o -DRADIUS=2 2>&1 | FileCheck %s --check-prefix=OTHER

#ifndef RADIUS
#define RADIUS 1
#endif

__host__ __device__ inline int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void blurX(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[y * W + clampTo((x - RADIUS), 0, W - 1)] + in[y * W + x] +
                    in[y * W + clampTo((x + RADIUS), 0, W - 1)]) / 3.f;
}

__global__ void blurY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[clampTo((y - RADIUS), 0, H - 1) * W + x] + in[y * W + x] +
                    in[clampTo((y + RADIUS), 0, H - 1) * W + x]) / 3.f;
}

// CHECK:      static_assert((RADIUS) == 1,
// CHECK:      namespace fused_blurX_to_blurY {
// REMARK: fuse.cu:[[@LINE+7]]:5: remark: rewritten: 2 stages (blurX, blurY)
void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *tmp = nullptr;
  cudaMalloc(&tmp, sizeof(float) * W * H);
#pragma cuda_rewrite fuse
  {
    blurX<<<grid, block>>>(in, tmp, W, H);
    blurY<<<grid, block>>>(tmp, out, W, H);
  }
  cudaFree(tmp);
}
// OTHER: static assertion failed with "cuda-rewrite: rewritten for RADIUS == 1; rerun cuda-rewrite for this configuration"
