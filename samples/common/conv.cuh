//===- conv.cuh - Runs and checks one 2D convolution sample ---*- CUDA -*-===//
//
// The conv*.cu samples (samples/systolic/, written by make_conv_samples.py)
// convolve an 8192 x 8192 float image with a FilterRows x FilterCols filter
// that the host draws at random and passes to the kernel as a pointer
// argument:
//
//   int main(int argc, char **argv) {
//     return conv::run(argc, argv, "conv5x5", FilterRows, FilterCols,
//                      launchConv);
//   }
//
// where launchConv(const float *In, float *Out, const float *Filter, int W,
// int H) launches the kernel. filter[r * FilterCols + c] weighs the input at
// (x + c - FilterCols / 2, y + r - FilterRows / 2): for an even size K the
// offsets run from -K/2 to K/2 - 1. The kernel writes exactly the points
// whose every tap lies inside the image; samples/common/stencil.cuh checks
// those against a float64 reference and all others for keeping their poison.
//
// Convolution samples are float only (no `bench-types` line).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_CONV_CUH
#define CUDA_REWRITE_SAMPLES_CONV_CUH

#include "stencil.cuh"

namespace conv {

using LaunchFn = void (*)(const float *In, float *Out, const float *Filter,
                          int W, int H);

/// Runs a convolution sample: `<sample> [W [H]]`, default 8192 x 8192.
inline int run(int argc, char **argv, const char *Name, int Rows, int Cols,
               LaunchFn Launch) {
  harness::Args A = stencil::parseArgs2d(argc, argv, Name);
  // Positive weights summing to 1: outputs stay in the input's range, and
  // no output is a cancellation that float rounding could spoil.
  const std::vector<float> Filter =
      stencil::randomWeights<float>(A, size_t(Rows) * Cols);
  harness::DeviceArray<float> DFilter(Filter);
  const int Top = Rows / 2, Left = Cols / 2;
  stencil::TapList Taps;
  for (int R = 0; R < Rows; ++R)
    for (int C = 0; C < Cols; ++C)
      Taps.push_back({C - Left, R - Top, 0, Filter[size_t(R) * Cols + C]});
  return stencil::run2d<float>(A, Taps,
                               [&](const float *In, float *Out, int W, int H) {
                                 Launch(In, Out, DFilter.data(), W, H);
                               });
}

} // namespace conv

#endif // CUDA_REWRITE_SAMPLES_CONV_CUH
