// The launcher of a fused group names each host argument by the parameter
// that passes it, everywhere: in its relation checks too. Here `c` is also
// a name the fused kernel declares (its parameter becomes `c_`) and
// `img.w`, a member, becomes `img_w`; the derived stride W / 2 of `widen`
// is checked against the producer's row stride over those names (the
// checks once kept the arguments' source text, `(c / 2) == img.w`, which
// does not compile in the launcher).
// RUN: %cuda-rewrite %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK --allow-empty
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

// REMARK-NOT: error

struct Image {
  int w, h;
};

__global__ void blurY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x] + in[y * W + x];
}

__global__ void widen(const float *half, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  const int W2 = W / 2;
  out[y * W + x] = half[y * W2 + x / 2];
}

// CHECK: namespace fused_blurY_to_widen {
// CHECK: static bool launch(dim3 grid, dim3 block, cudaStream_t stream, const float *in,
// CHECK-NEXT: float *t, int img_w, int img_h, float *out, int c_) {
// CHECK: if (!((c_ - 1) / 2 < img_w && (c_ / 2) == img_w))
// CHECK-NEXT: return false;
// CHECK: void run(
void run(const float *in, float *t, float *out, Image img, int c) {
  dim3 b(32, 8), g((c + 31) / 32, (img.h + 7) / 8);
#pragma cuda_rewrite fuse
  {
    // CHECK: if (!fused_blurY_to_widen::launch(g, b, 0, in, t, img.w, img.h, out, c)) {
    blurY<<<g, b>>>(in, t, img.w, img.h);
    widen<<<g, b>>>(t, out, c, img.h);
  }
}
