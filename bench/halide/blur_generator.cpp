//===- blur_generator.cpp - Halide peer of samples/fuse/blur.cu -----------===//
//
// The two 3-tap box blurs of samples/fuse/blur.cu, with the same clamped
// borders (repeat_edge) and the same float arithmetic:
//
//   blur_x(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3
//   out(x, y)    = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3
//
// GPU schedule (the style of Halide's apps/blur "SlideVectorize"): blocks of
// 128 x 32 output pixels, 32 x 4 threads, each thread a 4 x 8 patch (4
// columns vectorized, 8 rows unrolled). blur_x is computed per thread, its
// 4 x 10 patch in registers, so every blur_x value a thread needs is
// computed once by it and the input is read once, plus a 2-row halo per 32
// rows. One kernel.
//
// build.sh builds it; by hand:
//   g++ -std=c++17 -I/usr/include/halide14 -I bench/halide
//       bench/halide/blur_generator.cpp /usr/src/halide14/GenGen.cpp
//       -o blur_gen -lHalide14 -ldl -lpthread
//   ./blur_gen -g blur -o . -e static_library,h
//       target=x86-64-linux-avx-avx2-f16c-fma-sse41-cuda-cuda_capability_86
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

using namespace Halide;

class Blur : public Generator<Blur> {
public:
  Input<Buffer<float, 2>> In{"in"};
  Output<Buffer<float, 2>> Out{"out"};

  void generate() {
    Var X("x"), Y("y");
    Func Clamped = BoundaryConditions::repeat_edge(In);
    Func BlurX("blur_x");
    BlurX(X, Y) = (Clamped(X - 1, Y) + Clamped(X, Y) + Clamped(X + 1, Y)) / 3.f;
    Out(X, Y) = (BlurX(X, Y - 1) + BlurX(X, Y) + BlurX(X, Y + 1)) / 3.f;

    if (get_target().has_gpu_feature()) {
      Var XO("xo"), YO("yo"), XI("xi"), YI("yi"), XV("xv"), YV("yv");
      Out.tile(X, Y, XO, YO, XI, YI, 128, 32)
          .split(XI, XI, XV, 4)
          .split(YI, YI, YV, 8)
          .reorder(XV, YV, XI, YI, XO, YO)
          .vectorize(XV)
          .unroll(YV)
          .gpu_blocks(XO, YO)
          .gpu_threads(XI, YI);
      BlurX.compute_at(Out, XI).vectorize(X).unroll(Y);
    } else {
      hlbench::cpuRoot(BlurX);
      hlbench::cpuRoot(Out);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Blur, blur)
