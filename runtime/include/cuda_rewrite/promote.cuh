//===- cuda_rewrite/promote.cuh - Chains of promoted links ---*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Launch promotion (KLAP section III; rewriters/promote/) turns a
// chain of single-block links, each launching the next at its end, into
// links that are launched early and wait for their predecessor. What the
// predecessor computes for them (the postponed launch arguments) travels
// through a PromoteSlot: the predecessor stores the values and then releases
// the slot's flag; the successor acquires the flag, then reads the values.
// All flags are libcu++ atomics at device scope with release/acquire order,
// never volatile polling.
//
// A chain's state (PromoteChain) is allocated, zeroed and freed by the host
// launcher, stream-ordered, once per host launch: concurrent chains in
// different streams never share it.
//
//  * Slots. Link t > 0 reads slot t % kPromoteRing, whose flag holds
//    2 * t + go once link t - 1 has published (0 before). The ring is safe to
//    reuse because the chain is serial: link t + R's values are written by
//    link t + R - 1 after its own acquire, which follows (through the chain of
//    release/acquire pairs) link t's acquire and its read of the values. A
//    ring of one slot would be correct too; eight spread the spinning blocks
//    over eight cache lines.
//  * Tickets (aggregated variants). Every block of a pool takes a ticket with
//    an atomic add; the ticket is its link. A block waits only on the block
//    holding the previous ticket, which has taken it and is therefore
//    running: no block ever waits on one that may not be resident, so the
//    chain cannot deadlock, whatever the number of blocks per SM.
//  * Extent (aggregated variants). Blocks of a pool may lie past the end of
//    the chain. Link k, once it knows it exists, reports
//    2 * (k + 1) + (link k + 1 exists); a block learns from the extent
//    whether its link exists before it runs any of the body.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_PROMOTE_CUH
#define CUDA_REWRITE_PROMOTE_CUH

#include "cuda_rewrite/config.cuh"
#include "cuda_rewrite/error.cuh"

#include <cuda/atomic>
#include <cuda_runtime.h>

namespace cuda_rewrite {

/// Slots per chain (a power of two; see the file comment).
constexpr unsigned kPromoteRing = 8;

/// The longest sleep between two polls of a flag, in ns: a waiting block
/// yields its SM's issue slots to the working links, at the price of up to
/// this much latency per hand-off in the serial chain.
#ifndef CUDA_REWRITE_PROMOTE_MAX_SLEEP_NS
#define CUDA_REWRITE_PROMOTE_MAX_SLEEP_NS 128
#endif

/// The values link t - 1 hands link t, and the flag that publishes them.
template <class Values> struct alignas(128) PromoteSlot {
  Values values;
  /// 0, or 2 * link + go once the values for `link` are published; go is 0
  /// when the previous link decided not to continue the chain.
  unsigned int flag;
};

/// A promoted chain's state: zeroed before the first link runs.
template <class Values> struct PromoteChain {
  alignas(128) unsigned int ticket; ///< Next ticket (aggregated variants).
  alignas(128) unsigned int extent; ///< 0, or 2 * (k + 1) + more.
  PromoteSlot<Values> slots[kPromoteRing];
};

namespace detail {

/// Spins (one thread) until `done(flag value)`, with a growing sleep so that
/// waiting blocks leave the SM to the links that work; returns the value.
template <class Done>
__device__ inline unsigned int
promoteSpin(unsigned int &flag, Done done,
            cuda::std::memory_order order = cuda::std::memory_order_acquire) {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device> ref(flag);
  unsigned int sleep = 32;
  for (;;) {
    unsigned int value = ref.load(order);
    if (done(value))
      return value;
    if (CUDA_REWRITE_PROMOTE_MAX_SLEEP_NS > 0) {
      __nanosleep(sleep);
      if (sleep < CUDA_REWRITE_PROMOTE_MAX_SLEEP_NS)
        sleep *= 2;
    }
  }
}

} // namespace detail

/// Block-wide (every thread calls it): link 0 keeps `values` (the host's
/// launch arguments); a later link waits for its slot, takes the values the
/// previous link published, and learns whether the previous link continued
/// the chain (false: a speculatively launched link that must not run).
/// Thread 0 acquires and shares through shared memory after a barrier, so
/// every thread's later reads are ordered after the previous link's writes.
template <class Values>
__device__ inline bool promoteAwait(PromoteChain<Values> *chain,
                                    unsigned int link, Values &values) {
  __shared__ Values shared;
  __shared__ bool go;
  if (threadIdx.x == 0 && link != 0) {
    PromoteSlot<Values> &slot = chain->slots[link % kPromoteRing];
    unsigned int flag = detail::promoteSpin(
        slot.flag, [link](unsigned int f) { return f >> 1 == link; });
    shared = slot.values;
    go = flag & 1;
  }
  __syncthreads();
  if (link == 0)
    return true;
  values = shared;
  return go;
}

/// One thread: hands `values` to link `next` (and whether it runs at all)
/// with a release store, after the plain stores of the values.
template <class Values>
__device__ inline void promotePublish(PromoteChain<Values> *chain,
                                      unsigned int next, const Values &values,
                                      bool go) {
  PromoteSlot<Values> &slot = chain->slots[next % kPromoteRing];
  slot.values = values;
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device> flag(slot.flag);
  flag.store(2 * next + (go ? 1 : 0), cuda::std::memory_order_release);
}

/// Block-wide: the block's ticket, which is its link (aggregated variants).
template <class Values>
__device__ inline unsigned int promoteTicket(PromoteChain<Values> *chain) {
  __shared__ unsigned int ticket;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> next(
        chain->ticket);
    // Relaxed: the ticket orders nothing; the slots and the extent do.
    ticket = next.fetch_add(1, cuda::std::memory_order_relaxed);
  }
  __syncthreads();
  return ticket;
}

/// Block-wide: whether link `link` exists (aggregated variants). Link 0
/// does; a later one waits until a link at most one before it reported.
template <class Values>
__device__ inline bool promoteAwaitLink(PromoteChain<Values> *chain,
                                        unsigned int link) {
  __shared__ bool exists;
  if (threadIdx.x == 0) {
    exists = true;
    if (link != 0) {
      // Done once link - 1 (or a later one) reported, or once the chain
      // reported its end: 2 * (k + 1) + 0 says links k + 1... do not exist.
      // Relaxed, as is the report: the extent only says whether the link
      // runs; what a link needs of the one before it comes through the
      // slots, with acquire and release. (On an H200 this and a shorter
      // sleep took 4096 links of compaction from 16.9 to 13.x ms.)
      unsigned int extent = detail::promoteSpin(
          chain->extent,
          [link](unsigned int e) {
            return e != 0 && (e >> 1 >= link || (e & 1) == 0);
          },
          cuda::std::memory_order_relaxed);
      exists = (extent >> 1) > link || ((extent >> 1) == link && (extent & 1));
    }
  }
  __syncthreads();
  return exists;
}

/// One thread of link `link`, which exists: reports whether link + 1 does.
template <class Values>
__device__ inline void promoteReportLink(PromoteChain<Values> *chain,
                                         unsigned int link, bool more) {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device> extent(
      chain->extent);
  extent.fetch_max(2 * (link + 1) + (more ? 1 : 0),
                   cuda::std::memory_order_relaxed);
}

/// Whether `link` holds the last ticket of its pool of `pool` blocks, the
/// one that launches the next pool.
__device__ inline bool promoteLastOfPool(unsigned int link, unsigned int pool) {
  return link % pool == pool - 1;
}

/// Right after a promoted device-side launch: records a failure (e.g.
/// cudaErrorLaunchPendingCountExceeded, 69) in the runtime's sticky device
/// error, and leaves it in the thread's last error for the program's own
/// checks.
__device__ inline void promoteCheckLaunch(const char *file, int line) {
  recordDeviceError(cudaPeekAtLastError(), file, line);
}

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_PROMOTE_CUH
