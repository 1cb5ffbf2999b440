//===- 2d81pt.cu - 2D 81-point box stencil (9x9), systolic pass -----------===//
//
// One thread per output point. Style: nested tap loops with constexpr
// bounds, flat indices, weights in a two-dimensional __constant__ array
// that the host sets before the runs; the store sits inside the guard.
// Points within 4 of the edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d81pt.cu -lcudadevrt -o 2d81pt
//   ./2d81pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 4;

// c[R + dy][R + dx] weighs the point (x + dx, y + dy).
__constant__ real c[2 * R + 1][2 * R + 1];

#pragma cuda_rewrite systolic
__global__ void stencil2d81pt(const real *__restrict__ in,
                              real *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= R && x < W - R && y >= R && y < H - R) {
    real sum = 0;
    for (int dy = -R; dy <= R; ++dy)
      for (int dx = -R; dx <= R; ++dx)
        sum += c[R + dy][R + dx] * in[(y + dy) * W + (x + dx)];
    out[y * W + x] = sum;
  }
}

static void launchStencil(const real *In, real *Out, int W, int H) {
  const dim3 Block(32, 8);
  stencil2d81pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d81pt");
  const std::vector<real> C =
      stencil::randomWeights<real>(A, (2 * R + 1) * (2 * R + 1));
  HARNESS_CHECK(cudaMemcpyToSymbol(c, C.data(), C.size() * sizeof(real)));
  return stencil::run2d(A, stencil::box2d(-R, R, C), launchStencil);
}
