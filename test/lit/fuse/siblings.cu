// Two stages of one region that do not read each other (the gradients of
// harris.cu) share one loop, so that their reads of the input can be
// loaded once; their consumer waits for both tiles with one __syncwarp.
// RUN: %cuda-rewrite %s -o %t.cu -- 2>&1
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__global__ void gradX(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y >= H)
    return;
  out[y * W + x] = in[y * W + x + 1] - in[y * W + x - 1];
}

__global__ void gradY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[(y + 1) * W + x] - in[(y - 1) * W + x];
}

__global__ void magnitude(const float *gx, const float *gy, float *out, int W,
                          int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W - 2 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = gx[y * W + x - 1] * gx[y * W + x + 1] +
                   gy[y * W + x - 1] * gy[y * W + x + 1];
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *gx, *gy;
  cudaMalloc(&gx, sizeof(float) * W * H);
  cudaMalloc(&gy, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    gradX<<<grid, block>>>(in, gx, W, H);
    gradY<<<grid, block>>>(in, gy, W, H);
    magnitude<<<grid, block>>>(gx, gy, out, W, H);
  }
  cudaFree(gx);
  cudaFree(gy);
}

// The region's 34 columns: a loop for the halo column on either side, a
// lane per column of the tile's 32 (rows unrolled in interior warps).
// CHECK:        // gradX and gradY over columns x0 + [-1, 0), rows y0 + [0, 8), the halo on
// CHECK-NEXT:   // the left.
// CHECK-NEXT:   for (int i = lane; i < 1 * 8; i += 32) {
// CHECK-NEXT:     const int x = x0 - 1, y = y0 + i;
// CHECK-NEXT:     if (interior) {
// CHECK-NEXT:       gradX_point<true>(x, y, in, gx, W, H, gx_tile);
// CHECK-NEXT:       gradY_point<true>(x, y, in, gy, W, H, gy_tile);
// CHECK-NEXT:     } else if (x >= 0 && y >= 0 && x < extentX && y < extentY) {
// CHECK-NEXT:       gradX_point<false>(x, y, in, gx, W, H, gx_tile);
// CHECK-NEXT:       gradY_point<false>(x, y, in, gy, W, H, gy_tile);
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   // gradX and gradY over columns x0 + [0, 32), rows y0 + [0, 8).
// CHECK-NEXT:   if (interior) {
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT:     for (int r = 0; r < 8; ++r)
// CHECK:            const int x = x0 + c + lane, y = y0 + r;
// CHECK-NEXT:       gradX_point<true>(x, y, in, gx, W, H, gx_tile);
// CHECK-NEXT:       gradY_point<true>(x, y, in, gy, W, H, gy_tile);
// CHECK:        // gradX and gradY over columns x0 + [32, 33), rows y0 + [0, 8), the halo on
// CHECK-NEXT:   // the right.
// CHECK-NEXT:   for (int i = lane; i < 1 * 8; i += 32) {
// CHECK-NEXT:     const int x = x0 + 32, y = y0 + i;
// CHECK:        __syncwarp();
// CHECK-NEXT:   // magnitude over the warp's tile.
