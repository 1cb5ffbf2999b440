// Device-side cudaMalloc calls in a parent whose launches are aggregated
// become one heap allocation per block where every thread of the block
// reaches the call, else per warp (KLAP section II-C). A file whose device
// code frees memory keeps its calls: parts of one allocation cannot be freed
// one by one.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %cuda-rewrite --remarks %s -o %t.free.cu -- -DFREE_IN_DEVICE_CODE 2>&1 | FileCheck %s --check-prefix=FREE
// RUN: FileCheck %s --check-prefix=FREE-OUT < %t.free.cu

__global__ void fill(float *buffer, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    buffer[i] = i;
}

#pragma cuda_rewrite aggregate
__global__ void parent(const int *sizes, float **buffers, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int size = i < n ? sizes[i] : 0;
  float *buffer = nullptr;
  // REMARK: malloc.cu:[[@LINE+2]]:3: remark: rewritten: device-side cudaMalloc aggregated at block granularity: one heap allocation per block [aggregate]
  // FREE: malloc.cu:[[@LINE+1]]:3: remark: not rewritten: device-side cudaMalloc not aggregated: this file frees device memory (line [[#@LINE+28]]), and the parts of an aggregated allocation cannot be freed one by one [aggregate]
  cudaMalloc((void **)&buffer, size * sizeof(float));
  // CHECK: cuda_rewrite::aggregatedMallocBlock((void **)&buffer, size * sizeof(float));
  // FREE-OUT: {{^}}  cudaMalloc((void **)&buffer, size * sizeof(float));
  if (i < n) {
    buffers[i] = buffer;
    fill<<<(size + 31) / 32, 32>>>(buffer, size);
  }
}

#pragma cuda_rewrite aggregate
__global__ void divergent(const int *sizes, float **buffers, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float *buffer;
  // REMARK: malloc.cu:[[@LINE+1]]:3: remark: rewritten: device-side cudaMalloc aggregated at warp granularity: one heap allocation for the lanes that reach it together (not block granularity: the kernel may return before it) [aggregate]
  cudaMalloc(&buffer, sizes[i] * sizeof(float));
  // CHECK: cuda_rewrite::aggregatedMallocWarp(&buffer, sizes[i] * sizeof(float));
  buffers[i] = buffer;
  fill<<<(sizes[i] + 31) / 32, 32>>>(buffer, sizes[i]);
}
// CHECK: #include "cuda_rewrite/runtime.cuh"

#ifdef FREE_IN_DEVICE_CODE
__global__ void release(float **buffers, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    cudaFree(buffers[i]);
}
#endif
