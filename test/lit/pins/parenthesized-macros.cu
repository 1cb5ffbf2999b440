// A macro whose body is a parenthesized expression, `#define OFF (-1)`, is
// pinned by its name. An analysis that folds the expression inside the
// parentheses pinned the body's own text, asserting that -1 is -1, which
// no other definition of OFF fails: a build with -DOFF=(-2) compiled and
// computed the stencil for -1 (found by the systolic difftest, seed 33, a
// weight `(-0.296875f)`). Offsets, weights and a zero term are pinned by
// name now, in the systolic and the fuse pass's analyses alike.
// REQUIRES: nvcc
// RUN: %cuda-rewrite %s -o %t.cu --
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o
// RUN: not %nvcc-compile %t.cu -o %t.o '-DOFF=(-2)' 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not %nvcc-compile %t.cu -o %t.o '-DWT=(-0.5f)' 2>&1 | FileCheck %s --check-prefix=WT
// RUN: not %nvcc-compile %t.cu -o %t.o '-DBIAS=(1.0f)' 2>&1 | FileCheck %s --check-prefix=BIAS
// RUN: not %nvcc-compile %t.cu -o %t.o '-DSHIFT=(+1)' 2>&1 | FileCheck %s --check-prefix=SHIFT

#ifndef OFF
#define OFF (-1)
#endif
#ifndef WT
#define WT (-0.25f)
#endif
#ifndef BIAS
#define BIAS (0.0f)
#endif
#ifndef SHIFT
#define SHIFT (-1)
#endif

// CHECK-DAG: static_assert((OFF) == -1,
// CHECK-DAG: static_assert((WT) == -0x1p-2f,
// CHECK-DAG: static_assert((BIAS) == 0x0p0f,
// CHECK-NOT: static_assert((-1) == -1
#pragma cuda_rewrite systolic
__global__ void smooth(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] =
      WT * in[y * W + x + OFF] + 0.5f * in[(y + 1) * W + x] + BIAS;
}

// The fuse pass's stage analysis: a stage reads its producer at x + SHIFT.
// CHECK-DAG: static_assert((SHIFT) == -1,
__global__ void scale(const float *in, float *mid, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H)
    mid[y * W + x] = 2.0f * in[y * W + x];
}
__global__ void shift(const float *mid, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W && y < H)
    out[y * W + x] = mid[y * W + x + SHIFT];
}

void run(const float *a, float *b, float *c, float *d, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  smooth<<<grid, block>>>(a, b, W, H);
#pragma cuda_rewrite fuse
  {
    scale<<<grid, block>>>(a, c, W, H);
    shift<<<grid, block>>>(c, d, W, H);
  }
}

// OFF: static assertion failed {{.*}}rewritten for OFF == -1
// WT: static assertion failed {{.*}}rewritten for WT == -0x1p-2f
// BIAS: static assertion failed {{.*}}rewritten for BIAS == 0x0p0f
// SHIFT: static assertion failed {{.*}}rewritten for SHIFT == -1
