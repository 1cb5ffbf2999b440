//===- harris_generator.cpp - Halide peer of samples/fuse/harris.cu -------===//
//
// Harris corner response as in samples/fuse/harris.cu: the same 11 stages,
// constants and float arithmetic, on the same guarded domains. The output
// buffer is the interior the sample writes, 2 <= x < W - 2, 2 <= y < H - 2
// (the driver passes that window of the W x H image, min (2, 2)); every read
// then stays inside the W x H input, so no boundary condition is needed, as
// in the sample.
//
//   Ix, Iy        Sobel / 12           Ixx, Iyy, Ixy  products
//   Sxx, Syy, Sxy 3x3 box sums         det, trace     of the tensor
//   out           det - 0.04 trace^2
//
// GPU schedule (the structure of Halide's apps/harris GPU schedule: the
// gradients staged per block in shared memory, everything after them
// inlined into the output): blocks of 32 x 32 outputs, 256 threads, each
// 4 rows of one column (unrolled, so that the box sums of neighbouring rows
// share their shared-memory reads). Ix and Iy (one Tuple, so that they share
// their input loads) are computed for the block's 34 x 34 window into
// shared memory, that window spread over the 256 threads (5 rounds). One
// kernel; the input is read once plus its halo.
//
//===----------------------------------------------------------------------===//

#include "schedule_util.h"

using namespace Halide;

class Harris : public Generator<Harris> {
public:
  Input<Buffer<float, 2>> In{"in"};
  Output<Buffer<float, 2>> Out{"out"};

  void generate() {
    Var X("x"), Y("y");
    const float Sensitivity = 0.04f;
    auto I = [&](int DX, int DY) { return In(X + DX, Y + DY); };
    // The sample's expressions, term for term.
    Expr Ix = (-I(-1, -1) + I(1, -1) - 2.f * I(-1, 0) + 2.f * I(1, 0) -
               I(-1, 1) + I(1, 1)) /
              12.f;
    Expr Iy = (-I(-1, -1) - 2.f * I(0, -1) - I(1, -1) + I(-1, 1) +
               2.f * I(0, 1) + I(1, 1)) /
              12.f;
    Func Grad("grad"); // (Ix, Iy)
    Grad(X, Y) = {Ix, Iy};
    Func Ixx("ixx"), Iyy("iyy"), Ixy("ixy");
    Ixx(X, Y) = Grad(X, Y)[0] * Grad(X, Y)[0];
    Iyy(X, Y) = Grad(X, Y)[1] * Grad(X, Y)[1];
    Ixy(X, Y) = Grad(X, Y)[0] * Grad(X, Y)[1];
    // The sample's sums: rows y - 1 .. y + 1, columns x - 1 .. x + 1.
    auto BoxSum = [&](Func F) {
      return F(X - 1, Y - 1) + F(X, Y - 1) + F(X + 1, Y - 1) + F(X - 1, Y) +
             F(X, Y) + F(X + 1, Y) + F(X - 1, Y + 1) + F(X, Y + 1) +
             F(X + 1, Y + 1);
    };
    Func Sxx("sxx"), Syy("syy"), Sxy("sxy"), Det("det"), Trace("trace");
    Sxx(X, Y) = BoxSum(Ixx);
    Syy(X, Y) = BoxSum(Iyy);
    Sxy(X, Y) = BoxSum(Ixy);
    Det(X, Y) = Sxx(X, Y) * Syy(X, Y) - Sxy(X, Y) * Sxy(X, Y);
    Trace(X, Y) = Sxx(X, Y) + Syy(X, Y);
    Out(X, Y) = Det(X, Y) - Sensitivity * Trace(X, Y) * Trace(X, Y);

    if (get_target().has_gpu_feature()) {
      Var XO("xo"), YO("yo"), XI("xi"), YI("yi"), YV("yv"), T("t");
      Out.tile(X, Y, XO, YO, XI, YI, 32, 32)
          .split(YI, YI, YV, 4)
          .reorder(YV, XI, YI, XO, YO)
          .unroll(YV)
          .fuse(XI, YI, T)
          .gpu_blocks(XO, YO)
          .gpu_threads(T);
      Grad.compute_at(Out, XO);
      hlbench::threadsOver(Grad, X, Y, "grad");
    } else {
      hlbench::cpuRoot(Grad);
      hlbench::cpuRoot(Out);
    }
  }
};

HALIDE_REGISTER_GENERATOR(Harris, harris)
