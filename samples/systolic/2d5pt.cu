//===- 2d5pt.cu - A plain 2D 5-point stencil, for the systolic pass -------===//
//
// One thread per output point, every neighbour read from global memory: the
// baseline SSAM (docs/references.md) turns into a register-cached systolic
// array. Boundary points are left untouched. Style: flat indices, one weight
// per neighbour passed as a kernel argument.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d5pt.cu -lcudadevrt -o 2d5pt
//   ./2d5pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

#pragma cuda_rewrite systolic
__global__ void stencil2d5pt(const real *__restrict__ in,
                             real *__restrict__ out, int W, int H, real cc,
                             real cw, real ce, real cs, real cn) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = cc * in[y * W + x] + cw * in[y * W + x - 1] +
                   ce * in[y * W + x + 1] + cs * in[(y - 1) * W + x] +
                   cn * in[(y + 1) * W + x];
}

static void launchStencil(const real *In, real *Out, int W, int H, real CC,
                          real CW, real CE, real CS, real CN) {
  const dim3 Block(32, 8);
  stencil2d5pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, W, H, CC,
                                                            CW, CE, CS, CN);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d5pt");
  // A different weight for every neighbour, so that a transposed or mirrored
  // stencil fails; they sum to 1, so that values stay in the input's range.
  const real CC = 0.5, CW = 0.15, CE = 0.1, CS = 0.14, CN = 0.11;
  const stencil::TapList Taps = {{0, 0, 0, CC},
                                 {-1, 0, 0, CW},
                                 {1, 0, 0, CE},
                                 {0, -1, 0, CS},
                                 {0, 1, 0, CN}};
  return stencil::run2d(A, Taps, [&](const real *In, real *Out, int W, int H) {
    launchStencil(In, Out, W, H, CC, CW, CE, CS, CN);
  });
}
