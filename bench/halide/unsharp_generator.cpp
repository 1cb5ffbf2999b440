//===- unsharp_generator.cpp - Halide peer of samples/fuse/unsharp.cu -----===//
//
// Unsharp Mask as in samples/fuse/unsharp.cu, channel-planar W x H x 3, the
// same four stages, constants, float arithmetic and clamped borders
// (repeat_edge along x and y):
//
//   blur_x  = [1 4 6 4 1] / 16 along x     blur_y = the same along y
//   sharpen = (1 + 3) in - 3 blur_y        out    = |in - blur_y| < 0.001
//                                                   ? in : sharpen
//
// GPU schedule (as blur_generator.cpp): blocks of 128 x 32 pixels of one
// channel (the channel is the grid's z), 32 x 4 threads, each a 4 x 8 patch
// (4 columns vectorized, 8 rows unrolled); blur_x computed per thread into
// registers (4 x 12), blur_y, sharpen and the mask inlined into the output.
// One kernel; the input is read once plus a 4-row halo per 32 rows.
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

using namespace Halide;

class Unsharp : public Generator<Unsharp> {
public:
  Input<Buffer<float, 3>> In{"in"};
  Output<Buffer<float, 3>> Out{"out"};

  void generate() {
    Var X("x"), Y("y"), C("c");
    // The sample's weights: multiples of 1/16, exact in float.
    const float Weights[5] = {1.f / 16, 4.f / 16, 6.f / 16, 4.f / 16,
                              1.f / 16};
    const float Weight = 3.f, Threshold = 0.001f;
    Func Clamped = BoundaryConditions::repeat_edge(
        In, {{In.dim(0).min(), In.dim(0).extent()},
             {In.dim(1).min(), In.dim(1).extent()}});
    Func BlurX("blur_x"), BlurY("blur_y"), Sharpen("sharpen");
    BlurX(X, Y, C) = Weights[0] * Clamped(X - 2, Y, C) +
                     Weights[1] * Clamped(X - 1, Y, C) +
                     Weights[2] * Clamped(X, Y, C) +
                     Weights[3] * Clamped(X + 1, Y, C) +
                     Weights[4] * Clamped(X + 2, Y, C);
    BlurY(X, Y, C) = Weights[0] * BlurX(X, Y - 2, C) +
                     Weights[1] * BlurX(X, Y - 1, C) +
                     Weights[2] * BlurX(X, Y, C) +
                     Weights[3] * BlurX(X, Y + 1, C) +
                     Weights[4] * BlurX(X, Y + 2, C);
    Sharpen(X, Y, C) = (1.f + Weight) * In(X, Y, C) - Weight * BlurY(X, Y, C);
    Out(X, Y, C) = select(abs(In(X, Y, C) - BlurY(X, Y, C)) < Threshold,
                          In(X, Y, C), Sharpen(X, Y, C));

    if (get_target().has_gpu_feature()) {
      Var XO("xo"), YO("yo"), XI("xi"), YI("yi"), XV("xv"), YV("yv");
      Out.tile(X, Y, XO, YO, XI, YI, 128, 32)
          .split(XI, XI, XV, 4)
          .split(YI, YI, YV, 8)
          .reorder(XV, YV, XI, YI, XO, YO, C)
          .vectorize(XV)
          .unroll(YV)
          .gpu_blocks(XO, YO, C)
          .gpu_threads(XI, YI);
      BlurX.compute_at(Out, XI).vectorize(X).unroll(Y);
    } else {
      hlbench::cpuRoot(BlurX);
      hlbench::cpuRoot(BlurY);
      hlbench::cpuRoot(Out);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Unsharp, unsharp)
