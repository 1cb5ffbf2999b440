// The runtime include and the rewritten-file marker go where every
// configuration sees them: here the file's first declaration lies inside an
// #ifdef, and they go before it; built with the other branch, the rewrite
// still finds the runtime.
// RUN: %cuda-rewrite %s -o %t.cu --
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// RUN: %nvcc-compile -rdc=true -DWIDE %t.cu -o %t.wide.o
// CHECK:      // Rewritten by cuda-rewrite: running it again on this file changes nothing.
// CHECK-NEXT: #include "cuda_rewrite/runtime.cuh"
// CHECK-EMPTY:
// CHECK-NEXT: #ifdef WIDE
#ifdef WIDE
constexpr int kScale = 4;
#else
constexpr int kScale = 2;
#endif

__global__ void child(int *p) { p[threadIdx.x] *= kScale; }

#pragma cuda_rewrite aggregate
__global__ void parent(int *p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
