// Block granularity: the parent's body becomes a __device__ function that
// records its launch; a kernel of the parent's name and signature runs it
// and aggregates the block's launches. Early returns and branches need no
// conversion. A 2-D child: all of blockIdx/blockDim/gridDim/threadIdx come
// from the original launch.
// RUN: %cuda-rewrite --remarks --aggregate-granularity=block %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s --check-prefix=ALIGN --strict-whitespace

__global__ void tile(int *out, int width, int base) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < gridDim.y * blockDim.y)
    out[base + y * width + x] = x + y;
}
// CHECK:      struct tile_args {
// CHECK-NEXT:   int width;
// CHECK-NEXT:   int base;
// CHECK-NEXT: };
// CHECK:      const uint3 blockIdx = cr_self.blockIdx;
// CHECK-NEXT: const dim3 blockDim = cr_self.blockDim;
// CHECK-NEXT: const dim3 gridDim = cr_self.gridDim;
// CHECK-NEXT: const uint3 threadIdx = cr_self.threadIdx;
// CHECK:      template <typename Pending>
// CHECK-NEXT: __device__ void tile_launch_block(const Pending &cr_pending, int *out,
// CHECK-NEXT:                                   int cr_line) {
// CHECK-NEXT:   auto cr_launch =
// CHECK-NEXT:       cuda_rewrite::gatherBlockLaunches(cr_pending, __FILE__, cr_line);

// CHECK:      __device__ __forceinline__ void
// CHECK-NEXT: spawn_body(int *out, const int *sizes, int n,
// CHECK-NEXT:            cuda_rewrite::PendingLaunch<tile_args> &cr_pending_0) {
#pragma cuda_rewrite aggregate granularity(block)
__global__ void __launch_bounds__(128) spawn(int *out, const int *sizes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int w = sizes[i];
  if (w > 0) {
    dim3 grid((w + 7) / 8, 4), block(8, 8);
    // REMARK: block.cu:[[@LINE+2]]:5: remark: rewritten: aggregated at block granularity into 'tile_aggregated'; scalar arguments: out; per-launch arguments: width, base [aggregate]
    // CHECK: cr_pending_0.request(grid, block, 0, tile_args{w, i * 1024});
    tile<<<grid, block>>>(out, w, i * 1024);
  }
}
// CHECK:      __global__ void __launch_bounds__(128) spawn(int *out, const int *sizes,
// CHECK-NEXT:                                                int n) {
// CHECK-NEXT:   cuda_rewrite::PendingLaunch<tile_args> cr_pending_0;
// CHECK-NEXT:   spawn_body(out, sizes, n, cr_pending_0);
// CHECK-NEXT:   tile_launch_block(cr_pending_0, out, __LINE__);
// CHECK-NEXT: }

// Launches in a loop: each thread keeps a list of pending launches.
__global__ void leaf(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

#pragma cuda_rewrite aggregate
__global__ void segments(int *p, const int *first, const int *next, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n)
    return;
  for (int s = first[v]; s >= 0; s = next[s])
    // REMARK: block.cu:[[@LINE+2]]:5: remark: rewritten: aggregated at block granularity into 'leaf_aggregated'
    // CHECK: cr_pending_0.request(1, 32, 0, leaf_args{p + s * 32}, __FILE__, __LINE__);
    leaf<<<1, 32>>>(p + s * 32);
}
// CHECK: cuda_rewrite::PendingLaunchList<leaf_args> cr_pending_0;

// Parameters laid out one per line are laid out again with the body's
// longer name and the added parameter.
#pragma cuda_rewrite aggregate granularity(block)
__global__ void wide(int *p,
                     int n) {
  if (threadIdx.x < n)
    leaf<<<1, 32>>>(p);
}
// ALIGN:      {{^}}// and made together by 'wide' below.{{$}}
// ALIGN-NEXT: {{^}}__device__ __forceinline__ void{{$}}
// ALIGN-NEXT: {{^}}wide_body(int *p, int n,{{$}}
// ALIGN-NEXT: {{^}}          cuda_rewrite::PendingLaunch<leaf_args_2> &cr_pending_0) {
