//===- bilateral_run.cu - Runs the Halide peer of fuse/bilateral.cu -------===//
//
// Same command line, input, reference, tolerance and RESULT line as
// samples/fuse/bilateral.cu, whose reference, size checks and tolerance it
// takes by including the sample without its main(); the pipeline is
// bench/halide/bilateral_generator.cpp, AOT-compiled (build.sh).
//
//   ./bilateral [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 2560 x 1536
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#include "../../samples/fuse/bilateral.cu"

#include "bilateral.h"

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "bilateral", {2560, 1536});
  const image::Size S = imageSize(A);
  if (S.W < 32 || S.H < 8)
    harness::fail("the Halide bilateral needs W >= 32, H >= 8 (one tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceBilateralGrid(In, S.W, S.H);
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H));
  hlbench::Image HOut(In.size(), hlbench::planar(S.W, S.H));
  return hlbench::runAndReport(
      A, "bilateral", HOut, [&] { return bilateral(HIn.raw(), HOut.raw()); },
      hlbench::against(Ref, harness::Everywhere(), kTolerance),
      2.0 * double(HIn.bytes()));
}
