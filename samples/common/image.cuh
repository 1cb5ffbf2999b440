//===- image.cuh - What the image-pipeline samples share ------*- CUDA -*-===//
//
// The stage-chain samples (samples/fuse/) are image pipelines written the
// ordinary way: one kernel per stage, one thread per output point, and a
// float64 CPU reference of the same stages. This header holds what they
// share besides harness.cuh: image sizes, the launch grid, border clamping
// (the same function on host and device, so that reference and kernels agree
// on it), a random input, and a row-parallel loop for the references.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_IMAGE_CUH
#define CUDA_REWRITE_SAMPLES_IMAGE_CUH

#include "harness.cuh"

#include <algorithm>
#include <thread>
#include <vector>

namespace image {

/// A W x H image of C channels, stored channel-planar: element (c, y, x) is
/// at (c * H + y) * W + x.
struct Size {
  int W = 0, H = 0, C = 1;
  long long pixels() const { return (long long)W * H; }
  long long elements() const { return pixels() * C; }
};

/// The image size from the command line's sizes (W, H[, C]), defaulting to
/// the sample's (the paper's) size.
inline Size size(const harness::Args &A, int Channels = 1) {
  Size S;
  S.W = int(A.size(0));
  S.H = int(A.size(1));
  S.C = Channels;
  if (S.W < 1 || S.H < 1 || S.elements() > (1LL << 31) - 1)
    harness::fail("need 1 <= W, H and W * H * C < 2^31");
  return S;
}

/// Enough Block-sized blocks to cover W x H, and Layers layers of them
/// (blockIdx.z: the channel of a channel-planar stage).
inline dim3 grid(dim3 Block, int W, int H, int Layers = 1) {
  return dim3((W + Block.x - 1) / Block.x, (H + Block.y - 1) / Block.y, Layers);
}

/// The size of a pyramid's next level: half, rounded up.
constexpr int halve(int N) { return (N + 1) / 2; }

/// \p V clamped to [Lo, Hi]: the border rule of the clamped stages.
__host__ __device__ inline int clamp(int V, int Lo, int Hi) {
  return V < Lo ? Lo : V > Hi ? Hi : V;
}

/// Uniform values in [0, 1) from the seed: the input image.
inline std::vector<float> randomImage(harness::Rng &R, const Size &S) {
  std::vector<float> Img(size_t(S.elements()));
  R.fill(Img, 0.f, 1.f);
  return Img;
}

/// The same values in float64, the references' input.
inline std::vector<double> toDouble(const std::vector<float> &V) {
  return std::vector<double>(V.begin(), V.end());
}

/// Calls Row(y) for y in [0, H) on all host cores: the references compute
/// one output row at a time.
template <typename RowFn> void forRows(int H, RowFn Row) {
  unsigned Threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back([=] {
      for (int Y = int(T); Y < H; Y += int(Threads))
        Row(Y);
    });
  for (std::thread &T : Pool)
    T.join();
}

/// Calls Row(c, y) for every row of every one of C channels, rows in
/// parallel.
template <typename RowFn> void forEachRow(int C, int H, RowFn Row) {
  forRows(C * H, [&](int R) { Row(R / H, R % H); });
}

/// A float64 image of a reference, channel-planar like the device's.
struct RefImage {
  int W, H, C;
  std::vector<double> V;
  RefImage(int W, int H, int C) : W(W), H(H), C(C), V(size_t(W) * H * C) {}
  RefImage(const std::vector<float> &Img, int W, int H, int C)
      : W(W), H(H), C(C), V(toDouble(Img)) {}
  double &at(int Ch, int Y, int X) { return V[(size_t(Ch) * H + Y) * W + X]; }
  double at(int Ch, int Y, int X) const {
    return V[(size_t(Ch) * H + Y) * W + X];
  }
};

/// Keeps memory freed to the device's stream-ordered pool in the pool, so
/// that a pipeline allocating its intermediates with cudaMallocAsync on
/// every run (as the samples do: buffers allocated and freed around their
/// block are provably dead after it, which lets a rewrite keep them on chip)
/// reuses them without asking the driver again. Such intermediates cannot be
/// poisoned before a run: a stage, or a rewrite, that reads a point nobody
/// wrote reads stale pool memory instead of NaN, and the output check is
/// what catches the wrong values that follows.
inline void keepPoolMemory() {
  int Device = 0;
  cudaMemPool_t Pool;
  HARNESS_CHECK(cudaGetDevice(&Device));
  HARNESS_CHECK(cudaDeviceGetDefaultMemPool(&Pool, Device));
  uint64_t Keep = ~0ull;
  HARNESS_CHECK(
      cudaMemPoolSetAttribute(Pool, cudaMemPoolAttrReleaseThreshold, &Keep));
}

/// Runs a pipeline as the harness does (Poison, then Launch, timed) and
/// checks every element of \p Out against \p Ref within \p Tolerance.
template <typename PoisonFn, typename LaunchFn>
harness::Result measureAgainst(const harness::Args &A,
                               harness::DeviceArray<float> &Out,
                               const std::vector<double> &Ref, double Tolerance,
                               PoisonFn Poison, LaunchFn Launch) {
  return harness::measure(A, Poison, Launch, [&] {
    return harness::compareFloat(Out.download(), Ref, harness::Everywhere(),
                                 Tolerance);
  });
}

} // namespace image

#endif
