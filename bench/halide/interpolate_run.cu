//===- interpolate_run.cu - Runs the Halide peer of samples/fuse/interpolate.cu -===//
//
// Same command line, input (RGBA, alpha 0 or 1), reference, tolerance and
// RESULT line as samples/fuse/interpolate.cu; the pipeline is
// bench/halide/interpolate_generator.cpp, AOT-compiled (build.sh).
//
//   ./interpolate [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 2560 x 1536
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "interpolate.h"

namespace {

// From samples/fuse/interpolate.cu, unchanged: level sizes and the float64
// reference.

constexpr int kLevels = 10;

struct Levels {
  int W[kLevels], H[kLevels];
};

Levels levelSizes(int W, int H) {
  Levels L;
  L.W[0] = W, L.H[0] = H;
  for (int I = 1; I < kLevels; ++I)
    L.W[I] = image::halve(L.W[I - 1]), L.H[I] = image::halve(L.H[I - 1]);
  return L;
}

using image::forEachRow;
using image::RefImage;

RefImage downXRef(const RefImage &In, int OutW) {
  RefImage Out(OutW, In.H, In.C);
  forEachRow(In.C, In.H, [&](int C, int Y) {
    for (int X = 0; X < OutW; ++X) {
      auto P = [&](int Col) {
        return In.at(C, Y, image::clamp(Col, 0, In.W - 1));
      };
      Out.at(C, Y, X) = (P(2 * X - 1) + 2 * P(2 * X) + P(2 * X + 1)) / 4;
    }
  });
  return Out;
}

RefImage downYRef(const RefImage &In, int OutH) {
  RefImage Out(In.W, OutH, In.C);
  forEachRow(In.C, OutH, [&](int C, int Y) {
    for (int X = 0; X < In.W; ++X) {
      auto P = [&](int Row) {
        return In.at(C, image::clamp(Row, 0, In.H - 1), X);
      };
      Out.at(C, Y, X) = (P(2 * Y - 1) + 2 * P(2 * Y) + P(2 * Y + 1)) / 4;
    }
  });
  return Out;
}

RefImage upXRef(const RefImage &In, int OutW) {
  RefImage Out(OutW, In.H, In.C);
  forEachRow(In.C, In.H, [&](int C, int Y) {
    for (int X = 0; X < OutW; ++X)
      Out.at(C, Y, X) = (In.at(C, Y, image::clamp(X / 2, 0, In.W - 1)) +
                         In.at(C, Y, image::clamp((X + 1) / 2, 0, In.W - 1))) /
                        2;
  });
  return Out;
}

RefImage upYRef(const RefImage &In, int OutH) {
  RefImage Out(In.W, OutH, In.C);
  forEachRow(In.C, OutH, [&](int C, int Y) {
    const int Y0 = image::clamp(Y / 2, 0, In.H - 1);
    const int Y1 = image::clamp((Y + 1) / 2, 0, In.H - 1);
    for (int X = 0; X < In.W; ++X)
      Out.at(C, Y, X) = (In.at(C, Y0, X) + In.at(C, Y1, X)) / 2;
  });
  return Out;
}

std::vector<double> referenceInterpolate(const std::vector<float> &In, int W,
                                         int H) {
  RefImage Premultiplied(W, H, 4);
  forEachRow(4, H, [&](int C, int Y) {
    for (int X = 0; X < W; ++X) {
      const double Alpha = In[(size_t(3) * H + Y) * W + X];
      const double V = In[(size_t(C) * H + Y) * W + X];
      Premultiplied.at(C, Y, X) = C < 3 ? V * Alpha : Alpha;
    }
  });
  const Levels L = levelSizes(W, H);
  std::vector<RefImage> Down{Premultiplied};
  for (int I = 1; I < kLevels; ++I)
    Down.push_back(downYRef(downXRef(Down.back(), L.W[I]), L.H[I]));
  RefImage Interp = Down.back();
  for (int I = kLevels - 2; I >= 0; --I) {
    RefImage Up = upYRef(upXRef(Interp, L.W[I]), L.H[I]);
    const RefImage &Level = Down[I];
    forEachRow(4, L.H[I], [&](int C, int Y) {
      for (int X = 0; X < L.W[I]; ++X)
        Up.at(C, Y, X) =
            Level.at(C, Y, X) + (1 - Level.at(3, Y, X)) * Up.at(C, Y, X);
    });
    Interp = std::move(Up);
  }
  std::vector<double> Out(size_t(W) * H * 3);
  forEachRow(3, H, [&](int C, int Y) {
    for (int X = 0; X < W; ++X)
      Out[(size_t(C) * H + Y) * W + X] =
          Interp.at(C, Y, X) / Interp.at(3, Y, X);
  });
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "interpolate", {2560, 1536});
  const image::Size S = image::size(A, 4);
  harness::Rng R(A.Seed);
  std::vector<float> In = image::randomImage(R, S);
  float *Alpha = In.data() + 3 * S.pixels();
  for (long long I = 0; I < S.pixels(); ++I)
    Alpha[I] = (Alpha[I] < 0.25f || I == 0) ? 1.f : 0.f;
  const std::vector<double> Ref = referenceInterpolate(In, S.W, S.H);
  const double Tolerance = 1e-5; // The sample's.
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H, 4));
  hlbench::Image HOut(size_t(S.pixels()) * 3, hlbench::planar(S.W, S.H, 3));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] {
        hlbench::check(interpolate(HIn.raw(), HOut.raw()), "interpolate");
      },
      [&] {
        return harness::compareFloat(HOut.download(), Ref,
                                     harness::Everywhere(), Tolerance);
      });
  const double BytesMoved = double(S.pixels()) * sizeof(float) * (4 + 3);
  return harness::report(A, Res, BytesMoved);
}
