// A coordinate may step by a constant per block (`blockIdx.x * 16 +
// threadIdx.x`) instead of blockDim. The original then covers the launch's
// threads without gaps or overlaps only when the block has that many
// threads along that dimension; the launcher runs the systolic kernel for
// such launches and the original kernel for any other.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// REMARK: block-factor.cu:[[@LINE+2]]:17: remark: rewritten: 'fixed' runs as fixed_systolic
#pragma cuda_rewrite systolic
__global__ void fixed(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * 16 + threadIdx.x;
  int y = threadIdx.y + 8 * blockIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
// CHECK:      static void fixed_systolic_launch(dim3 grid, dim3 block, size_t sharedBytes,
// CHECK-NEXT:     cudaStream_t stream,
// CHECK-NEXT:     const float *__restrict__ in,
// CHECK-NEXT:     float *__restrict__ out, int W, int H) {
// CHECK-NEXT:   using Shape = fixed_systolic_shape;
// CHECK-NEXT:   (void)sharedBytes;
// CHECK-NEXT:   const long long extentX = (long long)grid.x * block.x;
// CHECK-NEXT:   const long long extentY = (long long)grid.y * block.y;
// CHECK-NEXT:   // The original runs where this kernel cannot cover the launch exactly:
// CHECK-NEXT:   // - blocks of another width than fixed steps by;
// CHECK-NEXT:   // - extents beyond what int indices reach with headroom (this kernel, like{{([[:space:]]+//)?}} fixed, indexes with int).
// CHECK-NEXT:   if (block.x != 16 || block.y != 8 || extentX > (1LL << 30) ||{{[[:space:]]+}}extentY > (1LL << 30)) {
// CHECK-NEXT:     fixed<<<grid, block, sharedBytes, stream>>>(in, out, W, H);
// CHECK-NEXT:     return;
// CHECK-NEXT:   }

// Only the constant dimension is checked.
// REMARK: block-factor.cu:[[@LINE+2]]:17: remark: rewritten: 'mixed' runs as mixed_systolic
#pragma cuda_rewrite systolic
__global__ void mixed(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * 4 + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
// CHECK:      static void mixed_systolic_launch(
// CHECK:        if (block.y != 4 || extentX > (1LL << 30) || extentY > (1LL << 30)) {
// CHECK-NEXT:     mixed<<<grid, block, sharedBytes, stream>>>(in, out, W, H);

// With blockDim there is nothing to check.
// REMARK: block-factor.cu:[[@LINE+2]]:17: remark: rewritten: 'plain' runs as plain_systolic
#pragma cuda_rewrite systolic
__global__ void plain(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
// CHECK:      static void plain_systolic_launch(
// CHECK:        const long long extentY = (long long)grid.y * block.y;
// CHECK-NEXT:   // The original runs where this kernel cannot cover the launch exactly:
// CHECK-NEXT:   // - extents beyond what int indices reach with headroom (this kernel, like{{([[:space:]]+//)?}} plain, indexes with int).
// CHECK-NEXT:   if (extentX > (1LL << 30) || extentY > (1LL << 30)) {

void run(const float *in, float *out, int W, int H) {
  // CHECK-LABEL: void run(
  // CHECK-NEXT:    fixed_systolic_launch(dim3(W / 16, H / 8), dim3(16, 8), 0, 0, in, out, W, H);
  // CHECK-NEXT:    mixed_systolic_launch(dim3(W / 32, H / 4), dim3(32, 4), 0, 0, in, out, W, H);
  // CHECK-NEXT:    plain_systolic_launch(dim3(W / 32, H / 8), dim3(32, 8), 0, 0, in, out, W, H);
  fixed<<<dim3(W / 16, H / 8), dim3(16, 8)>>>(in, out, W, H);
  mixed<<<dim3(W / 32, H / 4), dim3(32, 4)>>>(in, out, W, H);
  plain<<<dim3(W / 32, H / 8), dim3(32, 8)>>>(in, out, W, H);
}
