//===- 2d5pt.cu - A plain 2D 5-point stencil, for the systolic pass -------===//
//
// One thread per output point, every neighbour read from global memory: the
// baseline SSAM (DESIGN.md section 1) turns into a register-cached systolic
// array. Boundary points are left untouched.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/systolic/2d5pt.cu -lcudadevrt -o 2d5pt
//   ./2d5pt [W [H]] [--seed=N] [--reps=N]          # default 8192 x 8192
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <climits>

#pragma cuda_rewrite systolic
__global__ void stencil2d5pt(const float *__restrict__ in,
                             float *__restrict__ out, int W, int H, float c0,
                             float c1, float c2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = c0 * in[y * W + x] +
                   c1 * (in[y * W + x - 1] + in[y * W + x + 1]) +
                   c2 * (in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

static void launchStencil(const float *In, float *Out, int W, int H, float C0,
                          float C1, float C2) {
  dim3 Block(32, 8);
  dim3 Grid((W + Block.x - 1) / Block.x, (H + Block.y - 1) / Block.y);
  stencil2d5pt<<<Grid, Block>>>(In, Out, W, H, C0, C1, C2);
}

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "2d5pt", {8192, 8192});
  // The kernel indexes with int, as plain stencil code does.
  if (A.size(0) < 3 || A.size(1) < 3 || A.size(0) * A.size(1) > INT_MAX)
    harness::fail("the grid must be at least 3x3 and below 2^31 points");
  const int W = int(A.size(0)), H = int(A.size(1));
  const size_t N = size_t(W) * H;
  // Different weights in x and y, so that a transposed stencil fails; they
  // sum to 1, so that values stay in the input's range.
  const float C0 = 0.5f, C1 = 0.15f, C2 = 0.1f;

  harness::Rng R(A.Seed);
  std::vector<float> In(N);
  R.fill(In, 0.0f, 1.0f);

  auto Interior = [&](size_t I) {
    size_t X = I % W, Y = I / W;
    return X > 0 && Y > 0 && X < size_t(W) - 1 && Y < size_t(H) - 1;
  };
  std::vector<double> Ref(N, 0.0);
  for (size_t I = 0; I < N; ++I)
    if (Interior(I))
      Ref[I] = double(C0) * In[I] +
               double(C1) * (double(In[I - 1]) + In[I + 1]) +
               double(C2) * (double(In[I - W]) + In[I + W]);

  harness::DeviceArray<float> DIn(In), DOut(N);
  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); },
      [&] { launchStencil(DIn.data(), DOut.data(), W, H, C0, C1, C2); },
      [&] { return harness::compareFloat(DOut.download(), Ref, Interior); });
  // Each input read once, each interior point written once.
  double Bytes = sizeof(float) * (double(N) + double(W - 2) * (H - 2));
  return harness::report(A, Res, Bytes);
}
