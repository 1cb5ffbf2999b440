// A program written for CUDA 12: the cudaThread* family and the launch API
// CUDA 13 removed.
#include <cstdio>

#define SYNC() cudaThreadSynchronize()

__global__ void fill(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 1.0f;
}

int main() {
  float *d;
  cudaMalloc(&d, 256 * sizeof(float));
  cudaThreadSetLimit(cudaLimitMallocHeapSize, 1 << 20);
  fill<<<1, 256>>>(d, 256);
  cudaThreadSynchronize();
  SYNC();
  cudaThreadExit();
  return 0;
}
