// The launcher is generated next to its kernel, in the kernel's namespace;
// each launch calls it by its qualified name from the global scope (an
// anonymous namespace needs none), wherever the launch is. A kernel that is
// a static class member (only --auto finds one: a pragma cannot precede it;
// clang accepts such a kernel, nvcc does not) is refused.
// RUN: %cuda-rewrite --remarks --auto %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

#define STENCIL_BODY                                                           \
  int x = blockIdx.x * blockDim.x + threadIdx.x;                               \
  int y = blockIdx.y * blockDim.y + threadIdx.y;                               \
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)                              \
    return;                                                                    \
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];

namespace ns {
// REMARK-DAG: namespace.cu:[[@LINE+2]]:17: remark: rewritten: 'inNs' runs as inNs_systolic_aligned ({{.*}}; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void inNs(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  STENCIL_BODY
}
// CHECK:      namespace ns {
// CHECK:      struct inNs_systolic_shape {
// CHECK:      static void inNs_systolic_launch(
// CHECK:      } // namespace ns
} // namespace ns

namespace a {
namespace b {
// REMARK-DAG: namespace.cu:[[@LINE+2]]:17: remark: rewritten: 'nested' runs as nested_systolic_aligned ({{.*}}; 2 launches rewritten)
#pragma cuda_rewrite systolic
__global__ void nested(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  STENCIL_BODY
}
void inside(const float *in, float *out, int W, int H) {
  // CHECK-LABEL: void inside(
  // CHECK-NEXT:    ::a::b::nested_systolic_launch(dim3(W / 32, H / 8), dim3(32, 8), 0, 0, in,{{[[:space:]]+}}out, W, H);
  nested<<<dim3(W / 32, H / 8), dim3(32, 8)>>>(in, out, W, H);
}
} // namespace b
} // namespace a

namespace {
// REMARK-DAG: namespace.cu:[[@LINE+2]]:17: remark: rewritten: 'anon' runs as anon_systolic_aligned ({{.*}}; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void anon(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  STENCIL_BODY
}
} // namespace

struct S {
  // REMARK-DAG: namespace.cu:[[@LINE+1]]:26: remark: not rewritten: the kernel is a class member [systolic]
  static __global__ void member(const float *__restrict__ in,
                                float *__restrict__ out, int W, int H) {
    STENCIL_BODY
  }
};
// CHECK-NOT: member_systolic

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-LABEL: void run(
  // CHECK-NEXT:    dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-NEXT:    ::ns::inNs_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:    ::a::b::nested_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:    anon_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:    S::member<<<grid, block>>>(in, out, W, H);
  ns::inNs<<<grid, block>>>(in, out, W, H);
  a::b::nested<<<grid, block>>>(in, out, W, H);
  anon<<<grid, block>>>(in, out, W, H);
  S::member<<<grid, block>>>(in, out, W, H);
}
