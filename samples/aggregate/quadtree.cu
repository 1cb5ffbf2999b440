//===- quadtree.cu - Recursive quadtree build, one launch per split node --===//
//
// Builds a point quadtree over clustered random points in the unit square
// (the `qt` benchmark of KLAP, Table I, after the CUDA sample cdpQuadtree).
// buildQuadtree runs one block per node. A node with at most minPoints points,
// or at the depth limit, is a leaf: its block copies the node's points to the
// output. Any other node is split: its block partitions the node's points
// into the four quadrants of its box (a stable partition, from one buffer
// into the other), and after a barrier thread 0 writes the four children and
// launches buildQuadtree again with one block per child. Only one thread per
// block launches, so warp- and block-granularity aggregation have nothing to
// combine here; kernel granularity does.
//
// Nodes live in a complete-tree layout, level by level: node s of level d is
// ranges[levelStart(d) + s] (its points [begin, end) in point order) and its
// children are nodes 4s .. 4s+3 of level d + 1. The partition is stable, so
// the points' final order and every node's range are deterministic; both are
// checked exactly against a CPU build, as is that no node outside the tree
// was written.
//
// --flat builds the same tree without dynamic parallelism, breadth first: the
// host launches one kernel per level with one block per node of that level,
// and split nodes append their children to the next level's list.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/quadtree.cu -lcudadevrt -o quadtree
//   ./quadtree [points [max_depth [min_points]]] [--flat] [--seed=N]
//
// Default: 262144 points in 64 Gaussian clusters plus 30% uniform
// background, depth limit 10, at most 16 points per leaf: about 11k split
// nodes, hence 11k device-side launches of 4 blocks each.
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <algorithm>
#include <cmath>

namespace {

/// Threads per block of buildQuadtree: one block per node.
constexpr int kQuadThreads = 128;
constexpr int kQuadWarps = kQuadThreads / 32;
/// The deepest tree that the node arrays may hold (4^12 nodes in level 11).
constexpr int kMaxSupportedDepth = 11;

} // namespace

/// The index of the first node of level \p depth in the complete-tree layout:
/// (4^depth - 1) / 3.
__host__ __device__ inline int levelStart(int depth) {
  return ((1 << (2 * depth)) - 1) / 3;
}

/// Which quadrant of \p box = (minX, minY, maxX, maxY) a point lies in:
/// bit 0 set for the east half, bit 1 for the north half. Boxes are halves of
/// halves of the unit square, so the midpoints are exact in float.
__host__ __device__ inline int quadrantOf(float x, float y, float4 box) {
  float midX = 0.5f * (box.x + box.z), midY = 0.5f * (box.y + box.w);
  return (x >= midX ? 1 : 0) | (y >= midY ? 2 : 0);
}

__host__ __device__ inline float4 quadrantBox(float4 box, int quadrant) {
  float midX = 0.5f * (box.x + box.z), midY = 0.5f * (box.y + box.w);
  return make_float4(quadrant & 1 ? midX : box.x, quadrant & 2 ? midY : box.y,
                     quadrant & 1 ? box.z : midX, quadrant & 2 ? box.w : midY);
}

/// Block-wide stable partition of the points [begin, end) of (inX, inY) by
/// quadrant of \p box into (outX, outY); quadrant q's points end up in
/// [childBegin[q], childBegin[q + 1]). \p childBegin (5 entries) is in shared
/// memory. Every thread of the block must call it.
__device__ void partitionPoints(const float *inX, const float *inY, float *outX,
                                float *outY, int begin, int end, float4 box,
                                int *childBegin) {
  __shared__ int counts[4];
  __shared__ int cursor[4];
  __shared__ int warpCounts[kQuadWarps][4];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  // Count the points of each quadrant.
  if (threadIdx.x < 4)
    counts[threadIdx.x] = 0;
  __syncthreads();
  int local[4] = {0, 0, 0, 0};
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x)
    ++local[quadrantOf(inX[i], inY[i], box)];
  for (int q = 0; q < 4; ++q)
    if (local[q])
      atomicAdd(&counts[q], local[q]);
  __syncthreads();
  if (threadIdx.x == 0) {
    int start = begin;
    for (int q = 0; q < 4; ++q) {
      childBegin[q] = cursor[q] = start;
      start += counts[q];
    }
    childBegin[4] = end;
  }
  __syncthreads();

  // Move them, one block-sized chunk at a time, in order: a point's place is
  // its quadrant's cursor plus the points of that quadrant before it in the
  // chunk (earlier warps, then earlier lanes of its warp).
  for (int chunk = begin; chunk < end; chunk += blockDim.x) {
    int i = chunk + threadIdx.x;
    bool valid = i < end;
    float x = valid ? inX[i] : 0.0f, y = valid ? inY[i] : 0.0f;
    int quadrant = valid ? quadrantOf(x, y, box) : -1;
    int rank = 0;
    for (int q = 0; q < 4; ++q) {
      unsigned mask = __ballot_sync(0xffffffffu, quadrant == q);
      if (quadrant == q)
        rank = __popc(mask & ((1u << lane) - 1));
      if (lane == 0)
        warpCounts[warp][q] = __popc(mask);
    }
    __syncthreads();
    if (valid) {
      int place = cursor[quadrant] + rank;
      for (int w = 0; w < warp; ++w)
        place += warpCounts[w][quadrant];
      outX[place] = x;
      outY[place] = y;
    }
    __syncthreads();
    if (threadIdx.x < 4)
      for (int w = 0; w < kQuadWarps; ++w)
        cursor[threadIdx.x] += warpCounts[w][threadIdx.x];
    __syncthreads();
  }
}

/// The work of one block on node \p slot of level \p depth, whose points are
/// in (inX, inY). A leaf copies its points to (sortedX, sortedY); a node to
/// split is partitioned into (outX, outY) and thread 0 writes its four
/// children. Returns whether the node was split (the same in every thread).
__device__ bool processNode(const float *inX, const float *inY, float *outX,
                            float *outY, float *sortedX, float *sortedY,
                            int2 *ranges, float4 *boxes, int depth, int slot,
                            int maxDepth, int minPoints) {
  __shared__ int childBegin[5];
  const int node = levelStart(depth) + slot;
  const int2 range = ranges[node];
  const float4 box = boxes[node];
  if (depth == maxDepth || range.y - range.x <= minPoints) {
    for (int i = range.x + threadIdx.x; i < range.y; i += blockDim.x) {
      sortedX[i] = inX[i];
      sortedY[i] = inY[i];
    }
    return false;
  }
  partitionPoints(inX, inY, outX, outY, range.x, range.y, box, childBegin);
  if (threadIdx.x == 0) {
    const int firstChild = levelStart(depth + 1) + 4 * slot;
    for (int q = 0; q < 4; ++q) {
      ranges[firstChild + q] = make_int2(childBegin[q], childBegin[q + 1]);
      boxes[firstChild + q] = quadrantBox(box, q);
    }
  }
  return true;
}

/// One block per node: nodes firstSlot, firstSlot + 1, ... of level depth.
/// A split node's block launches this kernel again for its four children,
/// whose points it has just moved into (outX, outY).
#pragma cuda_rewrite aggregate
__global__ void buildQuadtree(float *inX, float *inY, float *outX, float *outY,
                              float *sortedX, float *sortedY, int2 *ranges,
                              float4 *boxes, int depth, int firstSlot,
                              int maxDepth, int minPoints) {
  const int slot = firstSlot + blockIdx.x;
  if (processNode(inX, inY, outX, outY, sortedX, sortedY, ranges, boxes, depth,
                  slot, maxDepth, minPoints)) {
    // The children read the points that every thread of the block wrote:
    // the barrier makes them visible to thread 0, hence to the child grid.
    __syncthreads();
    if (threadIdx.x == 0) {
      buildQuadtree<<<4, kQuadThreads>>>(outX, outY, inX, inY, sortedX, sortedY,
                                         ranges, boxes, depth + 1, 4 * slot,
                                         maxDepth, minPoints);
      harness::checkDeviceLaunch(cudaGetLastError());
    }
  }
}

/// Flat version: one block per node in the list \p slots of level \p depth;
/// split nodes append their children to \p nextSlots.
__global__ void buildQuadtreeLevel(const float *inX, const float *inY,
                                   float *outX, float *outY, float *sortedX,
                                   float *sortedY, int2 *ranges, float4 *boxes,
                                   int depth, const int *slots, int *nextSlots,
                                   int *nextCount, int maxDepth,
                                   int minPoints) {
  const int slot = slots[blockIdx.x];
  if (processNode(inX, inY, outX, outY, sortedX, sortedY, ranges, boxes, depth,
                  slot, maxDepth, minPoints) &&
      threadIdx.x == 0) {
    int at = atomicAdd(nextCount, 4);
    for (int q = 0; q < 4; ++q)
      nextSlots[at + q] = 4 * slot + q;
  }
}

/// Makes the root hold every point, in the unit square.
__global__ void quadtreeStart(int2 *ranges, float4 *boxes, int numPoints) {
  ranges[0] = make_int2(0, numPoints);
  boxes[0] = make_float4(0.0f, 0.0f, 1.0f, 1.0f);
}

namespace {

/// Points in [0, 1)^2: NumClusters Gaussian clusters of random widths, plus
/// 30% uniform background.
void makePoints(harness::Rng &R, int NumPoints, int NumClusters,
                std::vector<float> &X, std::vector<float> &Y) {
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  auto Gaussian = [&] {
    double U1 = std::max(Uniform(), 1e-300), U2 = Uniform();
    return std::sqrt(-2 * std::log(U1)) * std::cos(2 * M_PI * U2);
  };
  std::vector<double> CX(NumClusters), CY(NumClusters), Sigma(NumClusters);
  for (int C = 0; C < NumClusters; ++C) {
    CX[C] = Uniform();
    CY[C] = Uniform();
    Sigma[C] = std::pow(10.0, -2.7 + 1.4 * Uniform());
  }
  auto Clamp = [](double V) {
    return float(std::min(std::max(V, 0.0), 0.99999));
  };
  X.resize(NumPoints);
  Y.resize(NumPoints);
  for (int I = 0; I < NumPoints; ++I) {
    if (Uniform() < 0.3) {
      X[I] = Clamp(Uniform());
      Y[I] = Clamp(Uniform());
    } else {
      int C = int(R.next() % uint64_t(NumClusters));
      X[I] = Clamp(CX[C] + Sigma[C] * Gaussian());
      Y[I] = Clamp(CY[C] + Sigma[C] * Gaussian());
    }
  }
}

/// CPU reference build: the same stable partitions, recursively.
struct ReferenceTree {
  std::vector<float> X, Y;          // the points in tree order
  std::vector<int> Ranges;          // 2 per node slot, as on the GPU
  std::vector<char> Exists;         // per node slot
  std::vector<long> SplitsPerLevel; // = device-side launches per level

  void build(int Depth, int Slot, float4 Box, int MaxDepth, int MinPoints) {
    int Node = levelStart(Depth) + Slot;
    int Begin = Ranges[2 * Node], End = Ranges[2 * Node + 1];
    Exists[Node] = 1;
    if (Depth == MaxDepth || End - Begin <= MinPoints)
      return;
    ++SplitsPerLevel[Depth];
    // Stable partition by quadrant: one bucket per quadrant, in order.
    std::vector<float> BucketX[4], BucketY[4];
    for (int I = Begin; I < End; ++I) {
      int Q = quadrantOf(X[I], Y[I], Box);
      BucketX[Q].push_back(X[I]);
      BucketY[Q].push_back(Y[I]);
    }
    int Start = Begin;
    for (int Q = 0; Q < 4; ++Q) {
      int Child = levelStart(Depth + 1) + 4 * Slot + Q;
      std::copy(BucketX[Q].begin(), BucketX[Q].end(), X.begin() + Start);
      std::copy(BucketY[Q].begin(), BucketY[Q].end(), Y.begin() + Start);
      int Stop = Start + int(BucketX[Q].size());
      Ranges[2 * Child] = Start;
      Ranges[2 * Child + 1] = Stop;
      build(Depth + 1, 4 * Slot + Q, quadrantBox(Box, Q), MaxDepth, MinPoints);
      Start = Stop;
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "quadtree", {262144, 10, 16}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 1 || A.size(0) > (1 << 28) || A.size(1) < 0 ||
      A.size(1) > kMaxSupportedDepth || A.size(2) < 1)
    harness::fail("need 1 <= points <= 2^28, 0 <= max_depth <= 11 and "
                  "1 <= min_points");
  const int NumPoints = int(A.size(0)), MaxDepth = int(A.size(1));
  const int MinPoints = int(A.size(2));
  const int NumSlots = levelStart(MaxDepth + 1);

  harness::Rng R(A.Seed);
  std::vector<float> X, Y;
  makePoints(R, NumPoints, 64, X, Y);

  ReferenceTree Ref;
  Ref.X = X;
  Ref.Y = Y;
  Ref.Ranges.assign(2 * size_t(NumSlots), 0);
  Ref.Exists.assign(NumSlots, 0);
  Ref.SplitsPerLevel.assign(MaxDepth + 1, 0);
  Ref.Ranges[0] = 0;
  Ref.Ranges[1] = NumPoints;
  Ref.build(0, 0, make_float4(0, 0, 1, 1), MaxDepth, MinPoints);
  long Launches = 0, MaxLaunches = 0, Nodes = 0;
  int Levels = 0;
  for (int D = 0; D <= MaxDepth; ++D) {
    Launches += Ref.SplitsPerLevel[D];
    MaxLaunches = std::max(MaxLaunches, Ref.SplitsPerLevel[D]);
    if (Ref.SplitsPerLevel[D])
      Levels = D + 2;
  }
  for (char E : Ref.Exists)
    Nodes += E;
  std::printf("quadtree: %d points, %ld nodes in %d levels, %ld split nodes "
              "= device-side launches (at most %ld from one level)%s\n",
              NumPoints, Nodes, std::max(Levels, 1), Launches, MaxLaunches,
              Flat ? "; running the flat version" : "");

  // All launches may be pending at once. The split nodes of one level hold
  // more than MinPoints points each and do not overlap.
  if (!Flat) {
    long Bound = 0;
    for (int D = 0; D < MaxDepth; ++D)
      Bound += std::min<long>(1L << (2 * D), NumPoints / (MinPoints + 1));
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(Bound, 2048L)));
  }

  harness::DeviceArray<float> DX(X), DY(Y);
  harness::DeviceArray<float> DBufX(NumPoints), DBufY(NumPoints),
      DOtherX(NumPoints), DOtherY(NumPoints), DSortedX(NumPoints),
      DSortedY(NumPoints);
  harness::DeviceArray<int> DRanges(2 * size_t(NumSlots));
  harness::DeviceArray<float> DBoxes(4 * size_t(NumSlots));
  // The flat version's node lists: a level has at most 4^MaxDepth nodes.
  const int MaxLevelNodes = Flat ? 1 << (2 * MaxDepth) : 1;
  harness::DeviceArray<int> DSlots(MaxLevelNodes), DNextSlots(MaxLevelNodes),
      DNextCount(1);
  int2 *Ranges = reinterpret_cast<int2 *>(DRanges.data());
  float4 *Boxes = reinterpret_cast<float4 *>(DBoxes.data());

  auto Run = [&] {
    // The build moves points between two buffers; start from the input.
    HARNESS_CHECK(cudaMemcpyAsync(DBufX.data(), DX.data(), DX.bytes(),
                                  cudaMemcpyDeviceToDevice));
    HARNESS_CHECK(cudaMemcpyAsync(DBufY.data(), DY.data(), DY.bytes(),
                                  cudaMemcpyDeviceToDevice));
    quadtreeStart<<<1, 1>>>(Ranges, Boxes, NumPoints);
    HARNESS_CHECK(cudaGetLastError());
    if (!Flat) {
      buildQuadtree<<<1, kQuadThreads>>>(
          DBufX.data(), DBufY.data(), DOtherX.data(), DOtherY.data(),
          DSortedX.data(), DSortedY.data(), Ranges, Boxes, 0, 0, MaxDepth,
          MinPoints);
      HARNESS_CHECK(cudaGetLastError());
      return;
    }
    const int Root = 0;
    HARNESS_CHECK(cudaMemcpyAsync(DSlots.data(), &Root, sizeof(int),
                                  cudaMemcpyHostToDevice));
    float *In[2] = {DBufX.data(), DBufY.data()};
    float *Out[2] = {DOtherX.data(), DOtherY.data()};
    int *Slots = DSlots.data(), *NextSlots = DNextSlots.data();
    for (int Depth = 0, Count = 1; Count > 0; ++Depth) {
      HARNESS_CHECK(cudaMemsetAsync(DNextCount.data(), 0, sizeof(int)));
      buildQuadtreeLevel<<<Count, kQuadThreads>>>(
          In[0], In[1], Out[0], Out[1], DSortedX.data(), DSortedY.data(),
          Ranges, Boxes, Depth, Slots, NextSlots, DNextCount.data(), MaxDepth,
          MinPoints);
      HARNESS_CHECK(cudaGetLastError());
      HARNESS_CHECK(cudaMemcpy(&Count, DNextCount.data(), sizeof(int),
                               cudaMemcpyDeviceToHost));
      std::swap(In, Out);
      std::swap(Slots, NextSlots);
    }
  };

  harness::Result Res = harness::measure(
      A,
      [&] {
        DSortedX.poison();
        DSortedY.poison();
        DRanges.poison();
      },
      Run,
      [&] {
        harness::checkDeviceLaunches();
        harness::Check C = harness::compareExact(DSortedX.download(), Ref.X);
        C.merge(harness::compareExact(DSortedY.download(), Ref.Y));
        C.merge(harness::compareExact(
            DRanges.download(), Ref.Ranges,
            [&](size_t I) { return bool(Ref.Exists[I / 2]); }));
        return C;
      });
  // The points read once and written once in tree order, the nodes written
  // once.
  double Bytes = 4 * sizeof(float) * double(NumPoints) +
                 (sizeof(int2) + sizeof(float4)) * double(Nodes);
  return harness::report(A, Res, Bytes);
}
