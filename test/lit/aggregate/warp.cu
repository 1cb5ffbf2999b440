// Warp granularity: the aggregated child, its argument struct and the warp
// helper are generated once after the child; the launch becomes a call of
// the helper; uniform arguments become scalars; the host launch of the
// parent resets the pool first.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

// CHECK: #include "cuda_rewrite/runtime.cuh"
// CHECK: __global__ void child(float *data, int n, float scale) {
__global__ void child(float *data, int n, float scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= scale;
}
// CHECK:      struct child_args {
// CHECK-NEXT:   float *data;
// CHECK-NEXT:   int n;
// CHECK-NEXT: };
// CHECK:      __global__ void child_aggregated(cuda_rewrite::LaunchTable cr_launches,
// CHECK-NEXT:                                  float scale) {
// CHECK-NEXT:   const auto cr_self = cuda_rewrite::originalLaunch<child_args>(cr_launches);
// CHECK-NEXT:   if (!cr_self.active)
// CHECK-NEXT:     return;
// CHECK-NEXT:   const uint3 blockIdx = cr_self.blockIdx;
// CHECK-NEXT:   const dim3 blockDim = cr_self.blockDim;
// CHECK-NEXT:   const uint3 threadIdx = cr_self.threadIdx;
// CHECK-NEXT:   float *data = cr_self.args->data;
// CHECK-NEXT:   int n = cr_self.args->n;
// CHECK-NEXT:   int i = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK:      __device__ void child_launch_warp(
// CHECK:        auto cr_launch = cuda_rewrite::gatherWarpLaunches(
// CHECK:        if (cr_launch.launcher && cr_launch.blocks > 0) {
// CHECK-NEXT:     dim3 cr_aggregated_grid, cr_aggregated_block;
// CHECK-NEXT:     cr_launch.configure(/*packable=*/true, cr_aggregated_grid,
// CHECK-NEXT:                         cr_aggregated_block);
// CHECK-NEXT:     child_aggregated<<<cr_aggregated_grid, cr_aggregated_block,
// CHECK-NEXT:                        cr_launch.sharedBytes>>>(
// CHECK-NEXT:         cr_launch.table, scale);
// CHECK-NEXT:     cuda_rewrite::checkAggregatedLaunch(__FILE__, cr_line);

#pragma cuda_rewrite aggregate granularity(warp)
__global__ void parent(float **rows, const int *lengths, int count,
                       float scale) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < count && lengths[r] > 0)
    // REMARK: warp.cu:[[@LINE+2]]:5: remark: rewritten: aggregated at warp granularity into 'child_aggregated'; scalar arguments: scale; per-launch arguments: data, n [aggregate]
    // CHECK: child_launch_warp((lengths[r] + 31) / 32, 32, 0, child_args{rows[r], lengths[r]}, scale, __LINE__);
    child<<<(lengths[r] + 31) / 32, 32>>>(rows[r], lengths[r], scale);
}

void run(float **rows, const int *lengths, int count) {
  // CHECK:      cuda_rewrite::prepareAggregatedLaunch();
  // CHECK-NEXT: parent<<<(count + 255) / 256, 256>>>(rows, lengths, count, 2.0f);
  parent<<<(count + 255) / 256, 256>>>(rows, lengths, count, 2.0f);
}
// CHECK-NOT: {{^}}#pragma cuda_rewrite
