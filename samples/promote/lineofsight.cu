//===- lineofsight.cu - Line of sight as a chain of one-block launches ----===//
//
// Line of sight (the `los` benchmark of KLAP, Table I; Blelloch's classic
// scan example): an observer stands at point 0 of a terrain profile sampled
// at points 0, 1, ..., n - 1 along a ray, with integer heights. Point i > 0
// is seen from point 0 when no point between them rises above the line of
// sight, that is when its slope (height[i] - height[0]) / i is at least the
// slope of every point before it. The output is one byte per point, 1 where
// it is visible (point 0 is).
//
// Written the way dynamic parallelism invites: one block handles one chunk
// of kChunk = 8192 points (512 threads x 16) and then launches the block of
// the next chunk, a chain of ceil(n / kChunk) single-block grids (links). A
// point's visibility depends on the greatest slope of all the points before
// its chunk: that running maximum is what each link hands to the next, as a
// launch argument. Link i + 1 cannot decide before link i has found its
// maximum, so the chain is serial; loading a chunk, computing its slopes and
// their running maximum within the chunk does not depend on it, which is
// what `overlap_boundary` marks for promotion (docs/design.md section 3).
//
// The next link is launched into cudaStreamTailLaunch (CDP2, CUDA 12+), so
// it starts when the launching grid has finished and sees all it wrote:
// whatever the chain's length, one link runs and one launch is pending at a
// time. (A plain <<<>>> would let the child start while its parent still
// runs, and keep every link's grid open until the end of the chain.)
//
// Terrain: a random walk (steps -10 .. 10) over a bowl that rises ever more
// steeply, so that points far away can still be seen. Slopes are float
// quotients of integers, correctly rounded on both sides, and maxima are
// exact, so the output is checked exactly against a CPU reference.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/promote/lineofsight.cu -lcudadevrt -o lineofsight
//   ./lineofsight [n] [--seed=N] [--reps=N]
//
//   small   ./lineofsight 16384   2 links
//   medium  ./lineofsight 204800  25 links
//   large   ./lineofsight         33554432 points (32M), 4096 links
//
//===----------------------------------------------------------------------===//

#include "chain.cuh"

#include <cub/block/block_store.cuh>
#include <cuda/functional>

#include <limits>

namespace {

/// Below every slope: the maximum over no points, and the slope given to
/// point 0 and to the points past the end.
constexpr float kNoSlope = -std::numeric_limits<float>::infinity();

/// Loads a chunk's heights blocked: thread t gets points t * kItemsPerThread
/// onwards, in vector loads.
using HeightLoad = chain::ChunkLoad;
/// The running maximum of the slopes within a chunk.
using SlopeScan = cub::BlockScan<float, chain::kBlock>;
/// Stores a chunk's visibility bytes as they were loaded.
using VisibleStore =
    cub::BlockStore<unsigned char, chain::kBlock, chain::kItemsPerThread,
                    cub::BLOCK_STORE_VECTORIZE>;

/// The slope of the line of sight from point 0 to point \p distance. The
/// same float operations on the CPU and the GPU (IEEE division, rounded to
/// nearest), so the reference gets the same bits.
__host__ __device__ float slopeOf(int height, int observerHeight,
                                  int distance) {
  return float(height - observerHeight) / float(distance);
}

} // namespace

/// One link: decides which points of the chunk `chunk` (points
/// chunk * kChunk onwards) are visible, given `maxSlopeBefore`, the greatest
/// slope of the points before the chunk, and launches the link of the next
/// chunk.
#pragma cuda_rewrite promote
__global__ void lineOfSightChunk(const int *__restrict__ heights,
                                 unsigned char *__restrict__ visible, int n,
                                 int chunk, float maxSlopeBefore) {
  __shared__ SlopeScan::TempStorage scanStorage;
  const int begin = chunk * chain::kChunk;
  const int valid = min(n - begin, chain::kChunk);

  // Independent of the parent: load the chunk's heights, compute their
  // slopes and, for each point, the greatest slope before it in the chunk.
  int items[chain::kItemsPerThread];
  if (valid == chain::kChunk)
    HeightLoad().Load(heights + begin, items);
  else
    HeightLoad().Load(heights + begin, items, valid); // The last, partial.
  const int observerHeight = heights[0];
  float slopes[chain::kItemsPerThread];
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int i = chain::elementIndex(begin, k);
    slopes[k] =
        (i > 0 && i < n) ? slopeOf(items[k], observerHeight, i) : kNoSlope;
  }
  float maxSlopeInChunk[chain::kItemsPerThread];
  float chunkMaxSlope;
  SlopeScan(scanStorage)
      .ExclusiveScan(slopes, maxSlopeInChunk, kNoSlope, cuda::maximum<>{},
                     chunkMaxSlope);

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the points before this chunk reach up to
  // maxSlopeBefore, so those after it face the greater of that and this
  // chunk's maximum.
  const float nextMaxSlopeBefore = fmaxf(maxSlopeBefore, chunkMaxSlope);
  if (threadIdx.x == 0 && n - begin > chain::kChunk) {
    lineOfSightChunk<<<1, chain::kBlock, 0, cudaStreamTailLaunch>>>(
        heights, visible, n, chunk + 1, nextMaxSlopeBefore);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // A point is visible when no point before it has a greater slope.
  unsigned char flags[chain::kItemsPerThread];
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int i = chain::elementIndex(begin, k);
    flags[k] = i == 0 || slopes[k] >= fmaxf(maxSlopeBefore, maxSlopeInChunk[k]);
  }
  if (valid == chain::kChunk)
    VisibleStore().Store(visible + begin, flags);
  else
    VisibleStore().Store(visible + begin, flags, valid);
}

namespace {

/// CPU reference: the visibility of every point.
std::vector<unsigned char> referenceLineOfSight(const std::vector<int> &Heights,
                                                long &Visible) {
  const int N = int(Heights.size());
  std::vector<unsigned char> Out(N);
  float MaxSlope = kNoSlope;
  Out[0] = 1;
  Visible = 1;
  for (int I = 1; I < N; ++I) {
    float Slope = slopeOf(Heights[I], Heights[0], I);
    Out[I] = Slope >= MaxSlope;
    Visible += Out[I];
    MaxSlope = std::max(MaxSlope, Slope);
  }
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "lineofsight", {1L << 25});
  const int N = chain::elementCount(A);
  const int Links = chain::links(N);

  // The terrain: a random walk plus a bowl that rises to n / 4 at the end.
  harness::Rng R(A.Seed);
  std::vector<int> Heights(N);
  long Walk = 0;
  for (int I = 0; I < N; ++I) {
    if (I > 0)
      Walk += long(R.next() % 21) - 10;
    Heights[I] = int(Walk + long(I) * I / (4L * N));
  }
  long Visible;
  std::vector<unsigned char> Ref = referenceLineOfSight(Heights, Visible);
  std::printf("lineofsight: %d points, %ld visible; %d links of %d points\n", N,
              Visible, Links, chain::kChunk);

  harness::DeviceArray<int> DHeights(Heights);
  harness::DeviceArray<unsigned char> DVisible(N);
  harness::Result Res = harness::measure(
      A, [&] { DVisible.poison(); },
      [&] {
        lineOfSightChunk<<<1, chain::kBlock>>>(DHeights.data(), DVisible.data(),
                                               N, 0, kNoSlope);
      },
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareExact(DVisible.download(), Ref);
      });
  // The heights read once, one byte per point written once.
  double Bytes = (sizeof(int) + 1.0) * double(N);
  return harness::report(A, Res, Bytes);
}
