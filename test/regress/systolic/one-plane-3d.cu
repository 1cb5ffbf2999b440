// Found by test/fuzz/difftest (systolic, seed 2, program p106): a 3D kernel
// whose two taps lie in one plane (z - 1). Its geometry had one plane, like a
// 2D stencil, so the tool chose the 2D-only aligned-rows form for it and
// wrote a launcher that indexed planes with nothing ("(H*W) * ]"): the
// rewritten file did not compile. 3D kernels now never take the vector forms
// and stream planes like any 3D stencil.
// On the GPU: test/fuzz/difftest/difftest.py prepare --regress (README there).
//
// RUN: %cuda-rewrite %s -o %t.cu -- -I %difftest
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -I %difftest %t.cu -o %t.o
// CHECK-NOT: p106_stencil_systolic_aligned
// CHECK: struct p106_stencil_systolic_shape {
// CHECK: static constexpr int Planes = 32;
// CHECK: {{^}}p106_stencil_systolic(
// CHECK-NOT: p106_stencil_systolic_aligned
#include "difftest.cuh"

// ==== difftest program p106 ====
#pragma cuda_rewrite systolic p(1) z(stream)
__global__ void p106_stencil(const float *__restrict__ in, float *__restrict__ out, int W, int H, int D, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 3 && z >= 1 && z < D) {
    int i = (z * H + y) * W + x;
    out[(z * H + y) * W + x] = c0 * in[i - W * H - W + 1] +
        c1 * in[i - W * H + 1];
  }
}

static void run_p106(difftest::Rng &rng, difftest::Check &check) {
  const int W = 124, H = 15, D = 15;
  difftest::Buffer<float> in(W * H * D), out(W * H * D);
  rng.fill(in.Host, -1.0, 1.0);
  in.upload();
  out.poison();
  const float weights[2] = {-0.421875f, -0.59375f};
  dim3 block(64, 2, 2);
  dim3 grid((W + 63) / 64, (H + 1) / 2, (D + 1) / 2);
  p106_stencil<<<grid, block>>>(in.data(), out.data(), W, H, D, weights[0], weights[1]);
  DIFFTEST_CUDA(cudaGetLastError());
  const std::vector<float> &got = out.download();
  const int taps[2][3] = {{1, -1, -1}, {1, 0, -1}};
  std::vector<difftest::Approx> want(W * H * D);
  std::vector<bool> written(W * H * D);
  for (int z = 1; z < D - 0; ++z)
    for (int y = 1; y < H - 3; ++y)
      for (int x = 1; x < W - 1; ++x) {
        std::vector<difftest::Approx> terms;
        for (int k = 0; k < 2; ++k) {
          size_t at = ((size_t)(z + taps[k][2]) * H + y + taps[k][1]) * W + x + taps[k][0];
          terms.push_back(difftest::Approx(weights[k]) * difftest::Approx(in.Host[at]));
        }
        size_t i = ((size_t)z * H + y) * W + x;
        want[i] = difftest::sum(terms);
        written[i] = true;
      }
  difftest::expectNear(check, "out", got, want, written);
}
// ==== end of p106 ====

DIFFTEST_MAIN({"p106", run_p106})
