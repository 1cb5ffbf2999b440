// Convolutions whose weights come from a filter array. A filter passed as a
// pointer is copied to shared memory once per block (SSAM section 4.6)
// and the taps become a loop over it; a __constant__ filter is read where
// it is; a filter with two subscripts is spelled out tap by tap.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// REMARK: conv-filter.cu:[[@LINE+2]]:17: remark: rewritten: 'conv3x3' runs as conv3x3_systolic_wide (2D box 3x3 (x 0..2, y 0..2): 9 points (0,0) (1,0) (2,0) (0,1) (1,1) (2,1) (0,2) (1,2) (2,2) into out from in; 1 launch rewritten): wide lanes: {{.*}}; overlapped form: P = 16 rows per thread
#pragma cuda_rewrite systolic
__global__ void conv3x3(const float *__restrict__ in, float *__restrict__ out,
                        const float *__restrict__ w, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W - 2 || y >= H - 2)
    return;
  float s = 0;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i)
      s += w[j * 3 + i] * in[(y + j) * W + x + i];
  out[y * W + x] = s;
}
// CHECK:      struct conv3x3_systolic_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 16;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 18;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Halo = 2;
// CHECK:      conv3x3_systolic(const float *__restrict__ in, float *__restrict__ out,
// CHECK-NEXT:     const float *__restrict__ w, int W, int H, long long extentX,
// CHECK-NEXT:     long long extentY) {
// CHECK-NEXT:   using Shape = conv3x3_systolic_shape;
// The filter's nine elements, staged before any warp returns.
// CHECK-NEXT:   // The filter, shared by the block (SSAM, section 4.6): 'w'[0..8].
// CHECK-NEXT:   __shared__ float filter[9];
// CHECK-NEXT:   for (int k = threadIdx.x; k < 9; k += blockDim.x)
// CHECK-NEXT:     filter[k] = w[k];
// CHECK-NEXT:   __syncthreads();
// CHECK:        const int xBegin = 0, xEnd = (int)::min(extentX, (long long)(W - 2));
// CHECK:          return; // The whole warp is outside.
// The taps sit at x .. x + 2: lane 0 holds the first column.
// CHECK:        const int col = tileX + lane; // This lane's input column.
// CHECK-NEXT:   // Whether the original reads this column (for each group of taps).
// CHECK-NEXT:   const bool readsColumn0 = (col >= xBegin && col < xEnd + 2);
// CHECK:            cache[c] = (readsColumn0 && row >= yBegin && row < yEnd + 2)
// The filter loop (SSAM, Listing 1): columns outside, rows inside.
// CHECK:          for (int m = 0; m < 3; ++m) { // Columns x .. x + 2.
// CHECK-NEXT:       if (m > 0)
// CHECK:                sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
// CHECK:            for (int n = 0; n < 3; ++n) {
// CHECK-NEXT:         const float weight = filter[0 + 1 * (m) + 3 * (n)];
// CHECK:                sum[i] = fma(weight, cache[i + n], sum[i]);
// CHECK:                out[outX + W * outY] = sum[i];
// CHECK:      static void conv3x3_systolic_launch(dim3 grid, dim3 block, size_t sharedBytes,
// CHECK-NEXT:     cudaStream_t stream,
// CHECK-NEXT:     const float *__restrict__ in,
// CHECK-NEXT:     float *__restrict__ out,
// CHECK-NEXT:     const float *__restrict__ w, int W, int H) {

// A __constant__ filter centred on the point: no staging, the loop reads
// the array with the centre at index 12.
__constant__ float cw[25];
// REMARK: conv-filter.cu:[[@LINE+2]]:17: remark: rewritten: 'conv5x5' runs as conv5x5_systolic_wide (2D box radius 2: 25 points
#pragma cuda_rewrite systolic
__global__ void conv5x5(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  float s = 0.0f;
  for (int j = -2; j <= 2; ++j)
    for (int i = -2; i <= 2; ++i)
      s += cw[(j + 2) * 5 + (i + 2)] * in[(y + j) * W + (x + i)];
  out[y * W + x] = s;
}
// CHECK:      struct conv5x5_systolic_shape {
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 16;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 20;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Halo = 4;
// CHECK:      conv5x5_systolic(const float *__restrict__ in, float *__restrict__ out, int W,
// CHECK-NEXT:     int H, long long extentX, long long extentY) {
// CHECK-NOT:    __shared__
// CHECK:        const int col = tileX + lane - 2; // This lane's input column.
// CHECK:          for (int m = 0; m < 5; ++m) { // Columns x - 2 .. x + 2.
// CHECK:              const float weight = float(cw[12 + 1 * (m - 2) + 5 * (n - 2)]);
// CHECK:      static void conv5x5_systolic_launch(

// Two subscripts: one fma per tap, named by its constant subscripts.
__constant__ float c2[3][3];
// REMARK: conv-filter.cu:[[@LINE+2]]:17: remark: rewritten: 'conv2sub' runs as conv2sub_systolic_aligned (2D box radius 1: 9 points
#pragma cuda_rewrite systolic
__global__ void conv2sub(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  float s = 0.0f;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i)
      s += c2[j][i] * in[(y + j - 1) * W + (x + i - 1)];
  out[y * W + x] = s;
}
// CHECK:      conv2sub_systolic(
// CHECK-NOT:    for (int m
// CHECK:          // Column x - 1.
// CHECK:            sum[i] = fma(float(c2[0][0]), cache[i], sum[i]);
// CHECK:            sum[i] = fma(float(c2[1][0]), cache[i + 1], sum[i]);
// CHECK:            sum[i] = fma(float(c2[2][0]), cache[i + 2], sum[i]);
// CHECK:          // Column x.
// CHECK:            sum[i] = fma(float(c2[1][1]), cache[i + 1], sum[i]);
// CHECK:          // Column x + 1.
// CHECK:            sum[i] = fma(float(c2[2][2]), cache[i + 2], sum[i]);
// CHECK:      static void conv2sub_systolic_launch(

void run(const float *in, float *out, const float *w, int W, int H) {
  dim3 block(32, 4);
  dim3 grid((W + 31) / 32, (H + 3) / 4);
  // CHECK-LABEL: void run(
  // CHECK:      conv3x3_systolic_launch(grid, block, 0, 0, in, out, w, W, H);
  conv3x3<<<grid, block>>>(in, out, w, W, H);
  // CHECK-NEXT: conv5x5_systolic_launch(grid, block, 0, 0, in, out, W, H);
  conv5x5<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT: conv2sub_systolic_launch(grid, block, 0, 0, in, out, W, H);
  conv2sub<<<grid, block>>>(in, out, W, H);
}
