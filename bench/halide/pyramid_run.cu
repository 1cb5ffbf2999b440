//===- pyramid_run.cu - Runs the Halide peer of samples/fuse/pyramid.cu ---===//
//
// Same command line, inputs (A, B, then the mask, from one Rng), reference,
// tolerance and RESULT line as samples/fuse/pyramid.cu; the pipeline is
// bench/halide/pyramid_generator.cpp, AOT-compiled (build.sh).
//
//   ./pyramid [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 3840 x 2160 x 3
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "pyramid.h"

namespace {

// From samples/fuse/pyramid.cu, unchanged: the float64 reference.

constexpr int kLevels = 4;

using image::forEachRow;
using image::RefImage;

RefImage downXRef(const RefImage &In, int OutW) {
  RefImage Out(OutW, In.H, In.C);
  forEachRow(In.C, In.H, [&](int C, int Y) {
    for (int X = 0; X < OutW; ++X) {
      auto P = [&](int Col) {
        return In.at(C, Y, image::clamp(Col, 0, In.W - 1));
      };
      Out.at(C, Y, X) = (P(2 * X - 2) + 4 * P(2 * X - 1) + 6 * P(2 * X) +
                         4 * P(2 * X + 1) + P(2 * X + 2)) /
                        16;
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
      Out.at(C, Y, X) = (P(2 * Y - 2) + 4 * P(2 * Y - 1) + 6 * P(2 * Y) +
                         4 * P(2 * Y + 1) + P(2 * Y + 2)) /
                        16;
    }
  });
  return Out;
}

int floorHalf(int N) { return N >= 0 ? N / 2 : -((1 - N) / 2); }

RefImage upXRef(const RefImage &In, int OutW) {
  RefImage Out(OutW, In.H, In.C);
  forEachRow(In.C, In.H, [&](int C, int Y) {
    for (int X = 0; X < OutW; ++X) {
      auto P = [&](int K) {
        return In.at(C, Y, image::clamp(floorHalf(X + K), 0, In.W - 1));
      };
      Out.at(C, Y, X) = (P(-1) + 3 * P(0) + 3 * P(1) + P(2)) / 8;
    }
  });
  return Out;
}

RefImage upYRef(const RefImage &In, int OutH) {
  RefImage Out(In.W, OutH, In.C);
  forEachRow(In.C, OutH, [&](int C, int Y) {
    for (int X = 0; X < In.W; ++X) {
      auto P = [&](int K) {
        return In.at(C, image::clamp(floorHalf(Y + K), 0, In.H - 1), X);
      };
      Out.at(C, Y, X) = (P(-1) + 3 * P(0) + 3 * P(1) + P(2)) / 8;
    }
  });
  return Out;
}

RefImage upRef(const RefImage &Next, const RefImage &Fine) {
  return upYRef(upXRef(Next, Fine.W), Fine.H);
}

std::vector<double> referenceBlend(const RefImage &ImgA, const RefImage &ImgB,
                                   const RefImage &Mask) {
  std::vector<RefImage> GA{ImgA}, GB{ImgB}, GM{Mask};
  for (int L = 1; L < kLevels; ++L) {
    const int W = image::halve(GA.back().W), H = image::halve(GA.back().H);
    GA.push_back(downYRef(downXRef(GA.back(), W), H));
    GB.push_back(downYRef(downXRef(GB.back(), W), H));
    GM.push_back(downYRef(downXRef(GM.back(), W), H));
  }
  const int Top = kLevels - 1;
  std::vector<RefImage> Blend;
  for (int L = 0; L <= Top; ++L) {
    RefImage UpA = L < Top ? upRef(GA[L + 1], GA[L]) : RefImage(0, 0, 0);
    RefImage UpB = L < Top ? upRef(GB[L + 1], GB[L]) : RefImage(0, 0, 0);
    RefImage Level(GA[L].W, GA[L].H, 3);
    forEachRow(3, Level.H, [&](int C, int Y) {
      for (int X = 0; X < Level.W; ++X) {
        const double M = GM[L].at(0, Y, X);
        const double LA = GA[L].at(C, Y, X) - (L < Top ? UpA.at(C, Y, X) : 0);
        const double LB = GB[L].at(C, Y, X) - (L < Top ? UpB.at(C, Y, X) : 0);
        Level.at(C, Y, X) = M * LA + (1 - M) * LB;
      }
    });
    Blend.push_back(std::move(Level));
  }
  RefImage Sum = Blend[Top];
  for (int L = Top - 1; L >= 0; --L) {
    RefImage UpSum = upRef(Sum, Blend[L]);
    for (size_t I = 0; I < UpSum.V.size(); ++I)
      UpSum.V[I] += Blend[L].V[I];
    Sum = std::move(UpSum);
  }
  return Sum.V;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "pyramid", {3840, 2160});
  const image::Size S = image::size(A, 3);
  harness::Rng R(A.Seed);
  const std::vector<float> ImgA = image::randomImage(R, S);
  const std::vector<float> ImgB = image::randomImage(R, S);
  const std::vector<float> Mask = image::randomImage(R, {S.W, S.H, 1});
  const std::vector<double> Ref =
      referenceBlend(RefImage(ImgA, S.W, S.H, 3), RefImage(ImgB, S.W, S.H, 3),
                     RefImage(Mask, S.W, S.H, 1));
  const double Tolerance = 2e-4; // The sample's.
  hlbench::init();
  hlbench::Image HA(ImgA, hlbench::planar(S.W, S.H, 3));
  hlbench::Image HB(ImgB, hlbench::planar(S.W, S.H, 3));
  hlbench::Image HMask(Mask, hlbench::planar(S.W, S.H));
  hlbench::Image HOut(size_t(S.elements()), hlbench::planar(S.W, S.H, 3));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] {
        hlbench::check(pyramid(HA.raw(), HB.raw(), HMask.raw(), HOut.raw()),
                       "pyramid");
      },
      [&] {
        return harness::compareFloat(HOut.download(), Ref,
                                     harness::Everywhere(), Tolerance);
      });
  const double BytesMoved =
      double(S.pixels()) * sizeof(float) * (3 + 3 + 1 + 3);
  return harness::report(A, Res, BytesMoved);
}
