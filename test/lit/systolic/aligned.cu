// Aligned rows (SystolicModel.h, chooseVectorShape): for a filter reaching
// one column either side (up to seven rows) or a star of up to three rows,
// on contiguous parameter arrays, each lane keeps PerLane
// consecutive columns (one 16-byte vector per row), takes the columns beyond
// them from its neighbours by shuffle (the warp's edge lanes load theirs),
// and stores whole vectors where it writes all of them. The launcher runs
// the aligned kernel only when both rows 0 and 1 of 'in' and 'out' start on
// a vector boundary, else the overlapped kernel; vector(..) sets the width.
// Other 2D filters get wide lanes (wide.cu).
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: rm -f %t.bad.cu
// RUN: not %cuda-rewrite %s -o %t.bad.cu -- -DBAD_RANGE 2>&1 | FileCheck %s --check-prefix=BAD-RANGE
// RUN: not %cuda-rewrite %s -o %t.bad.cu -- -DBAD_FIT 2>&1 | FileCheck %s --check-prefix=BAD-FIT
// RUN: not test -e %t.bad.cu

// REMARK-DAG: aligned.cu:[[@LINE+2]]:17: remark: rewritten: 'star' runs as star_systolic_aligned ({{.*}}): aligned rows: each lane keeps 4 consecutive columns of 6 rows (one 16-byte load per row) and writes 4 x 4 points (~{{[0-9]+}} registers), {{.*}}; overlapped form: P = 16 {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void star(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = c0 * in[y * W + x] +
                   c1 * (in[y * W + x - 1] + in[y * W + x + 1] +
                         in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}
// Both kernels are generated: the overlapped one first.
// CHECK:      struct star_systolic_shape {
// CHECK:      __global__ void __launch_bounds__(star_systolic_shape::Warps * 32,{{[[:space:]]+}}star_systolic_shape::MinBlocks)
// CHECK-NEXT: star_systolic(
// CHECK:      struct star_systolic_aligned_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   using Vector = float4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int PerLane = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 6;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Left = 1,{{[[:space:]]+}}Right = 1;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Span = Left + PerLane + Right;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Columns = 32 * PerLane;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Warps = 4;
// CHECK:      star_systolic_aligned(const float *__restrict__ in, float *__restrict__ out,
// CHECK-NEXT:     int W, int H, float c0, float c1, long long extentX,
// CHECK-NEXT:     long long extentY) {
// CHECK:        const int col ={{[[:space:]]+}}tileX + Shape::PerLane * lane;
// A vector is loaded when the original reads one of its columns.
// CHECK:        const bool readsColumn0 = (col < xEnd && col + Shape::PerLane > xBegin);
// CHECK-NEXT:   const bool readsColumn1 ={{[[:space:]]+}}(col < xEnd + 1 && col + Shape::PerLane > xBegin - 1);
// CHECK-NEXT:   // Whether the original writes all of them (one vector store).
// CHECK-NEXT:   const bool writesAll = col >= xBegin && col + Shape::PerLane <= xEnd;
// CHECK:        float cache[Shape::Cached][Shape::Span];
// CHECK:          Shape::Vector v = {};
// CHECK:            v = *reinterpret_cast<const Shape::Vector *>(&in[col + W * row]);
// CHECK-NEXT:     cache[c][Shape::Left + 0] = v.x;
// CHECK-NEXT:     cache[c][Shape::Left + 1] = v.y;
// CHECK-NEXT:     cache[c][Shape::Left + 2] = v.z;
// CHECK-NEXT:     cache[c][Shape::Left + 3] = v.w;
// Only the centre rows (c = 1 .. P) use the columns beyond the lane's: the
// left one is lane - 1's last column, the right one lane + 1's first; lane 0
// and lane 31 load theirs where the original reads them.
// CHECK:          if (c >= 1 && c < 5) {
// CHECK-NEXT:       const float fromLane = __shfl_up_sync(0xffffffffu, cache[c][4], 1);
// CHECK-NEXT:       cache[c][0] = lane >= 1 ? fromLane
// CHECK-NEXT:           : ((col - 1 >= xBegin && col - 1 < xEnd) &&{{[[:space:]]+}}row >= yBegin - 1 && row < yEnd - 1) ||
// CHECK:                ? in[(col - 1) + W * row]{{[[:space:]]+}}: float(0);
// CHECK:          if (c >= 1 && c < 5) {
// CHECK-NEXT:       const float fromLane = __shfl_down_sync(0xffffffffu, cache[c][1], 1);
// CHECK-NEXT:       cache[c][5] = lane < 31 ? fromLane
// CHECK:                ? in[(col + 4) + W * row]{{[[:space:]]+}}: float(0);
// Each tap: P x PerLane fused multiply-adds at constant register offsets.
// CHECK:        float sum[Shape::Rows][Shape::PerLane] = {};
// CHECK:              sum[i][j] = fma(c1, cache[i + 1][j], sum[i][j]);
// CHECK:              sum[i][j] = fma(c1, cache[i][j + 1], sum[i][j]);
// CHECK:              sum[i][j] = fma(c0, cache[i + 1][j + 1], sum[i][j]);
// CHECK:              sum[i][j] = fma(c1, cache[i + 2][j + 1], sum[i][j]);
// CHECK:              sum[i][j] = fma(c1, cache[i + 1][j + 2], sum[i][j]);
// CHECK:            if (writesAll) {
// CHECK-NEXT:         *reinterpret_cast<Shape::Vector *>(&out[col + W * outY]) =
// CHECK-NEXT:             Shape::Vector{sum[i][0], sum[i][1], sum[i][2], sum[i][3]};
// CHECK-NEXT:       } else {
// CHECK:                if (col + j >= xBegin && col + j < xEnd)
// CHECK-NEXT:             out[col + j + W * outY] = sum[i][j];
// The launcher: the original for launches int cannot index, then the
// aligned kernel where rows 0 and 1 of both arrays are aligned, else the
// overlapped one.
// CHECK:      static void star_systolic_launch(
// CHECK:        if (extentX > (1LL << 30) || extentY > (1LL << 30)) {
// CHECK:        using Aligned = star_systolic_aligned_shape;
// CHECK-NEXT:   if ((((size_t)&in[0 + W * 0] |{{[[:space:]]+}}(size_t)&in[0 + W * 1] |{{[[:space:]]+}}(size_t)&out[0 + W * 0] |{{[[:space:]]+}}(size_t)&out[0 + W * 1]) %{{[[:space:]]+}}sizeof(Aligned::Vector)) == 0) {
// CHECK-NEXT:     const long long perBlock = (long long)Aligned::Warps * Aligned::Columns;
// CHECK:          star_systolic_aligned<<<systolicGrid, Aligned::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, c0, c1, extentX, extentY);
// CHECK-NEXT:     return;
// CHECK-NEXT:   }
// CHECK:        star_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, c0, c1, extentX, extentY);

// double: two columns per lane (double2); two rows of taps, so C = P + 1.
// REMARK-DAG: aligned.cu:[[@LINE+2]]:17: remark: rewritten: 'starDouble' runs as starDouble_systolic_aligned ({{.*}}): aligned rows: each lane keeps 2 consecutive columns of 5 rows {{.*}} writes 2 x 4 points {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void starDouble(const double *__restrict__ in,
                           double *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = 0.5 * in[y * W + x] + 0.25 * in[y * W + x - 1] +
                   0.25 * in[(y + 1) * W + x];
}
// CHECK:      struct starDouble_systolic_aligned_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   using Vector = double2;
// The taps reach one column left and none right.
// CHECK:        static constexpr int Left = 1,{{[[:space:]]+}}Right = 0;
// CHECK:          cache[c][Shape::Left + 1] = v.y;
// CHECK-NOT:      __shfl_down_sync
// CHECK:        double sum[Shape::Rows][Shape::PerLane] = {};

// A 3x3 box is aligned too, and uses the columns beyond the lane's in every
// cached row.
// REMARK-DAG: aligned.cu:[[@LINE+2]]:17: remark: rewritten: 'box' runs as box_systolic_aligned ({{.*}}): aligned rows: each lane keeps 4 consecutive columns of 6 rows {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void box(const float *__restrict__ in, float *__restrict__ out,
                    int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  float s = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      s += in[(y + dy) * W + x + dx];
  out[y * W + x] = s / 9;
}
// CHECK:      box_systolic_aligned(
// CHECK:          // Column col - 1: lane - 1's; lanes below 1 load it.
// CHECK-NEXT:     {
// CHECK-NEXT:       const float fromLane = __shfl_up_sync(0xffffffffu, cache[c][4], 1);

// A 5x5 box measured slower aligned: wide lanes (wide.cu), not aligned rows.
// REMARK-DAG: aligned.cu:[[@LINE+2]]:17: remark: rewritten: 'wideBox' runs as wideBox_systolic_wide ({{.*}}): wide lanes: each lane keeps 4 consecutive columns {{.*}}; overlapped form: P = 16 {{.*}} [systolic]
#pragma cuda_rewrite systolic
__global__ void wideBox(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  float s = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx)
      s += in[(y + dy) * W + x + dx];
  out[y * W + x] = s / 25;
}
// CHECK-NOT:  struct wideBox_systolic_aligned_shape
// CHECK:      struct wideBox_systolic_wide_shape {

// vector(2) sets the width of the form the filter gets.
// REMARK-DAG: aligned.cu:[[@LINE+2]]:17: remark: rewritten: 'wideForced' runs as wideForced_systolic_wide ({{.*}}): wide lanes: each lane keeps 2 consecutive columns (vector(..) as given) of 8 rows {{.*}} [systolic]
#pragma cuda_rewrite systolic vector(2)
__global__ void wideForced(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  float s = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx)
      s += in[(y + dy) * W + x + dx];
  out[y * W + x] = s / 25;
}
// CHECK:      struct wideForced_systolic_wide_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   using Vector = float2;
// CHECK-NOT:  struct wideForced_systolic_aligned_shape

// vector(1): the paper's overlapped blocking only.
// REMARK-DAG: aligned.cu:[[@LINE+2]]:17: remark: rewritten: 'starOverlapped' runs as starOverlapped_systolic ({{.*}}): P = 16 {{.*}} [systolic]
#pragma cuda_rewrite systolic vector(1)
__global__ void starOverlapped(const float *__restrict__ in,
                               float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}
// CHECK-NOT:  struct starOverlapped_systolic_aligned_shape

// Clauses no kernel or not this one can take are errors at the clause, and
// nothing is written: a vector wider than 16 bytes or not a power of two (the
// pragma's grammar), a double vector of 4, and a vector form for a 3D stencil.
#ifdef BAD_RANGE
// BAD-RANGE: aligned.cu:[[@LINE+1]]:31: error: clause 'vector(3)' is out of range: 'vector' takes 1, 2 or 4 columns per lane (a vector of at most 16 bytes)
#pragma cuda_rewrite systolic vector(3)
__global__ void badWidth(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}
#endif
#ifdef BAD_FIT
// BAD-FIT-DAG: aligned.cu:[[@LINE+1]]:31: error: clause cannot apply here: vector(4) is not 1 or 2 (columns per lane: a double vector of at most 16 bytes) [systolic]
#pragma cuda_rewrite systolic vector(4)
__global__ void badDouble(const double *__restrict__ in,
                          double *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}
// BAD-FIT-DAG: aligned.cu:[[@LINE+1]]:31: error: clause cannot apply here: vector(4) asks for a vector form, which needs a 2D stencil that reads and writes parameter arrays with unit x stride and leaves a warp of 4-column lanes output columns [systolic]
#pragma cuda_rewrite systolic vector(4)
__global__ void cube(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= W - 1 || y >= H - 1 || z >= D - 1)
    return;
  out[(z * H + y) * W + x] =
      in[((z - 1) * H + y) * W + x] + in[((z + 1) * H + y) * W + x];
}
#endif

void run(const float *in, float *out, const double *din, double *dout, int W,
         int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  star<<<grid, block>>>(in, out, W, H, 0.5f, 0.125f);
  starDouble<<<grid, block>>>(din, dout, W, H);
  box<<<grid, block>>>(in, out, W, H);
  wideBox<<<grid, block>>>(in, out, W, H);
  wideForced<<<grid, block>>>(in, out, W, H);
  starOverlapped<<<grid, block>>>(in, out, W, H);
#ifdef BAD_RANGE
  badWidth<<<grid, block>>>(in, out, W, H);
#endif
#ifdef BAD_FIT
  badDouble<<<grid, block>>>(din, dout, W, H);
  cube<<<dim3(W / 32, H / 8, 64), dim3(32, 8, 1)>>>(in, out, W, H, 64);
#endif
}
