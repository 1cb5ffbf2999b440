// Stages launched out of order (FusePlan.cpp, moveIntoGroups): 'combine'
// reads what 'smooth' writes but is launched after an unrelated stage. It
// depends on no launch between, so it joins smooth's group at its end: the
// fused launch, and its fallback, run it early, and its launch line moves
// into the block. In reordered()'s first block 'combine' also reads what
// the launch between writes, so it stays where it is; in its second, the
// first 'smooth' moves the other way: it joins, at its start, the group
// that reads it, after the gather it is not ordered with.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__device__ int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void smooth(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = 0.5f * (in[y * W + clampTo(x - 1, 0, W - 1)] + in[y * W + x]);
}

__global__ void gather(const float *in, const int *from, float *out, int W,
                       int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[from[y * W + x]];
}

__global__ void combine(const float *a, const float *b, float *out, int W,
                        int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = a[y * W + clampTo(x + 1, 0, W - 1)] - b[y * W + x];
}

void run(const float *in, const float *other, const int *from, float *g,
         float *out, float *c, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *s;
  cudaMalloc(&s, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK-DAG: hoisted.cu:[[@LINE+1]]:5: remark: rewritten: 3 stages (smooth, smooth, combine) run as fused_smooth_to_combine::kernel: {{.*}} on chip: 's'; {{.*}} [fuse]
    smooth<<<grid, block>>>(in, s, W, H);
    smooth<<<grid, block>>>(s, out, W, H);
    // REMARK-DAG: hoisted.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'gather' stays a launch of its own: the index of 'in' is not a sum of scaled, offset or clamped coordinates times strides [fuse]
    gather<<<grid, block>>>(other, from, g, W, H);
    combine<<<grid, block>>>(s, in, c, W, H);
  }
  cudaFree(s);
}

// Two blocks of the same launches in other orders. In the first 'combine'
// reads what the gather writes, so it cannot join the group before it; in
// the second the first 'smooth' joins the group after the gather.
void reordered(const float *in, const float *other, const int *from,
               float *g, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *s, *t, *u, *v;
  cudaMalloc(&s, sizeof(float) * W * H);
  cudaMalloc(&t, sizeof(float) * W * H);
  cudaMalloc(&u, sizeof(float) * W * H);
  cudaMalloc(&v, sizeof(float) * W * H);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    smooth<<<grid, block>>>(in, s, W, H);
    smooth<<<grid, block>>>(s, t, W, H);
    gather<<<grid, block>>>(other, from, g, W, H);
    // REMARK-DAG: hoisted.cu:[[@LINE+1]]:5: remark: not rewritten: stage 'combine' stays a launch of its own: no neighbouring stage to fuse it with [fuse]
    combine<<<grid, block>>>(t, g, out, W, H);
  }
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK-DAG: hoisted.cu:[[@LINE+1]]:5: remark: rewritten: 3 stages (smooth, smooth, combine) run as fused_smooth_to_combine_[[#]]::kernel: {{.*}} on chip: 'u', 'v'; {{.*}} [fuse]
    smooth<<<grid, block>>>(in, u, W, H); // u: the first pass.
    gather<<<grid, block>>>(other, from, g, W, H);
    smooth<<<grid, block>>>(u, v, W, H);
    combine<<<grid, block>>>(v, g, out, W, H);
  }
  cudaFree(s);
  cudaFree(t);
  cudaFree(u);
  cudaFree(v);
}

// The hoisted launch runs in the fallback after the group's others; its
// line after gather's goes.
// CHECK:      if (!fused_smooth_to_combine::launch(grid, block, 0, in, s, W, H, out, c)) {
// CHECK-NEXT:   smooth<<<grid, block>>>(in, s, W, H);
// CHECK-NEXT:   smooth<<<grid, block>>>(s, out, W, H);
// CHECK-NEXT:   combine<<<grid, block>>>(s, in, c, W, H);
// CHECK-NEXT: }
// CHECK-NEXT: gather<<<grid, block>>>(other, from, g, W, H);
// CHECK-NEXT: }
// CHECK:      void reordered(
// CHECK:        gather<<<grid, block>>>(other, from, g, W, H);
// CHECK-NEXT:   combine<<<grid, block>>>(t, g, out, W, H);
// The moved launch runs in the fallback before the group's others; the
// group takes the place of its last launch, after the gather.
// The moved launch's line goes, but not the comment after it.
// CHECK:      {
// CHECK-NEXT:   // u: the first pass.
// CHECK-NEXT:   gather<<<grid, block>>>(other, from, g, W, H);
// CHECK-NEXT:   if (!fused_smooth_to_combine_{{[0-9]+}}::launch(
// CHECK:          smooth<<<grid, block>>>(in, u, W, H);
// CHECK-NEXT:     smooth<<<grid, block>>>(u, v, W, H);
// CHECK-NEXT:     combine<<<grid, block>>>(v, g, out, W, H);
// CHECK-NEXT:   }
// CHECK-NEXT: }
