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
#include "../../samples/fuse/pyramid.cu"

#include "pyramid.h"

int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);
  hlbench::init();
  hlbench::Image HA(P.ImgA, hlbench::planar(P.S.W, P.S.H, 3));
  hlbench::Image HB(P.ImgB, hlbench::planar(P.S.W, P.S.H, 3));
  hlbench::Image HMask(P.Mask, hlbench::planar(P.S.W, P.S.H));
  hlbench::Image HOut(size_t(P.S.elements()), hlbench::planar(P.S.W, P.S.H, 3));
  return hlbench::runAndReport(
      P.A, "pyramid", HOut,
      [&] { return pyramid(HA.raw(), HB.raw(), HMask.raw(), HOut.raw()); },
      hlbench::against(P.Ref, harness::Everywhere(), kTolerance),
      bytesMoved(P.S));
}
