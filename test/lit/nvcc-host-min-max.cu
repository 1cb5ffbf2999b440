// nvcc declares min and max (int, unsigned, long, long long, float, double
// and their mixes) for host code too; clang's CUDA wrapper only for the
// device, and rejected host code that calls them. The parse now declares
// the host overloads (tool/ParsePrelude.cpp), so the file's stencil is
// rewritten; the declarations never reach the rewritten file.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

// REMARK-NOT: error
// REMARK: remark: rewritten: 'smooth' runs as smooth_systolic

#pragma cuda_rewrite systolic
__global__ void smooth(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

float largestError(const float *a, const float *b, int n, unsigned *worst) {
  float e = 0.f;
  int at = 0;
  for (int i = 0; i < n; ++i) {
    e = max(e, a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
    at = max(at, i);
  }
  *worst = min(*worst, at);
  return max(e, 0.5);
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  smooth<<<grid, block>>>(in, out, W, H);
}

// CHECK-NOT: cuda-rewrite's parse only
// CHECK: smooth_systolic
// CHECK: e = max(e, a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
// CHECK-NOT: static inline __host__
