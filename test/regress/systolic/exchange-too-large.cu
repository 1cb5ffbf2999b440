// Found by test/fuzz/difftest (systolic, seed 2, program p423): z(shared)
// with p(16) gave a block of 8 warps 81920 bytes of partial sums in static
// shared memory, and the rewritten file did not link (nvlink: "uses too much
// shared data"). A p(..) or block(..) that makes the exchange form need more
// than 48 KiB is now refused with a remark, and the kernel stays as it was.
//
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -I %difftest %t.cu -o %t.o
// CHECK: warning: not rewritten: z(shared) with 16 rows per thread and 8 warps per block needs 81920 bytes of shared memory for its partial sums, more than the 49152 a kernel can declare; lower p(..) or block(..) [systolic] [-Wcuda-rewrite-refused]
#include "difftest.cuh"

// ==== difftest program p423 ====
#pragma cuda_rewrite systolic p(16) z(shared)
__global__ void p423_stencil(const float *__restrict__ in, float *__restrict__ out, int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= 2 && x < W - 3 && y >= 4 && y < H - 3 && z >= 3 && z < D - 2) {
    const float c0 = 0.5f;
    const float c1 = -0.15625f;
    const float c2 = -0.859375f;
    const float c3 = -0.84375f;
    const float c4 = 0.234375f;
    const float c5 = -0.15625f;
    const float c6 = -0.171875f;
    const float c7 = -0.5f;
    const float c8 = 0.796875f;
    const float c9 = 0.40625f;
    const float c10 = 0.59375f;
    const float c11 = 0.609375f;
    const float c12 = 0.3125f;
    const float c13 = -0.25f;
    const float c14 = -0.734375f;
    const float c15 = 0.5f;
    const float c16 = -0.5625f;
    const float c17 = -0.171875f;
    const float c18 = -0.59375f;
    const float c19 = 0.84375f;
    const float c20 = -0.328125f;
    const float c21 = -0.65625f;
    const float c22 = -0.4375f;
    const float c23 = -0.125f;
    const float c24 = -0.84375f;
    const float c25 = 0.65625f;
    const float c26 = -0.671875f;
    const float c27 = 0.46875f;
    const float c28 = -0.109375f;
    const float c29 = 0.5625f;
    const float c30 = 0.828125f;
    const float c31 = 0.09375f;
    const float c32 = -0.9375f;
    const float c33 = 0.046875f;
    const float c34 = 0.46875f;
    const float *p = in + (z * H + y) * W + x;
    out[(z * H + y) * W + x] = c0 * p[-2 * W * H - 3 * W] +
        c1 * p[-W * H - 3 * W] +
        c2 * p[-3 * W] +
        c3 * p[W * H - 3 * W] +
        c4 * p[2 * W * H - 3 * W] +
        c5 * p[-2 * W * H - 2 * W] +
        c6 * p[-W * H - 2 * W] +
        c7 * p[-2 * W] +
        c8 * p[W * H - 2 * W] +
        c9 * p[2 * W * H - 2 * W] +
        c10 * p[-2 * W * H - W] +
        c11 * p[-W * H - W] +
        c12 * p[-W] +
        c13 * p[W * H - W] +
        c14 * p[2 * W * H - W] +
        c15 * p[-2 * W * H] +
        c16 * p[-W * H] +
        c17 * p[0] +
        c18 * p[W * H] +
        c19 * p[2 * W * H] +
        c20 * p[-2 * W * H + W] +
        c21 * p[-W * H + W] +
        c22 * p[W] +
        c23 * p[W * H + W] +
        c24 * p[2 * W * H + W] +
        c25 * p[-2 * W * H + 2 * W] +
        c26 * p[-W * H + 2 * W] +
        c27 * p[2 * W] +
        c28 * p[W * H + 2 * W] +
        c29 * p[2 * W * H + 2 * W] +
        c30 * p[-2 * W * H + 3 * W] +
        c31 * p[-W * H + 3 * W] +
        c32 * p[3 * W] +
        c33 * p[W * H + 3 * W] +
        c34 * p[2 * W * H + 3 * W];
  }
}

static void run_p423(difftest::Rng &rng, difftest::Check &check) {
  const int W = 52, H = 27, D = 16;
  difftest::Buffer<float> in(W * H * D), out(W * H * D);
  rng.fill(in.Host, -1.0, 1.0);
  in.upload();
  out.poison();
  const float weights[35] = {0.5f, -0.15625f, -0.859375f, -0.84375f, 0.234375f, -0.15625f, -0.171875f, -0.5f, 0.796875f, 0.40625f, 0.59375f, 0.609375f, 0.3125f, -0.25f, -0.734375f, 0.5f, -0.5625f, -0.171875f, -0.59375f, 0.84375f, -0.328125f, -0.65625f, -0.4375f, -0.125f, -0.84375f, 0.65625f, -0.671875f, 0.46875f, -0.109375f, 0.5625f, 0.828125f, 0.09375f, -0.9375f, 0.046875f, 0.46875f};
  dim3 block(32, 4, 2);
  dim3 grid((W + 31) / 32, (H + 3) / 4, (D + 1) / 2);
  p423_stencil<<<grid, block, 0>>>(in.data(), out.data(), W, H, D);
  DIFFTEST_CUDA(cudaGetLastError());
  const std::vector<float> &got = out.download();
  const int taps[35][3] = {{0, -3, -2}, {0, -3, -1}, {0, -3, 0}, {0, -3, 1}, {0, -3, 2}, {0, -2, -2}, {0, -2, -1}, {0, -2, 0}, {0, -2, 1}, {0, -2, 2}, {0, -1, -2}, {0, -1, -1}, {0, -1, 0}, {0, -1, 1}, {0, -1, 2}, {0, 0, -2}, {0, 0, -1}, {0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 1, -2}, {0, 1, -1}, {0, 1, 0}, {0, 1, 1}, {0, 1, 2}, {0, 2, -2}, {0, 2, -1}, {0, 2, 0}, {0, 2, 1}, {0, 2, 2}, {0, 3, -2}, {0, 3, -1}, {0, 3, 0}, {0, 3, 1}, {0, 3, 2}};
  std::vector<difftest::Approx> want(W * H * D);
  std::vector<bool> written(W * H * D);
  for (int z = 3; z < D - 2; ++z)
    for (int y = 4; y < H - 3; ++y)
      for (int x = 2; x < W - 3; ++x) {
        std::vector<difftest::Approx> terms;
        for (int k = 0; k < 35; ++k) {
          size_t at = ((size_t)(z + taps[k][2]) * H + y + taps[k][1]) * W + x + taps[k][0];
          terms.push_back(difftest::Approx(weights[k]) * difftest::Approx(in.Host[at]));
        }
        size_t i = ((size_t)z * H + y) * W + x;
        want[i] = difftest::sum(terms);
        written[i] = true;
      }
  difftest::expectNear(check, "out", got, want, written);
}
// ==== end of p423 ====

DIFFTEST_MAIN({"p423", run_p423})
