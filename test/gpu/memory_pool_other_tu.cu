//===- test/gpu/memory_pool_other_tu.cu - A second translation unit -------===//
//
// Allocates from the pool in a kernel of another translation unit: with
// -rdc, the pool state must be one program-wide instance (config.cuh), so
// these allocations and those of test_memory_pool.cu must not overlap and
// must add up in one `used` counter.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/memory_pool.cuh"

#include <cstdint>

namespace {

__global__ void otherTuKernel(const unsigned long long *sizes,
                              unsigned long long *addresses, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    addresses[i] = reinterpret_cast<std::uintptr_t>(
        cuda_rewrite::poolAllocateWarp(sizes[i]));
}

} // namespace

/// Launches one thread per size; returns the launch error.
cudaError_t allocateInOtherTu(const unsigned long long *sizes,
                              unsigned long long *addresses, int count) {
  otherTuKernel<<<(count + 127) / 128, 128>>>(sizes, addresses, count);
  return cudaGetLastError();
}

/// Where this translation unit sees the pool state.
cudaError_t poolStateAddressInOtherTu(void **address) {
  return cudaGetSymbolAddress(address, cuda_rewrite::detail::poolState);
}
