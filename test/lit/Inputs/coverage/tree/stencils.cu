// A stencil the systolic pass rewrites under --auto, one it refuses, and a
// kernel no pass has a candidate in.
__global__ void smooth5(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.5f * in[y * W + x] + 0.125f * in[y * W + x - 1] +
                     0.125f * in[y * W + x + 1] + 0.125f * in[(y - 1) * W + x] +
                     0.125f * in[(y + 1) * W + x];
}

__global__ void smooth1d(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3;
}

__global__ void scale(float *p, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] *= k;
}

void run(const float *in, float *out, float *tmp, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  smooth5<<<grid, block>>>(in, out, W, H);
  smooth1d<<<(W + 255) / 256, 256>>>(in, tmp, W);
  scale<<<(W + 255) / 256, 256>>>(out, 2.f, W);
}
