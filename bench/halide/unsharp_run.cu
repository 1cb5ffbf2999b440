//===- unsharp_run.cu - Runs the Halide peer of samples/fuse/unsharp.cu ---===//
//
// Same command line, input, reference (with its ties), tolerance and RESULT
// line as samples/fuse/unsharp.cu; the pipeline is
// bench/halide/unsharp_generator.cpp, AOT-compiled (build.sh).
//
//   ./unsharp [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 4256 x 2832 x 3
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "unsharp.h"

#include <cmath>

namespace {

constexpr float kWeight = 3.f;
constexpr float kThreshold = 0.001f;

// From samples/fuse/unsharp.cu, unchanged.

struct Tie {
  size_t Index;
  double Kept, Sharpened;
};

constexpr double kTieBand = 1e-5;

std::vector<double> referenceUnsharp(const std::vector<float> &Input,
                                     const image::Size &S,
                                     std::vector<Tie> &Ties) {
  const int W = S.W, H = S.H;
  const double Weights[5] = {1 / 16., 4 / 16., 6 / 16., 4 / 16., 1 / 16.};
  const double Weight = kWeight, Threshold = kThreshold;
  const std::vector<double> In = image::toDouble(Input);
  std::vector<double> BlurX(In.size()), BlurY(In.size()), Sharp(In.size()),
      Out(In.size());
  auto At = [&](int C, int Y, int X) { return (size_t(C) * H + Y) * W + X; };
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

void resolveTies(const std::vector<float> &Got, const std::vector<Tie> &Ties,
                 std::vector<double> &Ref) {
  for (const Tie &T : Ties) {
    const double G = Got[T.Index];
    Ref[T.Index] = std::fabs(G - T.Kept) <= std::fabs(G - T.Sharpened)
                       ? T.Kept
                       : T.Sharpened;
  }
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "unsharp", {4256, 2832});
  const image::Size S = image::size(A, 3);
  if (S.W < 128 || S.H < 32)
    harness::fail("the Halide unsharp needs W >= 128, H >= 32 (one tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  std::vector<Tie> Ties;
  std::vector<double> Ref = referenceUnsharp(In, S, Ties);
  const double Tolerance = 2e-4; // The sample's.
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H, S.C));
  hlbench::Image HOut(In.size(), hlbench::planar(S.W, S.H, S.C));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] { hlbench::check(unsharp(HIn.raw(), HOut.raw()), "unsharp"); },
      [&] {
        std::vector<float> Got = HOut.download();
        resolveTies(Got, Ties, Ref);
        return harness::compareFloat(Got, Ref, harness::Everywhere(),
                                     Tolerance);
      });
  return harness::report(A, Res, 2.0 * double(HIn.bytes()));
}
