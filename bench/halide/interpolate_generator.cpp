//===- interpolate_generator.cpp - Halide peer of samples/fuse/interpolate.cu -===//
//
// Multiscale interpolation as in samples/fuse/interpolate.cu (after Halide's
// apps/interpolate): an RGBA image, channel-planar W x H x 4, premultiplied
// by alpha, downsampled through ten levels (level l + 1 is halve(W_l) x
// halve(H_l), halve(n) = (n + 1) / 2), then interpolated back up, every read
// clamped to its level, the same stages, constants and float arithmetic:
//
//   premultiply   c < 3 ? in * alpha : alpha
//   down_x/down_y [1 2 1] / 4 around column 2x, then row 2y     (levels 1-9)
//   up_x/up_y     mean of x / 2 and (x + 1) / 2, then of the rows
//   interp_l      down_l + (1 - alpha_l) up(interp_l+1), interp_9 = down_9
//   out           interp_0 / alpha, three channels
//
// As in pyramid_generator.cpp, the row clamps of down_y and up_y are applied
// inside down_x and up_x (which read their input at the clamped row): the
// same values, and per-thread producers of constant size.
//
// GPU schedule (in the style of Halide's apps/interpolate: the levels of
// both pyramids compute_root, the separable halves and the pointwise stages
// folded into them, the small interpolated levels 4, 6 and 8 inlined into
// the next finer one as that app inlines every other level; all four
// channels of a pixel in one thread, so that its alpha is read once): 15
// kernels, down 1-9, interp 7, 5, 3, 2, 1 and the output. Blocks of 32 x 8
// threads, each thread one column of 8 (output), 4 (level 1) or 2 rows;
// down_x and up_x computed per thread into registers (the 2k + 1, or
// k / 2 + 1, rows its k outputs need), down_y and up_y from those; the
// premultiplication inlined into level 1 and the output, level 0's
// interpolation and the division inlined into the output.
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

#include <string>

using namespace Halide;

namespace {

constexpr int kLevels = 10;

} // namespace

class Interpolate : public Generator<Interpolate> {
public:
  Input<Buffer<float, 3>> In{"in"};
  Output<Buffer<float, 3>> Out{"out"};

  void generate() {
    Var X("x"), Y("y"), C("c");
    for (int D = 0; D < 3; ++D)
      In.dim(D).set_min(0);
    In.dim(2).set_extent(4);

    Expr W[kLevels], H[kLevels];
    W[0] = In.dim(0).extent();
    H[0] = In.dim(1).extent();
    for (int L = 1; L < kLevels; ++L) {
      W[L] = (W[L - 1] + 1) / 2;
      H[L] = (H[L - 1] + 1) / 2;
    }

    Func Down[kLevels], DownX[kLevels];
    Down[0] = Func("premultiplied");
    Down[0](X, Y, C) = select(C < 3, In(X, Y, C) * In(X, Y, 3), In(X, Y, 3));
    for (int L = 1; L < kLevels; ++L) {
      const std::string S = std::to_string(L);
      DownX[L] = Func("down_x" + S);
      Down[L] = Func("down" + S);
      Func Prev = Down[L - 1];
      Expr R = clamp(Y, 0, H[L - 1] - 1);
      auto P = [&](Expr Col) { return Prev(clamp(Col, 0, W[L - 1] - 1), R, C); };
      DownX[L](X, Y, C) = (P(2 * X - 1) + 2.f * P(2 * X) + P(2 * X + 1)) * 0.25f;
      Down[L](X, Y, C) = (DownX[L](X, 2 * Y - 1, C) +
                          2.f * DownX[L](X, 2 * Y, C) +
                          DownX[L](X, 2 * Y + 1, C)) *
                         0.25f;
    }

    Func Interp[kLevels], UpX[kLevels];
    Interp[kLevels - 1] = Down[kLevels - 1];
    for (int L = kLevels - 2; L >= 0; --L) {
      const std::string S = std::to_string(L);
      UpX[L] = Func("up_x" + S);
      Interp[L] = Func("interp" + S);
      Func Next = Interp[L + 1];
      Expr R = clamp(Y, 0, H[L + 1] - 1);
      auto P = [&](Expr Col) { return Next(clamp(Col, 0, W[L + 1] - 1), R, C); };
      UpX[L](X, Y, C) = (P(X / 2) + P((X + 1) / 2)) * 0.5f;
      Expr Up = (UpX[L](X, Y / 2, C) + UpX[L](X, (Y + 1) / 2, C)) * 0.5f;
      Interp[L](X, Y, C) = Down[L](X, Y, C) + (1.f - Down[L](X, Y, 3)) * Up;
    }
    Out(X, Y, C) = Interp[0](X, Y, C) / Interp[0](X, Y, 3);
    for (int D = 0; D < 3; ++D)
      Out.dim(D).set_min(0);
    Out.dim(2).set_extent(3);

    if (get_target().has_gpu_feature()) {
      Var XO("xo"), YO("yo"), XI("xi"), YI("yi"), YV("yv");
      // The interpolated levels with a kernel of their own; the others (and
      // the top, which is down_9) are inlined into the next finer level's
      // per-thread up_x, as Halide's app inlines every other level. Every
      // downsampled level has a kernel. Rows per thread at each level
      // (registers: at most 128 per thread where the grid is large).
      const bool RootInterp[kLevels] = {false, true,  true,  true,  false,
                                        true,  false, true,  false, false};
      const int Rows[kLevels] = {8, 4, 2, 2, 2, 2, 2, 2, 2, 2};
      // A level's root kernel: blocks of 32 x 8 threads, each thread k rows
      // of one column, every channel (4, the output 3).
      auto Root = [&](Func F, int K, int Channels) {
        F.compute_root()
            .bound(C, 0, Channels)
            .tile(X, Y, XO, YO, XI, YI, 32, 8 * K, TailStrategy::GuardWithIf)
            .split(YI, YI, YV, K)
            .reorder(C, YV, XI, YI, XO, YO)
            .unroll(C)
            .unroll(YV)
            .gpu_blocks(XO, YO)
            .gpu_threads(XI, YI);
      };
      for (int L = 1; L < kLevels; ++L) {
        Root(Down[L], Rows[L], 4);
        DownX[L]
            .compute_at(Down[L], XI)
            .bound_extent(Y, 2 * Rows[L] + 1)
            .reorder(C, Y)
            .unroll(C)
            .unroll(Y);
      }
      for (int L = kLevels - 2; L >= 0; --L) {
        if (L > 0 && !RootInterp[L])
          continue;
        if (L > 0)
          Root(Interp[L], Rows[L], 4);
        else
          Root(Out, Rows[0], 3);
        UpX[L]
            .compute_at(L ? Interp[L] : Func(Out), XI)
            .bound_extent(Y, Rows[L] / 2 + 1)
            .reorder(C, Y)
            .unroll(C)
            .unroll(Y);
      }
    } else {
      for (int L = 1; L < kLevels; ++L)
        hlbench::cpuRoot(Down[L]);
      for (int L = kLevels - 2; L >= 0; --L) {
        hlbench::cpuRoot(UpX[L]);
        if (L > 0)
          hlbench::cpuRoot(Interp[L]);
      }
      hlbench::cpuRoot(Out);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Interpolate, interpolate)
