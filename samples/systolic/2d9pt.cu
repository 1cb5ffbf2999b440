//===- 2d9pt.cu - 2D 9-point star stencil (radius 2), systolic pass -------===//
//
// One thread per output point. Style: the point's index in a variable,
// neighbours at constant distances from it, weights written as literals.
// Points within 2 of the edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d9pt.cu -lcudadevrt -o 2d9pt
//   ./2d9pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

#pragma cuda_rewrite systolic
__global__ void stencil2d9pt(const real *__restrict__ in,
                             real *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  int i = y * W + x;
  out[i] = 0.25f * in[i] + 0.1171875f * in[i - 1] + 0.1015625f * in[i + 1] +
           0.0546875f * in[i - 2] + 0.0390625f * in[i + 2] +
           0.1328125f * in[i - W] + 0.1484375f * in[i + W] +
           0.0703125f * in[i - 2 * W] + 0.0859375f * in[i + 2 * W];
}

static void launchStencil(const real *In, real *Out, int W, int H) {
  const dim3 Block(32, 8);
  stencil2d9pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d9pt");
  // The kernel's weights (multiples of 1/256, exact in float and double):
  // all different, so that a transposed or mirrored stencil fails, and
  // summing to 1, so that values stay in the input's range.
  const stencil::TapList Taps = {
      {0, 0, 0, 0.25},                              // centre
      {-1, 0, 0, 0.1171875}, {1, 0, 0, 0.1015625},  // x -+ 1
      {-2, 0, 0, 0.0546875}, {2, 0, 0, 0.0390625},  // x -+ 2
      {0, -1, 0, 0.1328125}, {0, 1, 0, 0.1484375},  // y -+ 1
      {0, -2, 0, 0.0703125}, {0, 2, 0, 0.0859375}}; // y -+ 2
  return stencil::run2d(A, Taps, launchStencil);
}
