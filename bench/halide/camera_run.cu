//===- camera_run.cu - Runs the Halide peer of samples/fuse/camera.cu -----===//
//
// Same command line, input (a raw mosaic of integers in [0, 1023]), colour
// matrix and tone curve, reference, tolerance and RESULT line as
// samples/fuse/camera.cu, whose size check, input, tables, reference and
// tolerance it takes by including the sample without its main(); the
// pipeline is bench/halide/camera_generator.cpp, AOT-compiled (build.sh).
// The matrix and the curve are the pipeline's inputs, on the device before
// timing, as the sample copies them to __constant__ memory before timing.
//
//   ./camera [W [H]] [--seed=N] [--reps=N] [--warmup=N]   # 2592 x 1968
//
//===----------------------------------------------------------------------===//

#include "hl_driver.cuh"

#define FUSE_SAMPLE_NO_MAIN
#include "../../samples/fuse/camera.cu"

#include "camera.h"

int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);
  const int OW = outputWidth(P.S.W), OH = outputHeight(P.S.H);
  hlbench::init();
  hlbench::Image HRaw(P.Raw, hlbench::planar(P.S.W, P.S.H));
  hlbench::Image HMatrix(P.Matrix, {{0, 4, 1}, {0, 3, 4}});
  hlbench::Image HCurve(P.Curve, {{0, kCurveSize, 1}});
  hlbench::Image HOut(size_t(OW) * OH * 3, hlbench::planar(OW, OH, 3));
  return hlbench::runAndReport(
      P.A, "camera", HOut,
      [&] {
        return camera(HRaw.raw(), HMatrix.raw(), HCurve.raw(), HOut.raw());
      },
      hlbench::against(P.Ref, harness::Everywhere(), kTolerance),
      double(HRaw.bytes() + HOut.bytes()));
}
