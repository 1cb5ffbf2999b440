// An unannotated stencil is a candidate: --auto rewrites it, plain runs say
// how to ask for it, and --disable=systolic keeps it. A point-wise map is
// no stencil and is not touched by --auto.
// RUN: %cuda-rewrite --remarks --auto %s -o %t.auto.cu -- 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.auto.cu | FileCheck %s --check-prefix=OUT
// RUN: %cuda-rewrite --remarks %s -o %t.plain.cu -- 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: diff %s %t.plain.cu
// RUN: %cuda-rewrite --remarks --auto --disable=systolic %s -o %t.off.cu -- 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: diff %s %t.off.cu
// RUN: %cuda-rewrite --list %s -- 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: %cuda-rewrite --list --auto %s -- 2>&1 | FileCheck %s --check-prefix=LIST-AUTO

// LIST-AUTO: auto.cu:[[@LINE+5]]:17: stencil: kernel 'smooth': 2D box radius 1: 9 points {{.*}} into out from in -> systolic: would rewrite: 'smooth' runs as smooth_systolic_aligned
// AUTO: auto.cu:[[@LINE+4]]:17: remark: rewritten: 'smooth' runs as smooth_systolic_aligned (2D box radius 1: 9 points {{.*}}; 1 launch rewritten): aligned rows: {{.*}}; overlapped form: P = 16 rows per thread
// PLAIN: auto.cu:[[@LINE+3]]:17: remark: not rewritten: not annotated; add '#pragma cuda_rewrite systolic' or pass --auto [systolic]
// OFF: auto.cu:[[@LINE+2]]:17: remark: not rewritten: the 'systolic' pass is disabled (--only/--disable) [systolic]
// LIST: auto.cu:[[@LINE+1]]:17: stencil: kernel 'smooth': 2D box radius 1: 9 points {{.*}} into out from in -> systolic: not rewritten: not annotated; add '#pragma cuda_rewrite systolic' or pass --auto; under --auto: would rewrite: 'smooth' runs as smooth_systolic_aligned
__global__ void smooth(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  float s = 0.0f;
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i)
      s += in[(y + j) * W + x + i];
  out[y * W + x] = s / 9.0f;
}
// Each tap has weight 1/9 (the division distributes over the sum).
// OUT:      struct smooth_systolic_shape {
// OUT:        static constexpr int Halo = 2;
// OUT:      smooth_systolic(const float *__restrict__ in, float *__restrict__ out, int W,
// OUT-NEXT:     int H, long long extentX, long long extentY) {
// OUT:            sum[i] = fma(0.11111111f, cache[i], sum[i]);

// AUTO-NOT: 'scale'
// PLAIN-NOT: 'scale'
// LIST-NOT: 'scale'
// LIST-AUTO-NOT: 'scale'
__global__ void scale(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H)
    out[y * W + x] = 2.0f * in[y * W + x];
}
// OUT-NOT: scale_systolic

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  // OUT:      smooth_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // OUT-NEXT: scale<<<grid, block>>>(in, out, W, H);
  smooth<<<grid, block>>>(in, out, W, H);
  scale<<<grid, block>>>(in, out, W, H);
}
