//===- 3d125pt.cu - 3D 125-point box stencil (5x5x5), systolic pass -------===//
//
// One thread per output point of a W x H x D grid (x fastest). Style: three
// nested tap loops with constexpr bounds, a pointer to each row of the box
// set in the middle loop, weights from a filter array passed as a pointer
// argument. Points within 2 of a face are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/3d125pt.cu -lcudadevrt -o 3d125pt
//   ./3d125pt [W [H [D]]] [--seed=N] [--reps=N]          # default 512^3
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

constexpr int R = 2;
constexpr int Side = 2 * R + 1;

// f[((dz + R) * Side + dy + R) * Side + dx + R] weighs (x + dx, y + dy,
// z + dz).
#pragma cuda_rewrite systolic
__global__ void stencil3d125pt(const real *__restrict__ in,
                               real *__restrict__ out,
                               const real *__restrict__ f, int W, int H,
                               int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < R || y < R || z < R || x >= W - R || y >= H - R || z >= D - R)
    return;
  real sum = 0;
  for (int dz = -R; dz <= R; ++dz)
    for (int dy = -R; dy <= R; ++dy) {
      const real *row = in + ((z + dz) * H + y + dy) * W + x;
      for (int dx = -R; dx <= R; ++dx)
        sum += f[((dz + R) * Side + dy + R) * Side + dx + R] * row[dx];
    }
  out[(z * H + y) * W + x] = sum;
}

static void launchStencil(const real *In, real *Out, const real *Filter, int W,
                          int H, int D) {
  const dim3 Block(32, 4, 4);
  stencil3d125pt<<<stencil::launchGrid(Block, W, H, D), Block>>>(
      In, Out, Filter, W, H, D);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs3d(argc, argv, "3d125pt");
  const std::vector<real> F =
      stencil::randomWeights<real>(A, Side * Side * Side);
  harness::DeviceArray<real> DF(F);
  return stencil::run3d(A, stencil::box3d(-R, R, F),
                        [&](const real *In, real *Out, int W, int H, int D) {
                          launchStencil(In, Out, DF.data(), W, H, D);
                        });
}
