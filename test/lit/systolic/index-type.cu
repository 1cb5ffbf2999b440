// The generated kernel indexes with int only when the original computes
// every index in a signed type of at most 32 bits (then every index it uses
// fits in int); otherwise it keeps 64-bit indices and launches need no
// fallback for their size.
// RUN: %cuda-rewrite %s -o %t.cu --
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// A size_t index: 64-bit.
#pragma cuda_rewrite systolic
__global__ void wide(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y < H) {
    size_t i = (size_t)y * W + x;
    out[i] = in[i - 1] + in[i + 1];
  }
}
// CHECK-LABEL: wide_systolic(
// CHECK:        const long long xBegin = 1LL, xEnd = ::min(extentX, (long long)(W - 1));
// CHECK:        const long long col = tileX + lane - 1;
// CHECK:            const long long row = tileY + c;
// CHECK-LABEL: static void wide_systolic_launch(
// CHECK-NOT:    (1LL << 30)
// CHECK:        wide_systolic<<<

// An unsigned index: its values may exceed int's, so 64-bit too.
#pragma cuda_rewrite systolic
__global__ void unsignedIndex(const float *__restrict__ in,
                              float *__restrict__ out, unsigned W, unsigned H) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y < H)
    out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}
// CHECK-LABEL: unsignedIndex_systolic(
// CHECK:        const long long col = tileX + lane - 1;

// int throughout: int indices, and launches beyond 2^30 threads along a
// dimension run the original.
#pragma cuda_rewrite systolic
__global__ void narrow(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y < H)
    out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}
// CHECK-LABEL: narrow_systolic(
// CHECK:        const int xBegin = 1, xEnd = (int)::min(extentX, (long long)(W - 1));
// CHECK:        const int col = tileX + lane - 1;
// CHECK-LABEL: static void narrow_systolic_launch(
// CHECK:        if (extentX > (1LL << 30) || extentY > (1LL << 30)) {
// CHECK-NEXT:     narrow<<<grid, block, sharedBytes, stream>>>(in, out, W, H);

void run(const float *in, float *out, int W, int H) {
  dim3 b(32, 8), g(W / 32, H / 8);
  wide<<<g, b>>>(in, out, W, H);
  unsignedIndex<<<g, b>>>(in, out, W, H);
  narrow<<<g, b>>>(in, out, W, H);
}
