//===- 2d25pt.cu - 2D 25-point box stencil (5x5), systolic pass -----------===//
//
// One thread per output point. Style: two nested tap loops with constexpr
// bounds, flat indices, the 5x5 weights in a __constant__ array that the
// host sets before the runs. Points within 2 of the edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d25pt.cu -lcudadevrt -o 2d25pt
//   ./2d25pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 2;

// Row-major: w[(dy + R) * (2 * R + 1) + (dx + R)] weighs (x + dx, y + dy).
__constant__ real w[(2 * R + 1) * (2 * R + 1)];

#pragma cuda_rewrite systolic
__global__ void stencil2d25pt(const real *__restrict__ in,
                              real *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R)
    return;
  real s = 0;
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx)
      s += w[(dy + R) * (2 * R + 1) + (dx + R)] * in[(y + dy) * W + x + dx];
  out[y * W + x] = s;
}

static void launchStencil(const real *In, real *Out, int W, int H) {
  const dim3 Block(32, 8);
  stencil2d25pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d25pt");
  const std::vector<real> C =
      stencil::randomWeights<real>(A, (2 * R + 1) * (2 * R + 1));
  HARNESS_CHECK(cudaMemcpyToSymbol(w, C.data(), C.size() * sizeof(real)));
  return stencil::run2d(A, stencil::box2d(-R, R, C), launchStencil);
}
