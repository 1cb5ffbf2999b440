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
  const harness::Args &A = P.A;
  const image::Size &S = P.S;
  const std::vector<float> &ImgA = P.ImgA, &ImgB = P.ImgB, &Mask = P.Mask;
  const std::vector<double> &Ref = P.Ref;
  hlbench::init();
  hlbench::Image HA(ImgA, hlbench::planar(S.W, S.H, 3));
  hlbench::Image HB(ImgB, hlbench::planar(S.W, S.H, 3));
  hlbench::Image HMask(Mask, hlbench::planar(S.W, S.H));
  hlbench::Image HOut(size_t(S.elements()), hlbench::planar(S.W, S.H, 3));
  harness::Result Res = hlbench::measure(
      A, [&] { HOut.poison(); },
      [&] {
        hlbench::check(pyramid(HA.raw(), HB.raw(), HMask.raw(), HOut.raw()),
                       "pyramid");
      },
      [&] {
        return harness::compareFloat(HOut.download(), Ref,
                                     harness::Everywhere(), kTolerance);
      });
  return harness::report(A, Res, bytesMoved(S));
}
