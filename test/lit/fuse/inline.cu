// Which stages are computed where they are read (FusePlan.cpp,
// inlinePointwise): a point-wise stage that reads no inlined stage ('square'),
// and a stage read only at its readers' own points by readers computed once
// per point ('box', read by 'scaleUp' at its own point). 'diff', read at two
// offsets by the point-wise 'square', which is itself read at three, keeps a
// tile: inlining it would compute it six times per point. Inlined stages
// take their reader's Interior, so interior warps skip their clamps too.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__global__ void diff(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y >= H)
    return;
  out[y * W + x] = in[y * W + x + 1] - in[y * W + x - 1];
}

__global__ void square(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y >= H)
    return;
  out[y * W + x] = in[y * W + x] * in[y * W + x];
}

__device__ int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void box(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W - 2 || y >= H)
    return;
  out[y * W + x] =
      in[y * W + x - 1] + in[y * W + x] + in[y * W + clampTo(x + 1, 0, W - 2)];
}

__global__ void scaleUp(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W - 2 || y >= H)
    return;
  out[y * W + x] = 4.f * in[y * W + x];
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *d, *s, *b;
  cudaMalloc(&d, sizeof(float) * W * H);
  cudaMalloc(&s, sizeof(float) * W * H);
  cudaMalloc(&b, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(1, 16)
  {
    // REMARK: inline.cu:[[@LINE+1]]:5: remark: rewritten: 4 stages (diff, square, box, scaleUp) run as fused_diff_to_scaleUp::kernel: {{.*}}; on chip: 'd', inlined where read: 's', 'b'; {{.*}} [fuse]
    diff<<<grid, block>>>(in, d, W, H);
    square<<<grid, block>>>(d, s, W, H);
    box<<<grid, block>>>(s, b, W, H);
    scaleUp<<<grid, block>>>(b, out, W, H);
  }
  cudaFree(d);
  cudaFree(s);
  cudaFree(b);
}

// CHECK:      square_at(bool Interior, int x, int y, const float *in, float *out,
// CHECK:        return in_tile(x, y) * in_tile(x, y);
// Inlined stages lose their guards: their readers read only points they write.
// CHECK:      template <typename in_At>
// CHECK-NEXT: __device__ __forceinline__ float box_at(bool Interior, int x, int y,
// CHECK-NOT:    if
// CHECK:        return in_at(Interior, x - 1, y) + in_at(Interior, x, y) +
// CHECK-NEXT:          in_at(Interior, (Interior ? x + 1 : clampTo(x + 1, 0, W - 2)), y);
// CHECK:        out[y * W + x] = 4.f * in_at(Interior, x, y);
// CHECK:      __shared__ float d_tiles[kWarps][16 * 34];
// CHECK-NOT:  __shared__
// The inlined box's clamp is part of what makes a warp interior.
// CHECK:        const bool interior =
// CHECK:        x0 + 32 <= W - 2
// CHECK:        // diff over columns x0 + [-1, 0), rows y0 + [0, 16), the halo on the left.
// CHECK:        // diff over columns x0 + [0, 32), rows y0 + [0, 16).
// CHECK:        // diff over columns x0 + [32, 33), rows y0 + [0, 16), the halo on the right.
// CHECK:        const auto s_at = [&](bool interior, int x, int y) {
// CHECK-NEXT:     return square_at(interior, x, y, d, s, W, H, d_tile);
// CHECK:        const auto b_at = [&](bool interior, int x, int y) {
// CHECK-NEXT:     return box_at(interior, x, y, s, b, W, H, s_at);
// CHECK-NEXT:   };
// CHECK-NEXT:   __syncwarp();
// CHECK-NEXT:   // scaleUp over the warp's tile.
// CHECK:            scaleUp_point<true>(x, y, b, out, W, H, b_at);
