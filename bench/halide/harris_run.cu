//===- harris_run.cu - Runs the Halide peer of samples/fuse/harris.cu -----===//
//
// Same command line, input, reference, tolerance, checked domain (the
// interior; the border must keep its poison) and RESULT line as
// samples/fuse/harris.cu; the pipeline is bench/halide/harris_generator.cpp,
// AOT-compiled (build.sh), given the interior window of the output image.
//
//   ./harris [W [H]] [--seed=N] [--reps=N] [--warmup=N]   # 4256 x 2832
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "harris.h"

namespace {

constexpr float kSensitivity = 0.04f;

// From samples/fuse/harris.cu, unchanged.

struct Interior {
  int W, H;
  bool operator()(size_t I) const {
    const int X = int(I % size_t(W)), Y = int(I / size_t(W));
    return X >= 2 && Y >= 2 && X < W - 2 && Y < H - 2;
  }
};

std::vector<double> referenceHarris(const std::vector<float> &Input,
                                    const image::Size &S) {
  const int W = S.W, H = S.H;
  const std::vector<double> In = image::toDouble(Input);
  const size_t N = In.size();
  std::vector<double> Ix(N), Iy(N), Ixx(N), Iyy(N), Ixy(N), Sxx(N), Syy(N),
      Sxy(N), Det(N), Trace(N), Out(N);
  auto At = [W](int Y, int X) { return size_t(Y) * W + X; };
  const double SobelX[3][3] = {{-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1}};
  const double SobelY[3][3] = {{-1, -2, -1}, {0, 0, 0}, {1, 2, 1}};
  image::forRows(H, [&](int Y) {
    if (Y < 1 || Y >= H - 1)
      return;
    for (int X = 1; X < W - 1; ++X) {
      double GX = 0, GY = 0;
      for (int DY = -1; DY <= 1; ++DY)
        for (int DX = -1; DX <= 1; ++DX) {
          GX += SobelX[DY + 1][DX + 1] * In[At(Y + DY, X + DX)];
          GY += SobelY[DY + 1][DX + 1] * In[At(Y + DY, X + DX)];
        }
      const size_t I = At(Y, X);
      Ix[I] = GX / 12;
      Iy[I] = GY / 12;
      Ixx[I] = Ix[I] * Ix[I];
      Iyy[I] = Iy[I] * Iy[I];
      Ixy[I] = Ix[I] * Iy[I];
    }
  });
  const double K = kSensitivity;
  image::forRows(H, [&](int Y) {
    if (Y < 2 || Y >= H - 2)
      return;
    for (int X = 2; X < W - 2; ++X) {
      const size_t I = At(Y, X);
      for (int DY = -1; DY <= 1; ++DY)
        for (int DX = -1; DX <= 1; ++DX) {
          Sxx[I] += Ixx[At(Y + DY, X + DX)];
          Syy[I] += Iyy[At(Y + DY, X + DX)];
          Sxy[I] += Ixy[At(Y + DY, X + DX)];
        }
      Det[I] = Sxx[I] * Syy[I] - Sxy[I] * Sxy[I];
      Trace[I] = Sxx[I] + Syy[I];
      Out[I] = Det[I] - K * Trace[I] * Trace[I];
    }
  });
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "harris", {4256, 2832});
  const image::Size S = image::size(A);
  if (S.W < 5 || S.H < 5)
    harness::fail("need W, H >= 5: the response skips two pixels per side");
  if (S.W < 36 || S.H < 36)
    harness::fail("the Halide harris needs W, H >= 36 (one 32 x 32 tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceHarris(In, S);
  const double Tolerance = 2e-4; // The sample's.
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H));
  // The whole W x H output image, seen by Halide as its interior window.
  hlbench::Image HOut(In.size(), {{2, S.W - 4, 1}, {2, S.H - 4, S.W}},
                      size_t(2) * S.W + 2);
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] { hlbench::check(harris(HIn.raw(), HOut.raw()), "harris"); },
      [&] {
        return harness::compareFloat(HOut.download(), Ref, Interior{S.W, S.H},
                                     Tolerance);
      });
  const double Written = double(S.W - 4) * double(S.H - 4);
  return harness::report(A, Res,
                         double(HIn.bytes()) + Written * sizeof(float));
}
