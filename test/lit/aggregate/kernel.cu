// Kernel granularity: like block granularity, the parent's body records its
// launch; the flush appends the block's launches to the grid's table and
// the last block launches once. Scalars must be the same in the whole grid:
// blockIdx.x is uniform in a block, not in a grid.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %cuda-rewrite --remarks --aggregate-granularity=block %s -o /dev/null -- 2>&1 | FileCheck %s --check-prefix=BLOCK

__global__ void child(int *out, int first, int tag) {
  out[first + threadIdx.x] = tag;
}
// CHECK:      struct child_args {
// CHECK-NEXT:   int first;
// CHECK-NEXT:   int tag;
// CHECK-NEXT: };
// CHECK:      template <typename Pending>
// CHECK-NEXT: __device__ void child_launch_kernel(const Pending &cr_pending, int *out,
// CHECK-NEXT:                                     unsigned cr_site, int cr_line) {
// CHECK-NEXT:   auto cr_launch =
// CHECK-NEXT:       cuda_rewrite::gatherGridLaunches(cr_pending, cr_site, __FILE__, cr_line);

#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void parent(int *out, const int *counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && counts[i] > 0)
    // REMARK: kernel.cu:[[@LINE+2]]:5: remark: rewritten: aggregated at kernel granularity into 'child_aggregated'; scalar arguments: out; per-launch arguments: first, tag [aggregate]
    // BLOCK: kernel.cu:[[@LINE+1]]:5: remark: rewritten: aggregated at block granularity into 'child_aggregated'; scalar arguments: out, tag; per-launch arguments: first [aggregate]
    child<<<1, counts[i]>>>(out, i * 32, blockIdx.x);
}
// CHECK:      cuda_rewrite::PendingLaunch<child_args> cr_pending_0;
// CHECK-NEXT: parent_body(out, counts, n, cr_pending_0);
// CHECK-NEXT: child_launch_kernel(cr_pending_0, out, 0, __LINE__);

// Two sites in one parent: each has its own pending launch and its own grid
// table (site 0 and site 1). Here `tag` is a literal, so a scalar: a second
// version of the aggregated child.
#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void twoSites(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    child<<<1, 32>>>(out, i * 64, 1);
  else
    child<<<1, 32>>>(out, i * 64 + 32, 2);
}
// CHECK:      __global__ void twoSites(int *out, int n) {
// CHECK-NEXT:   cuda_rewrite::PendingLaunch<child_args_2> cr_pending_0;
// CHECK-NEXT:   cuda_rewrite::PendingLaunch<child_args_2> cr_pending_1;
// CHECK-NEXT:   twoSites_body(out, n, cr_pending_0, cr_pending_1);
// CHECK-NEXT:   child_launch_kernel_2(cr_pending_0, out, 1, 0, __LINE__);
// CHECK-NEXT:   child_launch_kernel_2(cr_pending_1, out, 2, 1, __LINE__);
