// A rewritten parent needs registers its original did not; it must still
// launch with every block its original launches with (a parent run with
// 1024-thread blocks failed with error 701 at kernel granularity). Its
// registers are bounded for the largest block its launches use where all
// are constant (pinned where a macro or constant gives them), else for 1024;
// the aggregated child, whose blocks take any size up to 1024, for 1024. A
// bound the user wrote stays.
// RUN: %cuda-rewrite %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=WARN --allow-empty
// RUN: FileCheck %s < %t.cu
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// WARN-NOT: warning

#ifndef THREADS
#define THREADS 1024
#endif

__global__ void child(int *p) { p[threadIdx.x] += 1; }

// CHECK: __global__ void __launch_bounds__(1024) child_aggregated(

#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void wide(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK: __global__ void __launch_bounds__(1024) wide(int *p) {
// CHECK: static_assert((THREADS) == 1024,

#pragma cuda_rewrite aggregate granularity(block)
__global__ void narrow(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK: __global__ void __launch_bounds__(96) narrow(int *p) {

#pragma cuda_rewrite aggregate granularity(warp)
__global__ void unknown(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK: __global__ void __launch_bounds__(1024) unknown(int *p) {

#pragma cuda_rewrite aggregate granularity(block)
__global__ void __launch_bounds__(64) bounded(int *p) {
  child<<<1, 32>>>(p + blockIdx.x * 32);
}
// CHECK: __global__ void __launch_bounds__(64) bounded(int *p) {

void run(int *p, int n) {
  dim3 block(THREADS);
  wide<<<4, block>>>(p);
  narrow<<<4, dim3(32, 3)>>>(p);
  unknown<<<4, n>>>(p);
  bounded<<<4, 64>>>(p);
}
