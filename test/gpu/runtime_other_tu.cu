//===- test/gpu/runtime_other_tu.cu - A second translation unit -----------===//
//
// Records a device error and allocates from the pool in another translation
// unit, so that test_runtime.cu can check that checkLaunch() there sees both
// (one program-wide device state, see config.cuh).
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/runtime.cuh"

namespace {

__global__ void otherTuKernel(cudaError_t error, unsigned long long bytes) {
  cuda_rewrite::poolAllocate(bytes);
  if (threadIdx.x == 0 && blockIdx.x == 0)
    CUDA_REWRITE_DEVICE_CHECK(error);
}

} // namespace

/// One block of 32 threads each allocating `bytes`; thread 0 records `error`.
void launchInOtherTu(cudaStream_t stream, cudaError_t error,
                     unsigned long long bytes) {
  otherTuKernel<<<1, 32, 0, stream>>>(error, bytes);
}
