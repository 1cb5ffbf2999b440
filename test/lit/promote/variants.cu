// The promote pass on a compaction chain: one block per chunk, the running
// offset postponed through the slots, the chunk index stepped. The same
// kernel in each variant (the pragma edited by sed, as the bench does).
// RUN: %cuda-rewrite --remarks %s -o %t.p.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK-P
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.p.cu | FileCheck %s --check-prefixes=CHECK,P
// RUN: sed 's/^#pragma cuda_rewrite promote$/#pragma cuda_rewrite promote aggregate(4)/' %s > %t.pa.in.cu
// RUN: %cuda-rewrite --remarks %t.pa.in.cu -o %t.pa.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK-PA
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.pa.cu | FileCheck %s --check-prefixes=CHECK,PA
// RUN: sed 's/^#pragma cuda_rewrite promote$/#pragma cuda_rewrite promote overlap/' %s > %t.po.in.cu
// RUN: %cuda-rewrite %t.po.in.cu -o %t.po.cu --
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.po.cu | FileCheck %s --check-prefixes=CHECK,PO
// RUN: sed 's/^#pragma cuda_rewrite promote$/#pragma cuda_rewrite promote aggregate(128) overlap/' %s > %t.pao.in.cu
// RUN: %cuda-rewrite %t.pao.in.cu -o %t.pao.cu --
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.pao.cu | FileCheck %s --check-prefixes=CHECK,PAO

// CHECK: #include "cuda_rewrite/runtime.cuh"

constexpr int kBlock = 256;

// REMARK-P: variants.cu:[[@LINE+3]]:17: remark: rewritten: 'compact' runs as compact_promoted (variant P); postponed through the slots: offset; per-link arguments computed at the start: chunk; launch condition 'n - begin > kBlock' known at the start; links write out, count, so each publishes at its end; each link stays pending until the next one ends, so a chain of more than about 2000 links exceeds CDP's pending-launch pool (error 69, recorded) unless the program raises cudaLimitDevRuntimePendingLaunchCount; aggregate(n) has no such limit; 1 host launch rewritten [promote]
// REMARK-PA: remark: rewritten: 'compact' runs as compact_promoted (variant PA, pools of 4 blocks);
#pragma cuda_rewrite promote
__global__ void compact(const int *__restrict__ in, int *__restrict__ out,
                        int *__restrict__ count, int n, int chunk,
                        int offset) {
  __shared__ int kept[kBlock];
  const int begin = chunk * kBlock;
  const int i = begin + threadIdx.x;
  const int flag = i < n && in[i] % 2 == 0;
  kept[threadIdx.x] = flag;
  __syncthreads();
  int rank = 0, total = 0;
  for (int k = 0; k < kBlock; ++k) {
    rank += k < threadIdx.x ? kept[k] : 0;
    total += kept[k];
  }
#pragma cuda_rewrite overlap_boundary
  const int next = offset + total;
  if (threadIdx.x == 0 && n - begin > kBlock) {
    compact<<<1, kBlock, 0, cudaStreamTailLaunch>>>(in, out, count, n,
                                                     chunk + 1, next);
  }
  if (flag)
    out[offset + rank] = in[i];
  if (threadIdx.x == 0 && n - begin <= kBlock)
    *count = next;
}
// The original stays (check lines are stripped from the output first).
// CHECK: __global__ void compact(const int *__restrict__ in, int *__restrict__ out,
// CHECK:   compact<<<1, kBlock, 0, cudaStreamTailLaunch>>>(in, out, count, n,

// CHECK:      struct compact_postponed {
// CHECK-NEXT:   int offset;
// CHECK-NEXT: };
// P:   /// 'compact', promoted: KLAP variant P (section III of the KLAP
// PA:  /// 'compact', promoted: KLAP variant PA (section III of the KLAP
// PO:  /// 'compact', promoted: KLAP variant PO (section III of the KLAP
// PAO: /// 'compact', promoted: KLAP variant PAO (section III of the KLAP
// PA:  Deadlock freedom: a block waits
// PA-NEXT: /// only on the link of the ticket before its own, which a block took and is
// PA-NEXT: /// therefore already running; no block waits on one that may not be resident,
// P:      __global__ void __launch_bounds__(256){{$}}
// P-NEXT: {{^}}compact_promoted(cuda_rewrite::PromoteChain<compact_postponed> *cr_chain,
// P-NEXT:     unsigned cr_link, const int *__restrict__ in,{{[[:space:]]+}}int *__restrict__ out,
// PA:     __global__ void __launch_bounds__(256){{$}}
// PA-NEXT: {{^}}compact_promoted(cuda_rewrite::PromoteChain<compact_postponed> *cr_chain,
// PA-NEXT:    const int *__restrict__ in, int *__restrict__ out,{{[[:space:]]+}}int *__restrict__ count,

// Aggregated: the ticket is the link; the stepped chunk follows from it.
// PA:      const unsigned cr_link = cuda_rewrite::promoteTicket(cr_chain);
// PA-NEXT: const int cr_rank = int(cr_link % 4); // Links since the pool's first.
// PA-NEXT: chunk = chunk + cr_rank * 1;
// PAO:     const int cr_rank = int(cr_link % 128);

// The hoisted launch, after the declarations it needs.
// CHECK:      const int begin = chunk * kBlock;
// P:          // Promoted launch: the next link starts now and waits for this one.
// P-NEXT:     if (threadIdx.x == 0 && (n - begin > kBlock)) {
// P-NEXT:       compact_promoted<<<1, kBlock, 0, cudaStreamFireAndForget>>>(
// P-NEXT:           cr_chain, cr_link + 1, in, out, count, n, chunk + 1, offset);
// P-NEXT:       cuda_rewrite::promoteCheckLaunch(__FILE__, __LINE__);
// P-NEXT:     }
// P-NEXT:     // Acquire what link t - 1 released (link 0 keeps the host's arguments).
// P-NEXT:     compact_postponed cr_in{offset};
// P-NEXT:     cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in);
// P-NEXT:     offset = cr_in.offset;
// P-NEXT:     const int i = begin + threadIdx.x;
// PA:         if (!cuda_rewrite::promoteAwaitLink(cr_chain, cr_link))
// PA-NEXT:      return;
// PA-NEXT:    if (threadIdx.x == 0)
// PA-NEXT:      cuda_rewrite::promoteReportLink(cr_chain, cr_link, n - begin > kBlock);
// PA:         if (threadIdx.x == 0 && cuda_rewrite::promoteLastOfPool(cr_link, 4) &&
// PA-NEXT:        (n - begin > kBlock)) {
// PA-NEXT:      compact_promoted<<<4, kBlock, 0, cudaStreamFireAndForget>>>(
// PA-NEXT:          cr_chain, in, out, count, n, chunk + 1, offset);
// PA:         cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in);
// PA-NEXT:    offset = cr_in.offset;
// PA-NEXT:    const int i = begin + threadIdx.x;

// With overlap the wait replaces the boundary: the prologue runs first.
// PO:        cudaStreamFireAndForget
// PO:        total += kept[k];
// PO-NEXT:   }
// PO-NEXT:   // Acquire what link t - 1 released (link 0 keeps the host's arguments).
// PO-NEXT:   compact_postponed cr_in{offset};
// PO-NEXT:   cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in);
// PO-NEXT:   offset = cr_in.offset;
// PO-NEXT:   const int next = offset + total;
// PAO:       promoteLastOfPool(cr_link, 128)
// PAO:       total += kept[k];
// PAO-NEXT:  }
// PAO-NEXT:  // Acquire what link t - 1 released
// PAO:       const int next = offset + total;

// The launch becomes the hand-over, released at the link's end: the links
// write 'out', and the pass cannot prove that they write disjoint elements,
// so every write of link t must come before those of link t + 1.
// CHECK:      // Set where the original launched the next link.
// CHECK-NEXT: compact_postponed cr_next{};
// CHECK-NEXT: bool cr_launched = false;
// CHECK-NEXT: if (threadIdx.x == 0 && n - begin > kBlock) {
// CHECK-NEXT:   // The original launched the next link here; hand it its arguments.
// CHECK-NEXT:   cr_next.offset = next;
// CHECK-NEXT:   cr_launched = true;
// CHECK-NEXT: }
// CHECK-NEXT: if (flag)
// CHECK:      // Release only after all of this link's accesses, so that later links
// CHECK-NEXT: // see memory as the original's next link did.
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: // Release the next link: it acquires cr_next and all this link wrote before.
// CHECK-NEXT: if (threadIdx.x == 0)
// CHECK-NEXT:   cuda_rewrite::promotePublish(cr_chain, cr_link + 1, cr_next, cr_launched);
// CHECK-NEXT: }

// The host launcher: state allocated, zeroed and freed in stream order.
// CHECK:      inline cudaError_t compact_promoted_launch(dim3 grid, dim3 block,
// CHECK:        cuda_rewrite::PromoteChain<compact_postponed> *cr_chain = nullptr;
// CHECK-NEXT:   cudaError_t cr_error = cudaMallocAsync(&cr_chain, sizeof *cr_chain, stream);
// CHECK-NEXT:   if (cr_error == cudaSuccess)
// CHECK-NEXT:     cr_error = cudaMemsetAsync(cr_chain, 0, sizeof *cr_chain, stream);
// CHECK-NEXT:   if (cr_error != cudaSuccess)
// CHECK-NEXT:     return cr_error;
// P-NEXT:       compact_promoted<<<grid, block, shared, stream>>>(cr_chain, 0u, in, out,
// PA-NEXT:      compact_promoted<<<dim3(4), block, shared, stream>>>(cr_chain, in, out,
// CHECK:        cr_error = cudaPeekAtLastError();
// CHECK-NEXT:   cudaError_t cr_freed = cudaFreeAsync(cr_chain, stream);

void run(const int *in, int *out, int *count, int n, cudaStream_t stream) {
  // CHECK: compact_promoted_launch(1, kBlock, 0, stream, in, out, count, n, 0, 0);
  compact<<<1, kBlock, 0, stream>>>(in, out, count, n, 0, 0);
}
