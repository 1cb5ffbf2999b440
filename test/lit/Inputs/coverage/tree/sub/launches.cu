// A parent kernel whose device launches the aggregate pass rewrites.
__global__ void child(int *out, int base) { out[base + threadIdx.x] = base; }

__global__ void parent(int *out, const int *counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && counts[i] > 0)
    child<<<1, counts[i]>>>(out, 32 * i);
}
