//===- bilateral_generator.cpp - Halide peer of samples/fuse/bilateral.cu -===//
//
// Bilateral Grid as in samples/fuse/bilateral.cu, which follows Halide's
// apps/bilateral_grid: s = 8, r = 0.1, the histogram gathered per cell over
// its 8 x 8 pixels (in the same order, so the same float sums), the three
// [1 4 6 4 1] blurs, the trilinear slice, the division.
//
// Two details match the sample rather than Halide's app:
//
//  - The two decisions that pick a cell are rounded as the sample rounds
//    them, with one rounding: the histogram level int(fma(v, 10, 0.5)) and
//    the slice's fraction fma(v, 10, -zi). Halide 14 has no fma; both are
//    computed in double, where v * 10 +- c is exact for a float v in
//    [0, 1] (or too small to matter), and rounded to float once, which is
//    the fma's result. A value at a level boundary then lands in the same
//    level as in the sample and its reference.
//  - The grid is Halide's unbounded one (bounds inference sizes it), where
//    the sample stores it with a 2-cell apron and clamps its blurs at the
//    apron's edge. The sample's comment shows that the clamps change only
//    apron cells the slice never reads: the output is the same function.
//
// GPU schedule: Halide's own apps/bilateral_grid GPU schedule. The z blur
// in 8 x 8-cell tiles, each thread one cell column; the histogram computed
// per tile in shared memory (zeroed, then each thread gathers its cell's 64
// pixels into its own column: no atomics), then blurred in z: one kernel.
// The x and y blurs: one kernel each, the two sums of a cell as a float2
// (storage reordered, channel innermost), two rows per thread. The slice
// and the division: one kernel, 32 x 8 pixels per block.
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

using namespace Halide;

class Bilateral : public Generator<Bilateral> {
public:
  Input<Buffer<float, 2>> In{"in"};
  Output<Buffer<float, 2>> Out{"out"};

  void generate() {
    const int S = 8;            // kSigmaS
    const float InvR = 10.f;    // kInvSigmaR = 1 / 0.1f, exactly 10
    Var X("x"), Y("y"), Z("z"), C("c");

    // clampInput, read with clamped coordinates where buildGrid reads it.
    Func Clamped("clamped");
    Clamped(X, Y) = clamp(In(X, Y), 0.f, 1.f);
    Func ClampedEdge = BoundaryConditions::repeat_edge(
        Clamped, {{In.dim(0).min(), In.dim(0).extent()},
                  {In.dim(1).min(), In.dim(1).extent()}});

    // buildGrid: cell (x, y) sums the pixels (8x + i - 4, 8y + j - 4),
    // j outer, i inner, whose level int(fma(v, 10, 0.5)) is z.
    RDom R(0, S, 0, S);
    Expr V = ClampedEdge(X * S + R.x - S / 2, Y * S + R.y - S / 2);
    Expr Level = cast<int>(cast<float>(cast<double>(V) * Expr(double(InvR)) + Expr(0.5)));
    Func Histogram("histogram");
    Histogram(X, Y, Z, C) = 0.f;
    Histogram(X, Y, Level, C) += select(C == 0, V, 1.f);

    // [1 4 6 4 1] along z, x, y, as the sample writes them.
    Func BlurZ("blurz"), BlurX("blurx"), BlurY("blury");
    BlurZ(X, Y, Z, C) = Histogram(X, Y, Z - 2, C) +
                        4.f * Histogram(X, Y, Z - 1, C) +
                        6.f * Histogram(X, Y, Z, C) +
                        4.f * Histogram(X, Y, Z + 1, C) +
                        Histogram(X, Y, Z + 2, C);
    BlurX(X, Y, Z, C) = BlurZ(X - 2, Y, Z, C) + 4.f * BlurZ(X - 1, Y, Z, C) +
                        6.f * BlurZ(X, Y, Z, C) + 4.f * BlurZ(X + 1, Y, Z, C) +
                        BlurZ(X + 2, Y, Z, C);
    BlurY(X, Y, Z, C) = BlurX(X, Y - 2, Z, C) + 4.f * BlurX(X, Y - 1, Z, C) +
                        6.f * BlurX(X, Y, Z, C) + 4.f * BlurX(X, Y + 1, Z, C) +
                        BlurX(X, Y + 2, Z, C);

    // slice: the sample's zi = int(v * 10), zf = fma(v, 10, -zi), lerps.
    Expr Val = Clamped(X, Y);
    Expr ZI = cast<int>(Val * InvR);
    Expr ZF = cast<float>(cast<double>(Val) * Expr(double(InvR)) - cast<double>(ZI));
    Expr XF = cast<float>(X % S) / float(S);
    Expr YF = cast<float>(Y % S) / float(S);
    Expr GX = X / S, GY = Y / S;
    auto Lerp = [](Expr A, Expr B, Expr W) { return A * (1.f - W) + B * W; };
    auto G = [&](int DX, int DY, int DZ) {
      return BlurY(GX + DX, GY + DY, ZI + DZ, C);
    };
    Func Interpolated("interpolated");
    Interpolated(X, Y, C) =
        Lerp(Lerp(Lerp(G(0, 0, 0), G(1, 0, 0), XF),
                  Lerp(G(0, 1, 0), G(1, 1, 0), XF), YF),
             Lerp(Lerp(G(0, 0, 1), G(1, 0, 1), XF),
                  Lerp(G(0, 1, 1), G(1, 1, 1), XF), YF),
             ZF);
    // normalize.
    Out(X, Y) = Interpolated(X, Y, 0) / Interpolated(X, Y, 1);

    if (get_target().has_gpu_feature()) {
      // Halide's apps/bilateral_grid GPU schedule.
      Var XI("xi"), YI("yi"), ZO("zo"), ZII("zi");
      BlurZ.compute_root().reorder(C, Z, X, Y).gpu_tile(X, Y, XI, YI, 8, 8);
      Histogram.reorder(C, Z, X, Y).compute_at(BlurZ, X).gpu_threads(X, Y);
      Histogram.update()
          .reorder(C, R.x, R.y, X, Y)
          .gpu_threads(X, Y)
          .unroll(C);
      for (Func Blur : {BlurX, BlurY})
        Blur.compute_root()
            .reorder(C, X, Y, Z)
            .reorder_storage(C, X, Y, Z)
            .vectorize(C)
            .unroll(Y, 2, TailStrategy::RoundUp)
            .gpu_tile(X, Y, Z, XI, YI, ZII, 32, 8, 1, TailStrategy::RoundUp);
      Out.compute_root().gpu_tile(X, Y, XI, YI, 32, 8);
      Interpolated.compute_at(Out, XI).vectorize(C);
    } else {
      Clamped.compute_root();
      Histogram.compute_root().parallel(Y);
      Histogram.update().parallel(Y);
      BlurZ.compute_root().parallel(Y);
      BlurX.compute_root().parallel(Y);
      BlurY.compute_root().parallel(Y);
      Out.parallel(Y);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Bilateral, bilateral)
