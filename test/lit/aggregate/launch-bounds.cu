// A rewritten parent needs registers its original did not; it must still
// launch with every block its original launches with (a parent run with
// 1024-thread blocks failed with error 701 at kernel granularity). Its
// registers are bounded for the largest block its launches use where all
// are constant (pinned where a macro or constant gives them), else for 1024.
// An aggregated child that gathers launches of its own (a recursive parent)
// is bounded for the largest block it runs where every launch's is a
// constant ('tree': 64); a leaf child keeps the bound of 1024, whose
// 64-register cap measured faster on the samples (whether its launches'
// blocks are constant, as child's, or not, as child2's in 'sized'). A bound
// the user wrote stays.
// RUN: %cuda-rewrite %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=WARN --allow-empty
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// WARN-NOT: warning

#ifndef THREADS
#define THREADS 1024
#endif

__global__ void child(int *p) { p[threadIdx.x] += 1; }
__global__ void child2(int *p) { p[threadIdx.x] += 2; }

// CHECK: __global__ void __launch_bounds__(1024){{[[:space:]]+}}child_aggregated(
// CHECK: __global__ void __launch_bounds__(1024){{[[:space:]]+}}child_aggregated_2(
// CHECK: __global__ void __launch_bounds__(1024){{[[:space:]]+}}child2_aggregated(

#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void wide(int *p) { child<<<1, 32>>>(p + blockIdx.x * 32); }
// CHECK: __global__ void __launch_bounds__(1024) wide(int *p) {

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

#pragma cuda_rewrite aggregate granularity(block)
__global__ void sized(int *p, int n) { child2<<<1, n>>>(p + blockIdx.x * n); }

#pragma cuda_rewrite aggregate granularity(block)
__global__ void tree(int *p, int depth) {
  if (depth > 0 && threadIdx.x == 0)
    tree<<<2, 64>>>(p, depth - 1);
}
// CHECK: __global__ void __launch_bounds__(64){{[[:space:]]+}}tree_aggregated(
// CHECK: __global__ void __launch_bounds__(64) tree(int *p, int depth) {

void run(int *p, int n) {
  dim3 block(THREADS);
  wide<<<4, block>>>(p);
  narrow<<<4, dim3(32, 3)>>>(p);
  unknown<<<4, n>>>(p);
  bounded<<<4, 64>>>(p);
  sized<<<4, 64>>>(p, 64);
  tree<<<1, 64>>>(p, 3);
}
// The pins come after the host code that launches the parents.
// CHECK: static_assert((THREADS) == 1024,
