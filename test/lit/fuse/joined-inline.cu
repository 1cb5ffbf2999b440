// A stage that joins a group (FusePlan.cpp, moveIntoGroups) has the group
// planned again, inlining included. 'box' and 'scaleUp' are grouped first,
// with 'box' inlined: 'scaleUp' stores 's' and reads 'box' once per point.
// 'diff', left alone by the gather launched before it, then joins at the
// end: 's' stays on chip, 'scaleUp' is inlined into 'diff', which reads it
// at two columns, so 'box' must keep its tile. The group used to keep
// 'box' inlined from the first plan while 'b' got a tile: no loop wrote
// the tile that the inlined 'scaleUp' read (difftest fuse seed 3, p31).
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__device__ int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void box(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + clampTo(x - 1, 0, W - 1)] + in[y * W + x] +
                   in[y * W + clampTo(x + 1, 0, W - 1)];
}

__global__ void scaleUp(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = 4.f * in[y * W + x];
}

__global__ void gather(const float *in, const int *from, float *out, int W,
                       int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[from[y * W + x]];
}

__global__ void diff(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] =
      in[y * W + clampTo(x + 1, 0, W - 1)] - in[y * W + clampTo(x - 1, 0, W - 1)];
}

void run(const float *in, const float *other, const int *from, float *g,
         float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *b, *s;
  cudaMalloc(&b, sizeof(float) * W * H);
  cudaMalloc(&s, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK-DAG: joined-inline.cu:[[@LINE+1]]:5: remark: rewritten: 3 stages (box, scaleUp, diff) run as fused_box_to_diff::kernel: {{.*}} on chip: 'b', inlined where read: 's'; {{.*}} 4352 B shared/block{{.*}} [fuse]
    box<<<grid, block>>>(in, b, W, H);
    scaleUp<<<grid, block>>>(b, s, W, H);
    // REMARK-DAG: joined-inline.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'gather' stays a launch of its own: {{.*}} [fuse]
    gather<<<grid, block>>>(other, from, g, W, H);
    diff<<<grid, block>>>(s, out, W, H);
  }
  cudaFree(b);
  cudaFree(s);
}

// 'box' is computed at points into its tile, 'scaleUp' where 'diff' reads
// it, from that tile, after the warp's barrier.
// CHECK-NOT:  box_at
// CHECK:      box_point(int x, int y, const float *in, float *out, int W, int H,
// CHECK:        out_tile(x, y) = in[y * W + (Interior ? x - 1 : clampTo(x - 1, 0, W - 1))] +
// CHECK:      scaleUp_at(bool Interior, int x, int y, const float *in, float *out, int W,
// CHECK-NEXT:            int H, cuda_rewrite::fuse::Tile<float, 34> in_tile) {
// CHECK-NEXT:   return 4.f * in_tile(x, y);
// CHECK:        __shared__ float b_tiles[kWarps][8 * 34];
// CHECK:        // box over columns x0 + [-1, 0), rows y0 + [0, 8), the halo on the left.
// CHECK:        // box over columns x0 + [0, 32), rows y0 + [0, 8).
// CHECK:        // box over columns x0 + [32, 33), rows y0 + [0, 8), the halo on the right.
// CHECK:        const auto s_at = [&](bool interior, int x, int y) {
// CHECK-NEXT:     return scaleUp_at(interior, x, y, b, s, W, H, b_tile);
// CHECK-NEXT:   };
// CHECK-NEXT:   __syncwarp();
// CHECK-NEXT:   // diff over the warp's tile.
// CHECK-NOT:  box_at
