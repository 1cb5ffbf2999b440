//===- blur_run.cu - Runs the Halide peer of samples/fuse/blur.cu ---------===//
//
// Same command line, input, reference, tolerance and RESULT line as
// samples/fuse/blur.cu; the pipeline is bench/halide/blur_generator.cpp,
// AOT-compiled (build.sh). The reference is the sample's, copied.
//
//   ./blur [W [H]] [--seed=N] [--reps=N] [--warmup=N]   # default 6400 x 4800
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#include "blur.h"

namespace {

/// samples/fuse/blur.cu's referenceBlur.
std::vector<double> referenceBlur(const std::vector<float> &Input,
                                  const image::Size &S) {
  const int W = S.W, H = S.H;
  const std::vector<double> In = image::toDouble(Input);
  std::vector<double> BlurX(In.size()), Out(In.size());
  auto At = [W](int Y, int X) { return size_t(Y) * W + X; };
  image::forRows(H, [&](int Y) {
    for (int X = 0; X < W; ++X)
      BlurX[At(Y, X)] =
          (In[At(Y, image::clamp(X - 1, 0, W - 1))] + In[At(Y, X)] +
           In[At(Y, image::clamp(X + 1, 0, W - 1))]) /
          3;
  });
  image::forRows(H, [&](int Y) {
    for (int X = 0; X < W; ++X)
      Out[At(Y, X)] =
          (BlurX[At(image::clamp(Y - 1, 0, H - 1), X)] + BlurX[At(Y, X)] +
           BlurX[At(image::clamp(Y + 1, 0, H - 1), X)]) /
          3;
  });
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "blur", {6400, 4800});
  const image::Size S = image::size(A);
  if (S.W < 128 || S.H < 32)
    harness::fail("the Halide blur needs W >= 128, H >= 32 (one tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceBlur(In, S);
  const double Tolerance = 1e-5; // The sample's.
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H));
  hlbench::Image HOut(In.size(), hlbench::planar(S.W, S.H));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] { hlbench::check(blur(HIn.raw(), HOut.raw()), "blur"); },
      [&] {
        return harness::compareFloat(HOut.download(), Ref,
                                     harness::Everywhere(), Tolerance);
      });
  return harness::report(A, Res, 2.0 * double(HIn.bytes()));
}
