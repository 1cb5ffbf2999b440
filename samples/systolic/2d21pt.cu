//===- 2d21pt.cu - 2D 21-point star stencil (radius 5), systolic pass -----===//
//
// One thread per output point. Style: the point's index in a variable, one
// loop over -R..R that reads the row and the column through the point, each
// weighted by its own filter array passed as a pointer argument. The centre
// is read by both sums, so its weight is wx[R] + wy[R]. The store sits inside
// the guard; points within 5 of the edge are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d21pt.cu -lcudadevrt -o 2d21pt
//   ./2d21pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 5;

#pragma cuda_rewrite systolic
__global__ void stencil2d21pt(const real *__restrict__ in,
                              real *__restrict__ out,
                              const real *__restrict__ wx,
                              const real *__restrict__ wy, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= R && y >= R && x < W - R && y < H - R) {
    int i = y * W + x;
    real sum = 0;
    for (int d = -R; d <= R; ++d)
      sum += wx[d + R] * in[i + d] + wy[d + R] * in[i + d * W];
    out[i] = sum;
  }
}

static void launchStencil(const real *In, real *Out, const real *WX,
                          const real *WY, int W, int H) {
  const dim3 Block(32, 8);
  stencil2d21pt<<<stencil::launchGrid(Block, W, H), Block>>>(In, Out, WX, WY, W,
                                                             H);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs2d(argc, argv, "2d21pt");
  // Random weights, the row's (x - R .. x + R) then the column's.
  const std::vector<real> C = stencil::randomWeights<real>(A, 2 * (2 * R + 1));
  const std::vector<real> WX(C.begin(), C.begin() + 2 * R + 1),
      WY(C.begin() + 2 * R + 1, C.end());
  harness::DeviceArray<real> DWX(WX), DWY(WY);
  stencil::TapList Taps;
  for (int D = -R; D <= R; ++D) {
    Taps.push_back({D, 0, 0, WX[D + R]});
    Taps.push_back({0, D, 0, WY[D + R]}); // (0, 0) twice: the weights add.
  }
  return stencil::run2d(A, Taps, [&](const real *In, real *Out, int W, int H) {
    launchStencil(In, Out, DWX.data(), DWY.data(), W, H);
  });
}
