//===- pyramid_run.cu - Runs the Halide peer of samples/fuse/pyramid.cu ---===//
//
// Same command line, inputs (A, B, then the mask, from one Rng), reference,
// tolerance and RESULT line as samples/fuse/pyramid.cu, whose reference and
// tolerance it takes by including the sample without its main(); the
// pipeline is bench/halide/pyramid_generator.cpp, AOT-compiled (build.sh).
//
//   ./pyramid [W [H]] [--seed=N] [--reps=N] [--warmup=N]  # 3840 x 2160 x 3
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#pragma nv_diagnostic push
#pragma nv_diag_suppress 177 // The sample's pipeline, not called here.
#include "../../samples/fuse/pyramid.cu"
#pragma nv_diagnostic pop

#include "pyramid.h"

int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);
  hlbench::init();
  hlbench::Image HA(P.ImgA, hlbench::planar(P.S.W, P.S.H, 3));
  hlbench::Image HB(P.ImgB, hlbench::planar(P.S.W, P.S.H, 3));
  hlbench::Image HMask(P.Mask, hlbench::planar(P.S.W, P.S.H));
  hlbench::Image HOut(size_t(P.S.elements()), hlbench::planar(P.S.W, P.S.H, 3));
  harness::Result Res = hlbench::measure(
      P.A, [&] { HOut.poison(); },
      [&] {
        hlbench::check(pyramid(HA.raw(), HB.raw(), HMask.raw(), HOut.raw()),
                       "pyramid");
      },
      [&] {
        return harness::compareFloat(HOut.download(), P.Ref,
                                     harness::Everywhere(), kTolerance);
      });
  return harness::report(P.A, Res, bytesMoved(P.S));
}
