// Partial fusion: stages the pass cannot fuse stay launches of their own,
// with the reason, and the stages around them are still fused.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o
// RUN: %cuda-rewrite --list %s -- | FileCheck %s --check-prefix=LIST
// LIST: partial.cu:[[#]]:5: stage-chain: 6 stages, {{.*}} -> fuse [#pragma cuda_rewrite fuse tile(1, 16)]: would rewrite: 2 stages (scale, rightInside) run as fused_scale_to_rightInside::kernel: {{.*}}; would rewrite: 2 stages (right, rightInside) run as fused_right_to_rightInside::kernel: {{.*}}; would not rewrite: stage 'gather' stays a launch of its own: the index of 'in' is not a sum of scaled, offset or clamped coordinates times strides; would not rewrite: stage 'scale' stays a launch of its own: the stages after it cannot join it: a read of 'in' along x is not provably inside what its producer writes{{$}}

__global__ void scale(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = 2.f * in[y * W + x];
}

// Reads one column to the right, unclamped, with the same guard: the last
// column reads past what its producer writes.
__global__ void right(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x + 1];
}

// The same, guarded so that the read stays inside: fusable.
__global__ void rightInside(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W - 1 || y >= H)
    return;
  out[y * W + x] = in[y * W + x + 1];
}

// Data-dependent index: never fused.
__global__ void gather(const float *in, const int *from, float *out, int W,
                       int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[from[y * W + x]];
}

void run(const float *in, const int *from, float *out, float *kept, int W,
         int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  cudaMalloc(&a, sizeof(float) * W * H);
  cudaMalloc(&b, sizeof(float) * W * H);
  cudaMalloc(&c, sizeof(float) * W * H);
  cudaMalloc(&d, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(1, 16)
  {
    // REMARK-DAG: partial.cu:[[@LINE+1]]:5: remark: rewritten: 2 stages (scale, rightInside) run as fused_scale_to_rightInside::kernel: {{.*}} on chip: inlined where read: 'a'; {{.*}} [fuse]
    scale<<<grid, block>>>(in, a, W, H);
    rightInside<<<grid, block>>>(a, b, W, H);
    // REMARK-DAG: partial.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'gather' stays a launch of its own: the index of 'in' is not a sum of scaled, offset or clamped coordinates times strides [fuse]
    gather<<<grid, block>>>(b, from, c, W, H);
    // 'kept' is a parameter: stored as well as kept on chip, by the warp
    // whose tile a point is in.
    // REMARK-DAG: partial.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'scale' stays a launch of its own: the stages after it cannot join it: a read of 'in' along x is not provably inside what its producer writes [fuse]
    scale<<<grid, block>>>(c, d, W, H);
    // REMARK-DAG: partial.cu:[[@LINE+1]]:5: remark: rewritten: 2 stages (right, rightInside) run as fused_right_to_rightInside::kernel: {{.*}} on chip: 'kept' (also stored); {{.*}} [fuse]
    right<<<grid, block>>>(d, kept, W, H);
    rightInside<<<grid, block>>>(kept, out, W, H);
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(d);
}

// 'scale' is point-wise and read only by the group: computed where it is
// read, without its guard, and without a tile.
// CHECK:      namespace fused_scale_to_rightInside {
// CHECK:      __device__ __forceinline__ float scale_at(bool Interior, int x, int y,
// CHECK-NEXT:                                           const float *in, float *out, int W,
// CHECK-NEXT:                                           int H) {
// CHECK-NEXT:   return 2.f * in[y * W + x];
// CHECK-NEXT: }
// CHECK:      template <bool Interior, typename in_At>
// CHECK:        out[y * W + x] = in_at(Interior, x + 1, y);
// CHECK-NOT:  __shared__
// CHECK:        const auto a_at = [&](bool interior, int x, int y) {
// CHECK-NEXT:     return scale_at(interior, x, y, in, a, W, H);
// CHECK-NEXT:   };
// CHECK-NEXT:   // rightInside over the warp's tile.
// CHECK:            rightInside_point<true>(x, y, a, b, W, H, a_at);
// CHECK:        if (!(extentX >= W && extentY >= H))
// CHECK: namespace fused_right_to_rightInside {
// 'right' is computed one column past the tile for its consumer, and
// stores 'kept' only on its own tile.
// CHECK:      right_point(int x, int y, bool own, const float *in, float *out, int W, int H,
// CHECK-NEXT:             cuda_rewrite::fuse::Tile<float, 33> out_tile) {
// CHECK:        cuda_rewrite::fuse::keepAndStore(
// CHECK-NEXT:       out_tile(x, y), own ? &out[y * W + x] : nullptr, in[y * W + x + 1]);
// CHECK:        // right over columns x0 + [0, 32), rows y0 + [0, 16).
// CHECK:        // right over columns x0 + [32, 33), rows y0 + [0, 16), the halo on the right.
// CHECK:          right_point<false>(
// CHECK-NEXT:           x, y, x >= x0 && x < x0 + kTileW && y >= y0 && y < y0 + kTileH, d,
// CHECK-NEXT:           kept, W, H, kept_tile);
// 'kept' and 'out' are parameters: they must not share an allocation ('d'
// was allocated here, so it shares none).
// CHECK:        if (!cuda_rewrite::fuse::separateAllocations({kept, out}, {}))

// CHECK:      if (!fused_scale_to_rightInside::launch(grid, block, 0, in, a, W, H, b)) {
// CHECK:      gather<<<grid, block>>>(b, from, c, W, H);
// CHECK-NEXT: // 'kept' is a parameter
// CHECK:      scale<<<grid, block>>>(c, d, W, H);
// CHECK:      if (!fused_right_to_rightInside::launch(grid, block, 0, d, kept, W, H,
// CHECK-NEXT:                                         out)) {
