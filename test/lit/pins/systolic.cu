// Values a rewrite is made for are pinned where they come from macros or
// named constants (analysis/ConfigPins.h): another -D must fail to compile,
// never compute with the values of this one. Literals written in the
// kernel need no pin.
// REQUIRES: nvcc
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o
// RUN: not %nvcc-compile %t.cu -o %t.o -DN=512 2>&1 | FileCheck %s --check-prefix=OTHER-N
// RUN: not %nvcc-compile %t.cu -o %t.o -DWEIGHT=0.5f 2>&1 | FileCheck %s --check-prefix=OTHER-W
// RUN: not %nvcc-compile %t.cu -o %t.o -DLARGE 2>&1 | FileCheck %s --check-prefix=OTHER-K
// RUN: not %nvcc-compile %t.cu -o %t.o -DREAL=double 2>&1 | FileCheck %s --check-prefix=OTHER-T

#ifndef N
#define N 1024
#endif
#ifndef WEIGHT
#define WEIGHT 0.25f
#endif
#define MARGIN 1
#ifdef LARGE
constexpr int kWidth = 4096;
#else
constexpr int kWidth = 2048;
#endif
#ifndef REAL
#define REAL float
#endif
typedef REAL real;
namespace grid {
enum Border { kMargin = 1 };
}

// REMARK: systolic.cu:[[@LINE+2]]:17: remark: rewritten: 'byMacro'
#pragma cuda_rewrite systolic
__global__ void byMacro(const float *__restrict__ in, float *__restrict__ out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= N - 1 || y >= N - MARGIN)
    return;
  out[y * N + x] = WEIGHT * (in[(y - 1) * N + x] + in[(y + 1) * N + x] +
                             in[y * N + x - 1] + in[y * N + x + 1]);
}
// An expression whose ends come from two macros is pinned macro by macro.
// The layout splits the messages (OTHER-N and OTHER-W check theirs whole);
// between the pins lie only their indented continuation lines.
// CHECK:      static_assert((MARGIN) == 1,{{[[:space:]]+}}"cuda-rewrite: rewritten for MARGIN == 1;
// CHECK-NOT:  {{^[^ ]}}
// CHECK:      static_assert((N) == 1024,
// CHECK-NOT:  {{^[^ ]}}
// CHECK:      static_assert((WEIGHT) == 0x1p-2f,
// CHECK:      byMacro_systolic(const float

// A constexpr stride and a qualified enumerator, through a local.
#pragma cuda_rewrite systolic
__global__ void byConstant(const float *__restrict__ in, float *__restrict__ out,
                           int H) {
  const int margin = grid::kMargin;
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < margin || y < margin || x >= kWidth - margin || y >= H - margin)
    return;
  out[y * kWidth + x] = in[(y - 1) * kWidth + x] + in[(y + 1) * kWidth + x];
}
// CHECK:      static_assert((::grid::kMargin) == 1,{{[[:space:]]+}}"cuda-rewrite: rewritten for ::grid::kMargin == 1;
// CHECK-NOT:  {{^[^ ]}}
// CHECK:      static_assert((kWidth) == 2048,{{[[:space:]]+}}"cuda-rewrite: rewritten for kWidth == 2048;

// Literals in place: nothing to pin.
#pragma cuda_rewrite systolic
__global__ void byLiteral(const float *__restrict__ in, float *__restrict__ out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= 1023 || y >= 1023)
    return;
  out[y * 1024 + x] = 0.5f * (in[y * 1024 + x - 1] + in[y * 1024 + x + 1]);
}
// CHECK-NOT:  static_assert
// CHECK:      byLiteral_systolic(const float

// The shapes and vectors are chosen for the element's size: an element type
// spelled through a typedef or macro is pinned by its size.
#pragma cuda_rewrite systolic
__global__ void byType(const real *__restrict__ in, real *__restrict__ out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= 1023 || y >= 1023)
    return;
  out[y * 1024 + x] = in[y * 1024 + x - 1] + in[y * 1024 + x + 1];
}
// CHECK:      static_assert((sizeof(real)) == 4,{{[[:space:]]+}}"cuda-rewrite: rewritten for sizeof(real) == 4;

void run(const float *in, float *out, const real *rin, real *rout) {
  byMacro<<<dim3(N / 32, N / 8), dim3(32, 8)>>>(in, out);
  byConstant<<<dim3(kWidth / 32, 64), dim3(32, 8)>>>(in, out, 512);
  byLiteral<<<dim3(32, 128), dim3(32, 8)>>>(in, out);
  byType<<<dim3(32, 128), dim3(32, 8)>>>(rin, rout);
}

// OTHER-N: static assertion failed with "cuda-rewrite: rewritten for N == 1024; rerun cuda-rewrite for this configuration"
// OTHER-W: static assertion failed with "cuda-rewrite: rewritten for WEIGHT == 0x1p-2f; rerun cuda-rewrite for this configuration"
// OTHER-K: static assertion failed with "cuda-rewrite: rewritten for kWidth == 2048; rerun cuda-rewrite for this configuration"
// OTHER-T: static assertion failed with "cuda-rewrite: rewritten for sizeof(real) == 4; rerun cuda-rewrite for this configuration"
