//===- cuda_rewrite/memory_pool.cuh - Device memory pool -------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// One device memory pool per device, as in KLAP section II-C: the host
// allocates a single buffer with cudaMalloc and device code takes memory from
// it with an atomic bump pointer instead of calling device-side cudaMalloc.
// Aggregated launches use it for their argument and configuration arrays, and
// aggregated device-side cudaMalloc calls become poolAllocateWarp /
// poolAllocateBlock: the warp (block) sums its requests, one thread reserves
// the total with one atomic, and every thread gets its part.
//
// Life cycle, on the host:
//   resetPool(stream)   before a host launch of rewritten kernels; allocates
//                       the pool on first use (64 MiB, or
//                       CUDA_REWRITE_POOL_SIZE, or setPoolSize()).
//   kernel<<<...>>>     device code allocates; memory lives until the next
//                       reset.
//   checkPool(stream)   after the launch: cudaErrorMemoryAllocation, with an
//                       explanation, if any request did not fit.
//
// A request that does not fit returns nullptr and sets a sticky overflow flag
// recording its size; nothing is ever handed out past the end of the buffer.
// Resetting does not clear the flag, only checkPool() does, so an overflow is
// reported even if the host resets before checking.
//
// The pool is shared by all streams of a device (see config.cuh): reset it only
// when no kernel on another stream is still using it.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_MEMORY_POOL_CUH
#define CUDA_REWRITE_MEMORY_POOL_CUH

#include "cuda_rewrite/config.cuh"
#include "cuda_rewrite/scan.cuh"

#include <cuda/atomic>
#include <cuda/ptx>
#include <cuda/std/bit>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

CUDA_REWRITE_REQUIRE_RDC("cuda_rewrite/memory_pool.cuh");

/// Pool size used when neither setPoolSize() nor CUDA_REWRITE_POOL_SIZE gives
/// one. Define it before including the runtime to change it at compile time.
#ifndef CUDA_REWRITE_DEFAULT_POOL_BYTES
#define CUDA_REWRITE_DEFAULT_POOL_BYTES (64ull << 20)
#endif

namespace cuda_rewrite {

inline constexpr std::size_t kDefaultPoolBytes =
    CUDA_REWRITE_DEFAULT_POOL_BYTES;

/// Environment variable that sets the pool size at run time: a byte count with
/// an optional K, M or G suffix (powers of 1024), e.g. `256M`.
inline constexpr const char *kPoolSizeVariable = "CUDA_REWRITE_POOL_SIZE";

/// Largest pool: requests are clamped to it (see detail::paddedSize) so that
/// no size arithmetic can wrap around. 1 TiB is more than any GPU has.
inline constexpr unsigned long long kMaxPoolBytes = 1ull << 40;

/// Every pool allocation is aligned to at least this (the largest alignment of
/// CUDA's built-in vector types), so the common case needs no padding.
inline constexpr std::size_t kPoolAlignment = 16;

namespace detail {

/// Written by the host when it (re)allocates the pool.
struct PoolConfig {
  char *base;                  ///< The buffer; null while there is no pool.
  unsigned long long capacity; ///< Its size in bytes.
};

/// Written by device code when a request does not fit; cleared by checkPool.
struct PoolOverflow {
  unsigned int overflowed;          ///< Sticky flag.
  unsigned long long firstRequest;  ///< Bytes asked by the first failure.
  unsigned long long requiredBytes; ///< Largest pool end a failure needed.
};

struct PoolState {
  PoolConfig config;
  /// Bytes reserved since the last reset, always a multiple of
  /// kPoolAlignment. Keeps growing past `capacity` once requests fail.
  unsigned long long used;
  PoolOverflow overflow;
};

/// Program-wide: see config.cuh for why this is an inline __device__ variable.
CUDA_REWRITE_DEVICE_STATE PoolState poolState;

__host__ __device__ constexpr unsigned long long
alignUp(unsigned long long value, unsigned long long alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

/// The alignment a request actually gets: at least kPoolAlignment, and a power
/// of two (rounding up anything else keeps the result correctly aligned).
/// Alignments beyond kMaxPoolBytes are clamped; their padding alone cannot fit.
__device__ inline unsigned long long effectiveAlignment(std::size_t alignment) {
  if (alignment <= kPoolAlignment)
    return kPoolAlignment;
  if (alignment >= kMaxPoolBytes)
    return kMaxPoolBytes;
  return cuda::std::bit_ceil(static_cast<unsigned long long>(alignment));
}

/// A request's share of a reservation: `bytes` padded to `alignment`. Sizes
/// beyond kMaxPoolBytes cannot fit anyway and are clamped, so that sums over a
/// block cannot wrap around.
__device__ inline unsigned long long paddedSize(std::size_t bytes,
                                                unsigned long long alignment) {
  return bytes > kMaxPoolBytes ? kMaxPoolBytes : alignUp(bytes, alignment);
}

/// Offsets are multiples of kPoolAlignment; reserve() sets this bit in the
/// offset it returns when it reserved nothing.
inline constexpr unsigned long long kNotReserved = 1;

/// The first offset at or after `offset` whose address is aligned to
/// `alignment`. Alignment is a property of the address, and cudaMalloc
/// guarantees only 256 bytes for the base. Since the base is a multiple of
/// kPoolAlignment, so is the result, and it is at most
/// `alignment - kPoolAlignment` past an `offset` that is one too.
__device__ inline unsigned long long alignOffset(unsigned long long offset,
                                                 unsigned long long alignment) {
  const auto base = reinterpret_cast<unsigned long long>(poolState.config.base);
  return alignUp(base + offset, alignment) - base;
}

/// Reserves `bytes` (a multiple of kPoolAlignment) aligned to `alignment` with
/// one atomic and returns the offset of the reservation. `used` stays a
/// multiple of kPoolAlignment, so only stricter alignments need padding, and
/// a fixed worst-case padding keeps this to one fetch_add (no CAS loop).
///
/// A request that cannot fit given what is already used reserves nothing and
/// returns the offset it would have had, tagged with kNotReserved. Only
/// requests that raced with the one that filled the pool push `used` past
/// `capacity`, so `used` stays far from wrapping around however many requests
/// fail (a wrapped counter would hand out memory twice).
__device__ inline unsigned long long reserve(unsigned long long bytes,
                                             unsigned long long alignment) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> used(
      poolState.used);
  const unsigned long long padded = bytes + alignment - kPoolAlignment;
  // Relaxed: the counter only partitions the buffer, it publishes no data.
  const unsigned long long seen = used.load(cuda::std::memory_order_relaxed);
  if (seen + padded > poolState.config.capacity)
    return alignOffset(seen, alignment) | kNotReserved;
  return alignOffset(used.fetch_add(padded, cuda::std::memory_order_relaxed),
                     alignment);
}

__device__ inline void recordOverflow(unsigned long long bytes,
                                      unsigned long long end) {
  PoolOverflow &overflow = poolState.overflow;
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(
      overflow.requiredBytes)
      .fetch_max(end, cuda::std::memory_order_relaxed);
  unsigned int none = 0;
  if (cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(
          overflow.overflowed)
          .compare_exchange_strong(none, 1u, cuda::std::memory_order_relaxed))
    overflow.firstRequest = bytes;
}

/// The memory at `offset` (from reserve(), plus the caller's share of the
/// reservation) if `bytes` of it fit in the pool, else nullptr with the
/// overflow recorded.
__device__ inline void *claim(unsigned long long offset, std::size_t bytes) {
  const PoolConfig config = poolState.config;
  const unsigned long long start = offset & ~kNotReserved;
  const bool reserved = (offset & kNotReserved) == 0;
  // Compared without computing start + bytes, which could wrap around.
  if (reserved && config.base && bytes <= config.capacity &&
      start <= config.capacity - bytes)
    return config.base + start;
  // A zero-byte request needs no memory: failing with its group is no
  // overflow worth reporting (the report names the first request that
  // did not fit).
  if (bytes > 0)
    recordOverflow(bytes, start + paddedSize(bytes, kPoolAlignment));
  return nullptr;
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Device-side allocation
//===----------------------------------------------------------------------===//

/// Allocates `bytes` from the pool for the calling thread alone, aligned to
/// `alignment` (at least kPoolAlignment). Returns nullptr, and records the
/// overflow for checkPool(), if the pool is exhausted.
__device__ inline void *poolAllocate(std::size_t bytes,
                                     std::size_t alignment = kPoolAlignment) {
  const unsigned long long align = detail::effectiveAlignment(alignment);
  return detail::claim(detail::reserve(detail::paddedSize(bytes, align), align),
                       bytes);
}

/// Warp-aggregated poolAllocate among the lanes that call it together
/// (`__activemask()`): one atomic per warp; lane i gets the part at the
/// exclusive prefix sum of the (padded) sizes of the lanes below it. Lanes may
/// ask for different sizes, zero included, and different alignments (all get
/// the largest). A lane gets nullptr if its part does not fit; when the warp's
/// total cannot fit at all, every lane does.
__device__ inline void *
poolAllocateWarp(std::size_t bytes, std::size_t alignment = kPoolAlignment) {
  const unsigned mask = __activemask();
  const unsigned long long align =
      activeMax(mask, detail::effectiveAlignment(alignment));
  unsigned long long total;
  const unsigned long long offset =
      activeExclusiveSum(mask, detail::paddedSize(bytes, align), &total);
  const unsigned leader = activeLeader(mask);
  unsigned long long start = 0;
  if (cuda::ptx::get_sreg_laneid() == leader)
    start = detail::reserve(total, align);
  start = shuffle(mask, start, leader);
  return detail::claim(start + offset, bytes);
}

/// Block-aggregated poolAllocate: every thread of the block must call it (with
/// its own size, zero allowed); one atomic per block; thread i (linear index)
/// gets the part at the exclusive prefix sum of the padded sizes before it.
/// Works for any block shape, including a partial last warp. Failures as in
/// poolAllocateWarp.
__device__ inline void *
poolAllocateBlock(std::size_t bytes, std::size_t alignment = kPoolAlignment) {
  __shared__ unsigned long long start;
  const unsigned long long align =
      blockMaxDynamic(detail::effectiveAlignment(alignment));
  unsigned long long total;
  const unsigned long long offset =
      blockExclusiveSumDynamic(detail::paddedSize(bytes, align), &total);
  if (linearThreadIndex() == 0)
    start = detail::reserve(total, align);
  __syncthreads();
  const unsigned long long mine = start + offset;
  __syncthreads(); // Lets the next call overwrite `start`.
  return detail::claim(mine, bytes);
}

//===----------------------------------------------------------------------===//
// Host-side management
//===----------------------------------------------------------------------===//

/// A snapshot of the current device's pool.
struct PoolInfo {
  void *base = nullptr;          ///< The pool's buffer (null: none).
  std::size_t capacity = 0;      ///< Its size in bytes.
  std::size_t used = 0;          ///< Bytes reserved since the last reset.
  bool overflowed = false;       ///< A request failed since the last check.
  std::size_t firstRequest = 0;  ///< Bytes asked by the first failed request.
  std::size_t requiredBytes = 0; ///< Pool size the failed requests needed.
};

/// Parses a size such as `4096`, `64K`, `256M`, `1G` (also `256MiB`, `256MB`;
/// suffixes are powers of 1024). Returns false for anything else, for zero and
/// on overflow.
inline bool parseByteSize(const char *text, std::size_t &bytes) {
  if (!text || *text < '0' || *text > '9')
    return false;
  unsigned long long value = 0;
  for (; *text >= '0' && *text <= '9'; ++text) {
    const unsigned digit = *text - '0';
    if (value > (ULLONG_MAX - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  unsigned shift = 0;
  switch (*text) {
  case 'k':
  case 'K':
    shift = 10;
    break;
  case 'm':
  case 'M':
    shift = 20;
    break;
  case 'g':
  case 'G':
    shift = 30;
    break;
  default:
    break;
  }
  if (shift) {
    ++text;
    if (*text == 'i')
      ++text;
    if (*text == 'B' || *text == 'b')
      ++text;
  }
  if (*text != '\0' || value == 0 || value > (SIZE_MAX >> shift))
    return false;
  bytes = static_cast<std::size_t>(value) << shift;
  return true;
}

namespace detail {

/// What the host knows about one device's pool.
struct HostPool {
  void *buffer = nullptr;
  std::size_t bytes = 0;
};

inline constexpr int kMaxDevices = 64;
inline std::mutex hostPoolMutex;
inline HostPool hostPools[kMaxDevices];

/// The current device's entry; the caller holds hostPoolMutex.
inline cudaError_t currentHostPool(HostPool *&pool) {
  int device = 0;
  if (cudaError_t error = cudaGetDevice(&device))
    return error;
  if (device < 0 || device >= kMaxDevices)
    return cudaErrorInvalidDevice;
  pool = &hostPools[device];
  return cudaSuccess;
}

inline cudaError_t poolStateAddress(PoolState *&state) {
  void *address = nullptr;
  cudaError_t error = cudaGetSymbolAddress(&address, poolState);
  state = static_cast<PoolState *>(address);
  return error;
}

inline std::string describeBytes(unsigned long long bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (1ull << 20))
    text += " (" + std::to_string(bytes >> 20) + " MiB)";
  return text;
}

/// The size for a pool allocated on first use: CUDA_REWRITE_POOL_SIZE if set,
/// else kDefaultPoolBytes. An unusable value is an error, not ignored.
inline cudaError_t configuredPoolBytes(std::size_t &bytes) {
  const char *text = std::getenv(kPoolSizeVariable);
  if (!text) {
    bytes = kDefaultPoolBytes;
    return cudaSuccess;
  }
  if (parseByteSize(text, bytes) && bytes <= kMaxPoolBytes)
    return cudaSuccess;
  std::fprintf(stderr,
               "cuda_rewrite: %s=\"%s\" is not a pool size; expected a "
               "positive byte count up to 1T with an optional K, M or G "
               "suffix, e.g. 256M\n",
               kPoolSizeVariable, text);
  return cudaErrorInvalidValue;
}

/// Gives the current device a pool of exactly `bytes`, replacing (and
/// freeing) any other; keeps a recorded overflow. The caller holds
/// hostPoolMutex.
inline cudaError_t installPool(HostPool &pool, std::size_t bytes) {
  if (pool.buffer && pool.bytes == bytes)
    return cudaSuccess;
  PoolState *state = nullptr;
  if (cudaError_t error = poolStateAddress(state))
    return error;
  if (pool.buffer) {
    // cudaFree waits for the device, so no kernel still uses the old buffer.
    if (cudaError_t error = cudaFree(pool.buffer))
      return error;
    pool = HostPool{};
  }
  void *buffer = nullptr;
  if (cudaError_t error = cudaMalloc(&buffer, bytes)) {
    std::fprintf(stderr,
                 "cuda_rewrite: cannot allocate the device memory pool of "
                 "%s: %s; set %s or call cuda_rewrite::setPoolSize() with a "
                 "smaller size\n",
                 describeBytes(bytes).c_str(), cudaGetErrorString(error),
                 kPoolSizeVariable);
    return error;
  }
  // Writes the configuration and the reset counter, not the overflow record.
  const PoolState fresh{{static_cast<char *>(buffer), bytes}, 0, {}};
  if (cudaError_t error =
          cudaMemcpy(state, &fresh, offsetof(PoolState, overflow),
                     cudaMemcpyHostToDevice)) {
    cudaFree(buffer);
    return error;
  }
  pool = HostPool{buffer, bytes};
  return cudaSuccess;
}

inline std::string describeOverflow(const PoolState &state) {
  const PoolOverflow &overflow = state.overflow;
  std::string text = "device memory pool overflow: ";
  if (!state.config.base)
    return text + "no pool was set up; call cuda_rewrite::resetPool(stream) "
                  "before launching rewritten kernels";
  // Suggest a power of two that would have held every failed request.
  const unsigned long long suggestion =
      cuda::std::bit_ceil(overflow.requiredBytes);
  return text + "a request of " + describeBytes(overflow.firstRequest) +
         " did not fit in the pool of " + describeBytes(state.config.capacity) +
         ", which needed at least " + describeBytes(overflow.requiredBytes) +
         "; the requests that did not fit got null pointers. Raise the pool "
         "size with the environment variable " +
         kPoolSizeVariable + " (e.g. " + kPoolSizeVariable + "=" +
         std::to_string((suggestion + (1ull << 20) - 1) >> 20) +
         "M) or with cuda_rewrite::setPoolSize(bytes) before the launch";
}

/// Synchronizes `stream` and copies the pool state.
inline cudaError_t readPoolState(cudaStream_t stream, PoolState &state) {
  if (cudaError_t error = cudaMemcpyFromSymbolAsync(
          &state, poolState, sizeof state, 0, cudaMemcpyDeviceToHost, stream))
    return error;
  return cudaStreamSynchronize(stream);
}

} // namespace detail

/// Gives the current device a pool of `bytes` now, replacing an existing pool
/// of another size (this waits for the device, and memory from the old pool
/// becomes invalid). Takes precedence over CUDA_REWRITE_POOL_SIZE.
inline cudaError_t setPoolSize(std::size_t bytes) {
  if (bytes == 0 || bytes > kMaxPoolBytes)
    return cudaErrorInvalidValue;
  std::lock_guard<std::mutex> lock(detail::hostPoolMutex);
  detail::HostPool *pool = nullptr;
  if (cudaError_t error = detail::currentHostPool(pool))
    return error;
  return detail::installPool(*pool, bytes);
}

/// Frees the current device's pool; device code allocating afterwards gets
/// nullptr (and an overflow is recorded) until the next resetPool().
inline cudaError_t releasePool() {
  std::lock_guard<std::mutex> lock(detail::hostPoolMutex);
  detail::HostPool *pool = nullptr;
  if (cudaError_t error = detail::currentHostPool(pool))
    return error;
  if (!pool->buffer)
    return cudaSuccess;
  detail::PoolState *state = nullptr;
  if (cudaError_t error = detail::poolStateAddress(state))
    return error;
  const detail::PoolConfig none{};
  if (cudaError_t error = cudaMemcpy(&state->config, &none, sizeof none,
                                     cudaMemcpyHostToDevice))
    return error;
  cudaError_t error = cudaFree(pool->buffer);
  *pool = detail::HostPool{};
  return error;
}

/// Makes the whole pool available again, ordered on `stream`: call it before
/// each host launch of rewritten kernels, once the previous launches are done
/// with their pool memory. Allocates the pool on first use (see
/// setPoolSize, CUDA_REWRITE_POOL_SIZE, kDefaultPoolBytes).
inline cudaError_t resetPool(cudaStream_t stream = nullptr) {
  {
    std::lock_guard<std::mutex> lock(detail::hostPoolMutex);
    detail::HostPool *pool = nullptr;
    if (cudaError_t error = detail::currentHostPool(pool))
      return error;
    if (!pool->buffer) {
      std::size_t bytes = 0;
      if (cudaError_t error = detail::configuredPoolBytes(bytes))
        return error;
      if (cudaError_t error = detail::installPool(*pool, bytes))
        return error;
    }
  }
  detail::PoolState *state = nullptr;
  if (cudaError_t error = detail::poolStateAddress(state))
    return error;
  return cudaMemsetAsync(&state->used, 0, sizeof state->used, stream);
}

/// Waits for `stream` and reports the current device's pool in `info`.
inline cudaError_t getPoolInfo(PoolInfo &info, cudaStream_t stream = nullptr) {
  detail::PoolState state{};
  if (cudaError_t error = detail::readPoolState(stream, state))
    return error;
  info.base = state.config.base;
  info.capacity = state.config.capacity;
  info.used = state.used;
  info.overflowed = state.overflow.overflowed != 0;
  info.firstRequest = state.overflow.firstRequest;
  info.requiredBytes = state.overflow.requiredBytes;
  return cudaSuccess;
}

/// Waits for `stream`; if a pool request failed since the last check, clears
/// the record and returns cudaErrorMemoryAllocation with an explanation (the
/// pool size, the size needed and how to raise it) in `*message` or, if
/// `message` is null, on stderr. A failure to synchronize or to read the
/// state is returned instead.
inline cudaError_t checkPool(cudaStream_t stream = nullptr,
                             std::string *message = nullptr) {
  detail::PoolState state{};
  if (cudaError_t error = detail::readPoolState(stream, state))
    return error;
  if (!state.overflow.overflowed)
    return cudaSuccess;
  detail::PoolState *address = nullptr;
  if (cudaError_t error = detail::poolStateAddress(address))
    return error;
  if (cudaError_t error = cudaMemsetAsync(&address->overflow, 0,
                                          sizeof address->overflow, stream))
    return error;
  const std::string text = detail::describeOverflow(state);
  if (message)
    *message = text;
  else
    std::fprintf(stderr, "cuda_rewrite: %s\n", text.c_str());
  return cudaErrorMemoryAllocation;
}

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_MEMORY_POOL_CUH
