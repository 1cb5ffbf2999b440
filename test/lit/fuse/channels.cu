// Channel-planar stages (unsharp.cu's): the channel is blockIdx.z, so the
// fused kernel takes it from its own blockIdx.z and each block's tiles hold
// one channel. Where a stage reads a plane every channel reads ('tint's
// mask), the fused grid puts the channels first (blockIdx.x), so that the
// channels of a tile run one after another and the plane stays in L2.
// Reads in another plane are refused; a tile(..) out of range is an error
// at the pragma, and nothing is written.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o
// RUN: rm -f %t.bad.cu
// RUN: not %cuda-rewrite --remarks %s -o %t.bad.cu -- -DBAD_TILE 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.cu

__host__ __device__ inline int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void blurY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int plane = c * H;
  out[(plane + y) * W + x] =
      0.25f * in[(plane + (y > 0 ? y - 1 : 0)) * W + x] + 0.5f * in[(plane + y) * W + x];
}

__global__ void blurYClamped(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  out[(c * H + y) * W + x] = in[(c * H + clampTo(y + 2, 0, H - 1)) * W + x];
}

__global__ void sharpen(const float *in, const float *blurred, float *out,
                        int W, int H, float weight) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = (c * H + y) * W + x;
  const int plane = c * H, above = (plane + clampTo(y - 1, 0, H - 1)) * W + x;
  out[i] = (1.f + weight) * in[i] - weight * (blurred[i] + blurred[above]);
}

// Reads the first channel of its input, whatever its own.
__global__ void firstPlane(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  out[(c * H + y) * W + x] = in[y * W + x];
}

// Scales each channel by a mask of one plane, which every channel reads.
__global__ void tint(const float *in, const float *mask, float *out, int W,
                     int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  out[(c * H + y) * W + x] = mask[y * W + x] * in[(c * H + y) * W + x];
}

void run(const float *in, float *out, float *first, int W, int H, int C) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8, C);
  float *blurred = nullptr;
  cudaMallocAsync(&blurred, sizeof(float) * W * H * C, 0);
#ifdef BAD_TILE
#pragma cuda_rewrite fuse tile(16, 4)
#else
#pragma cuda_rewrite fuse
#endif
  {
    // REMARK-DAG: channels.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'blurY' stays a launch of its own: the index of 'in' is not a sum of scaled, offset or clamped coordinates times strides [fuse]
    blurY<<<grid, block>>>(in, out, W, H);
    // REMARK-DAG: channels.cu:[[@LINE+1]]:5: remark: rewritten: 2 stages (blurYClamped, sharpen) run as fused_blurYClamped_to_sharpen::kernel: {{.*}} on chip: 'blurred'; {{.*}} [fuse]
    blurYClamped<<<grid, block>>>(in, blurred, W, H);
    sharpen<<<grid, block, 0, 0>>>(in, blurred, out, W, H, 3.f);
    // REMARK-DAG: channels.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'firstPlane' stays a launch of its own: it cannot join the stages before it: 'in' is read with another layout than its producer writes [fuse]
    firstPlane<<<grid, block>>>(out, first, W, H);
  }
  cudaFreeAsync(blurred, 0);
}

void tinted(const float *in, const float *mask, float *out, int W, int H,
            int C) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8, C);
  float *blurred = nullptr;
  cudaMallocAsync(&blurred, sizeof(float) * W * H * C, 0);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK-DAG: channels.cu:[[@LINE+1]]:5: remark: rewritten: 2 stages (blurYClamped, tint) run as fused_blurYClamped_to_tint::kernel: {{.*}} [fuse]
    blurYClamped<<<grid, block>>>(in, blurred, W, H);
    tint<<<grid, block>>>(blurred, mask, out, W, H);
  }
  cudaFreeAsync(blurred, 0);
}

// CHECK:      blurYClamped_point(int x, int y, int c, const float *in, float *out, int W,
// CHECK-NEXT:                    int H, cuda_rewrite::fuse::Tile<float, 32> out_tile) {
// CHECK:        out_tile(x, y) =
// CHECK-NEXT:       in[(c * H + (Interior ? y + 2 : clampTo(y + 2, 0, H - 1))) * W + x];
// CHECK:      sharpen_point(int x, int y, int c, const float *in, const float *blurred,
// The row above is read through locals (two in one declaration) that the
// rewritten read no longer needs: the declaration goes.
// CHECK:        const int i = (c * H + y) * W + x;
// CHECK-NEXT:   out[i] =
// CHECK-NEXT:       (1.f + weight) * in[i] -
// CHECK-NEXT:       weight * (blurred_tile(x, y) +
// CHECK-NEXT:                 blurred_tile(x, (Interior ? y - 1 : clampTo(y - 1, 0, H - 1))));
// CHECK:        const int z = blockIdx.z;
// CHECK-NEXT:   const int x0 = blockIdx.x * kTileW;
// CHECK-NEXT:   const int y0 = (blockIdx.y * kWarps + warp) * kTileH;
// CHECK:          blurYClamped_point<true>(x, y, z, in, blurred, W, H, blurred_tile);
// CHECK:        const long long extentZ = grid.z;
// CHECK:        const dim3 fusedGrid{unsigned(tilesX), unsigned(tilesY), unsigned(extentZ)};
// 'tint' reads the mask in every channel: channels first.
// CHECK:      namespace fused_blurYClamped_to_tint {
// CHECK:        const int z = blockIdx.x;
// CHECK-NEXT:   const int x0 = blockIdx.y * kTileW;
// CHECK-NEXT:   const int y0 = (blockIdx.z * kWarps + warp) * kTileH;
// CHECK:        if (extentX > INT_MAX || extentY > INT_MAX || tilesX > 65535 ||
// CHECK-NEXT:       tilesY > 65535 || extentZ > INT_MAX)
// CHECK:        const dim3 fusedGrid{unsigned(extentZ), unsigned(tilesX), unsigned(tilesY)};

// BAD: channels.cu:[[#]]:27: error: clause 'tile(16, 4)' is out of range: 'tile' takes x (points per lane along x) in 1..8, y (rows per warp) in 1..64 and w (warps per block) in 1..32
