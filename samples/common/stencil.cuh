//===- stencil.cuh - Runs and checks one stencil sample -------*- CUDA -*-===//
//
// What the stencil and convolution samples (samples/systolic/) share, so that
// each sample file holds its kernel, its launch function and a short main():
//
//   harness::Args A = stencil::parseArgs2d(argc, argv, "2d9pt");
//   const stencil::TapList Taps = {{0, 0, 0, 0.25}, {-1, 0, 0, 0.125}, ...};
//   return stencil::run2d(A, Taps, launchStencil);
//
// where launchStencil(const real *In, real *Out, int W, int H) launches the
// kernel (3D: run3d, and a launch function that also takes D). The tap list
// is the sample's stencil written down independently of its kernel: offsets
// and float64 weights. An offset may appear twice (a kernel that reads the
// centre in two sums); the weights add up.
//
// The runner fills the input with uniform values in [0, 1) from the seed,
// computes a float64 reference from the tap list, poisons the output before
// every run, and checks every point of the output: those inside the margins
// (the kernel's guard region) against the reference, all others for still
// holding the poison, so that a rewrite that writes the border, or skips a
// point, fails.
//
// The reference is complete, not sampled: every written point is computed
// in float64 from its taps, on all host cores (std::thread, one output row at
// a time, each tap a vectorisable pass over the row). At the default sizes
// that is 6.7e7 points times up to 121 taps in 2D and 1.3e8 points times up
// to 125 taps in 3D, about 1.7e10 multiply-adds: 2.5 s (2D) and 3.5 s (3D)
// on 2 cores, and a whole 3d125pt run with 5 timed runs took 4 s on a
// 16-core GPU host. It runs once per program, before the timed runs.
//
// Element type: `real`, float unless the sample is built with
// -DSAMPLE_REAL=double. Samples marked `// bench-types: float double` are
// benchmarked with both.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_STENCIL_CUH
#define CUDA_REWRITE_SAMPLES_STENCIL_CUH

#include "harness.cuh"

#include <algorithm>
#include <atomic>
#include <climits>
#include <string>
#include <thread>
#include <vector>

#ifndef SAMPLE_REAL
#define SAMPLE_REAL float
#endif
typedef SAMPLE_REAL real;

namespace stencil {

/// One term of a stencil: the input at (x + DX, y + DY, z + DZ) times Weight.
struct Tap {
  int DX, DY, DZ;
  double Weight;
};
using TapList = std::vector<Tap>;

/// The border a kernel leaves unwritten: it writes exactly the points with
/// LoX <= x < W - HiX (and the same in y and z).
struct Margins {
  int LoX = 0, HiX = 0, LoY = 0, HiY = 0, LoZ = 0, HiZ = 0;
};

/// The narrowest margins that keep every tap inside the grid: those of a
/// kernel whose guard is exactly the stencil's reach.
inline Margins reach(const TapList &Taps) {
  Margins M;
  for (const Tap &T : Taps) {
    M.LoX = std::max(M.LoX, -T.DX), M.HiX = std::max(M.HiX, T.DX);
    M.LoY = std::max(M.LoY, -T.DY), M.HiY = std::max(M.HiY, T.DY);
    M.LoZ = std::max(M.LoZ, -T.DZ), M.HiZ = std::max(M.HiZ, T.DZ);
  }
  return M;
}

/// Margins of Lo points at the low and Hi at the high end of every
/// dimension (2D samples ignore z).
inline Margins margins(int Lo, int Hi) { return {Lo, Hi, Lo, Hi, Lo, Hi}; }

//===-- Building tap lists ------------------------------------------------===//

/// The box Lo..Hi (inclusive) in x and y, weights row-major: y outer, x
/// inner, as a filter array `w[(dy - Lo) * (Hi - Lo + 1) + dx - Lo]` is laid
/// out.
template <typename T>
TapList box2d(int Lo, int Hi, const std::vector<T> &Weights) {
  const size_t Side = size_t(Hi - Lo + 1);
  if (Weights.size() != Side * Side)
    harness::fail("box2d: need one weight per tap");
  TapList Taps;
  size_t K = 0;
  for (int DY = Lo; DY <= Hi; ++DY)
    for (int DX = Lo; DX <= Hi; ++DX)
      Taps.push_back({DX, DY, 0, double(Weights[K++])});
  return Taps;
}

/// The box Lo..Hi (inclusive) in x, y and z, weights z outer, x inner.
template <typename T>
TapList box3d(int Lo, int Hi, const std::vector<T> &Weights) {
  const size_t Side = size_t(Hi - Lo + 1);
  if (Weights.size() != Side * Side * Side)
    harness::fail("box3d: need one weight per tap");
  TapList Taps;
  size_t K = 0;
  for (int DZ = Lo; DZ <= Hi; ++DZ)
    for (int DY = Lo; DY <= Hi; ++DY)
      for (int DX = Lo; DX <= Hi; ++DX)
        Taps.push_back({DX, DY, DZ, double(Weights[K++])});
  return Taps;
}

/// \p N positive weights that sum to 1 (rounded to T), for samples that
/// take their filter from the host. They are drawn from the run's seed, so
/// that a rerun with --seed replays them, but from a stream apart from the
/// input's. Each lies within a factor of 3 of the others: different enough
/// that a stencil applied transposed or mirrored fails the check, and all
/// positive, so that no result is a cancellation that float rounding could
/// spoil.
template <typename T>
std::vector<T> randomWeights(const harness::Args &A, size_t N) {
  harness::Rng R(A.Seed ^ 0x5851f42d4c957f2dull);
  std::vector<double> Raw(N);
  R.fill(Raw, 0.5, 1.5);
  double Sum = 0;
  for (double X : Raw)
    Sum += X;
  std::vector<T> Weights(N);
  for (size_t I = 0; I < N; ++I)
    Weights[I] = T(Raw[I] / Sum);
  return Weights;
}

//===-- Command line ------------------------------------------------------===//

/// `<sample> [W [H]]`, default 8192 x 8192.
inline harness::Args parseArgs2d(int argc, char **argv, const char *Name) {
  return harness::parseArgs(argc, argv, Name, {8192, 8192});
}

/// `<sample> [W [H [D]]]`, default 512 x 512 x 512.
inline harness::Args parseArgs3d(int argc, char **argv, const char *Name) {
  return harness::parseArgs(argc, argv, Name, {512, 512, 512});
}

//===-- Launch ------------------------------------------------------------===//

/// The grid of one-thread-per-point blocks of shape \p Block covering a W x H
/// (x D) domain: every sample's kernel launch uses it.
inline dim3 launchGrid(dim3 Block, int W, int H, int D = 1) {
  return dim3((W + Block.x - 1) / Block.x, (H + Block.y - 1) / Block.y,
              (D + Block.z - 1) / Block.z);
}

//===-- Reference and check -----------------------------------------------===//

/// Calls Body(I) for every I in [Begin, End) on all host cores, handing out
/// one index at a time, so that uneven rows balance.
template <typename BodyFn> void parallelFor(long Begin, long End, BodyFn Body) {
  long Threads = std::max(1L, long(std::thread::hardware_concurrency()));
  Threads = std::min(Threads, std::max(1L, End - Begin));
  std::atomic<long> Next(Begin);
  auto Work = [&] {
    for (long I = Next++; I < End; I = Next++)
      Body(I);
  };
  std::vector<std::thread> Pool;
  for (long T = 1; T < Threads; ++T)
    Pool.emplace_back(Work);
  Work();
  for (std::thread &T : Pool)
    T.join();
}

/// A W x H x D grid (D = 1 in 2D), x fastest, and the part of it a kernel
/// writes.
struct Grid {
  long W, H, D;
  Margins M;

  size_t points() const { return size_t(W) * H * D; }
  long x0() const { return M.LoX; }
  long x1() const { return W - M.HiX; }
  long y0() const { return M.LoY; }
  long y1() const { return H - M.HiY; }
  long z0() const { return M.LoZ; }
  long z1() const { return D - M.HiZ; }
  /// Points written per run.
  size_t cells() const {
    return size_t(x1() - x0()) * size_t(y1() - y0()) * size_t(z1() - z0());
  }
};

/// Fails unless the margins cover every tap (the reference reads only
/// inside the grid) and leave at least one point to write, and the grid
/// fits the kernels' int indexing.
inline void checkGrid(const Grid &G, const TapList &Taps) {
  const Margins &M = G.M;
  for (const Tap &T : Taps)
    if (-T.DX > M.LoX || T.DX > M.HiX || -T.DY > M.LoY || T.DY > M.HiY ||
        -T.DZ > M.LoZ || T.DZ > M.HiZ)
      harness::fail("tap (" + std::to_string(T.DX) + ", " +
                    std::to_string(T.DY) + ", " + std::to_string(T.DZ) +
                    ") reaches past the sample's margins");
  if (G.x1() <= G.x0() || G.y1() <= G.y0() || G.z1() <= G.z0())
    harness::fail("the grid is too small for the stencil: nothing to write");
  // The kernels index with int, as plain stencil code does.
  if (G.points() > size_t(INT_MAX))
    harness::fail("the grid must have fewer than 2^31 points");
}

/// The float64 reference at every written point (0 elsewhere): each output
/// row accumulates one tap at a time over the whole row, in tap order.
/// Weights are first rounded to T, as the kernel holds them.
template <typename T>
std::vector<double> reference(const std::vector<T> &In, const Grid &G,
                              const TapList &Taps) {
  std::vector<double> Ref(G.points(), 0.0);
  const long Rows = G.y1() - G.y0(), Length = G.x1() - G.x0();
  parallelFor(0, (G.z1() - G.z0()) * Rows, [&](long Row) {
    const long Z = G.z0() + Row / Rows, Y = G.y0() + Row % Rows;
    double *Out = &Ref[size_t((Z * G.H + Y) * G.W + G.x0())];
    for (const Tap &Tp : Taps) {
      const double Weight = double(T(Tp.Weight));
      // Non-negative: the margins cover the tap.
      const T *Src =
          &In[size_t(((Z + Tp.DZ) * G.H + Y + Tp.DY) * G.W + G.x0() + Tp.DX)];
      for (long I = 0; I < Length; ++I)
        Out[I] += Weight * double(Src[I]);
    }
  });
  return Ref;
}

/// One byte per point, 1 where the kernel writes: compareFloat asks about
/// every point several times, and a lookup is cheaper than the divisions
/// that would recover the coordinates.
inline std::vector<unsigned char> writtenMask(const Grid &G) {
  std::vector<unsigned char> Mask(G.points(), 0);
  parallelFor(G.z0(), G.z1(), [&](long Z) {
    for (long Y = G.y0(); Y < G.y1(); ++Y)
      std::fill_n(&Mask[size_t((Z * G.H + Y) * G.W + G.x0())], G.x1() - G.x0(),
                  1);
  });
  return Mask;
}

//===-- Running a sample --------------------------------------------------===//

/// Runs a sample on grid G: Launch(In, Out) launches its kernel.
template <typename T, typename LaunchFn>
int run(const harness::Args &A, const Grid &G, const TapList &Taps,
        LaunchFn Launch) {
  checkGrid(G, Taps);
  harness::Rng R(A.Seed);
  std::vector<T> In(G.points());
  R.fill(In, T(0), T(1));
  const std::vector<double> Ref = reference(In, G, Taps);
  const std::vector<unsigned char> Mask = writtenMask(G);
  auto Written = [&](size_t I) { return Mask[I] != 0; };

  harness::DeviceArray<T> DIn(In), DOut(G.points());
  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); }, [&] { Launch(DIn.data(), DOut.data()); },
      [&] { return harness::compareFloat(DOut.download(), Ref, Written); });
  // Each written point reads its input point and writes its output point;
  // the neighbours' reads are what the kernel should serve from on-chip
  // memory.
  const size_t Cells = G.cells();
  return harness::report(A, Res, 2.0 * sizeof(T) * double(Cells), Cells);
}

/// Runs a 2D sample: Launch(const T *In, T *Out, int W, int H) launches its
/// kernel, which writes exactly the points inside \p M (whose z margins are
/// ignored).
template <typename T = real, typename LaunchFn>
int run2d(const harness::Args &A, const TapList &Taps, LaunchFn Launch,
          Margins M) {
  M.LoZ = M.HiZ = 0;
  const Grid G{A.size(0), A.size(1), 1, M};
  return run<T>(A, G, Taps, [&](const T *In, T *Out) {
    Launch(In, Out, int(G.W), int(G.H));
  });
}

/// As above, for a kernel whose guard is exactly the stencil's reach.
template <typename T = real, typename LaunchFn>
int run2d(const harness::Args &A, const TapList &Taps, LaunchFn Launch) {
  return run2d<T>(A, Taps, Launch, reach(Taps));
}

/// Runs a 3D sample: Launch(const T *In, T *Out, int W, int H, int D).
template <typename T = real, typename LaunchFn>
int run3d(const harness::Args &A, const TapList &Taps, LaunchFn Launch,
          const Margins &M) {
  const Grid G{A.size(0), A.size(1), A.size(2), M};
  return run<T>(A, G, Taps, [&](const T *In, T *Out) {
    Launch(In, Out, int(G.W), int(G.H), int(G.D));
  });
}

template <typename T = real, typename LaunchFn>
int run3d(const harness::Args &A, const TapList &Taps, LaunchFn Launch) {
  return run3d<T>(A, Taps, Launch, reach(Taps));
}

} // namespace stencil

#endif // CUDA_REWRITE_SAMPLES_STENCIL_CUH
