//===- harris_run.cu - Runs the Halide peer of samples/fuse/harris.cu -----===//
//
// Same command line, input, reference, tolerance, checked domain (the
// interior; the border must keep its poison) and RESULT line as
// samples/fuse/harris.cu, whose reference, size check, tolerance and
// checked domain it takes by including the sample without its main(); the
// pipeline is bench/halide/harris_generator.cpp, AOT-compiled (build.sh),
// given the interior window of the output image.
//
//   ./harris [W [H]] [--seed=N] [--reps=N] [--warmup=N]   # 4256 x 2832
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#include "../../samples/fuse/harris.cu"

#include "harris.h"

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "harris", {4256, 2832});
  const image::Size S = imageSize(A);
  if (S.W < 36 || S.H < 36)
    harness::fail("the Halide harris needs W, H >= 36 (one 32 x 32 tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceHarris(In, S);
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H));
  // The whole W x H output image, seen by Halide as its interior window.
  hlbench::Image HOut(In.size(), {{2, S.W - 4, 1}, {2, S.H - 4, S.W}},
                      size_t(2) * S.W + 2);
  return hlbench::runAndReport(
      A, "harris", HOut, [&] { return harris(HIn.raw(), HOut.raw()); },
      hlbench::against(Ref, Interior{S.W, S.H}, kTolerance), bytesMoved(S));
}
