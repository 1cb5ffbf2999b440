// The launching thread selected other than `if (threadIdx.x == 0 && ...)`:
// through a local that holds threadIdx.x, as `!threadIdx.x`, or with the
// chain's condition in an `if` of its own inside the thread's. Each is
// promoted; the condition reaches the generated launch as written.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: sed '/^\/\/ [A-Z-]*:/d' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

// REMARK-NOT: warning
// REMARK: guards.cu:[[@LINE+2]]:17: remark: rewritten: 'viaLocal' runs as viaLocal_promoted (variant P)
#pragma cuda_rewrite promote
__global__ void viaLocal(int *out, int n, int chunk) {
  const int tid = threadIdx.x;
  const int i = chunk * 64 + tid;
  if (i < n)
    out[i] = 2 * i;
  if (tid == 0 && (chunk + 1) * 64 < n)
    viaLocal<<<1, 64, 0, cudaStreamTailLaunch>>>(out, n, chunk + 1);
}
// CHECK-LABEL: viaLocal_promoted(cuda_rewrite::PromoteChain
// CHECK: if (threadIdx.x == 0 && ((chunk + 1) * 64 < n)) {

// REMARK: guards.cu:[[@LINE+2]]:17: remark: rewritten: 'negated' runs as negated_promoted (variant P)
#pragma cuda_rewrite promote
__global__ void negated(int *out, int n, int chunk) {
  const int i = chunk * 64 + threadIdx.x;
  if (i < n)
    out[i] = 3 * i;
  if (!threadIdx.x && (chunk + 1) * 64 < n)
    negated<<<1, 64, 0, cudaStreamTailLaunch>>>(out, n, chunk + 1);
}
// CHECK-LABEL: negated_promoted(cuda_rewrite::PromoteChain
// CHECK: if (threadIdx.x == 0 && ((chunk + 1) * 64 < n)) {

// REMARK: guards.cu:[[@LINE+2]]:17: remark: rewritten: 'nested' runs as nested_promoted (variant P)
#pragma cuda_rewrite promote
__global__ void nested(int *out, int n, int chunk) {
  int tid = threadIdx.x;
  const int i = chunk * 64 + tid;
  if (i < n)
    out[i] = 4 * i;
  if (tid == 0) {
    const bool more = (chunk + 1) * 64 < n;
    if (more)
      nested<<<1, 64, 0, cudaStreamTailLaunch>>>(out, n, chunk + 1);
  }
}
// CHECK-LABEL: nested_promoted(cuda_rewrite::PromoteChain
// CHECK: if (more) {
// CHECK-NEXT: // The original launched the next link here; hand it its
// CHECK: cr_launched = true;

void run(int *out, int n) {
  viaLocal<<<1, 64>>>(out, n, 0);
  negated<<<1, 64>>>(out, n, 0);
  nested<<<1, 64>>>(out, n, 0);
}
