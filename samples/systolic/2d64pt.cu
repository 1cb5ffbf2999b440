//===- 2d64pt.cu - 2D 64-point box stencil (8x8), systolic pass -----------===//
//
// One thread per output point, with an even-sized box: offsets -4..3 in x
// and y, so the point is not the box's centre. Style: a pointer to each
// row of the box, set in the outer tap loop; weights from a filter array
// passed as a pointer argument. The guard is symmetric, as hand-written
// code often has it: it leaves 4 points unwritten on every side, one more
// on the high sides than the taps need.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d64pt.cu -lcudadevrt -o 2d64pt
//   ./2d64pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int K = 8;       // box side
constexpr int Lo = -K / 2; // first offset; the last is Lo + K - 1 = 3

// f[dy * K + dx] weighs the point (x + Lo + dx, y + Lo + dy).
#pragma cuda_rewrite systolic
__global__ void stencil2d64pt(const real *__restrict__ in,
                              real *__restrict__ out,
                              const real *__restrict__ f, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 4 || y < 4 || x >= W - 4 || y >= H - 4)
    return;
  real s = 0;
  for (int dy = 0; dy < K; ++dy) {
    const real *row = in + (y + Lo + dy) * W + x + Lo;
    for (int dx = 0; dx < K; ++dx)
      s += f[dy * K + dx] * row[dx];
  }
  out[y * W + x] = s;
}

static void launchStencil(const real *In, real *Out, const real *Filter, int W,
                          int H) {
  const dim3 Block(32, 8);
  stencil2d64pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, Filter, W,
                                                             H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d64pt");
  const std::vector<real> F = stencil::randomWeights<real>(A, K * K);
  harness::DeviceArray<real> DF(F);
  return stencil::run2d(
      A, stencil::box2d(Lo, Lo + K - 1, F),
      [&](const real *In, real *Out, int W, int H) {
        launchStencil(In, Out, DF.data(), W, H);
      },
      stencil::margins(4, 4));
}
