//===- interpolate_run.cu - Runs the Halide peer of fuse/interpolate.cu ---===//
//
// Same command line, input (RGBA, alpha 0 or 1), reference, tolerance and
// RESULT line as samples/fuse/interpolate.cu, whose input, reference and
// tolerance it takes by including the sample without its main(); the
// pipeline is bench/halide/interpolate_generator.cpp, AOT-compiled
// (build.sh).
//
//   ./interpolate [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 2560 x 1536
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177 // The sample's pipeline, not called here.
#include "../../samples/fuse/interpolate.cu"
#pragma nv_diagnostic pop

#include "interpolate.h"

int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);
  hlbench::init();
  hlbench::Image HIn(P.In, hlbench::planar(P.S.W, P.S.H, 4));
  hlbench::Image HOut(size_t(P.S.pixels()) * 3,
                      hlbench::planar(P.S.W, P.S.H, 3));
  harness::Result Res = hlbench::measure(
      P.A, [&] { HOut.poison(); },
      [&] {
        // The Halide pipeline (the sample's kernel of that name takes
        // float pointers).
        hlbench::check(interpolate(HIn.raw(), HOut.raw()), "interpolate");
      },
      [&] {
        return harness::compareFloat(HOut.download(), P.Ref,
                                     harness::Everywhere(), kTolerance);
      });
  return harness::report(P.A, Res, bytesMoved(P.S));
}
