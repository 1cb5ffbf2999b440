//===- cuda_rewrite/search.cuh - Sorted-prefix search ----------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// An aggregated child grid (KLAP, section II-A) runs the blocks of many
// original launches back to back. The parent stores the exclusive prefix sums
// of the original grid sizes; each block of the aggregated child finds the
// launch it belongs to as the last prefix sum not above its block id
// (upper_bound - 1), then its original block id as the difference.
//
// A plain binary search: libcu++ in CUDA 13 ships no public
// <cuda/std/algorithm>, and `upper_bound` is all that is needed. All threads
// of a block search the same array for the same value, so their loads are
// broadcasts and the search costs about log2(n) cached loads.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_SEARCH_CUH
#define CUDA_REWRITE_SEARCH_CUH

#include "cuda_rewrite/config.cuh"

#include <cuda/std/type_traits>

namespace cuda_rewrite {

/// Index of the first of the `n` ascending values at `first` that is greater
/// than `value`; `n` if there is none. Like std::upper_bound, for host and
/// device code.
template <typename T, typename Index>
__host__ __device__ constexpr Index
upperBound(const T *first, Index n, cuda::std::type_identity_t<T> value) {
  static_assert(cuda::std::is_integral_v<Index>, "Index must be an integer");
  Index low = 0;
  while (n > 0) {
    const Index half = n / 2;
    if (value < first[low + half]) {
      n = half;
    } else {
      low += half + 1;
      n -= half + 1;
    }
  }
  return low;
}

/// The launch that aggregated block `blockId` belongs to: given the exclusive
/// prefix sums `offsets[0..n)` of the original grid sizes (ascending,
/// normally starting at 0), the largest i with offsets[i] <= blockId.
/// Launches of zero blocks share their offset with the next launch and are
/// never returned, since the last of equal offsets wins. Returns -1 if n is 0
/// or blockId is below offsets[0]. A blockId at or past the total gives the
/// last launch, so callers with spare blocks compare against the total.
template <typename T, typename Index>
__host__ __device__ constexpr Index
findLaunch(const T *offsets, Index n, cuda::std::type_identity_t<T> blockId) {
  static_assert(cuda::std::is_signed_v<Index>,
                "Index must be signed to return -1");
  return upperBound(offsets, n, blockId) - 1;
}

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_SEARCH_CUH
