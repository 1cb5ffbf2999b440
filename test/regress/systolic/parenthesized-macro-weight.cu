// Found by test/fuzz/difftest (systolic, seed 4, program p358; every
// variant), and p224 of the same campaign alike: built with
// -DDT_p358_wt0=(-0.078125f), the rewrite computed with -0.296875f, the
// weight it was made for (13166 of 13800 points wrong), and compiled. The
// macro's whole body is parenthesized, `#define DT_p358_wt0 (-0.296875f)`:
// the pin stripped the parentheses first (IgnoreParenImpCasts), found the
// `-0.296875f` inside them part of the macro's body and not all of it, and
// pinned that text: a static_assert of the literal against its own value,
// true under every definition. Parentheses now stay until the pin has tried them
// (ConfigPins::visit), so the macro's name is pinned; and one value of a
// braced-list macro (`#define W {0.5f, 0.25f}`) is refused rather than
// pinned by its text.
//
// difftest-other-defines: DT_p358_H=230 DT_p358_wt0=(-0.078125f)
// RUN: %cuda-rewrite %s -o %t.cu -- -I %difftest
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -I %difftest %t.cu -o %t.o
// CHECK-NOT: static_assert((-0.296875f)
// CHECK: static_assert((DT_p358_wt0) == -0x1.3p-2f,
// CHECK: static_assert((DT_p358_wt1) == 0x1.3p-1f,

#include "difftest.cuh"

// ==== difftest program p358 ====
#ifndef DT_p358_W
#define DT_p358_W 60
#endif
#ifndef DT_p358_H
#define DT_p358_H 92
#endif
#ifndef DT_p358_wt0
#define DT_p358_wt0 (-0.296875f)
#endif
#ifndef DT_p358_wt1
#define DT_p358_wt1 0.59375f
#endif
#pragma cuda_rewrite systolic p(16)
__global__ void p358_stencil(const float *__restrict__ in, float *__restrict__ out, int H) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 2 && x < DT_p358_W && y >= 2 && y < H - 1) {
    const float c0 = DT_p358_wt0;
    const float c1 = DT_p358_wt1;
    out[y * DT_p358_W + x] = c0 * in[y * DT_p358_W + x] +
        c1 * in[(y + 1) * DT_p358_W + x];
  }
}

static void run_p358(difftest::Rng &rng, difftest::Check &check) {
  const int W = DT_p358_W, H = DT_p358_H, D = 1;
  difftest::Buffer<float> in(W * H), out(W * H);
  rng.fill(in.Host, -1.0, 1.0);
  in.upload();
  out.poison();
  const float weights[2] = {DT_p358_wt0, DT_p358_wt1};
  dim3 block(16, 16, 1);
  dim3 grid((W + 15) / 16, (H + 15) / 16);
  p358_stencil<<<grid, block>>>(in.data(), out.data(), H);
  DIFFTEST_CUDA(cudaGetLastError());
  const std::vector<float> &got = out.download();
  const int taps[2][3] = {{0, 0, 0}, {0, 1, 0}};
  std::vector<difftest::Approx> want(W * H);
  std::vector<bool> written(W * H);
  for (int z = 0; z < D - 0; ++z)
    for (int y = 2; y < H - 1; ++y)
      for (int x = 2; x < W - 0; ++x) {
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
// ==== end of p358 ====

DIFFTEST_MAIN({"p358", run_p358})
