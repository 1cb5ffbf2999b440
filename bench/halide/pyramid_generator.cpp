//===- pyramid_generator.cpp - Halide peer of samples/fuse/pyramid.cu -----===//
//
// Pyramid Blend as in samples/fuse/pyramid.cu: two channel-planar RGB images
// A and B blended along a one-channel mask M through their Laplacian
// pyramids, four levels (level l + 1 is halve(W_l) x halve(H_l), halve(n) =
// (n + 1) / 2), every read clamped to its level, the same stages, constants
// and float arithmetic:
//
//   down_x, down_y  [1 4 6 4 1] / 16 around column 2x, then row 2y
//   up_x, up_y      [1 3 3 1] / 8 at floor((x + k) / 2), k = -1..2
//   blend_l         M_l (GA_l - up(GA_l+1)) + (1 - M_l) (GB_l - up(GB_l+1)),
//                   blend_3 = M_3 GA_3 + (1 - M_3) GB_3
//   sum_3 = blend_3, sum_l = blend_l + up(sum_l+1), out = sum_0
//
// The row clamps of down_y and up_y are applied inside down_x and up_x,
// which read their input at the clamped row (down_x(x, r) reads row
// clamp(r)), instead of at down_y's and up_y's reads: down_y(x, y) then
// reads down_x at rows 2y - 2 .. 2y + 2 unclamped, and gets the values the
// sample's down_y gets from its clamped reads. The same function; it gives
// the per-thread producers below a constant size.
//
// GPU schedule (in the style of Halide's pyramid apps, local_laplacian and
// interpolate: every pyramid level compute_root, the separable halves and
// the pointwise stages folded into them): 13 kernels.
//  - The Gaussian levels 1 to 3 of A, B and M: one kernel each (9), blocks
//    of 32 x 8 threads, each thread one column of 4 (levels 1, 2) or 2 rows
//    (the channel is the grid's z); down_x computed per thread into
//    registers (the 2k + 3 rows its k outputs need), down_y from those.
//  - The top level's blend: one small kernel.
//  - sum_2, sum_1 and the output: one kernel each, blocks of 32 x 8
//    threads, each thread one column of 2 (levels 2, 1) or 4 rows (level 0)
//    and all three channels (so the mask is read once per pixel); the three
//    upsamplings each of them needs (of GA, GB and the coarser sum) have
//    their up_x computed per thread into registers, up_y from those; the
//    Laplacian differences, the blends and the additions inlined.
// Rows per thread are chosen to keep the big kernels at or under 128
// registers per thread (ptxas for sm_90: two 256-thread blocks per SM).
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

#include <vector>

using namespace Halide;

namespace {

constexpr int kLevels = 4;

} // namespace

class Pyramid : public Generator<Pyramid> {
public:
  Input<Buffer<float, 3>> ImgA{"a"};
  Input<Buffer<float, 3>> ImgB{"b"};
  Input<Buffer<float, 2>> Mask{"mask"};
  Output<Buffer<float, 3>> Out{"out"};

  Var X{"x"}, Y{"y"}, C{"c"};

  std::vector<Var> args(bool HasC) {
    return HasC ? std::vector<Var>{X, Y, C} : std::vector<Var>{X, Y};
  }
  FuncRef at(Func F, Expr XX, Expr YY, bool HasC) {
    return HasC ? F(XX, YY, C) : F(XX, YY);
  }

  /// down_x of F (InW x InH): columns halved, read at row clamp(y).
  Func downX(Func F, Expr InW, Expr InH, bool HasC, const std::string &Name) {
    Func D(Name);
    Expr R = clamp(Y, 0, InH - 1);
    auto P = [&](Expr Col) { return at(F, clamp(Col, 0, InW - 1), R, HasC); };
    D(args(HasC)) = (P(2 * X - 2) + 4.f * P(2 * X - 1) + 6.f * P(2 * X) +
                     4.f * P(2 * X + 1) + P(2 * X + 2)) *
                    (1.f / 16);
    return D;
  }
  /// down_y of down_x: rows halved.
  Func downY(Func DX, bool HasC, const std::string &Name) {
    Func D(Name);
    auto P = [&](Expr Row) { return at(DX, X, Row, HasC); };
    D(args(HasC)) = (P(2 * Y - 2) + 4.f * P(2 * Y - 1) + 6.f * P(2 * Y) +
                     4.f * P(2 * Y + 1) + P(2 * Y + 2)) *
                    (1.f / 16);
    return D;
  }
  /// up_x of F (InW x InH): columns doubled, read at row clamp(y).
  Func upX(Func F, Expr InW, Expr InH, const std::string &Name) {
    Func U(Name);
    Expr R = clamp(Y, 0, InH - 1);
    auto P = [&](Expr Col) { return F(clamp(Col, 0, InW - 1), R, C); };
    U(X, Y, C) = (P((X + 1) / 2 - 1) + 3.f * P(X / 2) + 3.f * P((X + 1) / 2) +
                  P(X / 2 + 1)) *
                 (1.f / 8);
    return U;
  }
  /// up_y of up_x: rows doubled.
  Func upY(Func UX, const std::string &Name) {
    Func U(Name);
    auto P = [&](Expr Row) { return UX(X, Row, C); };
    U(X, Y, C) = (P((Y + 1) / 2 - 1) + 3.f * P(Y / 2) + 3.f * P((Y + 1) / 2) +
                  P(Y / 2 + 1)) *
                 (1.f / 8);
    return U;
  }

  void generate() {
    // The driver's images start at 0; saying so lets Halide resolve the
    // parities of the upsampling's floor((x + k) / 2) per unrolled row.
    for (int D = 0; D < 3; ++D) {
      ImgA.dim(D).set_min(0);
      ImgB.dim(D).set_min(0);
    }
    Mask.dim(0).set_min(0);
    Mask.dim(1).set_min(0);

    Expr W[kLevels], H[kLevels];
    W[0] = ImgA.dim(0).extent();
    H[0] = ImgA.dim(1).extent();
    for (int L = 1; L < kLevels; ++L) {
      W[L] = (W[L - 1] + 1) / 2;
      H[L] = (H[L - 1] + 1) / 2;
    }

    // Gaussian pyramids; level 0 is the input.
    Func GA[kLevels], GB[kLevels], GM[kLevels];
    Func DXA[kLevels], DXB[kLevels], DXM[kLevels];
    GA[0](X, Y, C) = ImgA(X, Y, C);
    GB[0](X, Y, C) = ImgB(X, Y, C);
    GM[0](X, Y) = Mask(X, Y);
    for (int L = 1; L < kLevels; ++L) {
      const std::string S = std::to_string(L);
      DXA[L] = downX(GA[L - 1], W[L - 1], H[L - 1], true, "down_x_a" + S);
      DXB[L] = downX(GB[L - 1], W[L - 1], H[L - 1], true, "down_x_b" + S);
      DXM[L] = downX(GM[L - 1], W[L - 1], H[L - 1], false, "down_x_m" + S);
      GA[L] = downY(DXA[L], true, "gauss_a" + S);
      GB[L] = downY(DXB[L], true, "gauss_b" + S);
      GM[L] = downY(DXM[L], false, "gauss_m" + S);
    }

    // The blended pyramid and the collapse, from the top.
    const int Top = kLevels - 1;
    Func Sum[kLevels];
    Sum[Top] = Func("blend3");
    Sum[Top](X, Y, C) = GM[Top](X, Y) * GA[Top](X, Y, C) +
                        (1.f - GM[Top](X, Y)) * GB[Top](X, Y, C);
    std::vector<Func> UpXs[kLevels]; // The up_x stages feeding level L.
    for (int L = Top - 1; L >= 0; --L) {
      const std::string S = std::to_string(L);
      Func UXA = upX(GA[L + 1], W[L + 1], H[L + 1], "up_x_a" + S);
      Func UXB = upX(GB[L + 1], W[L + 1], H[L + 1], "up_x_b" + S);
      Func UXS = upX(Sum[L + 1], W[L + 1], H[L + 1], "up_x_sum" + S);
      Func UA = upY(UXA, "up_a" + S), UB = upY(UXB, "up_b" + S),
           US = upY(UXS, "up_sum" + S);
      UpXs[L] = {UXA, UXB, UXS};
      Expr M = GM[L](X, Y);
      Expr Blend = M * (GA[L](X, Y, C) - UA(X, Y, C)) +
                   (1.f - M) * (GB[L](X, Y, C) - UB(X, Y, C));
      if (L > 0) {
        Sum[L] = Func("sum" + S);
        Sum[L](X, Y, C) = Blend + US(X, Y, C);
      } else {
        Out(X, Y, C) = Blend + US(X, Y, C);
      }
    }

    for (int D = 0; D < 3; ++D)
      Out.dim(D).set_min(0);

    if (get_target().has_gpu_feature()) {
      Var XO("xo"), YO("yo"), XI("xi"), YI("yi"), YV("yv");
      // Rows per thread of the Gaussian levels and of the collapse (chosen
      // to keep registers at or under 128 per thread where the grid is
      // large: two blocks per SM).
      const int GaussRows[kLevels] = {0, 4, 4, 2};
      const int SumRows[kLevels] = {4, 2, 2, 0};
      for (int L = 1; L < kLevels; ++L) {
        for (auto [G, DX] : {std::pair{GA[L], DXA[L]}, std::pair{GB[L], DXB[L]},
                             std::pair{GM[L], DXM[L]}}) {
          Func GF = G, DF = DX;
          GF.compute_root()
              .tile(X, Y, XO, YO, XI, YI, 32, 8 * GaussRows[L],
                    TailStrategy::GuardWithIf)
              .split(YI, YI, YV, GaussRows[L])
              .reorder(YV, XI, YI, XO, YO)
              .unroll(YV)
              .gpu_blocks(XO, YO)
              .gpu_threads(XI, YI);
          if (GF.dimensions() == 3)
            GF.gpu_blocks(C);
          // 2k + 3 rows of down_x for k rows of down_y (bound_extent: the
          // guard at the image's bottom makes the extent non-constant).
          DF.compute_at(GF, XI)
              .bound_extent(Y, 2 * GaussRows[L] + 3)
              .unroll(Y);
        }
      }
      Out.bound(C, 0, 3);
      // The top level's blend: a small kernel of its own (inlined into
      // sum_2's upsampling it would cost that kernel registers).
      Sum[Top]
          .compute_root()
          .bound(C, 0, 3)
          .gpu_tile(X, Y, XI, YI, 32, 8, TailStrategy::GuardWithIf)
          .reorder(C, XI, YI, X, Y)
          .unroll(C);
      for (int L = Top - 1; L >= 0; --L) {
        Func F = L ? Sum[L] : Func(Out);
        F.compute_root()
            .tile(X, Y, XO, YO, XI, YI, 32, 8 * SumRows[L],
                  TailStrategy::GuardWithIf)
            .split(YI, YI, YV, SumRows[L])
            .reorder(C, YV, XI, YI, XO, YO)
            .unroll(C)
            .unroll(YV)
            .gpu_blocks(XO, YO)
            .gpu_threads(XI, YI);
        for (Func UX : UpXs[L])
          // k / 2 + 2 coarse rows of up_x for k rows (k even) of up_y.
          UX.compute_at(F, XI)
              .bound_extent(Y, SumRows[L] / 2 + 2)
              .reorder(C, Y)
              .unroll(C)
              .unroll(Y);
      }
    } else {
      for (int L = 1; L < kLevels; ++L)
        for (Func F : {GA[L], GB[L], GM[L]})
          hlbench::cpuRoot(F);
      for (int L = Top; L >= 1; --L)
        hlbench::cpuRoot(Sum[L]);
      for (int L = Top - 1; L >= 0; --L)
        for (Func UX : UpXs[L])
          hlbench::cpuRoot(UX);
      hlbench::cpuRoot(Out);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Pyramid, pyramid)
