//===- cuda_rewrite/aggregate.cuh - Kernel launch aggregation --*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Support for the `aggregate` pass (KLAP section II, docs/references.md).
// Device-side launches made by many threads of a parent kernel become one
// launch of an aggregated child: a 1-D grid with as many blocks as all the
// original launches together, each block of max(original block sizes) threads.
// The parent stores, per original launch, its configuration and its arguments
// (from the memory pool); each aggregated block finds its original launch by a
// binary search over the exclusive prefix sum of the original grid sizes
// (computed once, in the parent) and runs the original body with the original
// launch's blockIdx/blockDim/gridDim/threadIdx.
//
// Failures the rewrite introduces are never silent: a pool too small for the
// launch records, or a launch the device runtime refuses (error 69, the
// pending-launch limit), is recorded with its source line (error.cuh) and
// traps, so the parent grid fails with a CUDA error at the user's next
// synchronization.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_AGGREGATE_CUH
#define CUDA_REWRITE_AGGREGATE_CUH

#include "cuda_rewrite/error.cuh"
#include "cuda_rewrite/memory_pool.cuh"
#include "cuda_rewrite/scan.cuh"
#include "cuda_rewrite/search.cuh"

namespace cuda_rewrite {

/// One original launch's configuration, as the parent stored it.
struct LaunchConfig {
  dim3 grid;
  dim3 block;
};

/// The launches one warp or block stored together: their first aggregated
/// blocks (ascending), configurations and arguments (an array of the
/// child's argument struct), and for each of the chunk's blocks the launch
/// it belongs to. That map costs the parent one store per child block and
/// saves every child block a search (a warp-cooperative search probes a
/// different cache line per lane and round): one dependent load instead of
/// two to four. Measured on the samples it is within noise of the search
/// (bench/RESULTS.md, 2026-11-21): what dominates there is the device-side
/// launch itself.
struct LaunchChunk {
  const unsigned *firstBlock;
  const LaunchConfig *configs;
  const void *args;
  const unsigned *launchOfBlock; ///< Indexed from the chunk's first block.
  unsigned count;
};

/// What an aggregated child receives about the original launches. Warp and
/// block granularity store one chunk, passed by value; kernel granularity
/// one chunk per parent block that launched, in the order the blocks
/// appended them, which is also the order of their first blocks.
struct LaunchTable {
  LaunchChunk only;                ///< The chunk, when chunkCount == 1.
  const unsigned *chunkFirstBlock; ///< Per chunk, ascending.
  const LaunchChunk *chunks;
  unsigned chunkCount;
  /// Original blocks per aggregated block: 1, or (for children of at most
  /// one warp per block, without barriers or shared memory) one per warp,
  /// since an SM holds at most 32 blocks and 32-thread blocks would leave
  /// it half empty.
  unsigned packing;
  unsigned blocks; ///< All the original launches' blocks.
};

/// Where the calling thread of an aggregated child comes from: the original
/// launch it belongs to, its arguments and its built-in variables there.
template <typename Args> struct OriginalLaunch {
  const Args *args;
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
  uint3 threadIdx;
  /// False for the threads beyond the original block's size: they must not
  /// run the body.
  bool active;
};

__device__ __forceinline__ unsigned volume(dim3 d) { return d.x * d.y * d.z; }

/// Decomposes `linear` in the order CUDA numbers blocks and threads (x
/// fastest), so that warps hold the same threads as in the original launch.
__device__ __forceinline__ uint3 unflatten(unsigned linear, dim3 extent) {
  return make_uint3(linear % extent.x, (linear / extent.x) % extent.y,
                    linear / (extent.x * extent.y));
}

/// The launch aggregated block `block` belongs to: the last i with
/// firstBlock[i] <= block (launches of zero blocks share their successor's
/// first block and are skipped). Each warp searches on its own with all its
/// lanes, a 32-ary search as KLAP's p-ary one: log32(count) rounds of one
/// coalesced load, instead of log2(count) dependent loads of a binary search
/// (16 for 65536 launches), which dominated small child blocks.
__device__ __forceinline__ unsigned findLaunchInWarp(const unsigned *firstBlock,
                                                     unsigned count,
                                                     unsigned block) {
  const unsigned mask = __activemask();
  const unsigned lanes = __popc(mask);
  const unsigned rank = activeRank(mask);
  unsigned lo = 0, n = count; // The answer is in [lo, lo + n).
  while (n > 1) {
    // The lanes split the range into lanes + 1 parts and probe their
    // boundaries: the range shrinks whatever the number of lanes (a warp of
    // one lane does a binary search).
    const unsigned step = (n + lanes) / (lanes + 1);
    const unsigned probe = lo + (rank + 1) * step;
    // The lanes whose probe is at or before `block` are a prefix, since the
    // table is sorted.
    const bool atOrBefore = probe < lo + n && firstBlock[probe] <= block;
    const unsigned k = __popc(__ballot_sync(mask, atOrBefore));
    const unsigned end = lo + n;
    lo += k * step;
    n = min(step, end - lo);
  }
  return lo;
}

template <typename Args>
__device__ __forceinline__ OriginalLaunch<Args>
originalLaunch(const LaunchTable &table) {
  OriginalLaunch<Args> self;
  // Packed: warp w of this block runs original block packing * b + w.
  const unsigned warp = table.packing > 1 ? threadIdx.x / 32 : 0;
  const unsigned thread = table.packing > 1 ? threadIdx.x % 32 : threadIdx.x;
  const unsigned block = blockIdx.x * table.packing + warp;
  if (block >= table.blocks) {
    self.active = false; // The last block's spare warps.
    return self;
  }
  LaunchChunk chunk = table.only;
  unsigned chunkFirst = 0;
  if (table.chunkCount > 1) {
    const unsigned c =
        findLaunchInWarp(table.chunkFirstBlock, table.chunkCount, block);
    chunk = table.chunks[c];
    chunkFirst = table.chunkFirstBlock[c];
  }
  const unsigned index = chunk.launchOfBlock[block - chunkFirst];
  const LaunchConfig config = chunk.configs[index];
  self.args = static_cast<const Args *>(chunk.args) + index;
  self.gridDim = config.grid;
  self.blockDim = config.block;
  self.blockIdx = unflatten(block - chunk.firstBlock[index], config.grid);
  self.threadIdx = unflatten(thread, config.block);
  self.active = thread < volume(config.block);
  return self;
}

/// Records a failure of the aggregation itself and stops the parent grid.
__device__ __forceinline__ void failAggregation(cudaError_t error,
                                                const char *file, int line) {
  recordDeviceError(error, file, line);
  __trap();
}

/// `p` rounded up to a multiple of `alignment` (a power of two).
__device__ __forceinline__ char *alignUp(char *p, size_t alignment) {
  const size_t misalign = reinterpret_cast<size_t>(p) & (alignment - 1);
  return misalign ? p + (alignment - misalign) : p;
}

/// The part of the pool holding `count` launches' tables and arguments.
template <typename Args> struct LaunchRecords {
  unsigned *firstBlock;
  LaunchConfig *configs;
  Args *args;
  unsigned *launchOfBlock;
  unsigned count;

  /// For `count` launches of `blocks` blocks in all, with room to align the
  /// arguments and the block map after them.
  __device__ static size_t bytes(unsigned count, unsigned blocks) {
    return count * (sizeof(unsigned) + sizeof(LaunchConfig) + sizeof(Args)) +
           blocks * sizeof(unsigned) + alignof(Args) + alignof(unsigned);
  }
  /// Lays out the arrays in `memory` (from bytes(count, blocks)).
  __device__ static LaunchRecords at(void *memory, unsigned count) {
    LaunchRecords r;
    char *p = static_cast<char *>(memory);
    r.configs = reinterpret_cast<LaunchConfig *>(p);
    p += count * sizeof(LaunchConfig);
    r.firstBlock = reinterpret_cast<unsigned *>(p);
    p += count * sizeof(unsigned);
    r.args = reinterpret_cast<Args *>(alignUp(p, alignof(Args)));
    // Arguments of odd sizes (an empty struct is one byte) would leave the
    // map misaligned.
    r.launchOfBlock = reinterpret_cast<unsigned *>(
        alignUp(reinterpret_cast<char *>(r.args + count), alignof(unsigned)));
    r.count = count;
    return r;
  }
  /// Records launch `slot`, whose first block is `first` in the aggregated
  /// grid and `local` in this chunk; the map entries of its blocks are
  /// written by mapBlocks().
  __device__ void store(unsigned slot, unsigned first, dim3 grid, dim3 block,
                        const Args &a) const {
    firstBlock[slot] = first;
    configs[slot] = LaunchConfig{grid, block};
    args[slot] = a;
  }
  /// Marks `blocks` blocks from the chunk's block `local` as launch `slot`'s.
  __device__ void mapBlocks(unsigned slot, unsigned local,
                            unsigned blocks) const {
    for (unsigned b = 0; b < blocks; ++b)
      launchOfBlock[local + b] = slot;
  }
  __device__ LaunchChunk chunk() const {
    return LaunchChunk{firstBlock, configs, args, launchOfBlock, count};
  }
};

/// The lanes in `mask` (the caller among them) each have `blocks` blocks
/// of launch `slot` from the chunk's block `local`: all the lanes write
/// every lane's map entries together, 32 consecutive entries at a time, so
/// a lane with a large grid does not write alone.
template <typename Args>
__device__ void mapBlocksInWarp(const LaunchRecords<Args> &records,
                                unsigned mask, unsigned slot, unsigned local,
                                unsigned blocks) {
  const unsigned rank = activeRank(mask);
  const unsigned lanes = __popc(mask);
  for (unsigned m = mask; m; m &= m - 1) {
    const unsigned owner = __ffs(m) - 1;
    const unsigned ownerSlot = shuffle(mask, slot, owner);
    const unsigned ownerLocal = shuffle(mask, local, owner);
    const unsigned ownerBlocks = shuffle(mask, blocks, owner);
    for (unsigned b = rank; b < ownerBlocks; b += lanes)
      records.launchOfBlock[ownerLocal + b] = ownerSlot;
  }
}

/// The aggregated launch a warp or block is to make.
struct AggregatedLaunch {
  LaunchTable table;
  unsigned blocks;      ///< Sum of the original grids' blocks.
  unsigned threads;     ///< Max of the original blocks' threads.
  size_t sharedBytes;   ///< Max of the original dynamic shared memory.
  bool launcher;        ///< The calling thread makes the launch.

  /// The aggregated grid's configuration; \p Packable says the child has
  /// no barriers, no shared memory and no helper function that reads
  /// threadIdx or blockDim, so original blocks of one warp can share an
  /// aggregated block.
  __device__ void configure(bool packable, dim3 &grid, dim3 &block) {
    table.blocks = blocks;
    table.packing = packable && threads <= 32 && sharedBytes == 0 ? 8 : 1;
    grid = dim3((blocks + table.packing - 1) / table.packing);
    block = dim3(table.packing > 1 ? 32 * table.packing : threads);
  }
};

/// A table of one chunk.
__device__ __forceinline__ LaunchTable singleChunkTable(LaunchChunk chunk,
                                                        unsigned blocks) {
  return LaunchTable{chunk, nullptr, nullptr, 1, 1, blocks};
}

/// Warp granularity: the lanes that reach the launch together (the active
/// mask) store their launches in one pool allocation; the lowest of them
/// launches for all. Lanes elsewhere in the program are not waited for.
template <typename Args>
__device__ AggregatedLaunch
gatherWarpLaunches(dim3 grid, dim3 block, size_t sharedBytes, const Args &args,
                   const char *file, int line) {
  const unsigned mask = __activemask();
  const unsigned count = __popc(mask);
  const unsigned rank = activeRank(mask);
  const unsigned leader = activeLeader(mask);
  unsigned total;
  const unsigned first = activeExclusiveSum(mask, volume(grid), &total);
  AggregatedLaunch launch;
  launch.blocks = total;
  launch.threads = activeMax(mask, volume(block));
  launch.sharedBytes = activeMax(mask, sharedBytes);
  launch.launcher = rank == 0;

  void *memory = nullptr;
  if (launch.launcher)
    memory = poolAllocate(LaunchRecords<Args>::bytes(count, total));
  memory = shuffle(mask, memory, leader);
  if (!memory)
    failAggregation(cudaErrorMemoryAllocation, file, line);
  const auto records = LaunchRecords<Args>::at(memory, count);
  records.store(rank, first, grid, block, args);
  mapBlocksInWarp(records, mask, rank, first, volume(grid));
  // The launcher's launch must see every lane's records.
  __threadfence();
  __syncwarp(mask);
  launch.table = singleChunkTable(records.chunk(), launch.blocks);
  return launch;
}

/// A launch a thread of a block- or kernel-granularity parent asked for,
/// kept until the whole block is done with the parent's body.
template <typename Args> struct PendingLaunch {
  using ArgsType = Args;
  bool requested = false;
  dim3 grid;
  dim3 block;
  size_t sharedBytes = 0;
  Args args;

  __device__ void request(dim3 g, dim3 b, size_t shared, const Args &a) {
    requested = true;
    grid = g;
    block = b;
    sharedBytes = shared;
    args = a;
  }
};

/// The launches a thread asked for in a loop (any number of them), kept in
/// the pool until the whole block is done with the parent's body.
template <typename Args> struct PendingLaunchList {
  using ArgsType = Args;
  struct Node {
    dim3 grid;
    dim3 block;
    Args args;
    Node *next;
  };
  Node *head = nullptr;
  unsigned count = 0;
  unsigned blocks = 0;
  unsigned maxThreads = 0;
  size_t maxSharedBytes = 0;

  __device__ void request(dim3 g, dim3 b, size_t shared, const Args &a,
                          const char *file, int line) {
    Node *node = static_cast<Node *>(poolAllocate(sizeof(Node)));
    if (!node)
      failAggregation(cudaErrorMemoryAllocation, file, line);
    *node = Node{g, b, a, head};
    head = node;
    ++count;
    blocks += volume(g);
    maxThreads = volume(b) > maxThreads ? volume(b) : maxThreads;
    maxSharedBytes = shared > maxSharedBytes ? shared : maxSharedBytes;
  }
};

namespace detail {

/// What one thread brings to a block-wide gather.
struct PendingSummary {
  unsigned count, blocks, threads;
  size_t sharedBytes;
};

template <typename Args>
__device__ PendingSummary summarize(const PendingLaunch<Args> &p) {
  return p.requested
             ? PendingSummary{1, volume(p.grid), volume(p.block), p.sharedBytes}
             : PendingSummary{0, 0, 0, 0};
}

template <typename Args>
__device__ PendingSummary summarize(const PendingLaunchList<Args> &p) {
  return PendingSummary{p.count, p.blocks, p.maxThreads, p.maxSharedBytes};
}

/// Stores the thread's launches from `slot` on, the first at block
/// `local` of the chunk and `base + local` of the aggregated grid. Every
/// thread of the block calls it (the warps write their map entries
/// together).
template <typename Args>
__device__ void storePending(const LaunchRecords<Args> &records,
                             const PendingLaunch<Args> &p, unsigned slot,
                             unsigned local, unsigned base) {
  if (p.requested)
    records.store(slot, base + local, p.grid, p.block, p.args);
  mapBlocksInWarp(records, __activemask(), slot, local,
                  p.requested ? volume(p.grid) : 0u);
}

/// Launches in loops: each thread maps its own launches' blocks.
template <typename Args>
__device__ void storePending(const LaunchRecords<Args> &records,
                             const PendingLaunchList<Args> &p, unsigned slot,
                             unsigned local, unsigned base) {
  for (auto *node = p.head; node; node = node->next) {
    records.store(slot, base + local, node->grid, node->block, node->args);
    records.mapBlocks(slot++, local, volume(node->grid));
    local += volume(node->grid);
  }
}

/// A block's launches, counted: every thread of the block calls this.
struct BlockLaunches {
  unsigned count;     ///< The block's launches.
  unsigned blocks;    ///< Their blocks.
  unsigned threads;   ///< Max of their block sizes.
  size_t sharedBytes; ///< Max of their dynamic shared memory.
  unsigned slot;      ///< The calling thread's first launch in the block.
  unsigned first;     ///< Its first launch's first block, from the block's.
};

template <typename Pending>
__device__ BlockLaunches countBlockLaunches(const Pending &pending) {
  const PendingSummary mine = summarize(pending);
  // One scan counts both the launches (high half) and their blocks (low
  // half); an aggregated grid cannot exceed 2^31 - 1 blocks anyway.
  unsigned long long total;
  const unsigned long long before = blockExclusiveSumDynamic(
      (static_cast<unsigned long long>(mine.count) << 32) | mine.blocks,
      &total);
  BlockLaunches b;
  b.count = unsigned(total >> 32);
  b.blocks = unsigned(total);
  b.threads = blockMaxDynamic(mine.threads);
  b.sharedBytes = blockMaxDynamic(mine.sharedBytes);
  b.slot = unsigned(before >> 32);
  b.first = unsigned(before);
  return b;
}

/// The pool memory for `count` launches, allocated by the block's first
/// thread and seen by all (a barrier).
template <typename Args>
__device__ LaunchRecords<Args> allocateBlockRecords(unsigned count,
                                                    unsigned blocks,
                                                    const char *file,
                                                    int line) {
  __shared__ void *memory;
  if (linearThreadIndex() == 0)
    memory = count ? poolAllocate(LaunchRecords<Args>::bytes(count, blocks))
                   : nullptr;
  __syncthreads();
  if (count && !memory)
    failAggregation(cudaErrorMemoryAllocation, file, line);
  return LaunchRecords<Args>::at(memory, count);
}

} // namespace detail

/// Block granularity: every thread of the block calls this (it has
/// barriers), with the launch it asked for (PendingLaunch) or the list of
/// them (PendingLaunchList, for launches in loops). The threads' launches
/// get consecutive slots; the block's first thread launches for all.
template <typename Pending>
__device__ AggregatedLaunch gatherBlockLaunches(const Pending &pending,
                                                const char *file, int line) {
  using Args = typename Pending::ArgsType;
  const detail::BlockLaunches mine = detail::countBlockLaunches(pending);
  const auto records =
      detail::allocateBlockRecords<Args>(mine.count, mine.blocks, file, line);
  detail::storePending(records, pending, mine.slot, mine.first, 0u);
  __threadfence();
  __syncthreads();
  AggregatedLaunch launch;
  launch.blocks = mine.blocks;
  launch.threads = mine.threads;
  launch.sharedBytes = mine.sharedBytes;
  launch.launcher = linearThreadIndex() == 0;
  launch.table = singleChunkTable(records.chunk(), launch.blocks);
  return launch;
}

//===----------------------------------------------------------------------===//
// Kernel granularity
//===----------------------------------------------------------------------===//

namespace detail {

/// One parent grid's aggregation in progress. Blocks of a grid find their
/// grid's entry through %gridid, which no two grids alive at the same time
/// share; so concurrent parents (recursion, device-launched parents, several
/// streams) each get their own.
struct GridAggregation {
  unsigned long long key;      ///< gridKey(); 0 when the entry is free.
  unsigned long long appended; ///< (chunks << 32) | blocks so far.
  unsigned long long maxShared;
  unsigned maxThreads;
  unsigned finishedBlocks;
  /// Room for one chunk per parent block: its first block and where its
  /// launches are.
  unsigned *chunkFirstBlock;
  LaunchChunk *chunks;
};

/// Grids find their entries in a hash table of buckets: a key always lives
/// in its home bucket, so all blocks of one grid look in the same place, and
/// a bucket's lock (taken only to claim an entry) keeps two blocks of one grid
/// from claiming two. Open addressing across buckets would not be safe here:
/// an entry freed before a grid's later blocks arrive would let them claim a
/// second entry for the grid, and neither would see every block finish. At
/// most 128 kernels run at once on sm_90, so with 128 buckets of 16 a full
/// bucket is out of reach in practice; it is reported, never silent.
inline constexpr unsigned kGridBuckets = 128;
inline constexpr unsigned kGridWays = 16;
CUDA_REWRITE_DEVICE_STATE GridAggregation
    gridAggregations[kGridBuckets][kGridWays];
CUDA_REWRITE_DEVICE_STATE unsigned gridBucketLocks[kGridBuckets];

/// Identifies one launch site of one grid: a parent with two sites
/// aggregates each on its own. Never 0 (the free marker).
__device__ __forceinline__ unsigned long long gridKey(unsigned site) {
  unsigned long long id;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(id));
  return ((id + 1) << 8) | (site & 0xff);
}

/// splitmix64's finaliser: consecutive grid ids spread over the buckets.
__device__ __forceinline__ unsigned gridBucket(unsigned long long key) {
  key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
  return unsigned((key ^ (key >> 31)) % kGridBuckets);
}

/// The entry of `key` in its bucket, or null. The ways are read relaxed (all
/// sixteen loads can be in flight at once) and a hit is ordered after them
/// by one fence: this runs on every block's way to the aggregated launch.
__device__ inline GridAggregation *findGridAggregation(GridAggregation *bucket,
                                                       unsigned long long key) {
  unsigned long long seen[kGridWays];
#pragma unroll
  for (unsigned way = 0; way < kGridWays; ++way)
    seen[way] = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(
                    bucket[way].key)
                    .load(cuda::std::memory_order_relaxed);
#pragma unroll
  for (unsigned way = 0; way < kGridWays; ++way) {
    if (seen[way] == key) {
      cuda::atomic_thread_fence(cuda::std::memory_order_acquire,
                                cuda::thread_scope_device);
      return &bucket[way];
    }
  }
  return nullptr;
}

/// Waits until the block that claimed `entry` has allocated its table.
__device__ inline GridAggregation *awaitGridTable(GridAggregation *entry) {
  cuda::atomic_ref<unsigned *, cuda::thread_scope_device> table(
      entry->chunkFirstBlock);
  // The claiming block of this grid is running, so this wait ends.
  while (!table.load(cuda::std::memory_order_acquire))
    __nanosleep(32);
  return entry;
}

/// Under the bucket's lock: the entry of `key` if another block claimed it
/// meanwhile, else a free entry claimed for it, else null (bucket full).
__device__ inline GridAggregation *
claimGridAggregation(GridAggregation *bucket, unsigned long long key,
                     bool &claimed) {
  claimed = false;
  if (GridAggregation *entry = findGridAggregation(bucket, key))
    return entry;
  for (unsigned way = 0; way < kGridWays; ++way) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> slot(
        bucket[way].key);
    // Frees happen without the lock, so claim with a compare-exchange.
    unsigned long long seen = 0;
    if (slot.compare_exchange_strong(seen, key,
                                     cuda::std::memory_order_acq_rel)) {
      claimed = true;
      return &bucket[way];
    }
  }
  return nullptr;
}

/// The calling grid's entry (called by one thread per block); the first
/// block to arrive claims it and allocates the chunk table.
__device__ inline GridAggregation *joinGridAggregation(unsigned site,
                                                       const char *file,
                                                       int line) {
  const unsigned long long key = gridKey(site);
  const unsigned home = gridBucket(key);
  GridAggregation *bucket = gridAggregations[home];
  if (GridAggregation *entry = findGridAggregation(bucket, key))
    return awaitGridTable(entry);

  // Every block of the grid arrives here at about the same time and misses.
  // Waiting blocks look for the entry again between tries: once the first
  // block to take the lock has claimed it, the rest join without the lock
  // (taking it in turn made the bezier sample 5x slower on an H100).
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> lock(
      gridBucketLocks[home]);
  unsigned unlocked = 0;
  while (!lock.compare_exchange_weak(unlocked, 1u,
                                     cuda::std::memory_order_acquire)) {
    unlocked = 0;
    __nanosleep(32);
    if (GridAggregation *entry = findGridAggregation(bucket, key))
      return awaitGridTable(entry);
  }
  bool claimed;
  GridAggregation *entry = claimGridAggregation(bucket, key, claimed);
  lock.store(0u, cuda::std::memory_order_release);
  if (!entry) {
    failAggregation(cudaErrorLaunchOutOfResources, file, line);
    return nullptr;
  }
  if (!claimed)
    return awaitGridTable(entry);

  const unsigned capacity = volume(gridDim);
  void *table =
      poolAllocate(capacity * (sizeof(unsigned) + sizeof(LaunchChunk)));
  if (!table)
    failAggregation(cudaErrorMemoryAllocation, file, line);
  entry->chunks = static_cast<LaunchChunk *>(table);
  cuda::atomic_ref<unsigned *, cuda::thread_scope_device>(
      entry->chunkFirstBlock)
      .store(reinterpret_cast<unsigned *>(entry->chunks + capacity),
             cuda::std::memory_order_release);
  return entry;
}

} // namespace detail

/// Kernel granularity: every thread of every block of the parent grid calls
/// this after the parent's body, with its PendingLaunch or (launches in
/// loops) PendingLaunchList. Each block stores its launches as at block
/// granularity, then appends them to the grid's table as one chunk with one
/// atomic (an out-of-order scan: blocks take their place in the order they
/// arrive, so the table needs one entry per parent block, not per thread);
/// the last block to finish launches the aggregated child for the whole
/// grid, and frees the grid's entry.
template <typename Pending>
__device__ AggregatedLaunch gatherGridLaunches(const Pending &pending,
                                               unsigned site,
                                               const char *file, int line) {
  using Args = typename Pending::ArgsType;
  const detail::BlockLaunches mine = detail::countBlockLaunches(pending);
  const auto records =
      detail::allocateBlockRecords<Args>(mine.count, mine.blocks, file, line);

  __shared__ detail::GridAggregation *entry;
  __shared__ unsigned base;
  const bool first = linearThreadIndex() == 0;
  if (first) {
    entry = detail::joinGridAggregation(site, file, line);
    if (mine.count) {
      const unsigned long long at =
          atomicAdd(&entry->appended, (1ull << 32) | mine.blocks);
      const unsigned chunk = unsigned(at >> 32);
      base = unsigned(at);
      entry->chunkFirstBlock[chunk] = base;
      entry->chunks[chunk] = records.chunk();
      atomicMax(&entry->maxThreads, mine.threads);
      atomicMax(&entry->maxShared, (unsigned long long)mine.sharedBytes);
    }
  }
  __syncthreads();
  if (mine.count)
    detail::storePending(records, pending, mine.slot, mine.first, base);
  __threadfence();
  __syncthreads();

  AggregatedLaunch launch{};
  launch.launcher = false;
  if (first && atomicAdd(&entry->finishedBlocks, 1u) == volume(gridDim) - 1) {
    // Every other block has appended (and fenced) its launches.
    __threadfence();
    const unsigned long long total = atomicAdd(&entry->appended, 0ull);
    const unsigned chunks = unsigned(total >> 32);
    launch.blocks = unsigned(total);
    launch.table = LaunchTable{chunks ? entry->chunks[0] : LaunchChunk{},
                               entry->chunkFirstBlock,
                               entry->chunks,
                               chunks,
                               1,
                               launch.blocks};
    launch.threads = atomicMax(&entry->maxThreads, 0u);
    launch.sharedBytes = atomicMax(&entry->maxShared, 0ull);
    launch.launcher = true;
    // Free the entry for the next grid; the tables stay in the pool until
    // the next host launch resets it.
    entry->appended = 0;
    entry->maxShared = 0;
    entry->maxThreads = 0;
    entry->finishedBlocks = 0;
    entry->chunks = nullptr;
    entry->chunkFirstBlock = nullptr;
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(entry->key)
        .store(0, cuda::std::memory_order_release);
  }
  return launch;
}

/// After the aggregated launch: a refused launch (e.g. error 69) is
/// recorded and stops the parent.
__device__ __forceinline__ void checkAggregatedLaunch(const char *file,
                                                     int line) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    failAggregation(error, file, line);
}

/// Host side, before each host launch of a rewritten parent: the pool's
/// tables from earlier launches are no longer needed.
inline cudaError_t prepareAggregatedLaunch(cudaStream_t stream = nullptr) {
  return resetPool(stream);
}

} // namespace cuda_rewrite

#endif
