//===- 2ds25pt.cu - 2D 25-point star stencil (radius 6), systolic pass ----===//
//
// One thread per output point. Style: a pointer to the point itself,
// neighbours at constant offsets from it (multiples of W for the column),
// two loops with constexpr bounds, weights from one filter array passed as
// a pointer argument. Points within 6 of the edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2ds25pt.cu -lcudadevrt -o 2ds25pt
//   ./2ds25pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 6;

// w[R + d] weighs the point x + d of the row (d = -R..R), w[2 * R + d] the
// point y - d of the column and w[3 * R + d] the point y + d (d = 1..R).
#pragma cuda_rewrite systolic
__global__ void stencil2ds25pt(const real *__restrict__ in,
                               real *__restrict__ out,
                               const real *__restrict__ w, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R)
    return;
  const real *p = in + y * W + x;
  real sum = 0;
  for (int d = -R; d <= R; ++d)
    sum += w[R + d] * p[d];
  for (int d = 1; d <= R; ++d)
    sum += w[2 * R + d] * p[-d * W] + w[3 * R + d] * p[d * W];
  out[y * W + x] = sum;
}

static void launchStencil(const real *In, real *Out, const real *Weights, int W,
                          int H) {
  const dim3 Block(32, 8);
  stencil2ds25pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, Weights,
                                                              W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2ds25pt");
  const std::vector<real> C = stencil::randomWeights<real>(A, 4 * R + 1);
  harness::DeviceArray<real> DC(C);
  stencil::TapList Taps;
  for (int D = -R; D <= R; ++D)
    Taps.push_back({D, 0, 0, C[R + D]});
  for (int D = 1; D <= R; ++D) {
    Taps.push_back({0, -D, 0, C[2 * R + D]});
    Taps.push_back({0, D, 0, C[3 * R + D]});
  }
  return stencil::run2d(A, Taps, [&](const real *In, real *Out, int W, int H) {
    launchStencil(In, Out, DC.data(), W, H);
  });
}
