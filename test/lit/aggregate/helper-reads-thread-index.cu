// A child that calls a function reading threadIdx is not packed: several
// one-warp original blocks in one aggregated block would have the helper see
// the aggregated block's threadIdx.x (up to 255), not the original 0..31.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// REMARK: remark: rewritten: aggregated at kernel granularity into 'child_aggregated'
// CHECK: cr_launch.configure(/*packable=*/false,
// CHECK: cr_launch.configure(/*packable=*/true,

__device__ int tid() { return threadIdx.x; }
__global__ void child(int *out, int base) { out[base + threadIdx.x] = tid(); }
__global__ void plain(int *out, int base) { out[base + threadIdx.x] = base; }

#pragma cuda_rewrite aggregate
__global__ void parent(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    child<<<1, 32>>>(out, i * 32);
}

#pragma cuda_rewrite aggregate
__global__ void other(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    plain<<<1, 32>>>(out, i * 32);
}
