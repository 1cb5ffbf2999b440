// --remarks explains every candidate in clang's diagnostic format.
// RUN: %cuda-rewrite --remarks %s -- 2>&1 >/dev/null | FileCheck %s
// RUN: %cuda-rewrite --remarks --disable=aggregate %s -- 2>&1 >/dev/null | FileCheck %s --check-prefix=DISABLED
// RUN: %cuda-rewrite --remarks --auto %s -- 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: %cuda-rewrite %s -- 2>&1 >/dev/null | count 0

__global__ void child(int *p) { p[threadIdx.x] = 1; }

__global__ void parent(int *p) {
#pragma cuda_rewrite aggregate granularity(kernel)
  // CHECK: remarks.cu:[[@LINE+2]]:3: remark: not rewritten: the 'aggregate' pass is not implemented in this version of cuda-rewrite [aggregate]
  // DISABLED: remarks.cu:[[@LINE+1]]:3: remark: not rewritten: the 'aggregate' pass is disabled (--only/--disable) [aggregate]
  child<<<1, 32>>>(p);
  // CHECK: remarks.cu:[[@LINE+2]]:3: remark: not rewritten: not annotated; add '#pragma cuda_rewrite aggregate' or pass --auto [aggregate]
  // AUTO: remarks.cu:[[@LINE+1]]:3: remark: not rewritten: the 'aggregate' pass is not implemented
  child<<<2, 32>>>(p);
}
