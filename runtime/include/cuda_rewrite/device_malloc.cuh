//===- cuda_rewrite/device_malloc.cuh - Aggregated cudaMalloc --*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Device-side cudaMalloc calls made by many threads of a parent, aggregated
// as KLAP does (section II-C): the threads of a warp (or block)
// that allocate together add up their sizes, one of them calls cudaMalloc
// once for the sum, and each gets its part. The device heap serialises
// allocations, so one call per warp or block instead of one per thread is
// where the time goes.
//
// What changes for the program: the parts share one heap allocation, so none
// of them may be passed to cudaFree (the pass aggregates only in files that
// free no device memory), and a failed allocation fails for the whole group
// (each thread gets nullptr and the error, as if its own call had failed).
// Each part is aligned to 16 bytes, as the device heap aligns allocations.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_DEVICE_MALLOC_CUH
#define CUDA_REWRITE_DEVICE_MALLOC_CUH

#include "cuda_rewrite/scan.cuh"

#include <cuda/ptx>

namespace cuda_rewrite {

namespace detail {

/// The device heap's alignment: every part starts on it.
inline constexpr unsigned long long kHeapAlignment = 16;

__device__ __forceinline__ unsigned long long heapPadded(size_t bytes) {
  return (bytes + kHeapAlignment - 1) / kHeapAlignment * kHeapAlignment;
}

template <typename T>
__device__ __forceinline__ cudaError_t
handOut(T **ptr, void *base, unsigned long long offset, cudaError_t error) {
  *ptr = error == cudaSuccess && base
             ? reinterpret_cast<T *>(static_cast<char *>(base) + offset)
             : nullptr;
  return error;
}

} // namespace detail

/// cudaMalloc for the lanes that call it together (`__activemask()`): one
/// heap allocation per warp; lane i gets the part after the (padded) sizes
/// of the lanes below it.
template <typename T>
__device__ cudaError_t aggregatedMallocWarp(T **ptr, size_t bytes) {
  const unsigned mask = __activemask();
  unsigned long long total;
  const unsigned long long offset =
      activeExclusiveSum(mask, detail::heapPadded(bytes), &total);
  const unsigned leader = activeLeader(mask);
  void *base = nullptr;
  int error = cudaSuccess;
  if (cuda::ptx::get_sreg_laneid() == leader)
    error = cudaMalloc(&base, total);
  base = shuffle(mask, base, leader);
  error = shuffle(mask, error, leader);
  return detail::handOut(ptr, base, offset, static_cast<cudaError_t>(error));
}

/// cudaMalloc for every thread of the block (all must call it, each with
/// its own size, zero allowed): one heap allocation per block.
template <typename T>
__device__ cudaError_t aggregatedMallocBlock(T **ptr, size_t bytes) {
  __shared__ void *base;
  __shared__ int error;
  unsigned long long total;
  const unsigned long long offset =
      blockExclusiveSumDynamic(detail::heapPadded(bytes), &total);
  if (linearThreadIndex() == 0) {
    base = nullptr;
    error = cudaMalloc(&base, total);
  }
  __syncthreads();
  void *const myBase = base;
  const cudaError_t myError = static_cast<cudaError_t>(error);
  __syncthreads(); // Lets the next call overwrite `base` and `error`.
  return detail::handOut(ptr, myBase, offset, myError);
}

} // namespace cuda_rewrite

#endif
