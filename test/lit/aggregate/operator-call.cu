// A child kernel that calls an operator (a function with no identifier):
// the barrier check looked at every callee's name, which asserts for
// operators (found by the front-end fuzzer, test/fuzz/README.md).
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// CHECK: remark: rewritten: aggregated at warp granularity into 'child_aggregated'
struct V {
  int a;
  __device__ V operator+(const V &o) const { return {a + o.a}; }
};
__global__ void child(V *out, V x) { out[threadIdx.x] = x + x; }
#pragma cuda_rewrite aggregate
__global__ void parent(V *out) {
  if (threadIdx.x == 0)
    child<<<1, 32>>>(out, V{1});
}
void run(V *out) { parent<<<1, 32>>>(out); }
