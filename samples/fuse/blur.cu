//===- blur.cu - A two-stage box blur, one kernel per stage, for fuse -----===//
//
// The classic Halide and PolyMage blur (PolyMage-GPU, Figure 2) on a
// grayscale image, in two stages:
//
//   blurx(y, x) = (in(y, x - 1) + in(y, x) + in(y, x + 1)) / 3
//   blury(y, x) = (blurx(y - 1, x) + blurx(y, x) + blurx(y + 1, x)) / 3
//
// with clamped borders: a read past an edge takes the edge pixel, so every
// output pixel is written. Written the ordinary way: one kernel per stage,
// one thread per pixel, and blurx stored whole in a global buffer that
// blury reads back. That round trip through DRAM is what the fuse pass
// removes by computing blurx in overlapped tiles next to blury.
//
//   nvcc -O3 -arch=sm_90 -I samples/common -I runtime/include
//        samples/fuse/blur.cu -o blur
//   ./blur [W [H]] [--seed=N] [--reps=N]          # default 6400 x 4800
//
//===----------------------------------------------------------------------===//

#include "image.cuh"

/// Stage 1: the mean of a pixel and its left and right neighbours.
__global__ void blurX(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[y * W + image::clamp(x - 1, 0, W - 1)] + in[y * W + x] +
                    in[y * W + image::clamp(x + 1, 0, W - 1)]) /
                   3.f;
}

/// Stage 2: the mean of a blurx pixel and those above and below it.
__global__ void blurY(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[image::clamp(y - 1, 0, H - 1) * W + x] + in[y * W + x] +
                    in[image::clamp(y + 1, 0, H - 1) * W + x]) /
                   3.f;
}

/// Blurs the W x H image \p In into \p Out. The first stage goes to a
/// buffer allocated and freed here, so nothing reads it after the block.
static void runPipeline(const float *In, float *Out, int W, int H) {
  const dim3 Block(32, 8);
  const dim3 Grid = image::grid(Block, W, H);
  float *BlurX = nullptr;
  HARNESS_CHECK(cudaMallocAsync(&BlurX, size_t(W) * H * sizeof(float), 0));
#pragma cuda_rewrite fuse
  {
    blurX<<<Grid, Block>>>(In, BlurX, W, H);
    blurY<<<Grid, Block>>>(BlurX, Out, W, H);
  }
  HARNESS_CHECK(cudaFreeAsync(BlurX, 0));
}

namespace {

/// The same two stages in float64, with the same border rule.
std::vector<double> referenceBlur(const std::vector<float> &Input,
                                  const image::Size &S) {
  const int W = S.W, H = S.H;
  const std::vector<double> In = image::toDouble(Input);
  std::vector<double> BlurX(In.size()), Out(In.size());
  auto At = [W](int Y, int X) { return size_t(Y) * W + X; };
  image::forRows(H, [&](int Y) {
    for (int X = 0; X < W; ++X)
      BlurX[At(Y, X)] =
          (In[At(Y, image::clamp(X - 1, 0, W - 1))] + In[At(Y, X)] +
           In[At(Y, image::clamp(X + 1, 0, W - 1))]) /
          3;
  });
  image::forRows(H, [&](int Y) {
    for (int X = 0; X < W; ++X)
      Out[At(Y, X)] =
          (BlurX[At(image::clamp(Y - 1, 0, H - 1), X)] + BlurX[At(Y, X)] +
           BlurX[At(image::clamp(Y + 1, 0, H - 1), X)]) /
          3;
  });
  return Out;
}

/// The output check's tolerance. Every value is a mean of inputs in [0, 1):
/// no cancellation. Each stage rounds twice in its sum and once in the
/// division, so the float result is within about 6 * 2^-24 = 3.6e-7 of the
/// reference, relatively; a rewrite that multiplies by 1/3 or sums in
/// another order adds a few more roundings. 1e-5 covers that many times
/// over, while a wrong tap or border is off by a sizeable fraction of a
/// pixel's value.
constexpr double kTolerance = 1e-5;

} // namespace

// The Halide driver includes this file for its reference, without main().
#ifndef FUSE_SAMPLE_NO_MAIN
int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "blur", {6400, 4800});
  const image::Size S = image::size(A);
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceBlur(In, S);
  image::keepPoolMemory();
  harness::DeviceArray<float> DIn(In), DOut(In.size());
  harness::Result Res = image::measureAgainst(
      A, DOut, Ref, kTolerance, [&] { DOut.poison(); },
      [&] { runPipeline(DIn.data(), DOut.data(), S.W, S.H); });
  return harness::report(A, Res, 2.0 * double(DIn.bytes()));
}
#endif
