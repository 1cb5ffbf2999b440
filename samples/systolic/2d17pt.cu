//===- 2d17pt.cu - 2D 17-point star stencil (radius 4), systolic pass -----===//
//
// One thread per output point. Style: a loop over the distance from the
// centre with a constexpr bound, flat indices, weights in __constant__
// memory that the host sets before the runs (so they are not known when
// the kernel is compiled). Points within 4 of the edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d17pt.cu -lcudadevrt -o 2d17pt
//   ./2d17pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 4;

// The centre's weight, and those of the points at distance d = 1..R to the
// west (x - d), east (x + d), south (y - d) and north (y + d), at [d - 1].
__constant__ real cc;
__constant__ real cw[R], ce[R], cs[R], cn[R];

#pragma cuda_rewrite systolic
__global__ void stencil2d17pt(const real *__restrict__ in,
                              real *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R)
    return;
  real sum = cc * in[y * W + x];
  for (int d = 1; d <= R; ++d)
    sum += cw[d - 1] * in[y * W + x - d] + ce[d - 1] * in[y * W + x + d] +
           cs[d - 1] * in[(y - d) * W + x] + cn[d - 1] * in[(y + d) * W + x];
  out[y * W + x] = sum;
}

static void launchStencil(const real *In, real *Out, int W, int H) {
  const dim3 Block(32, 8);
  stencil2d17pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d17pt");
  // Random weights: centre, then R each to the west, east, south, north.
  const std::vector<real> C = stencil::randomWeights<real>(A, 4 * R + 1);
  HARNESS_CHECK(cudaMemcpyToSymbol(cc, &C[0], sizeof(real)));
  HARNESS_CHECK(cudaMemcpyToSymbol(cw, &C[1], R * sizeof(real)));
  HARNESS_CHECK(cudaMemcpyToSymbol(ce, &C[1 + R], R * sizeof(real)));
  HARNESS_CHECK(cudaMemcpyToSymbol(cs, &C[1 + 2 * R], R * sizeof(real)));
  HARNESS_CHECK(cudaMemcpyToSymbol(cn, &C[1 + 3 * R], R * sizeof(real)));
  stencil::TapList Taps = {{0, 0, 0, C[0]}};
  for (int D = 1; D <= R; ++D) {
    Taps.push_back({-D, 0, 0, C[D]});
    Taps.push_back({D, 0, 0, C[R + D]});
    Taps.push_back({0, -D, 0, C[2 * R + D]});
    Taps.push_back({0, D, 0, C[3 * R + D]});
  }
  return stencil::run2d(A, Taps, launchStencil);
}
