//===- unsharp_run.cu - Runs the Halide peer of samples/fuse/unsharp.cu ---===//
//
// Same command line, input, reference (with its ties), tolerance and RESULT
// line as samples/fuse/unsharp.cu, whose reference and check it takes by
// including the sample without its main(); the pipeline is
// bench/halide/unsharp_generator.cpp, AOT-compiled (build.sh).
//
//   ./unsharp [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 4256 x 2832 x 3
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#include "../../samples/fuse/unsharp.cu"

#include "unsharp.h"

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "unsharp", {4256, 2832});
  const image::Size S = image::size(A, 3);
  if (S.W < 128 || S.H < 32)
    harness::fail("the Halide unsharp needs W >= 128, H >= 32 (one tile)");
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  std::vector<Tie> Ties;
  std::vector<double> Ref = referenceUnsharp(In, S, Ties);
  hlbench::init();
  hlbench::Image HIn(In, hlbench::planar(S.W, S.H, S.C));
  hlbench::Image HOut(In.size(), hlbench::planar(S.W, S.H, S.C));
  return hlbench::runAndReport(
      A, "unsharp", HOut, [&] { return unsharp(HIn.raw(), HOut.raw()); },
      [&](const std::vector<float> &Got) {
        return compareWithTies(Got, Ties, Ref);
      },
      2.0 * double(HIn.bytes()));
}
