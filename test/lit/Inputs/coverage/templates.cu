// Template kernels: one whose instantiation is a stencil, one whose is not,
// and one never instantiated.
template <int R>
__global__ void blur(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= R && x < W - R && y >= R && y < H - R)
    out[y * W + x] = 0.5f * in[y * W + x] + 0.25f * in[y * W + x - R] + 0.25f * in[y * W + x + R];
}
template <typename T> __global__ void fill(T *p, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
template <typename T> __global__ void unused(T *p) { p[0] = 0; }
void run(float *a, float *b, int W, int H) {
  blur<2><<<dim3(W / 32, H / 8), dim3(32, 8)>>>(a, b, W, H);
  blur<1><<<dim3(W / 32, H / 8), dim3(32, 8)>>>(a, b, W, H);
  fill<float><<<W, 256>>>(a, 1.f, W);
}
