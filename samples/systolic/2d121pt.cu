//===- 2d121pt.cu - 2D 121-point box stencil (11x11), systolic pass -------===//
//
// One thread per output point. Style: the point's index in a variable,
// nested tap loops with constexpr bounds reading at i + dy * W + dx, weights
// from a filter array passed as a pointer argument. Points within 5 of the
// edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d121pt.cu -lcudadevrt -o 2d121pt
//   ./2d121pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 5;
constexpr int Side = 2 * R + 1;

// filter[(dy + R) * Side + dx + R] weighs the point (x + dx, y + dy).
#pragma cuda_rewrite systolic
__global__ void stencil2d121pt(const real *__restrict__ in,
                               real *__restrict__ out,
                               const real *__restrict__ filter, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R)
    return;
  int i = y * W + x;
  real sum = 0;
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx)
      sum += filter[(dy + R) * Side + dx + R] * in[i + dy * W + dx];
  out[i] = sum;
}

static void launchStencil(const real *In, real *Out, const real *Filter, int W,
                          int H) {
  const dim3 Block(32, 8);
  stencil2d121pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, Filter,
                                                              W, H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d121pt");
  const std::vector<real> F = stencil::randomWeights<real>(A, Side * Side);
  harness::DeviceArray<real> DF(F);
  return stencil::run2d(A, stencil::box2d(-R, R, F),
                        [&](const real *In, real *Out, int W, int H) {
                          launchStencil(In, Out, DF.data(), W, H);
                        });
}
