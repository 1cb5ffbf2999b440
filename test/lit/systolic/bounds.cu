// The box of written points comes from the guard: `<=` and `>` become
// half-open bounds, numbers fold into the begin, other lower bounds are
// compared at run time, nested ifs add up, an origin (`x = ... + 1`) moves
// the box, and no guard leaves the launch's extent. Each read group loads
// only the columns and rows the original reads.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// REMARK-DAG: bounds.cu:[[@LINE+2]]:17: remark: rewritten: 'inclusive' runs as inclusive_systolic_aligned (2D irregular radius 1: 3 points (-1,0) (0,1) (0,-1) into out from in; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void inclusive(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H, int x0, int y0) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > x0 && x <= W - 2) {
    if (y >= y0 && y >= 1 && y <= H - 2)
      out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x] +
                       in[(y - 1) * W + x];
  }
}
// CHECK:      inclusive_systolic(
// CHECK:        const int xBegin = (int)::min(::max(0LL, (long long)(x0) + 1), extentX),{{[[:space:]]+}}xEnd = (int)::min(extentX, (long long)(W - 2) + 1);
// CHECK-NEXT:   const int yBegin = (int)::min(::max(1LL, (long long)(y0)), extentY),{{[[:space:]]+}}yEnd = (int)::min(extentY, (long long)(H - 2) + 1);
// Columns x - 1 .. x: lane 0 holds x - 1.
// CHECK:        const int col = tileX + lane - 1;
// CHECK-NEXT:   // Whether the original reads this column (for each group of taps).
// CHECK-NEXT:   const bool readsColumn0 = (col >= xBegin && col < xEnd);
// CHECK-NEXT:   const bool readsColumn1 = (col >= xBegin - 1 && col < xEnd - 1);
// CHECK-NEXT:   for (
// The row above and below are read in this column only, the row itself
// one column to the west.
// CHECK:            cache[c] = (readsColumn0 && row >= yBegin - 1 && row < yEnd - 1) ||
// CHECK-NEXT:           (readsColumn1 && row >= yBegin && row < yEnd) ||
// CHECK-NEXT:           (readsColumn0 && row >= yBegin + 1 && row < yEnd + 1)
// Unit weights are spelled out.
// CHECK:            sum[i] = fma(1.0f, cache[i + 1], sum[i]);
// CHECK:      static void inclusive_systolic_launch(

// REMARK-DAG: bounds.cu:[[@LINE+2]]:17: remark: rewritten: 'shifted' runs as shifted_systolic_aligned (2D irregular radius 1: 4 points (-1,0) (1,0) (0,-1) (0,1) into out from in; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void shifted(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x < W - 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}
// The box is in coordinates: the stored x = coordinate + 1 < W - 1.
// CHECK:      shifted_systolic(
// CHECK:        const int xBegin = 0, xEnd = (int)::min(extentX, (long long)(W - 1) - 1);
// CHECK-NEXT:   const int yBegin = 0, yEnd = (int)::min(extentY, (long long)(H - 1) - 1);
// CHECK:        const bool readsColumn0 = (col >= xBegin && col < xEnd);
// CHECK-NEXT:   const bool readsColumn1 = (col >= xBegin - 1 && col < xEnd - 1) ||{{[[:space:]]+}}(col >= xBegin + 1 && col < xEnd + 1);
// CHECK:              ? in[col + W * row + (W + 1)]
// CHECK:            sum[i] = fma(0.25f, cache[i + 1], sum[i]);
// CHECK:                out[outX + W * outY + (W + 1)] = sum[i];

// REMARK-DAG: bounds.cu:[[@LINE+2]]:17: remark: rewritten: 'unguarded' runs as unguarded_systolic_aligned (2D irregular radius 2: 2 points (1,0) (0,2) into out from in; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void unguarded(const float *__restrict__ in, float *__restrict__ out,
                          int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * W + x] = in[y * W + x + 1] - in[(y + 2) * W + x];
}
// CHECK:      unguarded_systolic(
// CHECK:        const int xBegin = 0, xEnd = (int)extentX;
// CHECK-NEXT:   const int yBegin = 0, yEnd = (int)extentY;
// Rows y .. y + 2 are cached (C = P + 2) although y + 1 is never read.
// CHECK:        const bool readsColumn0 = (col >= xBegin + 1 && col < xEnd + 1);
// CHECK-NEXT:   const bool readsColumn1 = (col >= xBegin && col < xEnd);
// CHECK:            const int row = tileY + c;
// CHECK-NEXT:       cache[c] = (readsColumn0 && row >= yBegin && row < yEnd) ||
// CHECK-NEXT:           (readsColumn1 && row >= yBegin + 2 && row < yEnd + 2)
// CHECK:            sum[i] = fma(-1.0f, cache[i + 2], sum[i]);
// CHECK:            sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
// CHECK:            sum[i] = fma(1.0f, cache[i], sum[i]);

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-LABEL: void run(
  // CHECK:        inclusive_systolic_launch(grid, block, 0, 0, in, out, W, H, 3, 2);
  // CHECK-NEXT:   shifted_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:   unguarded_systolic_launch(grid, block, 0, 0, in, out, W);
  inclusive<<<grid, block>>>(in, out, W, H, 3, 2);
  shifted<<<grid, block>>>(in, out, W, H);
  unguarded<<<grid, block>>>(in, out, W);
}
