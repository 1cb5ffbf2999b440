// Wide lanes (SystolicModel.h, chooseVectorShape): every 2D filter on
// contiguous parameter arrays that aligned rows do not take (reaching
// further than one column, or taller) runs the paper's overlapped blocking
// with PerLane consecutive columns per lane, one 16-byte vector per cached
// row. Partial sums move one column per filter column, PerLane - 1 of them
// between a lane's registers and one from the lane below by shuffle; after
// the last filter column they move on to whole vectors (RightPad, max dx
// rounded up to PerLane), so that each lane stores whole vectors. A warp
// loads LeftPad columns left of its outputs and RightPad right of them. The
// launcher runs the wide kernel only when rows 0 and 1 of 'in' and 'out'
// start on a vector boundary, else the overlapped kernel; vector(1) asks for
// the overlapped form alone.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

constexpr int R = 5;
constexpr int Side = 2 * R + 1;

// An 11x11 filter loop with a pointer filter (2d121pt): float4, P = 4,
// 14 cached rows; 5 columns either side round up to 8, so a warp writes
// 128 - 16 = 112 columns.
// REMARK-DAG: wide.cu:[[@LINE+2]]:17: remark: rewritten: 'conv11' runs as conv11_systolic_wide (2D box radius 5: 121 points into out from in; 1 launch rewritten): wide lanes: each lane keeps 4 consecutive columns of 14 rows (one 16-byte load per row) and passes partial sums one column at a time, so a warp writes 112 of its 128 columns and shuffles once per 4 points; P = 4 (the best of a sweep on an H200); 75% of the loads are halo; 128 threads per block; the overlapped form runs where the arrays' rows are not 16-byte aligned; overlapped form: P = 16 {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void conv11(const float *__restrict__ in, float *__restrict__ out,
                       const float *__restrict__ filter, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R)
    return;
  int i = y * W + x;
  float sum = 0;
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx)
      sum += filter[(dy + R) * Side + dx + R] * in[i + dy * W + dx];
  out[i] = sum;
}
// Both kernels are generated: the overlapped one first, with the filter
// staged as it is.
// CHECK:      struct conv11_systolic_shape {
// CHECK:      conv11_systolic(const float *__restrict__ in, float *__restrict__ out,
// CHECK-NEXT:     const float *__restrict__ filter, int W, int H,
// CHECK-NEXT:     long long extentX, long long extentY) {
// CHECK:        __shared__ float filter_[121];
// CHECK:            const float weight = filter_[60 + 1 * (m - 5) + 11 * (n - 5)];
// CHECK:      struct conv11_systolic_wide_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   using Vector = float4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int PerLane = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 14;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int LeftPad = 8;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int RightPad = 8;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Columns = 32 * PerLane - LeftPad - RightPad;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Warps = 4;
// CHECK-NEXT: // blocks resident per SM (~100 registers per thread)
// CHECK-NEXT:   static constexpr int MinBlocks = 4;
// CHECK-NEXT: };
// CHECK:      __global__ void __launch_bounds__(conv11_systolic_wide_shape::Warps * 32,{{[[:space:]]+}}conv11_systolic_wide_shape::MinBlocks)
// CHECK-NEXT: conv11_systolic_wide(const float *__restrict__ in, float *__restrict__ out,
// CHECK-NEXT:     const float *__restrict__ filter, int W, int H,
// CHECK-NEXT:     long long extentX, long long extentY) {
// CHECK-NEXT:   using Shape = conv11_systolic_wide_shape;
// The filter staged transposed, a row of 12 (whole vectors) per filter
// column: filter_[m][n] weighs dx = m - 5, dy = n - 5.
// CHECK:        __shared__ __align__(16) float filter_[11][12];
// CHECK-NEXT:   for (int k = threadIdx.x; k < 11 * 11; k += blockDim.x)
// CHECK-NEXT:     filter_[k / 11][k % 11] ={{[[:space:]]+}}filter[60 + 1 * ((k / 11) - 5) + 11 * ((k % 11) - 5)];
// CHECK-NEXT:   __syncthreads();
// CHECK:        const int xBegin = 5, xEnd = (int)::min(extentX, (long long)(W - 5));
// CHECK:          return; // The whole warp is outside.
// CHECK-NEXT:   const int col = tileX - Shape::LeftPad +{{[[:space:]]+}}Shape::PerLane * lane;
// CHECK-NEXT:   // Whether the original reads one of this lane's columns (for each group of{{([[:space:]]+//)?}} taps).
// CHECK-NEXT:   const bool readsColumn0 ={{[[:space:]]+}}(col < xEnd + 5 && col + Shape::PerLane > xBegin - 5);
// One vector load per cached row.
// CHECK:          float cache[Shape::Cached][Shape::PerLane];
// CHECK:            const int row = tileY + c - 5;
// CHECK-NEXT:       Shape::Vector v = {};
// CHECK-NEXT:       if ((readsColumn0 && row >= yBegin - 5 && row < yEnd + 5))
// CHECK-NEXT:         v = *reinterpret_cast<const Shape::Vector *>(&in[col + W * row]);
// CHECK-NEXT:       cache[c][0] = v.x;
// CHECK-NEXT:       cache[c][1] = v.y;
// CHECK-NEXT:       cache[c][2] = v.z;
// CHECK-NEXT:       cache[c][3] = v.w;
// The filter loop: before each filter column but the first, the sums move
// one column on, the last from the lane below.
// CHECK:          float sum[Shape::Rows][Shape::PerLane] = {};
// CHECK:          for (int m = 0; m < 11; ++m) { // Columns x - 5 .. x + 5.
// CHECK-NEXT:       if (m > 0) {
// CHECK:                const float fromLane ={{[[:space:]]+}}__shfl_up_sync(0xffffffffu, sum[i][Shape::PerLane - 1], 1);
// CHECK-NEXT:           #pragma unroll
// CHECK-NEXT:           for (int j = Shape::PerLane - 1; j > 0; --j)
// CHECK-NEXT:             sum[i][j] = sum[i][j - 1];
// CHECK-NEXT:           sum[i][0] = fromLane;
// CHECK:            for (int n = 0; n < 11; ++n) {
// CHECK-NEXT:         const float weight = filter_[m][n];
// CHECK:                  sum[i][j] = fma(weight, cache[i + n][j], sum[i][j]);
// Max dx is 5, RightPad 8: three more moves to whole vectors.
// CHECK:          // Pass the partial sums 3 columns on: within the lane, and from the lane{{([[:space:]]+//)?}} below.
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 3; ++k)
// CHECK:              const float fromLane ={{[[:space:]]+}}__shfl_up_sync(0xffffffffu, sum[i][Shape::PerLane - 1], 1);
// CHECK:          const int outX = col - Shape::RightPad;
// CHECK:          const bool writesAll = writes(0) && writes(Shape::PerLane - 1);
// CHECK:            if (writesAll) {
// CHECK-NEXT:         *reinterpret_cast<Shape::Vector *>(&out[outX + W * outY]) =
// CHECK-NEXT:             Shape::Vector{sum[i][0], sum[i][1], sum[i][2], sum[i][3]};
// CHECK-NEXT:       } else {
// CHECK:                if (writes(j))
// CHECK-NEXT:             out[outX + j + W * outY] = sum[i][j];
// The launcher: the original for launches int cannot index, then the wide
// kernel where rows 0 and 1 of both arrays are aligned, else the overlapped
// one.
// CHECK:      static void conv11_systolic_launch(
// CHECK:        using Shape = conv11_systolic_shape;
// CHECK:        if (extentX > (1LL << 30) || extentY > (1LL << 30)) {
// CHECK-NEXT:     conv11<<<grid, block, sharedBytes, stream>>>(in, out, filter, W, H);
// CHECK:        using Aligned = conv11_systolic_wide_shape;
// CHECK-NEXT:   if ((((size_t)&in[0 + W * 0] |{{[[:space:]]+}}(size_t)&in[0 + W * 1] |{{[[:space:]]+}}(size_t)&out[0 + W * 0] |{{[[:space:]]+}}(size_t)&out[0 + W * 1]) %{{[[:space:]]+}}sizeof(Aligned::Vector)) == 0) {
// CHECK-NEXT:     const long long perBlock = (long long)Aligned::Warps * Aligned::Columns;
// CHECK:          conv11_systolic_wide<<<systolicGrid, Aligned::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, filter, W, H, extentX, extentY);
// CHECK-NEXT:     return;
// CHECK-NEXT:   }
// CHECK-NEXT:   const long long perBlock = (long long)Shape::Warps * Shape::Columns;
// CHECK:        conv11_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, filter, W, H, extentX, extentY);
// CHECK-NEXT: }

// A radius-2 star with literal weights (2d9pt): P = 8 for a star of up to
// five rows; 2 columns either side round up to 4.
// REMARK-DAG: wide.cu:[[@LINE+2]]:17: remark: rewritten: 'star9' runs as star9_systolic_wide ({{.*}}): wide lanes: each lane keeps 4 consecutive columns of 12 rows (one 16-byte load per row) and passes partial sums one column at a time, so a warp writes 120 of its 128 columns and shuffles once per 4 points; P = 8 (for a star of up to 5 rows); {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void star9(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  int i = y * W + x;
  out[i] = 0.25f * in[i] + 0.1171875f * in[i - 1] + 0.1015625f * in[i + 1] +
           0.0546875f * in[i - 2] + 0.0390625f * in[i + 2] +
           0.1328125f * in[i - W] + 0.1484375f * in[i + W] +
           0.0703125f * in[i - 2 * W] + 0.0859375f * in[i + 2 * W];
}
// CHECK:      struct star9_systolic_wide_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   using Vector = float4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int PerLane = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 8;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 12;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int LeftPad = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int RightPad = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Columns = 32 * PerLane - LeftPad - RightPad;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Warps = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int MinBlocks = 5;
// CHECK:      star9_systolic_wide(const float *__restrict__ in, float *__restrict__ out,
// CHECK-NEXT:     int W, int H, long long extentX, long long extentY) {
// No filter to stage.
// CHECK-NOT:    __shared__
// CHECK:        const int xBegin = 2, xEnd = (int)::min(extentX, (long long)(W - 2));
// The centre row's taps reach two columns either side, the others none.
// CHECK:        const bool readsColumn0 = (col < xEnd && col + Shape::PerLane > xBegin);
// CHECK-NEXT:   const bool readsColumn1 ={{[[:space:]]+}}(col < xEnd + 2 && col + Shape::PerLane > xBegin - 2);
// CHECK:            if ((readsColumn0 && row >= yBegin - 2 && row < yEnd - 1) ||
// CHECK-NEXT:           (readsColumn1 && row >= yBegin && row < yEnd) ||
// CHECK-NEXT:           (readsColumn0 && row >= yBegin + 1 && row < yEnd + 2))
// CHECK-NEXT:         v = *reinterpret_cast<const Shape::Vector *>(&in[col + W * row]);
// Filter column by filter column, literal weights, a move between them.
// CHECK:          // Column x - 2.
// CHECK:                sum[i][j] = fma(0.0546875f, cache[i + 2][j], sum[i][j]);
// CHECK-NEXT:     // Pass the partial sums one column on: within the lane, and from the lane{{([[:space:]]+//)?}} below.
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int i = 0; i < Shape::Rows; ++i) {
// CHECK-NEXT:       const float fromLane ={{[[:space:]]+}}__shfl_up_sync(0xffffffffu, sum[i][Shape::PerLane - 1], 1);
// CHECK-NEXT:       #pragma unroll
// CHECK-NEXT:       for (int j = Shape::PerLane - 1; j > 0; --j)
// CHECK-NEXT:         sum[i][j] = sum[i][j - 1];
// CHECK-NEXT:       sum[i][0] = fromLane;
// CHECK-NEXT:     }
// CHECK-NEXT:     // Column x - 1.
// CHECK:                sum[i][j] = fma(0.1171875f, cache[i + 2][j], sum[i][j]);
// CHECK:          // Column x.
// CHECK:                sum[i][j] = fma(0.0703125f, cache[i][j], sum[i][j]);
// CHECK:                sum[i][j] = fma(0.1328125f, cache[i + 1][j], sum[i][j]);
// CHECK:                sum[i][j] = fma(0.25f, cache[i + 2][j], sum[i][j]);
// CHECK:                sum[i][j] = fma(0.1484375f, cache[i + 3][j], sum[i][j]);
// CHECK:                sum[i][j] = fma(0.0859375f, cache[i + 4][j], sum[i][j]);
// CHECK:          // Column x + 1.
// CHECK:                sum[i][j] = fma(0.1015625f, cache[i + 2][j], sum[i][j]);
// CHECK:          // Column x + 2.
// CHECK:                sum[i][j] = fma(0.0390625f, cache[i + 2][j], sum[i][j]);
// Max dx is 2, RightPad 4: two more moves.
// CHECK-NEXT:     // Pass the partial sums 2 columns on: within the lane, and from the lane{{([[:space:]]+//)?}} below.
// CHECK-NEXT:     #pragma unroll
// CHECK-NEXT:     for (int k = 0; k < 2; ++k)
// CHECK:          const int outX = col - Shape::RightPad;
// CHECK:              *reinterpret_cast<Shape::Vector *>(&out[outX + W * outY]) =
// CHECK:      static void star9_systolic_launch(
// CHECK:        using Aligned = star9_systolic_wide_shape;
// CHECK:          star9_systolic_wide<<<systolicGrid, Aligned::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, extentX, extentY);
// CHECK-NEXT:     return;
// CHECK:        star9_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, extentX, extentY);

// Taps at x .. x + 4: no columns loaded on the left, and max dx is a whole
// vector, so no moves after the last filter column.
// REMARK-DAG: wide.cu:[[@LINE+2]]:17: remark: rewritten: 'conv5' runs as conv5_systolic_wide ({{.*}}): wide lanes: each lane keeps 4 consecutive columns of 8 rows {{.*}} so a warp writes 124 of its 128 columns {{.*}}; P = 4 (the best of a sweep on an H200); {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void conv5(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W - 4 || y >= H - 4)
    return;
  float s = 0;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i)
      s += in[(y + j) * W + x + i];
  out[y * W + x] = s;
}
// CHECK:      struct conv5_systolic_wide_shape {
// CHECK:        static constexpr int LeftPad = 0;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int RightPad = 4;
// CHECK:      conv5_systolic_wide(
// CHECK:          // Column x + 4.
// CHECK-NOT:      Pass the partial sums
// CHECK:          const int outX = col - Shape::RightPad;

// double: double2, 2 columns either side are one vector.
// REMARK-DAG: wide.cu:[[@LINE+2]]:17: remark: rewritten: 'star9Double' runs as star9Double_systolic_wide ({{.*}}): wide lanes: each lane keeps 2 consecutive columns of 12 rows (one 16-byte load per row) {{.*}} so a warp writes 60 of its 64 columns and shuffles once per 2 points; P = 8 {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void star9Double(const double *__restrict__ in,
                            double *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  int i = y * W + x;
  out[i] = 0.5 * in[i] + 0.0625 * (in[i - 1] + in[i + 1] + in[i - 2] +
                                   in[i + 2] + in[i - W] + in[i + W] +
                                   in[i - 2 * W] + in[i + 2 * W]);
}
// CHECK:      struct star9Double_systolic_wide_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   using Vector = double2;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int PerLane = 2;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 8;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 12;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int LeftPad = 2;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int RightPad = 2;
// CHECK:      star9Double_systolic_wide(
// CHECK:            cache[c][1] = v.y;
// CHECK-NOT:        v.z
// CHECK:              const double fromLane ={{[[:space:]]+}}__shfl_up_sync(0xffffffffu, sum[i][Shape::PerLane - 1], 1);
// CHECK:          // Column x + 2.
// CHECK-NOT:      Pass the partial sums
// CHECK:              Shape::Vector{sum[i][0], sum[i][1]};

// vector(1): the paper's overlapped blocking only, no wide kernel and no
// alignment test in the launcher.
// REMARK-DAG: wide.cu:[[@LINE+2]]:17: remark: rewritten: 'star9Overlapped' runs as star9Overlapped_systolic ({{.*}}): P = 16 {{.*}} [systolic]
#pragma cuda_rewrite systolic vector(1)
__global__ void star9Overlapped(const float *__restrict__ in,
                                float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  int i = y * W + x;
  out[i] = 0.25f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - 2] +
                                     in[i + 2] + in[i - W] + in[i + W] +
                                     in[i - 2 * W] + in[i + 2 * W]);
}
// CHECK:      struct star9Overlapped_systolic_shape {
// CHECK-NOT:  star9Overlapped_systolic_wide
// CHECK:      static void star9Overlapped_systolic_launch(
// CHECK-NOT:    Aligned
// CHECK:        star9Overlapped_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, extentX, extentY);
// CHECK-NEXT: }
// CHECK-NOT:  star9Overlapped_systolic_wide

void run(const float *in, float *out, const float *filter, const double *din,
         double *dout, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  conv11<<<grid, block>>>(in, out, filter, W, H);
  star9<<<grid, block>>>(in, out, W, H);
  conv5<<<grid, block>>>(in, out, W, H);
  star9Double<<<grid, block>>>(din, dout, W, H);
  star9Overlapped<<<grid, block>>>(in, out, W, H);
}
