// A 2D 5-point stencil with parameter weights becomes a systolic kernel: the
// shape struct (P and the halo), a kernel that takes the launch's extent,
// caches rows in registers and shifts partial sums up the warp, and a
// launcher that each host launch calls instead (the stream and shared bytes
// included). The original kernel stays. (The aligned kernel the launcher
// prefers for this stencil is checked in aligned.cu; this file checks the
// overlapped one, which runs on unaligned rows.)
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// REMARK: star2d.cu:[[@LINE+3]]:17: remark: rewritten: 'jacobi' runs as jacobi_systolic_aligned (2D star radius 1: 5 points (0,0) (-1,0) (1,0) (0,-1) (0,1) into out from in; 2 launches rewritten): aligned rows: {{.*}}; overlapped form: P = 16 rows per thread, the most (up to 16) whose cache (~{{[0-9]+}} registers) fits the budget of 64 that keeps half of the NVIDIA H100 SXM5 80GB's threads resident; each thread caches 18 rows, so 17% of what a warp loads is halo (section 5.3); 128 threads per block (the paper's B = 128) [systolic]
// REMARK-NOT: remark:
#pragma cuda_rewrite systolic
__global__ void jacobi(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = c0 * in[y * W + x] +
                   c1 * (in[y * W + x - 1] + in[y * W + x + 1] +
                         in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}
// The pragma is consumed; the original kernel is kept as it was.
// CHECK-NOT: #pragma cuda_rewrite
// CHECK:      __global__ void jacobi(const float *__restrict__ in, float *__restrict__ out,
// CHECK:        out[y * W + x] = c0 * in[y * W + x] +
// CHECK:      }

// The shape: P = 16 rows per thread, C = P + N - 1 = 18, M - 1 = 2.
// CHECK:      struct jacobi_systolic_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 16;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 18;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Halo = 2;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Columns = 32 - Halo;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Warps = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int MinBlocks = 8;
// CHECK-NEXT: };

// The kernel: the original parameters plus the launch's extent.
// CHECK:      __global__ void __launch_bounds__(jacobi_systolic_shape::Warps * 32,{{[[:space:]]+}}jacobi_systolic_shape::MinBlocks)
// CHECK-NEXT: jacobi_systolic(const float *__restrict__ in, float *__restrict__ out, int W,
// CHECK-NEXT:     int H, float c0, float c1, long long extentX,
// CHECK-NEXT:     long long extentY) {
// CHECK-NEXT:   using Shape = jacobi_systolic_shape;
// The box of written points: the launch's threads cut by the guard.
// CHECK:        const int xBegin = 1, xEnd = (int)::min(extentX, (long long)(W - 1));
// CHECK-NEXT:   const int yBegin = 1, yEnd = (int)::min(extentY, (long long)(H - 1));
// CHECK:        const int col = tileX + lane - 1;
// Only the points the original reads are loaded: the centre column reads
// three rows, the side columns one.
// CHECK:        const bool readsColumn0 = (col >= xBegin && col < xEnd);
// CHECK-NEXT:   const bool readsColumn1 = (col >= xBegin - 1 && col < xEnd + 1);
// CHECK:        for (int tileY = (int)blockIdx.y * Shape::Rows; tileY < yEnd;
// CHECK:          float cache[Shape::Cached];
// CHECK:            const int row = tileY + c - 1;
// CHECK-NEXT:       cache[c] = (readsColumn0 && row >= yBegin - 1 && row < yEnd - 1) ||
// CHECK-NEXT:           (readsColumn1 && row >= yBegin && row < yEnd) ||
// CHECK-NEXT:           (readsColumn0 && row >= yBegin + 1 && row < yEnd + 1)
// CHECK-NEXT:           ? in[col + W * row]
// CHECK-NEXT:           : float(0);
// The columns, west to east, with a shift up the warp between them.
// CHECK:          float sum[Shape::Rows] = {};
// CHECK-NEXT:     // Column x - 1.
// CHECK:            sum[i] = fma(c1, cache[i + 1], sum[i]);
// CHECK:            sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
// CHECK-NEXT:     // Column x.
// CHECK:            sum[i] = fma(c1, cache[i], sum[i]);
// CHECK:            sum[i] = fma(c0, cache[i + 1], sum[i]);
// CHECK:            sum[i] = fma(c1, cache[i + 2], sum[i]);
// CHECK:            sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
// CHECK-NEXT:     // Column x + 1.
// CHECK:            sum[i] = fma(c1, cache[i + 1], sum[i]);
// CHECK-NOT:        __shfl_up_sync
// Lanes Halo..31 store their rows inside the box.
// CHECK:          const int outX = tileX + lane - Shape::Halo;
// CHECK-NEXT:     if (lane >= Shape::Halo && outX >= xBegin && outX < xEnd) {
// CHECK:              if (outY >= yBegin && outY < yEnd)
// CHECK-NEXT:           out[outX + W * outY] = sum[i];

// The launcher: the original configuration gives the extent.
// CHECK:      static void jacobi_systolic_launch(dim3 grid, dim3 block, size_t sharedBytes,
// CHECK-NEXT:     cudaStream_t stream,
// CHECK-NEXT:     const float *__restrict__ in,
// CHECK-NEXT:     float *__restrict__ out, int W, int H,
// CHECK-NEXT:     float c0, float c1) {
// CHECK:        const long long extentX = (long long)grid.x * block.x;
// CHECK-NEXT:   const long long extentY = (long long)grid.y * block.y;
// CHECK:        jacobi_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, c0, c1, extentX, extentY);

void run(const float *in, float *out, int W, int H, cudaStream_t s) {
  dim3 block(32, 8);
  dim3 grid((W + 31) / 32, (H + 7) / 8);
  // CHECK-LABEL: void run(
  // CHECK:      jacobi_systolic_launch(grid, block, 0, 0, in, out, W, H, 0.5f, 0.125f);
  jacobi<<<grid, block>>>(in, out, W, H, 0.5f, 0.125f);
  // CHECK-NEXT: jacobi_systolic_launch(grid, block, 0, s, in, out, W, H, 0.5f, 0.125f);
  jacobi<<<grid, block, 0, s>>>(in, out, W, H, 0.5f, 0.125f);
}
// CHECK-NOT: jacobi<<<
