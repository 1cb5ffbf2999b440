//===- camera_generator.cpp - Halide peer of samples/fuse/camera.cu -------===//
//
// Camera pipeline as in samples/fuse/camera.cu (Halide's apps/camera_pipe,
// stage for stage, in float): a W x H raw Bayer mosaic (G R / B G quads) to
// an OW x OH x 3 channel-planar RGB image, OW = (W - 32) / 32 * 32,
// OH = (H - 24) / 32 * 32, output pixel (x, y) at raw (x + 16, y + 12):
//
//   hot-pixel suppression   clamp to the range of the 4 pixels 2 away
//   deinterleave            Gr, R, B, Gb half-size planes
//   demosaic                green at R and B sites (the flatter direction),
//                           red/blue at G sites, red at B, blue at R (the
//                           flatter diagonal), all corrected by green
//   interleave              back to full-size red, green and blue
//   colour correction       3 x 4 matrix (an input: the sample's Q8.8 one)
//   tone curve              1024-entry table (an input: the sample's)
//   sharpen                 curved + (curved - [1 2 1]/4 x [1 2 1]/4 blur),
//                           clamped to [0, 255]
//
// The matrix and the curve are inputs computed by the driver with the
// sample's functions, as the sample computes them on the host and copies
// them to __constant__ memory before timing.
//
// Borders: the sample clamps every stage's reads to its buffer, and explains
// that no clamp acts on anything the output depends on (the crop leaves 12
// raw pixels or more on every side, the output depends on 6); as in Halide's
// app there are none here: the same function on every output pixel. Every
// value is exact in float (the sample's comment), so the output equals the
// reference exactly.
//
// GPU schedule (the structure of Halide's own camera_pipe GPU schedule: the
// whole pipeline in one kernel, every stage computed per output tile into
// shared memory): blocks of 32 x 32 output pixels, 256 threads.
//  - the deinterleaved planes (hot-pixel suppression inlined), the quad
//    region the tile needs, 4 planes per thread, into shared memory;
//  - green at red and blue sites (one Tuple), into shared memory;
//  - the curved image (demosaic, interleave, colour correction, curve), the
//    34 x 34 window the sharpening needs widened to even bounds, one 2 x 2
//    quad and 3 colours per thread (the interleave's parities then known,
//    each value of the quad computed once, per thread in registers), into
//    shared memory;
//  - the output, 4 rows of a column and 3 channels per thread, the unsharp
//    blur and mask inlined.
// Every block stage spreads its region over the 256 threads (two rounds
// each). The output width and height are whole 32-pixel tiles (always so:
// the sample's sizes), which Halide is told.
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

using namespace Halide;

class Camera : public Generator<Camera> {
public:
  Input<Buffer<float, 2>> Raw{"raw"};
  Input<Buffer<float, 2>> Matrix{"matrix"}; // (k, c): row c of the sample's
  Input<Buffer<float, 1>> Curve{"curve"};
  Output<Buffer<float, 3>> Out{"out"};

  void generate() {
    Var X("x"), Y("y"), C("c"), K("k");
    const int CropX = 16, CropY = 12, CurveSize = 1024;
    const float SharpenStrength = 1.f;
    Raw.dim(0).set_min(0);
    Raw.dim(1).set_min(0);
    Matrix.dim(0).set_bounds(0, 4);
    Matrix.dim(1).set_bounds(0, 3).set_stride(4);
    Curve.dim(0).set_bounds(0, CurveSize);

    auto Avg = [](Expr A, Expr B) { return (A + B) / 2.f; };
    auto Absd = [](Expr A, Expr B) { return select(A > B, A - B, B - A); };

    // suppressHotPixels, inlined into the deinterleave.
    Func Denoised("denoised");
    {
      Expr L = Raw(X - 2, Y), R = Raw(X + 2, Y);
      Expr U = Raw(X, Y - 2), D = Raw(X, Y + 2);
      Expr Lo = min(min(L, R), min(U, D));
      Expr Hi = max(max(L, R), max(U, D));
      Denoised(X, Y) = min(max(Raw(X, Y), Lo), Hi);
    }
    // deinterleave: plane k of quad (x, y) is raw (2x + k % 2, 2y + k / 2):
    // 0 Gr, 1 R, 2 B, 3 Gb.
    Func Deint("deinterleaved");
    Deint(X, Y, K) = Denoised(2 * X + K % 2, 2 * Y + K / 2);
    auto GGr = [&](Expr QX, Expr QY) { return Deint(QX, QY, 0); };
    auto RR = [&](Expr QX, Expr QY) { return Deint(QX, QY, 1); };
    auto BB = [&](Expr QX, Expr QY) { return Deint(QX, QY, 2); };
    auto GGb = [&](Expr QX, Expr QY) { return Deint(QX, QY, 3); };

    // greenAtRed, greenAtBlue.
    Func Green2("green_at_r_b");
    {
      Expr Up = GGb(X, Y - 1), Down = GGb(X, Y);
      Expr Left = GGr(X, Y), Right = GGr(X + 1, Y);
      Expr GR = select(Absd(Right, Left) < Absd(Up, Down), Avg(Right, Left),
                       Avg(Up, Down));
      Expr UpB = GGr(X, Y), DownB = GGr(X, Y + 1);
      Expr LeftB = GGb(X - 1, Y), RightB = GGb(X, Y);
      Expr GB = select(Absd(LeftB, RightB) < Absd(DownB, UpB),
                       Avg(LeftB, RightB), Avg(DownB, UpB));
      Green2(X, Y) = {GR, GB};
    }
    auto GR = [&](Expr QX, Expr QY) { return Green2(QX, QY)[0]; };
    auto GB = [&](Expr QX, Expr QY) { return Green2(QX, QY)[1]; };

    // The other six interpolations, at quad (x, y).
    auto RGr = [&](Expr QX, Expr QY) {
      return GGr(QX, QY) - Avg(GR(QX, QY), GR(QX - 1, QY)) +
             Avg(RR(QX - 1, QY), RR(QX, QY));
    };
    auto BGr = [&](Expr QX, Expr QY) {
      return GGr(QX, QY) - Avg(GB(QX, QY), GB(QX, QY - 1)) +
             Avg(BB(QX, QY), BB(QX, QY - 1));
    };
    auto RGb = [&](Expr QX, Expr QY) {
      return GGb(QX, QY) - Avg(GR(QX, QY), GR(QX, QY + 1)) +
             Avg(RR(QX, QY), RR(QX, QY + 1));
    };
    auto BGb = [&](Expr QX, Expr QY) {
      return GGb(QX, QY) - Avg(GB(QX, QY), GB(QX + 1, QY)) +
             Avg(BB(QX, QY), BB(QX + 1, QY));
    };
    auto RB = [&](Expr QX, Expr QY) {
      Expr Positive = GB(QX, QY) - Avg(GR(QX, QY), GR(QX - 1, QY + 1)) +
                      Avg(RR(QX, QY), RR(QX - 1, QY + 1));
      Expr Negative = GB(QX, QY) - Avg(GR(QX - 1, QY), GR(QX, QY + 1)) +
                      Avg(RR(QX - 1, QY), RR(QX, QY + 1));
      return select(Absd(RR(QX, QY), RR(QX - 1, QY + 1)) <
                        Absd(RR(QX - 1, QY), RR(QX, QY + 1)),
                    Positive, Negative);
    };
    auto BR = [&](Expr QX, Expr QY) {
      Expr Positive = GR(QX, QY) - Avg(GB(QX, QY), GB(QX + 1, QY - 1)) +
                      Avg(BB(QX, QY), BB(QX + 1, QY - 1));
      Expr Negative = GR(QX, QY) - Avg(GB(QX + 1, QY), GB(QX, QY - 1)) +
                      Avg(BB(QX + 1, QY), BB(QX, QY - 1));
      return select(Absd(BB(QX, QY), BB(QX + 1, QY - 1)) <
                        Absd(BB(QX + 1, QY), BB(QX, QY - 1)),
                    Positive, Negative);
    };

    // interleaveX / interleaveY: colour c at raw (x, y).
    Func Demosaic("demosaiced");
    {
      Expr QX = X / 2, QY = Y / 2;
      Expr EvenX = X % 2 == 0, EvenY = Y % 2 == 0;
      Expr Red = select(EvenY, select(EvenX, RGr(QX, QY), RR(QX, QY)),
                        select(EvenX, RB(QX, QY), RGb(QX, QY)));
      Expr Green = select(EvenY, select(EvenX, GGr(QX, QY), GR(QX, QY)),
                          select(EvenX, GB(QX, QY), GGb(QX, QY)));
      Expr Blue = select(EvenY, select(EvenX, BGr(QX, QY), BR(QX, QY)),
                         select(EvenX, BB(QX, QY), BGb(QX, QY)));
      Demosaic(X, Y, C) = select(C == 0, Red, C == 1, Green, Blue);
    }

    // correctColor, applyCurve.
    Func Curved("curved");
    {
      Expr Corrected = Matrix(3, C) + Matrix(0, C) * Demosaic(X, Y, 0) +
                       Matrix(1, C) * Demosaic(X, Y, 1) +
                       Matrix(2, C) * Demosaic(X, Y, 2);
      Curved(X, Y, C) = Curve(clamp(cast<int>(Corrected), 0, CurveSize - 1));
    }
    // unsharpY, unsharpX, unsharpMask, sharpen.
    Func UnsharpY("unsharp_y"), UnsharpX("unsharp_x"), Mask("mask");
    UnsharpY(X, Y, C) =
        (Curved(X, Y - 1, C) + 2.f * Curved(X, Y, C) + Curved(X, Y + 1, C)) /
        4.f;
    UnsharpX(X, Y, C) = (UnsharpY(X - 1, Y, C) + 2.f * UnsharpY(X, Y, C) +
                         UnsharpY(X + 1, Y, C)) /
                        4.f;
    Mask(X, Y, C) = Curved(X, Y, C) - UnsharpX(X, Y, C);
    Out(X, Y, C) = clamp(Curved(X + CropX, Y + CropY, C) +
                             SharpenStrength * Mask(X + CropX, Y + CropY, C),
                         0.f, 255.f);

    if (get_target().has_gpu_feature()) {
      Var XO("xo"), YO("yo"), XI("xi"), YI("yi"), YV("yv"), T("t");
      Var XP("xp"), YP("yp");
      // Whole tiles (the output is always whole 32 x 32 tiles).
      Out.bound(C, 0, 3)
          .bound(X, 0, (Out.width() / 32) * 32)
          .bound(Y, 0, (Out.height() / 32) * 32);
      Out.tile(X, Y, XO, YO, XI, YI, 32, 32)
          .split(YI, YI, YV, 4)
          .reorder(C, YV, XI, YI, XO, YO)
          .unroll(C)
          .unroll(YV)
          .fuse(XI, YI, T)
          .gpu_blocks(XO, YO)
          .gpu_threads(T);

      Curved.compute_at(Out, XO)
          .align_bounds(X, 2)
          .align_bounds(Y, 2)
          .split(X, X, XP, 2)
          .split(Y, Y, YP, 2)
          .reorder(C, XP, YP, X, Y)
          .unroll(C)
          .unroll(XP)
          .unroll(YP);
      hlbench::threadsOver(Curved, X, Y, "curved");
      Demosaic.compute_at(Curved, Var("curved_ti"))
          .reorder(C, X, Y)
          .unroll(C)
          .unroll(X)
          .unroll(Y);

      Green2.compute_at(Out, XO);
      hlbench::threadsOver(Green2, X, Y, "green2");

      Deint.compute_at(Out, XO).reorder(K, X, Y).bound(K, 0, 4).unroll(K);
      hlbench::threadsOver(Deint, X, Y, "deint");
    } else {
      Deint.compute_root().bound(K, 0, 4).parallel(Y);
      Green2.compute_root().parallel(Y);
      Demosaic.compute_root().bound(C, 0, 3).parallel(Y);
      hlbench::cpuRoot(Curved);
      hlbench::cpuRoot(Out);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Camera, camera)
