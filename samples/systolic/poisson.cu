//===- poisson.cu - 3D 19-point Poisson stencil, systolic pass ------------===//
//
// One thread per output point of a W x H x D grid (x fastest): the 3x3x3
// box without its 8 corners (centre, 6 faces, 12 edges). Style: a pointer
// to the point taken with &in[...], neighbours at sums of the row stride W
// and the plane stride WH, weights written as literals. Points on the faces
// of the grid are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/poisson.cu -lcudadevrt -o poisson
//   ./poisson [W [H [D]]] [--seed=N] [--reps=N]          # default 512^3
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

// The weights are multiples of 1/512, exact in float and double, all
// different, so that a transposed or mirrored stencil fails, and summing to
// 1, so that values stay in the input's range.
#pragma cuda_rewrite systolic
__global__ void poisson19pt(const real *__restrict__ in, real *__restrict__ out,
                            int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= W - 1 || y >= H - 1 || z >= D - 1)
    return;
  const int WH = W * H;
  const real *p = &in[(z * H + y) * W + x];
  out[(z * H + y) * W + x] =
      0.15625f * p[0] + 0.0703125f * p[-1] + 0.07421875f * p[1] +
      0.078125f * p[-W] + 0.08203125f * p[W] + 0.0859375f * p[-WH] +
      0.08984375f * p[WH] + 0.01953125f * p[-W - 1] + 0.021484375f * p[-W + 1] +
      0.0234375f * p[W - 1] + 0.025390625f * p[W + 1] +
      0.02734375f * p[-WH - 1] + 0.029296875f * p[-WH + 1] +
      0.03125f * p[WH - 1] + 0.033203125f * p[WH + 1] +
      0.03515625f * p[-WH - W] + 0.037109375f * p[-WH + W] +
      0.0390625f * p[WH - W] + 0.041015625f * p[WH + W];
}

static void launchStencil(const real *In, real *Out, int W, int H, int D) {
  const dim3 Block(32, 4, 4);
  poisson19pt<<<stencil::launchGrid(Block, W, H, D), Block>>>(In, Out, W, H, D);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs3d(argc, argv, "poisson");
  const stencil::TapList Taps = {
      {0, 0, 0, 0.15625},                               // centre
      {-1, 0, 0, 0.0703125},   {1, 0, 0, 0.07421875},   // x faces
      {0, -1, 0, 0.078125},    {0, 1, 0, 0.08203125},   // y faces
      {0, 0, -1, 0.0859375},   {0, 0, 1, 0.08984375},   // z faces
      {-1, -1, 0, 0.01953125}, {1, -1, 0, 0.021484375}, // x-y
      {-1, 1, 0, 0.0234375},   {1, 1, 0, 0.025390625},  // edges
      {-1, 0, -1, 0.02734375}, {1, 0, -1, 0.029296875}, // x-z
      {-1, 0, 1, 0.03125},     {1, 0, 1, 0.033203125},  // edges
      {0, -1, -1, 0.03515625}, {0, 1, -1, 0.037109375}, // y-z
      {0, -1, 1, 0.0390625},   {0, 1, 1, 0.041015625}}; // edges
  return stencil::run3d(A, Taps, launchStencil);
}
