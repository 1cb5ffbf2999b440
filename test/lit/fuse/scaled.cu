// Scaled stages (FusePlan.cpp, scaledRead): a downsampling pair (downX
// halves the columns, downY the rows, reading 2y - 1 .. 2y + 1) and an
// upsampling stage (upY, reading y / 2 and (y + 1) / 2) in one kernel. Each
// stage runs at its own scale of the warp's tile: downY, which upY reads at
// half its rows, over y0 / 2 + [0, 5); downX, which downY reads at twice
// its rows, back at y0 + [-1, 10). The launches have different grids: the
// launcher checks each grid against its stage's guards, the relations
// between the levels' sizes that the clamps rely on, and that the fused
// grid reaches every row of 'half', which downY stores. In the second block
// 'mix' reads 'dx' at two scales, directly and through downY: the three
// cannot form a group, and DP-Fusion keeps downY with its reader.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__device__ int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void downX(const float *in, float *out, int inW, int outW, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= outW || y >= H)
    return;
  out[y * outW + x] = in[y * inW + clampTo(2 * x - 1, 0, inW - 1)] +
                      in[y * inW + clampTo(2 * x + 1, 0, inW - 1)];
}

__global__ void downY(const float *in, float *out, int W, int inH, int outH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= outH)
    return;
  out[y * W + x] = in[clampTo(2 * y - 1, 0, inH - 1) * W + x] +
                   2.f * in[clampTo(2 * y, 0, inH - 1) * W + x] +
                   in[clampTo(2 * y + 1, 0, inH - 1) * W + x];
}

__global__ void upY(const float *in, float *out, int W, int inH, int outH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= outH)
    return;
  out[y * W + x] = in[clampTo(y / 2, 0, inH - 1) * W + x] +
                   in[clampTo((y + 1) / 2, 0, inH - 1) * W + x];
}

__global__ void mix(const float *a, const float *b, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = a[y * W + x] - b[y * W + x];
}

dim3 gridOf(dim3 block, int W, int H) {
  return dim3((W + block.x - 1) / block.x, (H + block.y - 1) / block.y);
}

void run(const float *in, float *half, float *out, int W, int H) {
  const dim3 block(32, 8);
  const int W1 = (W + 1) / 2, H1 = (H + 1) / 2;
  float *dx;
  cudaMalloc(&dx, sizeof(float) * W1 * H);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK: scaled.cu:[[@LINE+1]]:5: remark: rewritten: 3 stages (downX, downY, upY) run as fused_downX_to_upY::kernel: warp tile 32 x 8, 4 warps per block, {{[0-9]+}} bytes of shared memory per block; on chip: 'dx', 'half' (also stored); {{.*}} [fuse]
    downX<<<gridOf(block, W1, H), block>>>(in, dx, W, W1, H);
    downY<<<gridOf(block, W1, H1), block>>>(dx, half, W1, H, H1);
    upY<<<gridOf(block, W1, H), block>>>(half, out, W1, H1, H);
  }
  cudaFree(dx);
}

void twoScales(const float *in, float *out, int W, int H) {
  const dim3 block(32, 8);
  const int W1 = (W + 1) / 2, H1 = (H + 1) / 2;
  float *dx, *h;
  cudaMalloc(&dx, sizeof(float) * W1 * H);
  cudaMalloc(&h, sizeof(float) * W1 * H1);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK-DAG: scaled.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'downX' stays a launch of its own: the stages after it cannot join it: 'b' is read at two scales [fuse]
    downX<<<gridOf(block, W1, H), block>>>(in, dx, W, W1, H);
    // REMARK-DAG: scaled.cu:[[@LINE+1]]:5: remark: rewritten: 2 stages (downY, mix) run as fused_downY_to_mix::kernel: {{.*}} inlined where read: 'h'; {{.*}} [fuse]
    downY<<<gridOf(block, W1, H1), block>>>(dx, h, W1, H, H1);
    mix<<<gridOf(block, W1, H1), block>>>(h, dx, out, W1, H1);
  }
  cudaFree(dx);
  cudaFree(h);
}

// The tiles: downX's 11 rows, downY's 5 at half the scale.
// CHECK:      __shared__ float dx_tiles[kWarps][11 * 32];
// CHECK-NEXT: __shared__ float half_tiles[kWarps][5 * 32];
// CHECK:      dx_tile{dx_tiles[warp], x0, y0 - 1};
// CHECK:      half_tile{half_tiles[warp], x0,
// CHECK-NEXT:   y0 / 2};
// Interior warps skip the scaled clamps too: the reads' values at their
// regions' ends bound the others.
// CHECK:      const bool interior =
// CHECK:      2 * (y0 / 2) - 1 >= 0
// CHECK:      2 * (y0 / 2 + 4) + 1 <= H - 1
// CHECK:      (y0 + 7) / 2 <= H1 - 1
// CHECK:      // downX over columns x0 + [0, 32), rows y0 + [-1, 10).
// CHECK:      downX_point<true>(x, y, in, dx, W, W1, H, dx_tile);
// downX's grid is the last stage's: border warps keep the launch's bounds.
// CHECK:      if (x >= 0 && y >= 0 && x < extentX && y < extentY)
// CHECK-NEXT:   downX_point<false>
// CHECK:      // downY over columns x0 + [0, 32), rows y0 / 2 + [0, 5).
// downY stores 'half' where its tile at half the scale is the warp's own.
// CHECK:      x, y, x >= x0 && x < x0 + kTileW && y >= y0 / 2 && y < y0 / 2 + 4,
// Another grid: its guards bound it, and border warps test signs only.
// CHECK:      if (x >= 0 && y >= 0)
// CHECK-NEXT:   downY_point<false>(
// CHECK:      // upY over the warp's tile.
// The launcher: one grid per launch, each checked against its stage.
// CHECK:      static bool launch(dim3 grid, dim3 block, cudaStream_t stream, dim3 grid1,
// CHECK:      if (!(extentX >= W1 && extentY >= H && (long long)grid1.x * block.x >= W1 &&
// CHECK-NEXT:       (long long)grid1.y * block.y >= H1 && grid1.z == grid.z))
// CHECK:      // The launch arguments are related as the reads need
// CHECK:      if (!((H - 1) / 2 <= H1 - 1 && 2 * (H1 - 1) <= H - 1))
// CHECK:      // The warps' tiles reach every point the stages of other grids store.
// CHECK-NEXT: if (!(tilesX * 32 >= W1 && tilesY * 32 / 2 >= H1))
// The block: the last stage's grid first, then the others.
// CHECK:      if (!fused_downX_to_upY::launch(gridOf(block, W1, H), block, 0,
// CHECK-NEXT:                                 gridOf(block, W1, H1), in, dx, W, W1, H,
