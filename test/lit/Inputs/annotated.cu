// A parent kernel whose launch is annotated for aggregation.
__global__ void child(int *data) { data[threadIdx.x] += 1; }

#pragma cuda_rewrite aggregate granularity(warp)
__global__ void parent(int *data) {
  if (threadIdx.x == 0)
    child<<<1, 32>>>(data + blockIdx.x * 32);
}

int main() {
  int *data;
  cudaMalloc(&data, 32 * 4);
  parent<<<1, 32>>>(data);
  return cudaDeviceSynchronize() != cudaSuccess;
}
