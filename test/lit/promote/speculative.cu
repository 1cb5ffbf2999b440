// A launch condition known only in the body: the next link is launched
// speculatively right after the wait and returns if this link did not
// continue; the link publishes whether it did. In place (`data` is read and
// written): each link releases only at its end, after a barrier.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: sed '/^\/\/ [A-Z-]*:/d' %t.cu | FileCheck %s
// RUN: sed 's/^#pragma cuda_rewrite promote$/#pragma cuda_rewrite promote aggregate(16)/' %s > %t.pa.in.cu
// RUN: %cuda-rewrite %t.pa.in.cu -o %t.pa.cu --
// RUN: sed '/^\/\/ [A-Z-]*:/d' %t.pa.cu | FileCheck %s --check-prefix=PA

// REMARK: speculative.cu:[[@LINE+2]]:17: remark: rewritten: 'smooth' runs as smooth_promoted (variant P); postponed through the slots: carry; per-link arguments computed at the start: chunk; launch condition 'more' known only in the body (speculative launch); links write data, so each publishes at its end; each link stays pending until the next one ends, so a chain of more than about 2000 links exceeds CDP's pending-launch pool (error 69, recorded) unless the program raises cudaLimitDevRuntimePendingLaunchCount; aggregate(n) has no such limit; 1 host launch rewritten [promote]
#pragma cuda_rewrite promote
__global__ void smooth(int *data, int chunk, int carry) {
  const int i = chunk * 128 + threadIdx.x;
  const int v = data[i] + carry;
  const int more = __syncthreads_or(v != 0);
  if (threadIdx.x == 0 && more)
    smooth<<<1, 128>>>(data, chunk + 1, v);
  data[i] = v / 2;
}
// CHECK:      // Acquire what link t - 1 released (link 0 keeps the host's arguments).
// CHECK-NEXT: smooth_postponed cr_in{carry};
// CHECK-NEXT: if (!cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in))
// CHECK-NEXT:   return; // Link t - 1 did not continue the chain.
// CHECK-NEXT: carry = cr_in.carry;
// CHECK-NEXT: // Speculative promoted launch: whether the chain continues is known
// CHECK-NEXT: // only where the original launched.
// CHECK-NEXT: if (threadIdx.x == 0) {
// CHECK-NEXT:   smooth_promoted<<<1, 128, 0, cudaStreamFireAndForget>>>(
// CHECK-NEXT:       cr_chain, cr_link + 1, data, chunk + 1, carry);
// CHECK:      if (threadIdx.x == 0 && more) {
// CHECK-NEXT:   // The original launched the next link here; hand it its arguments.
// CHECK-NEXT:   cr_next.carry = v;
// CHECK-NEXT:   cr_launched = true;
// CHECK-NEXT: }
// CHECK-NEXT: data[i] = v / 2;
// CHECK-NEXT: // Release only after all of this link's accesses, so that later links
// CHECK-NEXT: // see memory as the original's next link did.
// CHECK-NEXT: __syncthreads();
// CHECK:        cuda_rewrite::promotePublish(cr_chain, cr_link + 1, cr_next, cr_launched);
// CHECK-NEXT: }

// Aggregated: the extent is reported with the launch decision, and the last
// block of a pool launches the next pool as soon as it knows it exists.
// PA:      if (!cuda_rewrite::promoteAwaitLink(cr_chain, cr_link))
// PA-NEXT:   return;
// PA-NEXT: // The last link of a pool launches the next pool
// PA:      if (threadIdx.x == 0 && cuda_rewrite::promoteLastOfPool(cr_link, 16)) {
// PA:      cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in);
// PA:      __syncthreads();
// PA-NEXT: // Release the next link
// PA-NEXT: if (threadIdx.x == 0) {
// PA-NEXT:   cuda_rewrite::promoteReportLink(cr_chain, cr_link, cr_launched);
// PA-NEXT:   cuda_rewrite::promotePublish(cr_chain, cr_link + 1, cr_next, cr_launched);
// PA-NEXT: }

void host(int *data) { smooth<<<1, 128>>>(data, 0, 0); }
