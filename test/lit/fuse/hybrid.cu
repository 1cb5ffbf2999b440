// Hybrid tiling (PolyMage-GPU section 5): with hybrid(f), the rightmost
// f of each tile's 32-column chunks live in registers. 'box' reads 'tmp'
// one column either side, so a lane's point needs its own register (type
// 1), its neighbours' (type 3), the previous chunk's last lanes' (type 4) or
// the shared part's last column (type 2). Fractions 0, 0.5 and 1 of a
// two-chunk tile.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=HALF-REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s --check-prefix=HALF
// RUN: %nvcc-compile %t.cu -o %t.o
// RUN: sed 's/hybrid(0.5)/hybrid(0)/' %s > %t.zero.cu
// RUN: %cuda-rewrite --remarks %t.zero.cu -o %t.zero.out.cu -- 2>&1 | FileCheck %s --check-prefix=ZERO-REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.zero.out.cu | FileCheck %s --check-prefix=ZERO
// RUN: sed 's/hybrid(0.5)/hybrid(1)/' %s > %t.one.cu
// RUN: %cuda-rewrite --remarks %t.one.cu -o %t.one.out.cu -- 2>&1 | FileCheck %s --check-prefix=ONE-REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.one.out.cu | FileCheck %s --check-prefix=ONE
// Split along y (PolyMage-GPU's Appendix A): the last rows of each region in
// registers, half of them and all of them.
// RUN: sed 's/hybrid(0.5)/hybrid(0.5, y)/' %s > %t.y.cu
// RUN: %cuda-rewrite --remarks %t.y.cu -o %t.y.out.cu -- 2>&1 | FileCheck %s --check-prefix=HALFY-REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.y.out.cu | FileCheck %s --check-prefix=HALFY
// RUN: %nvcc-compile %t.y.out.cu -o %t.y.o
// RUN: sed 's/hybrid(0.5)/hybrid(1, y)/' %s > %t.oney.cu
// RUN: %cuda-rewrite %t.oney.cu -o %t.oney.out.cu --
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.oney.out.cu | FileCheck %s --check-prefix=ONEY

__host__ __device__ inline int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void blurX(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[y * W + clampTo(x - 1, 0, W - 1)] + in[y * W + x] +
                    in[y * W + clampTo(x + 1, 0, W - 1)]) / 3.f;
}

__global__ void box(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[clampTo(y - 1, 0, H - 1) * W + x] +
                   in[y * W + clampTo(x - 1, 0, W - 1)] + in[y * W + x] +
                   in[y * W + clampTo(x + 1, 0, W - 1)];
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *tmp;
  cudaMalloc(&tmp, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(2, 4) hybrid(0.5)
  {
    blurX<<<grid, block>>>(in, tmp, W, H);
    box<<<grid, block>>>(tmp, out, W, H);
  }
  cudaFree(tmp);
}

// hybrid(0.5): one of two chunks in registers; the shared tile keeps the
// left chunk and the overlap.
// HALF-REMARK: hybrid.cu:[[#]]:5: remark: rewritten: 2 stages (blurX, box) {{.*}} 2720 bytes of shared memory per block; on chip: 'tmp'; in registers (hybrid tiling): 1 of 2 chunks of 32 columns of 'tmp'; from tile(..); cost model: tile 64x4, 4 warps, registers 0.5: cost {{.*}} [fuse]
// HALF:      // On chip, in shared memory per warp: tmp 34 x 5 and 1 x 32 x 5 in registers.
// The point functions take the tile's type as a parameter: a shared tile,
// a register slot, or the gathered register points.
// HALF:      template <bool Interior, typename out_Tile>
// HALF:        out_Tile out_tile) {
// HALF:      template <bool Interior, typename in_Tile>
// HALF:        in_Tile in_tile) {
// HALF:        constexpr int kTileW = 64, kTileH = 4, kWarps = 4, kChunks = 1;
// HALF-NEXT:   __shared__ float tmp_tiles[kWarps][5 * 34];
// HALF-NEXT:   float tmp_regs[kChunks][5];
// The shared part's 34 columns: the halo columns and a lane per column of
// the tile's first chunk.
// HALF:        // blurX over columns x0 + [-1, 0), rows y0 + [-1, 4), the halo on the left
// HALF:        // blurX over columns x0 + [0, 32), rows y0 + [-1, 4) (shared memory part).
// HALF:        // blurX over columns x0 + [32, 33), rows y0 + [-1, 4), the halo on the right
// Register chunks of 'tmp' follow its region's right edge (x0 + 65).
// HALF:        // blurX over columns x0 + [33, 65), rows y0 + [-1, 4) in registers:
// HALF-NEXT:   // lane l of chunk j is column x0 + 33 + 32 * j + l (hybrid tiling).
// HALF-NEXT: #pragma unroll
// HALF-NEXT:   for (int j = 0; j < kChunks; ++j) {
// HALF-NEXT: #pragma unroll
// HALF-NEXT:     for (int r = 0; r < 5; ++r) {
// HALF-NEXT:       const int x = x0 + 33 + 32 * j + lane, y = y0 - 1 + r;
// HALF-NEXT:       const cuda_rewrite::fuse::Slot<float> tmp_slot{tmp_regs[j][r]};
// HALF-NEXT:       if (interior)
// HALF-NEXT:         blurX_point<true>(x, y, in, tmp, W, H, tmp_slot);
// HALF:        __syncwarp();
// HALF:        // box over columns x0 + [0, 32), rows y0 + [0, 4) (shared memory part).
// HALF:            box_point<true>(x, y, tmp, out, W, H, tmp_tile);
// HALF:        // box over columns x0 + [32, 64), rows y0 + [0, 4) in registers:
// HALF:              cuda_rewrite::fuse::Gathered<float, 4> tmp_read;
// HALF-NEXT:       if (interior) {
// Interior warps: 'tmp' at (x, y - 1) is one column left of the parallelogram
// (shift -1), at (x - 1, y) two (-2), at (x + 1, y) in the lane itself (0).
// HALF-NEXT:         tmp_read.set(0, x, y - 1,
// HALF-NEXT:                      cuda_rewrite::fuse::registerRead(tmp_regs, j, r, -1, lane,
// HALF:              tmp_read.set(1, x - 1, y,
// HALF-NEXT:                      cuda_rewrite::fuse::registerRead(
// HALF-NEXT:                          tmp_regs, j, r + 1, -2, lane, tmp_tile, x - 1, y));
// HALF:              tmp_read.set(3, x + 1, y,
// HALF-NEXT:                      cuda_rewrite::fuse::registerRead(
// HALF-NEXT:                          tmp_regs, j, r + 1, 0, lane, tmp_tile, x + 1, y));
// Border warps: the clamped coordinates, with the rows a clamp can reach.
// HALF-NEXT:       } else {
// HALF-NEXT:         {
// HALF-NEXT:           const int sx = x, sy = clampTo(y - 1, 0, H - 1);
// HALF-NEXT:           tmp_read.set(0, sx, sy,
// HALF-NEXT:                        cuda_rewrite::fuse::registerReadAt<1>(
// HALF-NEXT:                            tmp_regs, j, r, x0 + 33, y0 - 1, tmp_tile, sx, sy));
// HALF:                const int sx = clampTo(x - 1, 0, W - 1), sy = y;
// HALF:              box_point<true>(x, y, tmp, out, W, H, tmp_read);

// hybrid(0): the shared-memory tile of the overlapped tile per warp.
// ZERO-REMARK: remark: rewritten: 2 stages (blurX, box) {{.*}} 5280 bytes of shared memory per block; on chip: 'tmp'; from tile(..); cost model: tile 64x4, 4 warps: cost {{.*}} [fuse]
// ZERO:        blurX_point(int x, int y, const float *in, float *out, int W, int H,
// ZERO:          cuda_rewrite::fuse::Tile<float, 66> out_tile) {
// ZERO:        constexpr int kTileW = 64, kTileH = 4, kWarps = 4;
// ZERO-NEXT:   __shared__ float tmp_tiles[kWarps][5 * 66];
// ZERO-NOT:    _regs
// ZERO-NOT:    Gathered

// hybrid(1): both chunks in registers, only the overlap on the left (two
// columns) in shared memory; 'box' has no shared part.
// ONE-REMARK: remark: rewritten: 2 stages (blurX, box) {{.*}} 160 bytes of shared memory per block; on chip: 'tmp'; in registers (hybrid tiling): 2 of 2 chunks of 32 columns of 'tmp'; from tile(..); cost model: tile 64x4, 4 warps, registers 1: cost {{.*}} [fuse]
// ONE:        constexpr int kTileW = 64, kTileH = 4, kWarps = 4, kChunks = 2;
// ONE-NEXT:   __shared__ float tmp_tiles[kWarps][5 * 2];
// ONE-NEXT:   float tmp_regs[kChunks][5];
// ONE:        // blurX over columns x0 + [-1, 1), rows y0 + [-1, 4) (shared memory part).
// ONE:        // blurX over columns x0 + [1, 65), rows y0 + [-1, 4) in registers:
// ONE:        __syncwarp();
// ONE-NOT:    // box over columns x0 + [0, 0)
// ONE:        // box over columns x0 + [0, 64), rows y0 + [0, 4) in registers:
// ONE-NEXT:   // lane l of chunk j is column x0 + 32 * j + l (hybrid tiling).
// ONE:                                  tmp_regs, j, r + 1, -2, lane, tmp_tile, x - 1, y));

// hybrid(0.5, y): rows 2 and 3 of each region in registers. 'tmp' spans 66
// columns (x0 - 1 .. x0 + 64), so a register row takes three chunks aligned
// to its right edge, the first 30 lanes left of it; 'box' spans the tile.
// HALFY-REMARK: remark: rewritten: 2 stages (blurX, box) {{.*}} 3168 bytes of shared memory per block; on chip: 'tmp'; in registers (hybrid tiling): 2 of 4 rows of 'tmp'; from tile(..); cost model: tile 64x4, 4 warps, registers 0.5 along y: cost {{.*}} [fuse]
// HALFY:        constexpr int kTileW = 64, kTileH = 4, kWarps = 4;
// HALFY-NEXT:   __shared__ float tmp_tiles[kWarps][3 * 66];
// HALFY-NEXT:   float tmp_regs[3][2];
// HALFY:        // blurX over columns x0 + [-1, 0), rows y0 + [-1, 2), the halo on the left
// HALFY:        // blurX over columns x0 + [0, 64), rows y0 + [-1, 2) (shared memory part).
// HALFY:        // blurX over columns x0 + [64, 65), rows y0 + [-1, 2), the halo on the right
// HALFY:        // blurX over columns x0 + [-1, 65), rows y0 + [2, 4) in registers:
// HALFY-NEXT:   // lane l of chunk j is column x0 - 31 + 32 * j + l (hybrid tiling; the first
// HALFY-NEXT:   // 30 lanes of chunk 0 lie left of the region and compute nothing).
// HALFY:              const int x = x0 - 31 + 32 * j + lane, y = y0 + 2 + r;
// HALFY:              if (32 * j + lane >= 30 && interior)
// HALFY:        // box over columns x0 + [0, 64), rows y0 + [0, 2) (shared memory part).
// HALFY:        // box over columns x0 + [0, 64), rows y0 + [2, 4) in registers:
// 'box' chunk j lies over 'tmp' chunk j + 1; its row r over 'tmp' row r, so
// (x, y - 1) is row r - 1, in the shared rows above for r = 0 (type 2).
// HALFY:              if (interior) {
// HALFY-NEXT:         tmp_read.set(0, x, y - 1,
// HALFY-NEXT:                      cuda_rewrite::fuse::registerRead<1>(
// HALFY-NEXT:                          tmp_regs, j + 1, r - 1, -1, lane, tmp_tile, x, y - 1));
// HALFY:              tmp_read.set(3, x + 1, y,
// HALFY-NEXT:                      cuda_rewrite::fuse::registerRead<1>(
// HALFY-NEXT:                          tmp_regs, j + 1, r, 0, lane, tmp_tile, x + 1, y));
// HALFY:                  cuda_rewrite::fuse::registerReadAt<1, 1>(
// HALFY-NEXT:                  tmp_regs, j + 1, r - 1, x0 - 31, y0 + 2, tmp_tile, sx, sy));

// hybrid(1, y): every row of the tile in registers; the shared part is the
// row of overlap above it, and 'box' has no shared part.
// ONEY:        __shared__ float tmp_tiles[kWarps][1 * 66];
// ONEY-NEXT:   float tmp_regs[3][4];
// ONEY:        // blurX over columns x0 + [-1, 65), rows y0 + [-1, 0) (shared memory part).
// ONEY:        // blurX over columns x0 + [-1, 65), rows y0 + [0, 4) in registers:
// ONEY:        __syncwarp();
// ONEY-NOT:    (shared memory part)
// ONEY:        // box over columns x0 + [0, 64), rows y0 + [0, 4) in registers:
