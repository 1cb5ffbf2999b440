//===- bilateral_run.cu - Runs the Halide peer of samples/fuse/bilateral.cu -===//
//
// Same command line, input, reference, tolerance and RESULT line as
// samples/fuse/bilateral.cu; the pipeline is
// bench/halide/bilateral_generator.cpp, AOT-compiled (build.sh).
//
//   ./bilateral [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 2560 x 1536
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "bilateral.h"

#include <climits>
#include <cmath>

// From samples/fuse/bilateral.cu, unchanged: constants, the two decisions
// that pick a cell, and the float64 reference.

namespace {

constexpr int kSigmaS = 8;
constexpr float kSigmaR = 0.1f;
constexpr float kInvSigmaR = 1.f / kSigmaR;
constexpr int kApron = 2;
constexpr int kLevels = 12;
constexpr int kGridZ = kLevels + 2 * kApron;

int gridCells(int N) { return (N - 1) / kSigmaS + 2 + 2 * kApron; }

} // namespace

__host__ __device__ inline int histogramLevel(float V) {
  return int(fmaf(V, kInvSigmaR, 0.5f));
}

template <typename T> __host__ __device__ inline T lerp(T A, T B, T Weight) {
  return A * (T(1) - Weight) + B * Weight;
}

namespace {

std::vector<double> referenceBilateralGrid(const std::vector<float> &In, int W,
                                           int H) {
  const int GW = gridCells(W), GH = gridCells(H);
  std::vector<double> Clamped(In.size());
  for (size_t I = 0; I < In.size(); ++I)
    Clamped[I] = std::min(std::max(double(In[I]), 0.0), 1.0);

  auto Cell = [&](int C, int Z, int Y, int X) {
    return ((size_t(C) * kGridZ + Z) * GH + Y) * GW + X;
  };
  const size_t GridSize = size_t(2) * kGridZ * GH * GW;
  const int GridRows = kGridZ * GH;
  std::vector<double> Grid(GridSize);
  image::forRows(GridRows, [&](int R) {
    const int Z = R / GH, Y = R % GH;
    for (int X = 0; X < GW; ++X) {
      double Sum = 0, Count = 0;
      for (int J = 0; J < kSigmaS; ++J)
        for (int I = 0; I < kSigmaS; ++I) {
          const int PX =
              image::clamp((X - kApron) * kSigmaS + I - kSigmaS / 2, 0, W - 1);
          const int PY =
              image::clamp((Y - kApron) * kSigmaS + J - kSigmaS / 2, 0, H - 1);
          const double V = Clamped[size_t(PY) * W + PX];
          if (histogramLevel(float(V)) + kApron == Z)
            Sum += V, Count += 1;
        }
      Grid[Cell(0, Z, Y, X)] = Sum;
      Grid[Cell(1, Z, Y, X)] = Count;
    }
  });

  const double Taps[5] = {1, 4, 6, 4, 1};
  auto Blur = [&](const std::vector<double> &Src, int DX, int DY, int DZ) {
    std::vector<double> Dst(GridSize);
    image::forRows(GridRows, [&](int R) {
      const int Z = R / GH, Y = R % GH;
      for (int C = 0; C < 2; ++C)
        for (int X = 0; X < GW; ++X) {
          double Sum = 0;
          for (int K = -2; K <= 2; ++K)
            Sum += Taps[K + 2] *
                   Src[Cell(C, image::clamp(Z + K * DZ, 0, kGridZ - 1),
                            image::clamp(Y + K * DY, 0, GH - 1),
                            image::clamp(X + K * DX, 0, GW - 1))];
          Dst[Cell(C, Z, Y, X)] = Sum;
        }
    });
    return Dst;
  };
  const std::vector<double> BlurredZ = Blur(Grid, 0, 0, 1);
  const std::vector<double> BlurredX = Blur(BlurredZ, 1, 0, 0);
  const std::vector<double> BlurredY = Blur(BlurredX, 0, 1, 0);

  std::vector<double> Out(In.size());
  image::forRows(H, [&](int Y) {
    for (int X = 0; X < W; ++X) {
      const double V = Clamped[size_t(Y) * W + X];
      const int ZI = int(float(V) * kInvSigmaR);
      const double ZF = fmaf(float(V), kInvSigmaR, -float(ZI));
      const double XF = double(X % kSigmaS) / kSigmaS;
      const double YF = double(Y % kSigmaS) / kSigmaS;
      const int GX = X / kSigmaS + kApron, GY = Y / kSigmaS + kApron;
      const int GZ = ZI + kApron;
      double Sliced[2];
      for (int C = 0; C < 2; ++C) {
        auto At = [&](int DX, int DY, int DZ) {
          return BlurredY[Cell(C, GZ + DZ, GY + DY, GX + DX)];
        };
        Sliced[C] = lerp(lerp(lerp(At(0, 0, 0), At(1, 0, 0), XF),
                              lerp(At(0, 1, 0), At(1, 1, 0), XF), YF),
                         lerp(lerp(At(0, 0, 1), At(1, 0, 1), XF),
                              lerp(At(0, 1, 1), At(1, 1, 1), XF), YF),
                         ZF);
      }
      Out[size_t(Y) * W + X] = Sliced[0] / Sliced[1];
    }
  });
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "bilateral", {2560, 1536});
  const image::Size Planes = image::size(A, 2);
  const image::Size S{Planes.W, Planes.H, 1};
  const int GW = gridCells(S.W), GH = gridCells(S.H);
  const long long GridSize = 2LL * kGridZ * GH * GW;
  if (GridSize > INT_MAX)
    harness::fail(
        "the grid needs 2 * 16 * ((W - 1) / 8 + 6) * ((H - 1) / 8 + 6) < 2^31");
  if (S.W < 32 || S.H < 8)
    harness::fail("the Halide bilateral needs W >= 32, H >= 8 (one tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceBilateralGrid(In, S.W, S.H);
  const double Tolerance = 1e-5; // The sample's.
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H));
  hlbench::Image HOut(In.size(), hlbench::planar(S.W, S.H));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] { hlbench::check(bilateral(HIn.raw(), HOut.raw()), "bilateral"); },
      [&] {
        return harness::compareFloat(HOut.download(), Ref,
                                     harness::Everywhere(), Tolerance);
      });
  return harness::report(A, Res, 2.0 * double(HIn.bytes()));
}
