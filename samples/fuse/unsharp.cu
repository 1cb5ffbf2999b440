//===- unsharp.cu - Unsharp Mask, one kernel per stage, for fuse ----------===//
//
// Unsharp Mask as in PolyMage (PolyMage-GPU, Table 2: 4 stages, 4256 x 2832
// x 3): a colour image is sharpened by adding back, amplified, what a
// Gaussian blur takes away from it, except where the two nearly agree
// (flat regions), which keep the input so that noise is not amplified:
//
//   blurx   = the 5-tap binomial filter [1 4 6 4 1] / 16 along x
//   blury   = the same filter along y, applied to blurx
//   sharpen = (1 + weight) * in - weight * blury
//   mask    = |in - blury| < threshold ? in : sharpen
//
// with weight 3 and threshold 0.001, PolyMage's values. Borders are clamped
// (a read past an edge takes the edge pixel, Halide's repeat_edge), so every
// output pixel is written. Each channel is filtered on its own: the channel
// is the grid's third dimension. Written the ordinary way: one kernel per
// stage, one thread per output element, every intermediate stored whole in
// a global buffer and read back by the next stages. The fuse pass computes
// the four stages together in overlapped tiles instead.
//
//   nvcc -O3 -arch=sm_90 -I samples/common -I runtime/include
//        samples/fuse/unsharp.cu -o unsharp
//   ./unsharp [W [H]] [--seed=N] [--reps=N]       # default 4256 x 2832 x 3
//
//===----------------------------------------------------------------------===//

#include "image.cuh"

#include <cmath>

/// The binomial approximation of a Gaussian: multiples of 1/16, exact in
/// float.
__constant__ float kBlurWeights[5] = {1.f / 16, 4.f / 16, 6.f / 16, 4.f / 16,
                                      1.f / 16};

/// Stage 1: the filter along x.
__global__ void blurX(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int row = (c * H + y) * W;
  out[row + x] = kBlurWeights[0] * in[row + image::clamp(x - 2, 0, W - 1)] +
                 kBlurWeights[1] * in[row + image::clamp(x - 1, 0, W - 1)] +
                 kBlurWeights[2] * in[row + x] +
                 kBlurWeights[3] * in[row + image::clamp(x + 1, 0, W - 1)] +
                 kBlurWeights[4] * in[row + image::clamp(x + 2, 0, W - 1)];
}

/// Stage 2: the filter along y.
__global__ void blurY(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int plane = c * H;
  out[(plane + y) * W + x] =
      kBlurWeights[0] * in[(plane + image::clamp(y - 2, 0, H - 1)) * W + x] +
      kBlurWeights[1] * in[(plane + image::clamp(y - 1, 0, H - 1)) * W + x] +
      kBlurWeights[2] * in[(plane + y) * W + x] +
      kBlurWeights[3] * in[(plane + image::clamp(y + 1, 0, H - 1)) * W + x] +
      kBlurWeights[4] * in[(plane + image::clamp(y + 2, 0, H - 1)) * W + x];
}

/// Stage 3: the input with its difference from the blur amplified.
__global__ void sharpen(const float *__restrict__ in,
                        const float *__restrict__ blury,
                        float *__restrict__ out, int W, int H, float weight) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = (c * H + y) * W + x;
  out[i] = (1.f + weight) * in[i] - weight * blury[i];
}

/// Stage 4: the input where the blur hardly changes it, else the sharpened
/// value.
__global__ void mask(const float *__restrict__ in,
                     const float *__restrict__ blury,
                     const float *__restrict__ sharp, float *__restrict__ out,
                     int W, int H, float threshold) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = (c * H + y) * W + x;
  out[i] = fabsf(in[i] - blury[i]) < threshold ? in[i] : sharp[i];
}

/// The sharpening parameters (PolyMage's).
constexpr float kWeight = 3.f;
constexpr float kThreshold = 0.001f;

/// Sharpens the W x H x C image \p In into \p Out. The three intermediate
/// stages go to buffers allocated and freed here, so nothing reads them
/// after the block.
static void runPipeline(const float *In, float *Out, int W, int H, int C) {
  const dim3 Block(32, 8);
  dim3 Grid = image::grid(Block, W, H);
  Grid.z = C;
  const size_t Bytes = size_t(W) * H * C * sizeof(float);
  float *BlurX = nullptr, *BlurY = nullptr, *Sharp = nullptr;
  HARNESS_CHECK(cudaMallocAsync(&BlurX, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&BlurY, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Sharp, Bytes, 0));
#pragma cuda_rewrite fuse
  {
    blurX<<<Grid, Block>>>(In, BlurX, W, H);
    blurY<<<Grid, Block>>>(BlurX, BlurY, W, H);
    sharpen<<<Grid, Block>>>(In, BlurY, Sharp, W, H, kWeight);
    mask<<<Grid, Block>>>(In, BlurY, Sharp, Out, W, H, kThreshold);
  }
  HARNESS_CHECK(cudaFreeAsync(BlurX, 0));
  HARNESS_CHECK(cudaFreeAsync(BlurY, 0));
  HARNESS_CHECK(cudaFreeAsync(Sharp, 0));
}

namespace {

/// The output check's tolerance. The blurs are convex combinations of inputs
/// in [0, 1), so blury's float error is at most about 10 * 2^-24 = 6e-7 (5
/// roundings a pass, each relative to a sum below 1), whatever the order of
/// the sums. sharpen multiplies it by the weight, 3, and adds its own two
/// roundings, below 2.5e-6 in all. Outputs reach about 3.1 in magnitude, so
/// compareFloat's floor is about 0.03 and the relative error stays below
/// 8e-5 (a float evaluation of these kernels on the host erred by at most
/// 1.9e-5 against the floor). 2e-4 leaves room for that bound, while a wrong
/// tap, border or mask is off by far more: a mask decided the other way is
/// off by 3 * 0.001, 0.1 in this measure.
constexpr double kTolerance = 2e-4;

/// An output element where |in - blury| is so close to the threshold that
/// float rounding may take the other side of the mask than float64 does:
/// either value is right there.
struct Tie {
  size_t Index;
  double Kept, Sharpened;
};

/// Within this of the threshold, |in - blury| is a tie. Its float error is
/// at most about 11 * 2^-24 = 6.6e-7 (blury's, see kTolerance, and the
/// subtraction's):
/// the band is 15 times that, wide enough for a rewrite that sums in
/// another order, and holds about 5e-5 of the elements (a float evaluation
/// on the host decided 1 or 2 of these 36M elements the other way).
constexpr double kTieBand = 1e-5;

/// The same four stages in float64, with the same border rule; \p Ties
/// receives the elements that may go either way.
std::vector<double> referenceUnsharp(const std::vector<float> &Input,
                                     const image::Size &S,
                                     std::vector<Tie> &Ties) {
  const int W = S.W, H = S.H;
  // Written down apart from the kernels' table, so that a typo in one fails.
  const double Weights[5] = {1 / 16., 4 / 16., 6 / 16., 4 / 16., 1 / 16.};
  const double Weight = kWeight, Threshold = kThreshold;
  const std::vector<double> In = image::toDouble(Input);
  std::vector<double> BlurX(In.size()), BlurY(In.size()), Sharp(In.size()),
      Out(In.size());
  auto At = [&](int C, int Y, int X) { return (size_t(C) * H + Y) * W + X; };
  // forRows runs over the rows of all channels at once: row R is channel
  // R / H, row R % H.
  const int Rows = S.C * H;
  image::forRows(Rows, [&](int R) {
    const int C = R / H, Y = R % H;
    for (int X = 0; X < W; ++X) {
      double Sum = 0;
      for (int K = 0; K < 5; ++K)
        Sum += Weights[K] * In[At(C, Y, image::clamp(X + K - 2, 0, W - 1))];
      BlurX[At(C, Y, X)] = Sum;
    }
  });
  std::vector<std::vector<Tie>> RowTies(static_cast<size_t>(Rows));
  image::forRows(Rows, [&](int R) {
    const int C = R / H, Y = R % H;
    for (int X = 0; X < W; ++X) {
      double Sum = 0;
      for (int K = 0; K < 5; ++K)
        Sum += Weights[K] * BlurX[At(C, image::clamp(Y + K - 2, 0, H - 1), X)];
      BlurY[At(C, Y, X)] = Sum;
    }
    for (int X = 0; X < W; ++X) {
      const size_t I = At(C, Y, X);
      Sharp[I] = (1 + Weight) * In[I] - Weight * BlurY[I];
    }
    for (int X = 0; X < W; ++X) {
      const size_t I = At(C, Y, X);
      const double Difference = std::fabs(In[I] - BlurY[I]);
      Out[I] = Difference < Threshold ? In[I] : Sharp[I];
      if (std::fabs(Difference - Threshold) < kTieBand)
        RowTies[size_t(R)].push_back({I, In[I], Sharp[I]});
    }
  });
  for (const std::vector<Tie> &Row : RowTies)
    Ties.insert(Ties.end(), Row.begin(), Row.end());
  return Out;
}

/// Sets the reference at each tie to the one of its two values that \p Got
/// is closer to.
void resolveTies(const std::vector<float> &Got, const std::vector<Tie> &Ties,
                 std::vector<double> &Ref) {
  for (const Tie &T : Ties) {
    const double G = Got[T.Index];
    Ref[T.Index] = std::fabs(G - T.Kept) <= std::fabs(G - T.Sharpened)
                       ? T.Kept
                       : T.Sharpened;
  }
}

/// Checks the output \p Got against \p Ref within kTolerance, the ties
/// resolved first (resolveTies).
harness::Check compareWithTies(const std::vector<float> &Got,
                               const std::vector<Tie> &Ties,
                               std::vector<double> &Ref) {
  resolveTies(Got, Ties, Ref);
  return harness::compareFloat(Got, Ref, harness::Everywhere(), kTolerance);
}

} // namespace

// The Halide driver includes this file for its reference, without main().
#ifndef FUSE_SAMPLE_NO_MAIN
int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "unsharp", {4256, 2832});
  const image::Size S = image::size(A, 3);
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  std::vector<Tie> Ties;
  std::vector<double> Ref = referenceUnsharp(In, S, Ties);
  image::keepPoolMemory();
  harness::DeviceArray<float> DIn(In), DOut(In.size());
  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); },
      [&] { runPipeline(DIn.data(), DOut.data(), S.W, S.H, S.C); },
      [&] { return compareWithTies(DOut.download(), Ties, Ref); });
  return harness::report(A, Res, 2.0 * double(DIn.bytes()));
}
#endif
