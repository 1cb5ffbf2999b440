//===- cuda_rewrite/pipeline_queue.cuh - Work queues of pipelines -*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// The device half of the pipeline runtime (rewriters/pipeline/, VersaPipe
// section 5): one work queue per stage, the count of items in flight that ends
// a run, the batches persistent blocks take, and the placement of persistent
// blocks on SMs. The host half is pipeline.cuh.
//
// Queues. A queue is a ring of `capacity` slots (a power of two) with two
// monotonic positions, `tail` (reserved by producers) and `head` (reserved by
// consumers), and a sequence word per slot in the style of Vyukov's bounded
// queue: the slot of position p holds p while it is free for the producer of
// p, p + 1 once that producer has published the item, and p + capacity once
// the consumer has read it (free for the producer of p + capacity).
//
//  * No lock and no lock-step assumption. A thread only ever waits for a
//    sequence word that another thread is about to store with nothing left to
//    wait for itself: a producer that has reserved p waits for the consumer of
//    p - capacity, which has reserved that position and is copying the item
//    out; a consumer that has reserved p waits for the producer of p, which
//    has reserved it and is copying the item in. Under independent thread
//    scheduling (Volta and later) both make progress whichever warps they
//    share. (VersaPipe's published queues, after Whippletree, spin on locks
//    that assume lock-step warps and hang on Hopper.)
//  * Overflow. Producers first count the item in `used` (positions reserved
//    and not yet freed); more than `capacity` is an overflow, which records
//    cudaErrorMemoryAllocation and aborts the run rather than waiting for
//    space (every persistent block may be a producer: waiting could
//    deadlock). `used <= capacity` also proves the producer's wait above is
//    for a consumer that has reserved the older position, not for one that
//    may never come.
//  * Termination. `inFlight` counts items pushed and not yet finished. A push
//    adds to it before the item is published, and a batch subtracts its items
//    only after everything they pushed is counted, so it is zero exactly when
//    the pipeline has no work left: no item count has to be known ahead.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_PIPELINE_QUEUE_CUH
#define CUDA_REWRITE_PIPELINE_QUEUE_CUH

#include "cuda_rewrite/config.cuh"

#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

namespace cuda_rewrite {
namespace pipeline {

/// The most stages one pipeline may have.
inline constexpr int kMaxStages = 16;
/// Entries of the per-SM block counters (more than any GPU's SM count).
inline constexpr int kMaxSms = 1024;
/// Rounds of items a persistent block reserves at most at once (one item per
/// group and round), unless the configuration says otherwise (`rounds`):
/// reserving is a compare-and-swap on the queue's head that every block
/// contends for, so fewer, larger reservations scale better (bench/
/// RESULTS.md, 2026-11-22 05:47: megakernel pyramid 4.89 -> 1.76 ms) ...
inline constexpr int kBatchRounds = 4;
/// ... but an extra round only while the queue holds a round for this many
/// blocks per extra round, so that a short queue still spreads over blocks
/// (`spread` in the configuration).
inline constexpr int kBlocksPerExtraRound = 16;
/// The longest sleep between two polls of empty queues, in ns.
inline constexpr unsigned kMaxPollSleepNs = 1024;

using Position = unsigned long long;

template <class T>
using DeviceAtomic = cuda::atomic_ref<T, cuda::thread_scope_device>;

/// One stage's queue; the slots live in a typed array beside it (Queue).
struct QueueState {
  Position head;     ///< Next position a consumer reserves.
  Position tail;     ///< Next position a producer reserves.
  Position used;     ///< Reserved by producers and not yet freed.
  Position capacity; ///< Slots, a power of two.
  Position *sequence; ///< Per slot; see the file comment.
};

/// Everything of one pipeline's run that its kernels share.
struct Control {
  QueueState queues[kMaxStages];
  int groupSize[kMaxStages]; ///< threads(n) of each stage.
  int stageCount;
  int inFlight;      ///< Items pushed and not yet finished.
  int abort;         ///< Set on overflow: every block stops.
  int error;         ///< The cudaError_t that aborted the run.
  int overflowStage; ///< The stage whose queue overflowed.
  int batchRounds;   ///< kBatchRounds unless configured; and right after
  int spreadBlocks;  ///< it (copied together), kBlocksPerExtraRound.
};

namespace detail {

/// Records an overflow of \p stage's queue and aborts the run. The first
/// error wins; later ones are consequences.
__device__ inline void abortRun(Control &control, int stage, cudaError_t why) {
  int none = 0;
  if (DeviceAtomic<int>(control.error)
          .compare_exchange_strong(none, static_cast<int>(why),
                                   cuda::std::memory_order_relaxed))
    control.overflowStage = stage;
  DeviceAtomic<int>(control.abort).store(1, cuda::std::memory_order_release);
}

/// Waits until the sequence word \p word holds \p value (see the file
/// comment for why the wait is short and cannot deadlock).
__device__ inline void waitFor(Position &word, Position value) {
  DeviceAtomic<Position> sequence(word);
  unsigned sleep = 8;
  while (sequence.load(cuda::std::memory_order_acquire) != value) {
    __nanosleep(sleep);
    sleep = sleep < 256 ? 2 * sleep : sleep;
  }
}

} // namespace detail

/// A stage's queue as stage code sees it: where to push items for the stage
/// and where its consumers take them from. Passed by value into kernels.
template <class T> struct Queue {
  Control *control;
  int stage;
  T *slots;

  /// Queues \p item for the stage. Threads that push at the same time from
  /// one warp reserve their positions with one atomic per warp.
  __device__ void push(const T &item) const {
    namespace cg = cooperative_groups;
    cg::coalesced_group active = cg::coalesced_threads();
    QueueState &queue = control->queues[stage];
    Position base = 0;
    int fits = 1;
    if (active.thread_rank() == 0) {
      Position count = active.size();
      DeviceAtomic<int>(control->inFlight)
          .fetch_add(static_cast<int>(count), cuda::std::memory_order_relaxed);
      Position used = DeviceAtomic<Position>(queue.used).fetch_add(
          count, cuda::std::memory_order_relaxed);
      if (used + count > queue.capacity) {
        DeviceAtomic<Position>(queue.used).fetch_sub(
            count, cuda::std::memory_order_relaxed);
        detail::abortRun(*control, stage, cudaErrorMemoryAllocation);
        fits = 0;
      } else {
        base = DeviceAtomic<Position>(queue.tail).fetch_add(
            count, cuda::std::memory_order_relaxed);
      }
    }
    if (!active.shfl(fits, 0))
      return; // The run is aborted and reports the overflow.
    Position position = active.shfl(base, 0) + active.thread_rank();
    Position slot = position & (queue.capacity - 1);
    detail::waitFor(queue.sequence[slot], position);
    slots[slot] = item;
    DeviceAtomic<Position>(queue.sequence[slot])
        .store(position + 1, cuda::std::memory_order_release);
  }

  /// Queues \p item once for the threads(n) group of a stage that hands it
  /// on, all of whose n threads call with the same item: waits for the
  /// whole group (so the consumer sees what every thread of it wrote before
  /// the call), then pushes from the thread whose \p rank is 0. Groups are
  /// aligned runs of n threads of the block (runPipelineBatch).
  __device__ void pushFromGroup(const T &item, int rank) const {
    syncGroup(control->groupSize[stage]);
    pushOnce(item, rank);
  }

  /// Queues \p item once, from the thread whose \p rank is 0 (the entry
  /// kernel's calls: the pipeline starts after the seeding kernel ended).
  __device__ void pushOnce(const T &item, int rank) const {
    if (rank == 0)
      push(item);
  }

private:
  /// A barrier over the calling thread's aligned group of \p n threads.
  static __device__ void syncGroup(int n) {
    if (n <= kWarpThreads) {
      unsigned lane = threadIdx.x % kWarpThreads;
      unsigned first = lane / n * n;
      unsigned mask = n == kWarpThreads ? kFullWarpMask
                                        : ((1u << n) - 1) << first;
      __syncwarp(mask);
    } else {
      // Named barrier 1 + group (0 is __syncthreads'), over n threads.
      asm volatile("bar.sync %0, %1;" ::"r"(1 + threadIdx.x / n), "r"(n)
                   : "memory");
    }
  }

public:
  /// The item at \p position, which this block has reserved: waits until its
  /// producer has published it. The slot is freed by finishBatch.
  __device__ T take(Position position) const {
    QueueState &queue = control->queues[stage];
    Position slot = position & (queue.capacity - 1);
    detail::waitFor(queue.sequence[slot], position + 1);
    return slots[slot];
  }
};

//===----------------------------------------------------------------------===//
// Placement of persistent blocks (SM-centric filling and retreating)
//===----------------------------------------------------------------------===//

/// The longest cycle of roles (Placement::roles).
inline constexpr int kMaxRoleCycle = 64;

/// Where the blocks of one persistent kernel may stay: SMs [smFirst, smLast],
/// at most blocksPerSm on each. The counters are zeroed before each launch.
struct Placement {
  int smFirst;
  int smLast;
  int blocksPerSm;
  int *perSm;   ///< kMaxSms counters: blocks that stayed on each SM.
  int *tickets; ///< Blocks that have decided.
  int *stayed;  ///< Blocks that stayed.
  /// Online adaptation: per stage, the blocks that serve it (a block serving
  /// several stages counts in its first) that are running; a block that
  /// found no work in idlePolls polls retires, unless it is the last to
  /// serve its stages, and counts itself in `retired`, host memory the host
  /// watches (0: blocks never retire).
  int *live;
  int idlePolls;
  int *retired;
  /// The fine model: the n-th block to stay serves only stage
  /// roles[n % roleCount] (of the kernel's stages), so the stages share every
  /// SM within one kernel; 0: a block serves all the kernel's stages, and
  /// counts in live[firstStage].
  int roleCount;
  int firstStage;
  signed char roles[kMaxRoleCycle];
};

__device__ inline unsigned smId() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/// The stage the calling block serves (fine model), or -1: all of its
/// kernel's stages. Set by stayOnThisSm.
__device__ inline int &blockRole() {
  __shared__ int role;
  return role;
}

/// The live counter of the calling block's stages.
__device__ inline int *liveCounter(const Placement &placement) {
  int role = blockRole();
  return placement.live + (role >= 0 ? role : placement.firstStage);
}

/// Whether the calling block stays: on one of its SMs and under the SM's
/// quota. The kernel is launched with enough blocks to fill every SM, and
/// the others exit at once. The last block to decide stays anyway if none
/// did (its SMs may be full of other kernels), so every stage keeps at least
/// one block and the run always ends. Fine: the block takes its role; the
/// first roleCount blocks to stay cover every stage. Every thread of the
/// block calls it.
__device__ inline bool stayOnThisSm(const Placement &placement) {
  __shared__ int stays;
  if (threadIdx.x == 0) {
    int sm = static_cast<int>(smId());
    int ticket = atomicAdd(placement.tickets, 1);
    bool stay = sm >= placement.smFirst && sm <= placement.smLast &&
                sm < kMaxSms &&
                atomicAdd(&placement.perSm[sm], 1) < placement.blocksPerSm;
    if (!stay && ticket == static_cast<int>(gridDim.x) - 1 &&
        DeviceAtomic<int>(*placement.stayed)
                .load(cuda::std::memory_order_relaxed) == 0)
      stay = true;
    blockRole() = -1;
    if (stay) {
      int place = atomicAdd(placement.stayed, 1);
      if (placement.roleCount > 0)
        blockRole() = placement.roles[place % placement.roleCount];
      atomicAdd(liveCounter(placement), 1);
    }
    stays = stay;
  }
  __syncthreads();
  return stays != 0;
}

/// The items a block runs at once: positions [first, first + count) of one
/// stage's queue; the block's groups of groupSize[stage] threads take them
/// in turn (item g goes to group g % groups, in round g / groups). stage < 0:
/// the run is over.
struct Batch {
  int stage;
  int count;
  Position first;
};

namespace detail {

/// Reserves items of \p stage for the calling block: up to batchRounds
/// rounds of \p perRound items, fewer when the queue is short.
__device__ inline bool tryReserve(Control &control, int stage,
                                  Position perRound, Batch &batch) {
  QueueState &queue = control.queues[stage];
  DeviceAtomic<Position> head(queue.head);
  Position first = head.load(cuda::std::memory_order_relaxed);
  for (;;) {
    Position tail =
        DeviceAtomic<Position>(queue.tail).load(cuda::std::memory_order_relaxed);
    if (first >= tail)
      return false;
    Position waiting = tail - first;
    Position most = static_cast<Position>(control.batchRounds);
    Position rounds =
        1 + waiting / (perRound * static_cast<Position>(control.spreadBlocks));
    Position want = perRound * (rounds < most ? rounds : most);
    Position count = waiting < want ? waiting : want;
    if (head.compare_exchange_weak(first, first + count,
                                   cuda::std::memory_order_relaxed)) {
      batch = {stage, static_cast<int>(count), first};
      return true;
    }
  }
}

} // namespace detail

namespace detail {

/// Whether a block that found no work for a while leaves: only if another
/// block serves its stages (so a later item always finds one).
__device__ inline bool retire(const Placement &placement) {
  int *live = liveCounter(placement);
  if (atomicSub(live, 1) > 1) {
    cuda::atomic_ref<int, cuda::thread_scope_system>(*placement.retired)
        .fetch_add(1, cuda::std::memory_order_relaxed);
    return true;
  }
  atomicAdd(live, 1);
  return false;
}

} // namespace detail

/// The next batch of the calling block among stages [firstStage, lastStage]
/// (only its role, in the fine model), later stages first (draining
/// downstream keeps the queues short). Waits,
/// sleeping between polls, while the queues are empty but items are in
/// flight; false once no item is left anywhere, the run was aborted, or the
/// block retires (online adaptation, see Placement). Every thread of the
/// block calls it.
__device__ inline bool nextBatch(Control &control, const Placement &placement,
                                 int firstStage, int lastStage, Batch &batch) {
  __shared__ Batch next;
  if (threadIdx.x == 0) {
    if (blockRole() >= 0)
      firstStage = lastStage = blockRole();
    unsigned sleep = 32;
    int idle = 0;
    for (;;) {
      if (DeviceAtomic<int>(control.abort).load(
              cuda::std::memory_order_relaxed)) {
        next.stage = -1;
        break;
      }
      bool found = false;
      for (int stage = lastStage; stage >= firstStage && !found; --stage)
        found = detail::tryReserve(control, stage,
                                   blockDim.x / control.groupSize[stage], next);
      if (found)
        break;
      if (DeviceAtomic<int>(control.inFlight)
              .load(cuda::std::memory_order_acquire) == 0) {
        next.stage = -1;
        break;
      }
      if (placement.idlePolls && ++idle >= placement.idlePolls) {
        idle = 0;
        if (detail::retire(placement)) {
          next.stage = -1;
          break;
        }
      }
      __nanosleep(sleep);
      sleep = sleep < kMaxPollSleepNs ? 2 * sleep : sleep;
    }
  }
  __syncthreads();
  // Thread 0 rewrites `next` only in the next call, after finishBatch's
  // barriers: everyone has read it by then.
  batch = next;
  return batch.stage >= 0;
}

/// The batch of block blockIdx.x in a kernel-by-kernel launch over positions
/// [first, first + count) of \p stage: consecutive blocks take consecutive
/// items. Block 0 advances the queue's head past them.
__device__ inline Batch kernelByKernelBatch(Control &control, int stage,
                                            Position first, Position count) {
  Position perBlock = blockDim.x / control.groupSize[stage];
  Position begin = blockIdx.x * perBlock;
  Position mine = count - begin < perBlock ? count - begin : perBlock;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    DeviceAtomic<Position>(control.queues[stage].head)
        .store(first + count, cuda::std::memory_order_relaxed);
  return {stage, static_cast<int>(mine), first + begin};
}

/// Ends a batch after every group ran its item: frees the slots, then takes
/// the items out of flight (after all they pushed was counted in, so the
/// count cannot reach zero early). Every thread of the block calls it.
__device__ inline void finishBatch(Control &control, const Batch &batch) {
  __syncthreads();
  QueueState &queue = control.queues[batch.stage];
  for (unsigned i = threadIdx.x; i < static_cast<unsigned>(batch.count);
       i += blockDim.x) {
    Position position = batch.first + i;
    DeviceAtomic<Position>(queue.sequence[position & (queue.capacity - 1)])
        .store(position + queue.capacity, cuda::std::memory_order_release);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    DeviceAtomic<Position>(queue.used).fetch_sub(
        batch.count, cuda::std::memory_order_relaxed);
    DeviceAtomic<int>(control.inFlight)
        .fetch_sub(batch.count, cuda::std::memory_order_release);
  }
}

} // namespace pipeline
} // namespace cuda_rewrite

#endif // CUDA_REWRITE_PIPELINE_QUEUE_CUH
