//===- 3d13pt.cu - 3D 13-point star stencil (radius 2), systolic pass -----===//
//
// One thread per output point of a W x H x D grid (x fastest). Style: the
// point's index in a variable, the plane stride in another (P = W * H),
// weights in const locals; the store sits inside the guard. Points within 2
// of a face are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/3d13pt.cu -lcudadevrt -o 3d13pt
//   ./3d13pt [W [H [D]]] [--seed=N] [--reps=N]          # default 512^3
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

#pragma cuda_rewrite systolic
__global__ void stencil3d13pt(const real *__restrict__ in,
                              real *__restrict__ out, int W, int H, int D) {
  // Multiples of 1/256, exact in float and double, all different so that a
  // transposed or mirrored stencil fails, summing to 1.
  const real c0 = 0.15625f;
  const real xm1 = 0.09375f, xp1 = 0.078125f, xm2 = 0.046875f, xp2 = 0.03125f;
  const real ym1 = 0.1015625f, yp1 = 0.0703125f, ym2 = 0.0546875f,
             yp2 = 0.0234375f;
  const real zm1 = 0.109375f, zp1 = 0.0859375f, zm2 = 0.08203125f,
             zp2 = 0.06640625f;

  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= 2 && y >= 2 && z >= 2 && x < W - 2 && y < H - 2 && z < D - 2) {
    const int P = W * H;
    int i = (z * H + y) * W + x;
    out[i] = c0 * in[i] + xm1 * in[i - 1] + xp1 * in[i + 1] + xm2 * in[i - 2] +
             xp2 * in[i + 2] + ym1 * in[i - W] + yp1 * in[i + W] +
             ym2 * in[i - 2 * W] + yp2 * in[i + 2 * W] + zm1 * in[i - P] +
             zp1 * in[i + P] + zm2 * in[i - 2 * P] + zp2 * in[i + 2 * P];
  }
}

static void launchStencil(const real *In, real *Out, int W, int H, int D) {
  const dim3 Block(32, 4, 4);
  stencil3d13pt<<<stencil::launchGrid(Block, W, H, D), Block>>>(In, Out, W, H,
                                                                D);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs3d(argc, argv, "3d13pt");
  const stencil::TapList Taps = {
      {0, 0, 0, 0.15625},                             // centre
      {-1, 0, 0, 0.09375},    {1, 0, 0, 0.078125},    // x -+ 1
      {-2, 0, 0, 0.046875},   {2, 0, 0, 0.03125},     // x -+ 2
      {0, -1, 0, 0.1015625},  {0, 1, 0, 0.0703125},   // y -+ 1
      {0, -2, 0, 0.0546875},  {0, 2, 0, 0.0234375},   // y -+ 2
      {0, 0, -1, 0.109375},   {0, 0, 1, 0.0859375},   // z -+ 1
      {0, 0, -2, 0.08203125}, {0, 0, 2, 0.06640625}}; // z -+ 2
  return stencil::run3d(A, Taps, launchStencil);
}
