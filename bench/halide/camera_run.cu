//===- camera_run.cu - Runs the Halide peer of samples/fuse/camera.cu -----===//
//
// Same command line, input (a raw mosaic of integers in [0, 1023]), colour
// matrix and tone curve, reference, tolerance and RESULT line as
// samples/fuse/camera.cu; the pipeline is bench/halide/camera_generator.cpp,
// AOT-compiled (build.sh). The matrix and the curve are the pipeline's
// inputs, on the device before timing, as the sample copies them to
// __constant__ memory before timing.
//
//   ./camera [W [H]] [--seed=N] [--reps=N] [--warmup=N]   # 2592 x 1968
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "camera.h"

#include <cmath>
#include <initializer_list>

// From samples/fuse/camera.cu, unchanged: parameters, tables and the float64
// reference.

namespace {

constexpr float kColorTemperature = 3700.f;
constexpr float kGamma = 2.f;
constexpr float kContrast = 50.f;
constexpr float kSharpenStrength = 1.f;
constexpr int kBlackLevel = 25;
constexpr int kWhiteLevel = 1023;
constexpr int kCurveSize = 1024;
constexpr int kCropX = 16, kCropY = 12;
int outputWidth(int W) { return (W - 32) / 32 * 32; }
int outputHeight(int H) { return (H - 24) / 32 * 32; }

} // namespace

template <typename T> __host__ __device__ inline T avg(T A, T B) {
  return (A + B) / T(2);
}
template <typename T> __host__ __device__ inline T absd(T A, T B) {
  return A > B ? A - B : B - A;
}

namespace {

std::vector<float> colorMatrix() {
  const float Matrix3200[3][4] = {{1.6697f, -0.2693f, -0.4004f, -42.4346f},
                                  {-0.3576f, 1.0615f, 1.5949f, -37.1158f},
                                  {-0.2175f, -1.8751f, 6.9640f, -26.6970f}};
  const float Matrix7000[3][4] = {{2.2997f, -0.4478f, 0.1706f, -39.0923f},
                                  {-0.3826f, 1.5906f, -0.2080f, -25.4311f},
                                  {-0.0888f, -0.7344f, 2.2832f, -20.0826f}};
  const float Alpha =
      (1.f / kColorTemperature - 1.f / 3200) / (1.f / 7000 - 1.f / 3200);
  std::vector<float> M(12);
  for (int C = 0; C < 3; ++C)
    for (int K = 0; K < 4; ++K) {
      const float V = Matrix3200[C][K] * Alpha + Matrix7000[C][K] * (1 - Alpha);
      M[C * 4 + K] = float(int16_t(V * 256.f)) / 256.f;
    }
  return M;
}

std::vector<float> toneCurve() {
  const float MinRaw = kBlackLevel, MaxRaw = kWhiteLevel;
  const float InvRange = 1.f / (MaxRaw - MinRaw);
  const float B = 2.f - std::pow(2.f, kContrast / 100.f);
  const float A = 2.f - 2.f * B;
  std::vector<float> Curve(kCurveSize);
  for (int I = 0; I < kCurveSize; ++I) {
    const float XF = std::min(std::max(float(I - MinRaw) * InvRange, 0.f), 1.f);
    const float G = std::pow(XF, 1.f / kGamma);
    const float Z = G > 0.5f ? 1.f - (A * (1.f - G) * (1.f - G) + B * (1.f - G))
                             : A * G * G + B * G;
    const float Val =
        float(uint8_t(std::min(std::max(Z * 255.f + 0.5f, 0.f), 255.f)));
    Curve[size_t(I)] = I <= MinRaw ? 0.f : I > MaxRaw ? 255.f : Val;
  }
  return Curve;
}

struct Plane {
  int W, H, C;
  std::vector<double> V;
  Plane(int W, int H, int C = 1) : W(W), H(H), C(C), V(size_t(W) * H * C) {}
  double at(int X, int Y, int Ch = 0) const {
    return V[(size_t(Ch) * H + image::clamp(Y, 0, H - 1)) * W +
             image::clamp(X, 0, W - 1)];
  }
};

template <typename PointFn> Plane compute(int W, int H, int C, PointFn F) {
  Plane Out(W, H, C);
  image::forRows(C * H, [&](int R) {
    const int Ch = R / H, Y = R % H;
    for (int X = 0; X < W; ++X)
      Out.V[(size_t(Ch) * H + Y) * W + X] = F(X, Y, Ch);
  });
  return Out;
}

std::vector<Plane> referenceDemosaic(const Plane &Raw) {
  const int W = Raw.W, H = Raw.H, W2 = W / 2, H2 = H / 2;
  const Plane Denoised = compute(W, H, 1, [&](int X, int Y, int) {
    const double L = Raw.at(X - 2, Y), R = Raw.at(X + 2, Y);
    const double U = Raw.at(X, Y - 2), D = Raw.at(X, Y + 2);
    return std::min(std::max(Raw.at(X, Y), std::min({L, R, U, D})),
                    std::max({L, R, U, D}));
  });
  auto Bayer = [&](int DX, int DY) {
    return compute(W2, H2, 1, [&](int X, int Y, int) {
      return Denoised.at(2 * X + DX, 2 * Y + DY);
    });
  };
  const Plane GGr = Bayer(0, 0), RR = Bayer(1, 0), BB = Bayer(0, 1),
              GGb = Bayer(1, 1);

  const Plane GR = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double Up = GGb.at(X, Y - 1), Down = GGb.at(X, Y);
    const double Left = GGr.at(X, Y), Right = GGr.at(X + 1, Y);
    return absd(Right, Left) < absd(Up, Down) ? avg(Right, Left)
                                              : avg(Up, Down);
  });
  const Plane GB = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double Up = GGr.at(X, Y), Down = GGr.at(X, Y + 1);
    const double Left = GGb.at(X - 1, Y), Right = GGb.at(X, Y);
    return absd(Left, Right) < absd(Down, Up) ? avg(Left, Right)
                                              : avg(Down, Up);
  });
  const Plane RGr = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGr.at(X, Y) - avg(GR.at(X, Y), GR.at(X - 1, Y)) +
           avg(RR.at(X - 1, Y), RR.at(X, Y));
  });
  const Plane BGr = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGr.at(X, Y) - avg(GB.at(X, Y), GB.at(X, Y - 1)) +
           avg(BB.at(X, Y), BB.at(X, Y - 1));
  });
  const Plane RGb = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGb.at(X, Y) - avg(GR.at(X, Y), GR.at(X, Y + 1)) +
           avg(RR.at(X, Y), RR.at(X, Y + 1));
  });
  const Plane BGb = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGb.at(X, Y) - avg(GB.at(X, Y), GB.at(X + 1, Y)) +
           avg(BB.at(X, Y), BB.at(X + 1, Y));
  });
  const Plane RB = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double P = GB.at(X, Y) - avg(GR.at(X, Y), GR.at(X - 1, Y + 1)) +
                     avg(RR.at(X, Y), RR.at(X - 1, Y + 1));
    const double N = GB.at(X, Y) - avg(GR.at(X - 1, Y), GR.at(X, Y + 1)) +
                     avg(RR.at(X - 1, Y), RR.at(X, Y + 1));
    return absd(RR.at(X, Y), RR.at(X - 1, Y + 1)) <
                   absd(RR.at(X - 1, Y), RR.at(X, Y + 1))
               ? P
               : N;
  });
  const Plane BR = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double P = GR.at(X, Y) - avg(GB.at(X, Y), GB.at(X + 1, Y - 1)) +
                     avg(BB.at(X, Y), BB.at(X + 1, Y - 1));
    const double N = GR.at(X, Y) - avg(GB.at(X + 1, Y), GB.at(X, Y - 1)) +
                     avg(BB.at(X + 1, Y), BB.at(X, Y - 1));
    return absd(BB.at(X, Y), BB.at(X + 1, Y - 1)) <
                   absd(BB.at(X + 1, Y), BB.at(X, Y - 1))
               ? P
               : N;
  });

  auto InterleaveX = [&](const Plane &Even, const Plane &Odd) {
    return compute(W, H2, 1, [&](int X, int Y, int) {
      return X % 2 == 0 ? Even.at(X / 2, Y) : Odd.at(X / 2, Y);
    });
  };
  auto InterleaveY = [&](const Plane &Even, const Plane &Odd) {
    return compute(W, H, 1, [&](int X, int Y, int) {
      return Y % 2 == 0 ? Even.at(X, Y / 2) : Odd.at(X, Y / 2);
    });
  };
  std::vector<Plane> Rgb;
  Rgb.push_back(InterleaveY(InterleaveX(RGr, RR), InterleaveX(RB, RGb)));
  Rgb.push_back(InterleaveY(InterleaveX(GGr, GR), InterleaveX(GB, GGb)));
  Rgb.push_back(InterleaveY(InterleaveX(BGr, BR), InterleaveX(BB, BGb)));
  return Rgb;
}

std::vector<double> referenceCameraPipe(const std::vector<float> &RawInput,
                                        int W, int H,
                                        const std::vector<float> &Matrix,
                                        const std::vector<float> &Curve) {
  Plane Raw(W, H);
  Raw.V = image::toDouble(RawInput);
  const std::vector<Plane> Rgb = referenceDemosaic(Raw);
  const Plane Corrected = compute(W, H, 3, [&](int X, int Y, int C) {
    return double(Matrix[C * 4 + 3]) +
           double(Matrix[C * 4 + 0]) * Rgb[0].at(X, Y) +
           double(Matrix[C * 4 + 1]) * Rgb[1].at(X, Y) +
           double(Matrix[C * 4 + 2]) * Rgb[2].at(X, Y);
  });
  const Plane Curved = compute(W, H, 3, [&](int X, int Y, int C) {
    return double(Curve[size_t(
        image::clamp(int(Corrected.at(X, Y, C)), 0, kCurveSize - 1))]);
  });
  const Plane UnsharpY = compute(W, H, 3, [&](int X, int Y, int C) {
    return (Curved.at(X, Y - 1, C) + 2 * Curved.at(X, Y, C) +
            Curved.at(X, Y + 1, C)) /
           4;
  });
  const Plane UnsharpX = compute(W, H, 3, [&](int X, int Y, int C) {
    return (UnsharpY.at(X - 1, Y, C) + 2 * UnsharpY.at(X, Y, C) +
            UnsharpY.at(X + 1, Y, C)) /
           4;
  });
  const Plane Mask = compute(W, H, 3, [&](int X, int Y, int C) {
    return Curved.at(X, Y, C) - UnsharpX.at(X, Y, C);
  });
  const Plane Out =
      compute(outputWidth(W), outputHeight(H), 3, [&](int X, int Y, int C) {
        const double V =
            Curved.at(X + kCropX, Y + kCropY, C) +
            double(kSharpenStrength) * Mask.at(X + kCropX, Y + kCropY, C);
        return std::min(std::max(V, 0.0), 255.0);
      });
  return Out.V;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "camera", {2592, 1968});
  const image::Size Rgb = image::size(A, 3);
  const image::Size S{Rgb.W, Rgb.H, 1};
  if (S.W % 2 || S.H % 2 || S.W < 64 || S.H < 56)
    harness::fail("need even W >= 64 and even H >= 56: a Bayer mosaic, "
                  "cropped to whole 32 x 32 tiles");
  const int OW = outputWidth(S.W), OH = outputHeight(S.H);

  harness::Rng R(A.Seed);
  std::vector<float> Raw = image::randomImage(R, S);
  for (float &V : Raw)
    V = std::floor(V * 1024.f);

  const std::vector<float> Matrix = colorMatrix(), Curve = toneCurve();
  const std::vector<double> Ref =
      referenceCameraPipe(Raw, S.W, S.H, Matrix, Curve);
  const double Tolerance = 1e-5; // The sample's.
  hlbench::init();
  hlbench::Image HRaw(Raw, hlbench::planar(S.W, S.H));
  hlbench::Image HMatrix(Matrix, {{0, 4, 1}, {0, 3, 4}});
  hlbench::Image HCurve(Curve, {{0, kCurveSize, 1}});
  hlbench::Image HOut(size_t(OW) * OH * 3, hlbench::planar(OW, OH, 3));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] {
        hlbench::check(
            camera(HRaw.raw(), HMatrix.raw(), HCurve.raw(), HOut.raw()),
            "camera");
      },
      [&] {
        return harness::compareFloat(HOut.download(), Ref,
                                     harness::Everywhere(), Tolerance);
      });
  return harness::report(A, Res, double(HRaw.bytes() + HOut.bytes()));
}
