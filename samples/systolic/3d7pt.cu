//===- 3d7pt.cu - 3D 7-point star stencil (radius 1), systolic pass -------===//
//
// One thread per output point of a W x H x D grid (x fastest). Style: flat
// indices (z * H + y) * W + x, weights written as literals. Points on the
// faces of the grid are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/3d7pt.cu -lcudadevrt -o 3d7pt
//   ./3d7pt [W [H [D]]] [--seed=N] [--reps=N]          # default 512^3
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

#pragma cuda_rewrite systolic
__global__ void stencil3d7pt(const real *__restrict__ in,
                             real *__restrict__ out, int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= W - 1 || y >= H - 1 || z >= D - 1)
    return;
  out[(z * H + y) * W + x] = 0.25f * in[(z * H + y) * W + x] +
                             0.140625f * in[(z * H + y) * W + x - 1] +
                             0.109375f * in[(z * H + y) * W + x + 1] +
                             0.15625f * in[(z * H + y - 1) * W + x] +
                             0.09375f * in[(z * H + y + 1) * W + x] +
                             0.171875f * in[((z - 1) * H + y) * W + x] +
                             0.078125f * in[((z + 1) * H + y) * W + x];
}

static void launchStencil(const real *In, real *Out, int W, int H, int D) {
  const dim3 Block(32, 4, 4);
  stencil3d7pt<<<stencil::launchGrid(Block, W, H, D), Block>>>(In, Out, W, H,
                                                               D);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs3d(argc, argv, "3d7pt");
  // The kernel's weights (multiples of 1/64, exact in float and double):
  // all different, so that a transposed or mirrored stencil fails, and
  // summing to 1, so that values stay in the input's range.
  const stencil::TapList Taps = {
      {0, 0, 0, 0.25},                            // centre
      {-1, 0, 0, 0.140625}, {1, 0, 0, 0.109375},  // x -+ 1
      {0, -1, 0, 0.15625},  {0, 1, 0, 0.09375},   // y -+ 1
      {0, 0, -1, 0.171875}, {0, 0, 1, 0.078125}}; // z -+ 1
  return stencil::run3d(A, Taps, launchStencil);
}
