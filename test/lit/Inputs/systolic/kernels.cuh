// Kernels in a project header, included by systolic/included.cu.
#pragma once

__global__ void smooth(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = 0.2f * (in[y * W + x] + in[y * W + x - 1] +
                           in[y * W + x + 1] + in[(y - 1) * W + x] +
                           in[(y + 1) * W + x]);
}

// Launched only from this header: its launch cannot be rewritten.
__global__ void edges(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x] - in[y * W + x - 1];
}

inline void runEdges(const float *in, float *out, int W, int H) {
  edges<<<dim3((W + 31) / 32, (H + 7) / 8), dim3(32, 8)>>>(in, out, W, H);
}
