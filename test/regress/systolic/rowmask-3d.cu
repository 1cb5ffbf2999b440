// Found by test/fuzz/difftest (systolic, seed 1, program p252): a 3D stencil
// of 60 taps whose systolic kernel gave wrong results in the last plane of
// each window with P = 4 (and P = 1), never with P = 2, 8 or 16. The rows a
// plane load takes were selected by bits of a per-tile mask; CUDA 13.0's
// ptxas (V13.0.88) at -O2/-O3 dropped the loads of plane z + 1, rows y + 1,
// in the last plane (the program was right at ptxas -O1, -O0 or with a
// printf in the loop, and compute-sanitizer found nothing). The generated
// loads now test per-tile flags (a bool per row), not bits of a mask. The
// program is not reduced further: small changes to it hide the miscompile.
// On the GPU: test/fuzz/difftest/difftest.py regress (README there).
//
// RUN: %cuda-rewrite %s -o %t.cu -- -I %difftest
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -I %difftest %t.cu -o %t.o
// CHECK: p252_stencil_systolic(
// CHECK-NOT: & 1) ?
// CHECK: const bool reads =
#include "difftest.cuh"

// ==== difftest program p252 ====
#pragma cuda_rewrite systolic p(4) block(128)
__global__ void p252_stencil(const double *__restrict__ in, double *__restrict__ out, int W, int H, int D, double c0, double c1, double c2, double c3, double c4, double c5, double c6, double c7, double c8, double c9, double c10, double c11, double c12, double c13, double c14, double c15, double c16, double c17, double c18, double c19, double c20, double c21, double c22, double c23, double c24, double c25, double c26, double c27, double c28, double c29, double c30, double c31, double c32, double c33, double c34, double c35, double c36, double c37, double c38, double c39, double c40, double c41, double c42, double c43, double c44, double c45, double c46, double c47, double c48, double c49, double c50, double c51, double c52, double c53, double c54, double c55, double c56, double c57, double c58, double c59) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= 5 && x < W - 3 && y >= 1 && y < H - 2 && z >= 2 && z < D - 1) {
    out[(z * H + y) * W + x] = c0 * in[((z - 1) * H + y - 1) * W + x - 3] +
        c1 * in[(z * H + y - 1) * W + x - 3] +
        c2 * in[((z + 1) * H + y - 1) * W + x - 3] +
        c3 * in[((z - 1) * H + y) * W + x - 3] +
        c4 * in[(z * H + y) * W + x - 3] +
        c5 * in[((z + 1) * H + y) * W + x - 3] +
        c6 * in[((z - 1) * H + y + 1) * W + x - 3] +
        c7 * in[(z * H + y + 1) * W + x - 3] +
        c8 * in[((z + 1) * H + y + 1) * W + x - 3] +
        c9 * in[((z - 1) * H + y - 1) * W + x - 2] +
        c10 * in[(z * H + y - 1) * W + x - 2] +
        c11 * in[((z + 1) * H + y - 1) * W + x - 2] +
        c12 * in[((z - 1) * H + y) * W + x - 2] +
        c13 * in[((z + 1) * H + y) * W + x - 2] +
        c14 * in[((z - 1) * H + y + 1) * W + x - 2] +
        c15 * in[((z + 1) * H + y + 1) * W + x - 2] +
        c16 * in[(z * H + y - 1) * W + x - 1] +
        c17 * in[((z + 1) * H + y - 1) * W + x - 1] +
        c18 * in[((z - 1) * H + y) * W + x - 1] +
        c19 * in[(z * H + y) * W + x - 1] +
        c20 * in[((z + 1) * H + y) * W + x - 1] +
        c21 * in[((z - 1) * H + y + 1) * W + x - 1] +
        c22 * in[(z * H + y + 1) * W + x - 1] +
        c23 * in[((z + 1) * H + y + 1) * W + x - 1] +
        c24 * in[((z - 1) * H + y - 1) * W + x] +
        c25 * in[(z * H + y - 1) * W + x] +
        c26 * in[((z + 1) * H + y - 1) * W + x] +
        c27 * in[((z - 1) * H + y) * W + x] +
        c28 * in[(z * H + y) * W + x] +
        c29 * in[((z + 1) * H + y) * W + x] +
        c30 * in[((z - 1) * H + y + 1) * W + x] +
        c31 * in[(z * H + y + 1) * W + x] +
        c32 * in[((z + 1) * H + y + 1) * W + x] +
        c33 * in[((z - 1) * H + y - 1) * W + x + 1] +
        c34 * in[(z * H + y - 1) * W + x + 1] +
        c35 * in[((z + 1) * H + y - 1) * W + x + 1] +
        c36 * in[((z - 1) * H + y) * W + x + 1] +
        c37 * in[(z * H + y) * W + x + 1] +
        c38 * in[((z + 1) * H + y) * W + x + 1] +
        c39 * in[((z - 1) * H + y + 1) * W + x + 1] +
        c40 * in[(z * H + y + 1) * W + x + 1] +
        c41 * in[((z + 1) * H + y + 1) * W + x + 1] +
        c42 * in[((z - 1) * H + y - 1) * W + x + 2] +
        c43 * in[(z * H + y - 1) * W + x + 2] +
        c44 * in[((z + 1) * H + y - 1) * W + x + 2] +
        c45 * in[((z - 1) * H + y) * W + x + 2] +
        c46 * in[(z * H + y) * W + x + 2] +
        c47 * in[((z + 1) * H + y) * W + x + 2] +
        c48 * in[((z - 1) * H + y + 1) * W + x + 2] +
        c49 * in[(z * H + y + 1) * W + x + 2] +
        c50 * in[((z + 1) * H + y + 1) * W + x + 2] +
        c51 * in[((z - 1) * H + y - 1) * W + x + 3] +
        c52 * in[(z * H + y - 1) * W + x + 3] +
        c53 * in[((z + 1) * H + y - 1) * W + x + 3] +
        c54 * in[((z - 1) * H + y) * W + x + 3] +
        c55 * in[(z * H + y) * W + x + 3] +
        c56 * in[((z + 1) * H + y) * W + x + 3] +
        c57 * in[((z - 1) * H + y + 1) * W + x + 3] +
        c58 * in[(z * H + y + 1) * W + x + 3] +
        c59 * in[((z + 1) * H + y + 1) * W + x + 3];
  }
}

static void run_p252(difftest::Rng &rng, difftest::Check &check) {
  const int W = 57, H = 32, D = 8;
  difftest::Buffer<double> in(W * H * D), out(W * H * D);
  rng.fill(in.Host, -1.0, 1.0);
  in.upload();
  out.poison();
  const double weights[60] = {-0.140625, -0.8125, -0.3125, 0.703125, 0.203125, -0.28125, 0.5625, 0.984375, -0.390625, -0.9375, 0.875, -0.84375, 0.40625, 0.984375, -0.25, 0.78125, 0.0625, 0.234375, -0.5625, 0.984375, -0.765625, 0.3125, 0.34375, -0.375, -0.046875, 0.6875, -0.671875, 0.125, -0.109375, -0.28125, 0.21875, -0.5625, 0.875, 0.703125, 0.28125, -0.078125, 0.3125, 0.390625, 0.671875, -0.78125, 0.359375, -0.21875, -0.453125, 0.515625, 0.3125, 0.375, 0.265625, 0.90625, 0.390625, -0.5, -0.015625, -0.078125, 0.125, -0.8125, 0.140625, -0.703125, -0.890625, -0.203125, -0.984375, -0.703125};
  dim3 block(64, 2, 2);
  dim3 grid((W + 63) / 64, (H + 1) / 2, (D + 1) / 2);
  p252_stencil<<<grid, block>>>(in.data(), out.data(), W, H, D, weights[0], weights[1], weights[2], weights[3], weights[4], weights[5], weights[6], weights[7], weights[8], weights[9], weights[10], weights[11], weights[12], weights[13], weights[14], weights[15], weights[16], weights[17], weights[18], weights[19], weights[20], weights[21], weights[22], weights[23], weights[24], weights[25], weights[26], weights[27], weights[28], weights[29], weights[30], weights[31], weights[32], weights[33], weights[34], weights[35], weights[36], weights[37], weights[38], weights[39], weights[40], weights[41], weights[42], weights[43], weights[44], weights[45], weights[46], weights[47], weights[48], weights[49], weights[50], weights[51], weights[52], weights[53], weights[54], weights[55], weights[56], weights[57], weights[58], weights[59]);
  DIFFTEST_CUDA(cudaGetLastError());
  const std::vector<double> &got = out.download();
  const int taps[60][3] = {{-3, -1, -1}, {-3, -1, 0}, {-3, -1, 1}, {-3, 0, -1}, {-3, 0, 0}, {-3, 0, 1}, {-3, 1, -1}, {-3, 1, 0}, {-3, 1, 1}, {-2, -1, -1}, {-2, -1, 0}, {-2, -1, 1}, {-2, 0, -1}, {-2, 0, 1}, {-2, 1, -1}, {-2, 1, 1}, {-1, -1, 0}, {-1, -1, 1}, {-1, 0, -1}, {-1, 0, 0}, {-1, 0, 1}, {-1, 1, -1}, {-1, 1, 0}, {-1, 1, 1}, {0, -1, -1}, {0, -1, 0}, {0, -1, 1}, {0, 0, -1}, {0, 0, 0}, {0, 0, 1}, {0, 1, -1}, {0, 1, 0}, {0, 1, 1}, {1, -1, -1}, {1, -1, 0}, {1, -1, 1}, {1, 0, -1}, {1, 0, 0}, {1, 0, 1}, {1, 1, -1}, {1, 1, 0}, {1, 1, 1}, {2, -1, -1}, {2, -1, 0}, {2, -1, 1}, {2, 0, -1}, {2, 0, 0}, {2, 0, 1}, {2, 1, -1}, {2, 1, 0}, {2, 1, 1}, {3, -1, -1}, {3, -1, 0}, {3, -1, 1}, {3, 0, -1}, {3, 0, 0}, {3, 0, 1}, {3, 1, -1}, {3, 1, 0}, {3, 1, 1}};
  std::vector<difftest::Approx> want(W * H * D);
  std::vector<bool> written(W * H * D);
  for (int z = 2; z < D - 1; ++z)
    for (int y = 1; y < H - 2; ++y)
      for (int x = 5; x < W - 3; ++x) {
        std::vector<difftest::Approx> terms;
        for (int k = 0; k < 60; ++k) {
          size_t at = ((size_t)(z + taps[k][2]) * H + y + taps[k][1]) * W + x + taps[k][0];
          terms.push_back(difftest::Approx(weights[k]) * difftest::Approx(in.Host[at]));
        }
        size_t i = ((size_t)z * H + y) * W + x;
        want[i] = difftest::sum(terms);
        written[i] = true;
      }
  difftest::expectNear(check, "out", got, want, written);
}
// ==== end of p252 ====

DIFFTEST_MAIN({"p252", run_p252})
