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
#include "../../samples/fuse/interpolate.cu"

#include "interpolate.h"

int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);
  hlbench::init();
  hlbench::Image HIn(P.In, hlbench::planar(P.S.W, P.S.H, 4));
  hlbench::Image HOut(size_t(P.S.pixels()) * 3,
                      hlbench::planar(P.S.W, P.S.H, 3));
  return hlbench::runAndReport(
      P.A, "interpolate", HOut,
      // The Halide pipeline (the sample's kernel of that name takes float
      // pointers).
      [&] { return interpolate(HIn.raw(), HOut.raw()); },
      hlbench::against(P.Ref, harness::Everywhere(), kTolerance),
      bytesMoved(P.S));
}
