// A realistic CUDA 13 file: Thrust and CUB includes (under include/cccl),
// a CUB block reduction, a Thrust algorithm on the host, a dynamic-
// parallelism launch and a stencil; everything parses and is listed.
// RUN: %cuda-rewrite --list %s -- | FileCheck %s
// RUN: %cuda-rewrite --list --verbose %s -- 2>&1 >/dev/null | FileCheck %s --check-prefix=TIME
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>

constexpr int BlockThreads = 128;

__global__ void blockSums(const int *in, int *out, int n) {
  using Reduce = cub::BlockReduce<int, BlockThreads>;
  __shared__ typename Reduce::TempStorage storage;
  int i = blockIdx.x * BlockThreads + threadIdx.x;
  int sum = Reduce(storage).Sum(i < n ? in[i] : 0);
  if (threadIdx.x == 0)
    out[blockIdx.x] = sum;
}

__global__ void refine(int *cells, int level) {
  // CHECK: thrust-cub.cu:[[@LINE+1]]:45: device-launch: 'refine' launched from kernel 'refine' [in branch] -> aggregate: not rewritten: not annotated; {{.*}}; under --auto: would rewrite: aggregated at kernel granularity
    if (level > 0 && cells[blockIdx.x] > 4) refine<<<2, 32>>>(cells, level - 1);
}

// CHECK: thrust-cub.cu:[[@LINE+1]]:17: stencil: kernel 'smooth': 1D box radius 2: 5 points {{.*}} under --auto: would refuse: a 1-D stencil;
__global__ void smooth(const float *__restrict__ in, float *__restrict__ out,
                       int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 2 && i < n - 2)
    out[i] = (in[i - 2] + in[i - 1] + in[i] + in[i + 1] + in[i + 2]) / 5.0f;
}

int main() {
  thrust::device_vector<int> v(1 << 20);
  thrust::sequence(v.begin(), v.end());
  thrust::device_vector<int> sums(v.size() / BlockThreads);
  blockSums<<<sums.size(), BlockThreads>>>(thrust::raw_pointer_cast(v.data()),
                                           thrust::raw_pointer_cast(sums.data()),
                                           v.size());
  return thrust::reduce(sums.begin(), sums.end()) == 0;
}
// TIME: thrust-cub.cu: host-side parse {{[0-9.]+}} s
