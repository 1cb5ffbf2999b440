//===- cuda_rewrite/scan.cuh - Warp and block scans ------------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Prefix sums and maxima that launch aggregation needs (KLAP, section II-A):
// each parent thread contributes its child's grid size (summed into the
// aggregated grid and scanned into per-launch block offsets) and block size
// (the aggregated block is the maximum).
//
// Three families, by which threads take part:
//
//  * warp...(x): all 32 lanes of the warp, converged. Thin wrappers over
//    cub::WarpScan / cub::WarpReduce.
//  * block...<BlockDimX, BlockDimY, BlockDimZ>(x): all threads of a block
//    whose shape is known at compile time. Wrappers over cub::BlockScan /
//    cub::BlockReduce.
//  * active...(mask, x): an arbitrary subset of a warp's lanes, such as the
//    lanes that reach a launch (`__activemask()`), and block...Dynamic(x):
//    every thread of a block whose size is only known at run time, including
//    a last warp that is not full. Hand-written: CUB's warp collectives assume
//    that every lane of the logical warp participates and its block
//    collectives take the block shape as a template argument, but a rewritten
//    parent kernel neither knows its launch configuration nor has all lanes
//    active at a divergent launch site.
//
// Each call is a collective: every participating thread must make it, with
// the same `mask` where there is one. The block functions end with
// __syncthreads() so they can be called again at once.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_SCAN_CUH
#define CUDA_REWRITE_SCAN_CUH

#include "cuda_rewrite/config.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/util_ptx.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/functional>
#include <cuda/ptx>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

namespace cuda_rewrite {

/// `value` of lane `srcLane`, for every lane in `mask` (which must contain
/// `srcLane` and the caller); any trivially copyable T, such as a pointer
/// that a group leader allocated.
template <typename T>
__device__ __forceinline__ T shuffle(unsigned mask, T value, unsigned srcLane) {
  return cub::ShuffleIndex<kWarpThreads>(value, static_cast<int>(srcLane),
                                         mask);
}

/// The calling thread's index in its block, x fastest: the order of block
/// scans, and the order in which the hardware forms warps.
__device__ __forceinline__ unsigned linearThreadIndex() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

namespace detail {

/// Index of the highest lane in a non-empty `mask`.
__device__ __forceinline__ unsigned lastLane(unsigned mask) {
  return kWarpThreads - 1 - __clz(mask);
}

/// Inclusive scan with `op` over the lanes in `mask`, in lane order.
///
/// Kogge-Stone over the ranks of the lanes rather than their ids: in step d
/// each lane combines the value of the lane d active lanes below it, found
/// with __fns (which counts the starting lane as the first set bit, hence the
/// -(d + 1); it returns ~0u when there are fewer lanes below). The loop bound
/// depends only on `mask`, so every lane in it runs the same shuffles.
template <typename T, typename Op>
__device__ T maskedInclusiveScan(unsigned mask, T value, Op op) {
  const unsigned lane = cuda::ptx::get_sreg_laneid();
  const int lanes = __popc(mask);
  for (int distance = 1; distance < lanes; distance *= 2) {
    const unsigned source = __fns(mask, lane, -(distance + 1));
    const bool hasSource = source < kWarpThreads;
    const T other = shuffle(mask, value, hasSource ? source : lane);
    if (hasSource)
      value = op(other, value);
  }
  return value;
}

/// Exclusive sum from an inclusive one: the inclusive value of the previous
/// lane in `mask` (zero for the first), rather than `inclusive - value`, which
/// is not exact for floating point.
template <typename T>
__device__ T exclusiveFromInclusive(unsigned mask, T inclusive) {
  const unsigned lane = cuda::ptx::get_sreg_laneid();
  const unsigned previous = __fns(mask, lane, -2);
  const bool first = previous >= kWarpThreads;
  const T before = shuffle(mask, inclusive, first ? lane : previous);
  return first ? T{} : before;
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Full warp (CUB)
//===----------------------------------------------------------------------===//

// cub::WarpScan and cub::WarpReduce over 32 threads use shuffles; their
// TempStorage is then empty, so a local variable serves instead of shared
// memory.

/// Inclusive prefix sum across the 32 lanes of the warp; `*total` (if given)
/// receives the warp's sum in every lane.
template <typename T>
__device__ T warpInclusiveSum(T value, T *total = nullptr) {
  using WarpScan = cub::WarpScan<T>;
  typename WarpScan::TempStorage storage;
  T result, sum;
  WarpScan(storage).InclusiveSum(value, result, sum);
  if (total)
    *total = sum;
  return result;
}

/// Exclusive prefix sum across the 32 lanes (lane 0 gets zero); `*total` (if
/// given) receives the warp's sum in every lane.
template <typename T>
__device__ T warpExclusiveSum(T value, T *total = nullptr) {
  using WarpScan = cub::WarpScan<T>;
  typename WarpScan::TempStorage storage;
  T result, sum;
  WarpScan(storage).ExclusiveSum(value, result, sum);
  if (total)
    *total = sum;
  return result;
}

/// Maximum across the 32 lanes, returned to every lane.
template <typename T> __device__ T warpMax(T value) {
  using WarpReduce = cub::WarpReduce<T>;
  typename WarpReduce::TempStorage storage;
  // Only lane 0 receives the reduction; broadcast it.
  const T max = WarpReduce(storage).Reduce(value, cuda::maximum<>{});
  return shuffle(kFullWarpMask, max, 0);
}

//===----------------------------------------------------------------------===//
// Full block of a compile-time shape (CUB)
//===----------------------------------------------------------------------===//

/// Inclusive prefix sum across the block in linear thread order
/// (x fastest); `*total` (if given) receives the block's sum in every thread.
/// The block must be exactly BlockDimX x BlockDimY x BlockDimZ threads.
template <int BlockDimX, int BlockDimY = 1, int BlockDimZ = 1, typename T>
__device__ T blockInclusiveSum(T value, T *total = nullptr) {
  using BlockScan = cub::BlockScan<T, BlockDimX, cub::BLOCK_SCAN_WARP_SCANS,
                                   BlockDimY, BlockDimZ>;
  __shared__ typename BlockScan::TempStorage storage;
  T result, sum;
  BlockScan(storage).InclusiveSum(value, result, sum);
  __syncthreads(); // Lets the next call reuse `storage`.
  if (total)
    *total = sum;
  return result;
}

/// Exclusive prefix sum across the block (thread 0 gets zero); see
/// blockInclusiveSum.
template <int BlockDimX, int BlockDimY = 1, int BlockDimZ = 1, typename T>
__device__ T blockExclusiveSum(T value, T *total = nullptr) {
  using BlockScan = cub::BlockScan<T, BlockDimX, cub::BLOCK_SCAN_WARP_SCANS,
                                   BlockDimY, BlockDimZ>;
  __shared__ typename BlockScan::TempStorage storage;
  T result, sum;
  BlockScan(storage).ExclusiveSum(value, result, sum);
  __syncthreads();
  if (total)
    *total = sum;
  return result;
}

/// Maximum across the block, returned to every thread.
template <int BlockDimX, int BlockDimY = 1, int BlockDimZ = 1, typename T>
__device__ T blockMax(T value) {
  using BlockReduce =
      cub::BlockReduce<T, BlockDimX, cub::BLOCK_REDUCE_WARP_REDUCTIONS,
                       BlockDimY, BlockDimZ>;
  __shared__ typename BlockReduce::TempStorage storage;
  __shared__ T broadcast;
  // Only thread 0 receives the reduction; broadcast it.
  const T reduced = BlockReduce(storage).Reduce(value, cuda::maximum<>{});
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    broadcast = reduced;
  __syncthreads();
  const T result = broadcast;
  __syncthreads();
  return result;
}

//===----------------------------------------------------------------------===//
// Arbitrary subset of a warp (hand-written)
//===----------------------------------------------------------------------===//

/// Rank of the calling lane among the lanes in `mask` (0 for the lowest).
__device__ __forceinline__ unsigned activeRank(unsigned mask) {
  return __popc(mask & cuda::ptx::get_sreg_lanemask_lt());
}

/// The lowest lane in a non-empty `mask`: the one that acts for the group.
__device__ __forceinline__ unsigned activeLeader(unsigned mask) {
  return __ffs(mask) - 1;
}

/// Inclusive prefix sum over the lanes in `mask` (read it once with
/// `__activemask()` at the call site and pass the same value in every lane),
/// in lane order; `*total` (if given) receives the group's sum.
template <typename T>
__device__ T activeInclusiveSum(unsigned mask, T value, T *total = nullptr) {
  const T result =
      detail::maskedInclusiveScan(mask, value, cuda::std::plus<>{});
  if (total)
    *total = shuffle(mask, result, detail::lastLane(mask));
  return result;
}

/// Exclusive prefix sum over the lanes in `mask` (the lowest gets zero); see
/// activeInclusiveSum.
template <typename T>
__device__ T activeExclusiveSum(unsigned mask, T value, T *total = nullptr) {
  const T inclusive =
      detail::maskedInclusiveScan(mask, value, cuda::std::plus<>{});
  if (total)
    *total = shuffle(mask, inclusive, detail::lastLane(mask));
  return detail::exclusiveFromInclusive(mask, inclusive);
}

/// Maximum over the lanes in `mask`, returned to each of them.
template <typename T> __device__ T activeMax(unsigned mask, T value) {
  const T inclusive =
      detail::maskedInclusiveScan(mask, value, cuda::maximum<>{});
  return shuffle(mask, inclusive, detail::lastLane(mask));
}

//===----------------------------------------------------------------------===//
// Full block of a run-time size (hand-written)
//===----------------------------------------------------------------------===//

namespace detail {

__device__ __forceinline__ unsigned blockThreads() {
  return blockDim.x * blockDim.y * blockDim.z;
}

/// Lanes of the calling thread's warp that exist. Derived from the block size,
/// not from __activemask(), which after divergent code need not yet include
/// every lane of the warp.
__device__ __forceinline__ unsigned existingLanes() {
  const unsigned warpBase = linearThreadIndex() & ~(kWarpThreads - 1u);
  const unsigned lanes = blockThreads() - warpBase;
  return lanes >= kWarpThreads ? kFullWarpMask : (1u << lanes) - 1;
}

/// Inclusive scan with `op` across the block: scan each warp, publish the warp
/// totals in shared memory, and let each thread fold the totals of the warps
/// before its own (at most 31 broadcast reads, cheaper than a second scan
/// with its extra barrier). Returns the inclusive value and, in `*exclusive`
/// (if given), the exclusive one, with `identity` for thread 0.
template <typename T, typename Op>
__device__ T blockScanDynamic(T value, Op op, T identity, T *exclusive,
                              T *total) {
  static_assert(cuda::std::is_trivially_copyable_v<T>,
                "block scans keep T in shared memory");
  __shared__ T warpTotals[kWarpThreads];
  const unsigned mask = existingLanes();
  const unsigned warp = linearThreadIndex() / kWarpThreads;
  const unsigned lane = cuda::ptx::get_sreg_laneid();

  T inclusive = maskedInclusiveScan(mask, value, op);
  const T warpExclusive = shuffle(mask, inclusive, lane == 0 ? 0 : lane - 1);
  if (lane == lastLane(mask))
    warpTotals[warp] = inclusive;
  __syncthreads();

  T before = identity;
  for (unsigned w = 0; w < warp; ++w)
    before = op(before, warpTotals[w]);
  if (exclusive)
    *exclusive = lane == 0 ? before : op(before, warpExclusive);
  inclusive = op(before, inclusive);
  if (total) {
    const unsigned warps = (blockThreads() + kWarpThreads - 1) / kWarpThreads;
    T sum = before;
    for (unsigned w = warp; w < warps; ++w)
      sum = op(sum, warpTotals[w]);
    *total = sum;
  }
  __syncthreads(); // Lets the next call reuse `warpTotals`.
  return inclusive;
}

} // namespace detail

/// Inclusive prefix sum across the block in linear thread order, for any block
/// size; every thread of the block must call it. `*total` (if given) receives
/// the block's sum in every thread.
template <typename T>
__device__ T blockInclusiveSumDynamic(T value, T *total = nullptr) {
  return detail::blockScanDynamic<T>(value, cuda::std::plus<>{}, T{}, nullptr,
                                     total);
}

/// Exclusive prefix sum across the block (thread 0 gets zero); see
/// blockInclusiveSumDynamic.
template <typename T>
__device__ T blockExclusiveSumDynamic(T value, T *total = nullptr) {
  T exclusive;
  detail::blockScanDynamic<T>(value, cuda::std::plus<>{}, T{}, &exclusive,
                              total);
  return exclusive;
}

/// Maximum across the block, returned to every thread, for any block size;
/// every thread of the block must call it.
template <typename T> __device__ T blockMaxDynamic(T value) {
  T max;
  // `value` is a valid identity here: folding it in again cannot change a max.
  detail::blockScanDynamic<T>(value, cuda::maximum<>{}, value, nullptr, &max);
  return max;
}

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_SCAN_CUH
