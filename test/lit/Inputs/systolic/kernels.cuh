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

// Annotated here: the pragma is read (the systolic pass rewrites kernels of
// included files) and stays in this file.
#pragma cuda_rewrite systolic p(4)
__global__ void sharpen(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y >= H)
    return;
  out[y * W + x] = 2.0f * in[y * W + x] - 0.5f * in[y * W + x - 1] -
                   0.5f * in[y * W + x + 1];
}

// Only the systolic pass reads pragmas in included files.
#pragma cuda_rewrite promote
__global__ void chain(int *depth) {
  if (threadIdx.x == 0 && *depth > 0) {
    --*depth;
    chain<<<1, 32>>>(depth);
  }
}
