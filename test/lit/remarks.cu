// --remarks explains every candidate in clang's diagnostic format: what was
// rewritten and how, and why the others were not.
// RUN: %cuda-rewrite --remarks %s -- 2>&1 >/dev/null | FileCheck %s
// RUN: %cuda-rewrite --remarks --disable=aggregate %s -- 2>&1 >/dev/null | FileCheck %s --check-prefix=DISABLED
// RUN: %cuda-rewrite --remarks --auto %s -- 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO
// Without --remarks, only the refused annotations show, as warnings.
// RUN: %cuda-rewrite %s -- 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAIN --implicit-check-not=remark:
// PLAIN: remarks.cu:[[#]]:3: warning: not rewritten: kernel granularity: {{.*}} [aggregate] [-Wcuda-rewrite-refused]
// PLAIN: remarks.cu:[[#]]:17: warning: not rewritten: a 1-D stencil{{.*}} [systolic] [-Wcuda-rewrite-refused]
// PLAIN-NOT: warning:

__global__ void child(int *p) { p[threadIdx.x] = 1; }

__global__ void parent(int *p) {
#pragma cuda_rewrite aggregate granularity(kernel)
  // The unannotated launch below stays, made by every thread: kernel
  // granularity would make them wait at a barrier with it in flight.
  // CHECK-DAG: remarks.cu:[[@LINE+2]]:3: warning: not rewritten: kernel granularity: 'parent' also launches kernels that stay launches, from more than one thread (line [[#@LINE+5]]): {{.*}} [aggregate] [-Wcuda-rewrite-refused]
  // DISABLED-DAG: remarks.cu:[[@LINE+1]]:3: remark: not rewritten: the 'aggregate' pass is disabled (--only/--disable) [aggregate]
  child<<<1, 32>>>(p);
  // CHECK-DAG: remarks.cu:[[@LINE+2]]:3: remark: not rewritten: not annotated; add '#pragma cuda_rewrite aggregate' or pass --auto [aggregate]
  // AUTO-DAG: remarks.cu:[[@LINE+1]]:3: remark: rewritten: aggregated at kernel granularity
  child<<<2, 32>>>(p);
}

// A refusal says why.
#pragma cuda_rewrite systolic
// CHECK-DAG: remarks.cu:[[@LINE+1]]:17: warning: not rewritten: a 1-D stencil; the systolic kernel needs rows (y) to cache in registers and columns (x) across lanes [systolic] [-Wcuda-rewrite-refused]
__global__ void smooth(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3;
}
