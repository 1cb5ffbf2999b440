// Kernels whose aggregated children launch kernels themselves: a recursive
// kernel (aggregated at kernel granularity by default: one grid per level
// of the recursion), and a chain of annotated kernels. The aggregated child
// calls the kernel's body function, with the original launch's built-ins
// as parameters, and then aggregates the launches it made.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %cuda-rewrite --remarks --aggregate-granularity=warp %s -o /dev/null -- 2>&1 | FileCheck %s --check-prefix=WARP

// The arguments struct, the aggregated kernel's declaration and the launch
// helper come before the kernel: its body function and wrapper use them.
// CHECK:      struct refine_args {
// CHECK-NEXT:   int node;
// CHECK-NEXT: };
// CHECK:      __global__ void __launch_bounds__(256)
// CHECK-NEXT: refine_aggregated(cuda_rewrite::LaunchTable cr_launches, int *tree, int depth);
// CHECK:      __device__ void refine_launch_kernel(const Pending &cr_pending, int *tree,
// CHECK:      __device__ __forceinline__ void
// CHECK-NEXT: refine_body(int *tree, int node, int depth, const uint3 blockIdx,
// CHECK-NEXT:             const uint3 threadIdx,
// CHECK-NEXT:             cuda_rewrite::PendingLaunch<refine_args> &cr_pending_0) {
#pragma cuda_rewrite aggregate
__global__ void refine(int *tree, int node, int depth) {
  int child = 4 * (node + blockIdx.x) + threadIdx.x;
  tree[child] = depth;
  if (depth > 0 && threadIdx.x == 0)
    // REMARK: recursion.cu:[[@LINE+2]]:5: remark: rewritten: aggregated at kernel granularity into 'refine_aggregated'; scalar arguments: tree, depth; per-launch arguments: node [aggregate]
    // WARP: recursion.cu:[[@LINE+1]]:5: warning: not rewritten: the kernel launches itself, and its launches are aggregated only at block or kernel granularity [aggregate] [-Wcuda-rewrite-refused]
    refine<<<2, 4>>>(tree, child, depth - 1);
}
// CHECK:      __global__ void __launch_bounds__(32) refine(int *tree, int node, int depth) {
// CHECK-NEXT:   cuda_rewrite::PendingLaunch<refine_args> cr_pending_0;
// CHECK-NEXT:   refine_body(tree, node, depth, blockIdx, threadIdx, cr_pending_0);
// CHECK-NEXT:   refine_launch_kernel(cr_pending_0, tree, depth - 1, 0, __LINE__);
// CHECK-NEXT: }
// CHECK:      __global__ void __launch_bounds__(256)
// CHECK-NEXT: refine_aggregated(cuda_rewrite::LaunchTable cr_launches, int *tree, int depth) {
// CHECK-NEXT:   const auto cr_self = cuda_rewrite::originalLaunch<refine_args>(cr_launches);
// CHECK-NEXT:   cuda_rewrite::PendingLaunch<refine_args> cr_pending_0;
// CHECK-NEXT:   if (cr_self.active) {
// CHECK-NEXT:     const uint3 blockIdx = cr_self.blockIdx;
// CHECK-NEXT:     const uint3 threadIdx = cr_self.threadIdx;
// CHECK-NEXT:     int node = cr_self.args->node;
// CHECK-NEXT:     refine_body(tree, node, depth, blockIdx, threadIdx, cr_pending_0);
// CHECK-NEXT:   }
// CHECK-NEXT:   refine_launch_kernel(cr_pending_0, tree, depth - 1, 0, __LINE__);
// CHECK-NEXT: }

// A chain: level1 launches level2, which launches leaf. level2's `value`
// is per launch when level2 runs aggregated, so the argument it passes on
// cannot be a scalar of leaf's launches, although it would be in a plain
// launch of level2.
__global__ void leaf(int *out, int at, int value) { out[at + threadIdx.x] = value; }

#pragma cuda_rewrite aggregate
__global__ void level2(int *out, int base, int value) {
  // REMARK: recursion.cu:[[@LINE+1]]:3: remark: rewritten: aggregated at kernel granularity into 'leaf_aggregated'; scalar arguments: out; per-launch arguments: at, value [aggregate]
  leaf<<<1, 32>>>(out, base + 32 * threadIdx.x, value);
}

#pragma cuda_rewrite aggregate
__global__ void level1(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    // REMARK: recursion.cu:[[@LINE+1]]:5: remark: rewritten: aggregated at kernel granularity into 'level2_aggregated'; scalar arguments: out; per-launch arguments: base, value [aggregate]
    level2<<<1, 4>>>(out, 128 * i, i);
}
// Only the parameters some launch passes per launch vary: `out` stays a
// scalar of leaf's launches even when level2 runs aggregated.
// CHECK:      cr_pending_0.request(
// CHECK-NEXT:     1, 32, 0, leaf_args{static_cast<int>(base + 32 * threadIdx.x), value});
// CHECK:        const auto cr_self = cuda_rewrite::originalLaunch<level2_args>(cr_launches);
// CHECK:          int base = cr_self.args->base;
// CHECK-NEXT:     int value = cr_self.args->value;
// CHECK-NEXT:     level2_body(out, base, value, threadIdx, cr_pending_0);
// CHECK-NEXT:   }
// CHECK-NEXT:   leaf_launch_kernel(cr_pending_0, out, 0, __LINE__);
