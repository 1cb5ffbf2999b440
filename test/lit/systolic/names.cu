// The generated kernel and launcher declare locals (lane, cache, filter,
// extentX, grid, i, sum, Shape, ...); a parameter or a global the kernel's
// texts use under the same name keeps it, and the local takes a trailing
// '_'. Functions the generated code calls are named from the global scope.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// REMARK: names.cu:[[@LINE+2]]:17: remark: rewritten: 'params' runs as params_systolic
#pragma cuda_rewrite systolic
__global__ void params(const float *__restrict__ cache, float *__restrict__ out,
                       const float *__restrict__ filter, int lane, int i,
                       int extentX, int grid, int sum) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= lane - 2 || y >= i - 2)
    return;
  float s = 0;
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k)
      s += filter[j * 3 + k] * cache[(y + j) * lane + x + k];
  out[y * lane + x] = s;
}
// CHECK:      params_systolic(const float *__restrict__ cache, float *__restrict__ out,
// CHECK-NEXT:     const float *__restrict__ filter, int lane, int i, int extentX,
// CHECK-NEXT:     int grid, int sum, long long extentX_, long long extentY) {
// CHECK:        __shared__ float filter_[9];
// CHECK-NEXT:   for (int k = threadIdx.x; k < 9; k += blockDim.x)
// CHECK-NEXT:     filter_[k] = filter[k];
// CHECK:        const int xBegin = 0, xEnd = (int)::min(extentX_, (long long)(lane - 2));
// CHECK-NEXT:   const int yBegin = 0, yEnd = (int)::min(extentY, (long long)(i - 2));
// CHECK:        const int lane_ = threadIdx.x % 32;
// CHECK:        const int col = tileX + lane_;
// CHECK:          float cache_[Shape::Cached];
// CHECK:            cache_[c] = (readsColumn0 && row >= yBegin && row < yEnd + 2)
// CHECK-NEXT:           ? cache[col + lane * row]
// CHECK:          float sum_[Shape::Rows] = {};
// CHECK:              const float weight = filter_[0 + 1 * (m) + 3 * (n)];
// CHECK:              for (int i_ = 0; i_ < Shape::Rows; ++i_)
// CHECK-NEXT:           sum_[i_] = fma(weight, cache_[i_ + n], sum_[i_]);
// CHECK:          if (lane_ >= Shape::Halo && outX >= xBegin && outX < xEnd) {
// CHECK:                out[outX + lane * outY] = sum_[i_];
// The launcher's parameters are renamed too, and its call forwards both.
// CHECK:      static void params_systolic_launch(dim3 grid_, dim3 block, size_t sharedBytes,
// CHECK-NEXT:     cudaStream_t stream,
// CHECK-NEXT:     const float *__restrict__ cache,
// CHECK-NEXT:     float *__restrict__ out,
// CHECK-NEXT:     const float *__restrict__ filter, int lane,
// CHECK-NEXT:     int i, int extentX, int grid, int sum) {
// CHECK:        const long long extentX_ = (long long)grid_.x * block.x;
// CHECK:        params_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}cache, out, filter, lane, i, extentX, grid, sum, extentX_, extentY);

// A global in the guard is as taken as a parameter.
__constant__ int filter;
// REMARK: names.cu:[[@LINE+2]]:17: remark: rewritten: 'global' runs as global_systolic
#pragma cuda_rewrite systolic
__global__ void global(const float *__restrict__ in, float *__restrict__ out,
                       const float *__restrict__ w, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W - filter || y >= H - 2)
    return;
  float s = 0;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i)
      s += w[j * 3 + i] * in[(y + j) * W + x + i];
  out[y * W + x] = s;
}
// CHECK:      global_systolic(
// CHECK:        __shared__ float filter_[9];
// CHECK-NEXT:   for (int k = threadIdx.x; k < 9; k += blockDim.x)
// CHECK-NEXT:     filter_[k] = w[k];
// CHECK:        const int xBegin = 0, xEnd = (int)::min(extentX, (long long)(W - filter));
// CHECK:              const float weight = filter_[0 + 1 * (m) + 3 * (n)];

// The alias of the shape struct in the kernel and the launcher is a local
// too.
// REMARK: names.cu:[[@LINE+2]]:17: remark: rewritten: 'shapeParam' runs as shapeParam_systolic
#pragma cuda_rewrite systolic
__global__ void shapeParam(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H,
                           float Shape) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = Shape * in[y * W + x - 1] + in[(y + 1) * W + x];
}
// CHECK:      shapeParam_systolic(const float *__restrict__ in, float *__restrict__ out,
// CHECK-NEXT:     int W, int H, float Shape, long long extentX,
// CHECK-NEXT:     long long extentY) {
// CHECK-NEXT:   using Shape_ = shapeParam_systolic_shape;
// CHECK:          for (int tileY = (int)blockIdx.y * Shape_::Rows; tileY < yEnd;
// CHECK:            sum[i] = fma(Shape, cache[i], sum[i]);
// CHECK:      static void shapeParam_systolic_launch(
// CHECK:          float Shape) {
// CHECK-NEXT:   using Shape_ = shapeParam_systolic_shape;
// CHECK:        shapeParam_systolic<<<systolicGrid, Shape_::Warps * 32, 0, stream>>>(

// Parameters named min and max hide the functions the box is computed
// with: the generated code names the global ones.
// REMARK: names.cu:[[@LINE+2]]:17: remark: rewritten: 'minMax' runs as minMax_systolic
#pragma cuda_rewrite systolic
__global__ void minMax(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H, int min, int max) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < min || x >= max || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
// CHECK:      minMax_systolic(
// CHECK:        const int xBegin = (int)::min(::max(0LL, (long long)(min)), extentX),{{[[:space:]]+}}xEnd = (int)::min(extentX, (long long)(max));

void run(const float *in, float *out, const float *w, int W, int H) {
  params<<<dim3(W / 32, H / 4), dim3(32, 4)>>>(in, out, w, W, H, 0, 0, 0);
  global<<<dim3(W / 32, H / 4), dim3(32, 4)>>>(in, out, w, W, H);
  shapeParam<<<dim3(W / 32, H / 8), dim3(32, 8)>>>(in, out, W, H, 2.0f);
  minMax<<<dim3(W / 32, H / 8), dim3(32, 8)>>>(in, out, W, H, 1, W - 1);
}
