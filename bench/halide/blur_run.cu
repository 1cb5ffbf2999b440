//===- blur_run.cu - Runs the Halide peer of samples/fuse/blur.cu ---------===//
//
// Same command line, input, reference, tolerance and RESULT line as
// samples/fuse/blur.cu, whose reference and tolerance it takes by including
// the sample without its main(); the pipeline is
// bench/halide/blur_generator.cpp, AOT-compiled (build.sh).
//
//   ./blur [W [H]] [--seed=N] [--reps=N] [--warmup=N]   # default 6400 x 4800
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#include "../../samples/fuse/blur.cu"

#include "blur.h"

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "blur", {6400, 4800});
  const image::Size S = image::size(A);
  if (S.W < 128 || S.H < 32)
    harness::fail("the Halide blur needs W >= 128, H >= 32 (one tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceBlur(In, S);
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H));
  hlbench::Image HOut(In.size(), hlbench::planar(S.W, S.H));
  return hlbench::runAndReport(
      A, "blur", HOut, [&] { return blur(HIn.raw(), HOut.raw()); },
      hlbench::against(Ref, harness::Everywhere(), kTolerance),
      2.0 * double(HIn.bytes()));
}
