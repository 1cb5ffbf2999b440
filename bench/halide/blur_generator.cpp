//===- blur_generator.cpp - Halide peer of samples/fuse/blur.cu -----------===//
//
// The Halide peer the fuse bench will compare against (issue 6): the same
// two 3-tap box blurs with clamped borders as samples/fuse/blur.cu, with a
// manual GPU schedule (32 x 8 tiles, the horizontal blur computed per tile).
// The first of the seven; not yet wired into bench/run.py, and not yet run
// on the GPU (docs/fuse.md says how it builds, checked on this machine).
//
//   g++ -std=c++17 -I/usr/include/halide14 bench/halide/blur_generator.cpp \
//       /usr/src/halide14/GenGen.cpp -o blur_gen -lHalide14 -ldl -lpthread
//   ./blur_gen -g blur -o . -e static_library,h \
//       target=x86-64-linux-avx-avx2-f16c-fma-sse41-cuda-cuda_capability_86
//
//===----------------------------------------------------------------------===//

#include "Halide.h"

using namespace Halide;

class Blur : public Generator<Blur> {
public:
  Input<Buffer<float, 2>> In{"in"};
  Output<Buffer<float, 2>> Out{"out"};

  void generate() {
    Var X("x"), Y("y"), XI("xi"), YI("yi");
    Func Clamped = BoundaryConditions::repeat_edge(In);
    Func BlurX("blur_x");
    BlurX(X, Y) = (Clamped(X - 1, Y) + Clamped(X, Y) + Clamped(X + 1, Y)) / 3.f;
    Out(X, Y) = (BlurX(X, Y - 1) + BlurX(X, Y) + BlurX(X, Y + 1)) / 3.f;
    Out.gpu_tile(X, Y, XI, YI, 32, 8);
    BlurX.compute_at(Out, X).gpu_threads(X, Y);
  }
};

HALIDE_REGISTER_GENERATOR(Blur, blur)
