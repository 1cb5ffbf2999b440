//===- 2d13pt.cu - 2D 13-point star stencil (radius 3), systolic pass -----===//
//
// One thread per output point. Style: a pointer to the point's row, the
// rows above and below reached from it by multiples of W; weights are
// constexpr globals; the store sits inside the guard. Points within 3 of the
// edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d13pt.cu -lcudadevrt -o 2d13pt
//   ./2d13pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

// Weights by direction and distance (W/E: x - d / x + d, S/N: y - d /
// y + d): multiples of 1/256, exact in float and double, all different so
// that a transposed or mirrored stencil fails, summing to 1.
constexpr real C0 = 0.203125;
constexpr real CW1 = 0.09375, CW2 = 0.0546875, CW3 = 0.03125;
constexpr real CE1 = 0.0859375, CE2 = 0.046875, CE3 = 0.0234375;
constexpr real CS1 = 0.109375, CS2 = 0.0703125, CS3 = 0.0390625;
constexpr real CN1 = 0.1015625, CN2 = 0.0625, CN3 = 0.078125;

#pragma cuda_rewrite systolic
__global__ void stencil2d13pt(const real *__restrict__ in,
                              real *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 3 && x < W - 3 && y >= 3 && y < H - 3) {
    const real *row = in + y * W;
    out[y * W + x] =
        C0 * row[x] + CW1 * row[x - 1] + CW2 * row[x - 2] + CW3 * row[x - 3] +
        CE1 * row[x + 1] + CE2 * row[x + 2] + CE3 * row[x + 3] +
        CS1 * row[x - W] + CS2 * row[x - 2 * W] + CS3 * row[x - 3 * W] +
        CN1 * row[x + W] + CN2 * row[x + 2 * W] + CN3 * row[x + 3 * W];
  }
}

static void launchStencil(const real *In, real *Out, int W, int H) {
  const dim3 Block(32, 8);
  stencil2d13pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d13pt");
  const stencil::TapList Taps = {
      {0, 0, 0, C0},                                     // centre
      {-1, 0, 0, CW1}, {-2, 0, 0, CW2}, {-3, 0, 0, CW3}, // west
      {1, 0, 0, CE1},  {2, 0, 0, CE2},  {3, 0, 0, CE3},  // east
      {0, -1, 0, CS1}, {0, -2, 0, CS2}, {0, -3, 0, CS3}, // south
      {0, 1, 0, CN1},  {0, 2, 0, CN2},  {0, 3, 0, CN3}}; // north
  return stencil::run2d(A, Taps, launchStencil);
}
