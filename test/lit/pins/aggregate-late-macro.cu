// The block size that bounds a rewritten parent's registers may come from a
// macro defined after the parent, just before the host code that launches
// it (NVIDIA's cdpBezierTessellation defines BLOCK_DIM above main). Its pin
// must come after that definition: placed after the parent, the rewrite did
// not compile ('BLOCK_DIM' undeclared). With it after the launching
// function, the default build compiles and another BLOCK_DIM fails on the
// static_assert.
// REQUIRES: nvcc
// RUN: %cuda-rewrite %s -o %t.cu --
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// RUN: not %nvcc-compile -rdc=true %t.cu -o %t.o -DBLOCK_DIM=128 2>&1 | FileCheck %s --check-prefix=OTHER

__global__ void child(int *p) { p[threadIdx.x] += 1; }

#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void parent(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK: __global__ void __launch_bounds__(64) parent(int *p) {
// CHECK-NOT: static_assert
// CHECK: #define BLOCK_DIM 64
// CHECK: void run(int *p)
// CHECK: static_assert((BLOCK_DIM) == 64,

#ifndef BLOCK_DIM
#define BLOCK_DIM 64
#endif

void run(int *p) { parent<<<4, BLOCK_DIM>>>(p); }

// OTHER: static assertion failed {{.*}}rewritten for BLOCK_DIM == 64
