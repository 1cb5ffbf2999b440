//===- 3d27pt.cu - 3D 27-point box stencil (3x3x3), systolic pass ---------===//
//
// One thread per output point of a W x H x D grid (x fastest). Style: three
// nested tap loops with constant bounds, flat indices, weights in a
// three-dimensional __constant__ array that the host sets before the runs.
// Points on the faces of the grid are left untouched.
//
// bench-types: float double
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/3d27pt.cu -lcudadevrt -o 3d27pt
//   ./3d27pt [W [H [D]]] [--seed=N] [--reps=N]          # default 512^3
//
//===----------------------------------------------------------------------===//

#include "stencil.cuh"

// c[dz + 1][dy + 1][dx + 1] weighs the point (x + dx, y + dy, z + dz).
__constant__ real c[3][3][3];

#pragma cuda_rewrite systolic
__global__ void stencil3d27pt(const real *__restrict__ in,
                              real *__restrict__ out, int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= W - 1 || y >= H - 1 || z >= D - 1)
    return;
  real sum = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        sum += c[dz + 1][dy + 1][dx + 1] *
               in[((z + dz) * H + (y + dy)) * W + (x + dx)];
  out[(z * H + y) * W + x] = sum;
}

static void launchStencil(const real *In, real *Out, int W, int H, int D) {
  const dim3 Block(32, 4, 4);
  stencil3d27pt<<<stencil::launchGrid(Block, W, H, D), Block>>>(In, Out, W, H,
                                                                D);
}

int main(int argc, char **argv) {
  harness::Args A = stencil::parseArgs3d(argc, argv, "3d27pt");
  const std::vector<real> C = stencil::randomWeights<real>(A, 27);
  HARNESS_CHECK(cudaMemcpyToSymbol(c, C.data(), C.size() * sizeof(real)));
  return stencil::run3d(A, stencil::box3d(-1, 1, C), launchStencil);
}
