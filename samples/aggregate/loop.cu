//===- loop.cu - Walk counting on a segmented graph, launches in a loop ---===//
//
// Counts, for every node of a directed graph, the walks of a given length
// that end there (the basis of truncated Katz centrality): starting from one
// walk of length 0 per node, each step sends every node's count along all its
// out-edges, summing what arrives.
//
// The graph is stored the way dynamic-graph frameworks (faimGraph, Hornet)
// store it: each node's out-edges sit in a linked list of fixed-size segments
// of up to kSegmentCapacity edges, scattered in memory as if the graph had
// grown by insertions. The parent kernel propagateWalks has one thread per
// node, which walks its node's segment list and launches one pushSegment
// child per segment, with one thread per edge of that segment: the launch
// sits in a loop whose trip count differs from thread to thread (0 to
// max_degree / kSegmentCapacity + 1), and the child's block size is the
// segment's edge count, so it differs from launch to launch too.
//
// Counts are 64-bit integers summed with atomicAdd (wrapping modulo 2^64, as
// the CPU reference does), so the result does not depend on the order and is
// checked exactly.
//
// --flat runs without dynamic parallelism: one warp per node walks the
// node's segment list, its lanes covering each segment's edges.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/loop.cu -lcudadevrt -o loop
//   ./loop [nodes [max_degree [steps]]] [--flat] [--seed=N] [--reps=N]
//
// Default: 16384 nodes with out-degrees in [0, 512] (mostly small, mean
// about 128, 2.1M edges) in about 40k segments, and 3 steps: about 40k child
// launches per propagateWalks call, 120k per run.
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <algorithm>
#include <climits>
#include <utility>

namespace {

/// Edges per segment; a node's last segment may hold fewer.
constexpr int kSegmentCapacity = 64;
/// The end of a segment list.
constexpr int kNoSegment = -1;
/// Threads per block of the parent grid: one thread per node.
constexpr int kParentThreads = 128;

/// Out-edges in segment lists: node v's list starts at FirstSegment[v]; a
/// segment s holds SegmentSize[s] targets at
/// SegmentTargets[s * kSegmentCapacity ...] and continues at NextSegment[s].
struct SegmentedGraph {
  int NumNodes = 0;
  long NumEdges = 0;
  std::vector<int> FirstSegment, NextSegment, SegmentSize, SegmentTargets;
  int numSegments() const { return int(SegmentSize.size()); }
};

} // namespace

/// Child: one thread per edge of one segment, adding \p walks to the edge's
/// target.
__global__ void pushSegment(const int *__restrict__ targets,
                            unsigned long long walks,
                            unsigned long long *nextWalks) {
  atomicAdd(&nextWalks[targets[threadIdx.x]], walks);
}

/// Parent: one thread per node, which launches one child per segment of its
/// node's edge list.
#pragma cuda_rewrite aggregate
__global__ void propagateWalks(int numNodes,
                               const int *__restrict__ firstSegment,
                               const int *__restrict__ nextSegment,
                               const int *__restrict__ segmentSize,
                               const int *__restrict__ segmentTargets,
                               const unsigned long long *__restrict__ walks,
                               unsigned long long *nextWalks) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= numNodes)
    return;
  unsigned long long count = walks[v];
  if (count == 0)
    return; // No walk ends here, so none goes on from here.
  for (int s = firstSegment[v]; s != kNoSegment; s = nextSegment[s]) {
    pushSegment<<<1, segmentSize[s]>>>(
        segmentTargets + size_t(s) * kSegmentCapacity, count, nextWalks);
    harness::checkDeviceLaunch(cudaGetLastError());
  }
}

/// Flat version: one warp per node, lanes over each segment's edges.
__global__ void propagateWalksFlat(int numNodes,
                                   const int *__restrict__ firstSegment,
                                   const int *__restrict__ nextSegment,
                                   const int *__restrict__ segmentSize,
                                   const int *__restrict__ segmentTargets,
                                   const unsigned long long *__restrict__ walks,
                                   unsigned long long *nextWalks) {
  int v = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (v >= numNodes)
    return;
  unsigned long long count = walks[v];
  if (count == 0)
    return;
  for (int s = firstSegment[v]; s != kNoSegment; s = nextSegment[s]) {
    const int *targets = segmentTargets + size_t(s) * kSegmentCapacity;
    for (int k = lane; k < segmentSize[s]; k += 32)
      atomicAdd(&nextWalks[targets[k]], count);
  }
}

namespace {

/// A random graph: out-degrees in [0, MaxDegree], most of them small (the
/// cube of a uniform variable), targets uniform; segments numbered in random
/// order.
SegmentedGraph makeGraph(harness::Rng &R, int NumNodes, int MaxDegree) {
  SegmentedGraph G;
  G.NumNodes = NumNodes;
  std::vector<int> Degree(NumNodes);
  int NumSegments = 0;
  for (int &D : Degree) {
    double U = double(R.next() >> 11) * 0x1.0p-53;
    D = int(U * U * U * (MaxDegree + 1));
    NumSegments += (D + kSegmentCapacity - 1) / kSegmentCapacity;
    G.NumEdges += D;
  }
  // Segment ids in a random order: a node's segments are scattered.
  std::vector<int> Id(NumSegments);
  for (int S = 0; S < NumSegments; ++S)
    Id[S] = S;
  for (int S = NumSegments - 1; S > 0; --S)
    std::swap(Id[S], Id[R.next() % uint64_t(S + 1)]);
  G.FirstSegment.assign(NumNodes, kNoSegment);
  G.NextSegment.assign(NumSegments, kNoSegment);
  G.SegmentSize.assign(NumSegments, 0);
  G.SegmentTargets.assign(size_t(NumSegments) * kSegmentCapacity, 0);
  int Next = 0;
  for (int V = 0; V < NumNodes; ++V) {
    int *Link = &G.FirstSegment[V];
    for (int Left = Degree[V]; Left > 0; Left -= kSegmentCapacity) {
      int S = Id[Next++];
      *Link = S;
      Link = &G.NextSegment[S];
      G.SegmentSize[S] = std::min(Left, kSegmentCapacity);
      for (int K = 0; K < G.SegmentSize[S]; ++K)
        G.SegmentTargets[size_t(S) * kSegmentCapacity + K] =
            int(R.next() % uint64_t(NumNodes));
    }
  }
  return G;
}

/// CPU reference: the same steps, edge by edge.
std::vector<unsigned long long> referenceWalks(const SegmentedGraph &G,
                                               int Steps, long &Launches,
                                               long &MaxLaunches) {
  std::vector<unsigned long long> Walks(G.NumNodes, 1), Next(G.NumNodes);
  Launches = MaxLaunches = 0;
  for (int Step = 0; Step < Steps; ++Step) {
    long StepLaunches = 0;
    std::fill(Next.begin(), Next.end(), 0);
    for (int V = 0; V < G.NumNodes; ++V) {
      if (!Walks[V])
        continue;
      for (int S = G.FirstSegment[V]; S != kNoSegment; S = G.NextSegment[S]) {
        ++StepLaunches;
        for (int K = 0; K < G.SegmentSize[S]; ++K)
          Next[G.SegmentTargets[size_t(S) * kSegmentCapacity + K]] += Walks[V];
      }
    }
    Launches += StepLaunches;
    MaxLaunches = std::max(MaxLaunches, StepLaunches);
    std::swap(Walks, Next);
  }
  return Walks;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "loop", {16384, 512, 3}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 1 || A.size(0) > (1 << 26) || A.size(1) < 1 ||
      A.size(0) * (A.size(1) / kSegmentCapacity + 1) * kSegmentCapacity >=
          INT_MAX ||
      A.size(2) < 1 || A.size(2) > 100)
    harness::fail("need 1 <= nodes <= 2^26, 1 <= max_degree, fewer than 2^31 "
                  "segment slots and 1 <= steps <= 100");
  const int NumNodes = int(A.size(0)), MaxDegree = int(A.size(1));
  const int Steps = int(A.size(2));

  harness::Rng R(A.Seed);
  SegmentedGraph G = makeGraph(R, NumNodes, MaxDegree);
  long Launches, MaxLaunches;
  std::vector<unsigned long long> Ref =
      referenceWalks(G, Steps, Launches, MaxLaunches);
  std::printf("loop: %d nodes, %ld edges in %d segments, %d steps, %ld child "
              "launches (at most %ld in one propagateWalks call)%s\n",
              NumNodes, G.NumEdges, G.numSegments(), Steps, Launches,
              MaxLaunches, Flat ? "; running the flat version" : "");

  // One launch per segment, all of them possibly pending at once.
  if (!Flat)
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(G.numSegments(), 2048)));

  harness::DeviceArray<int> DFirst(G.FirstSegment), DNext(G.NextSegment),
      DSize(G.SegmentSize), DTargets(G.SegmentTargets);
  harness::DeviceArray<unsigned long long> DOnes(
      std::vector<unsigned long long>(NumNodes, 1));
  harness::DeviceArray<unsigned long long> DScratch0(NumNodes),
      DScratch1(NumNodes), DOut(NumNodes);

  auto Run = [&] {
    // Step k reads the counts of walks of length k and writes those of
    // length k + 1; the last step writes the output.
    const unsigned long long *Walks = DOnes.data();
    for (int Step = 0; Step < Steps; ++Step) {
      unsigned long long *Next = Step == Steps - 1 ? DOut.data()
                                 : Step % 2        ? DScratch1.data()
                                                   : DScratch0.data();
      HARNESS_CHECK(cudaMemsetAsync(Next, 0, DOut.bytes()));
      if (Flat) {
        long Threads = long(NumNodes) * 32;
        propagateWalksFlat<<<(Threads + 255) / 256, 256>>>(
            NumNodes, DFirst.data(), DNext.data(), DSize.data(),
            DTargets.data(), Walks, Next);
      } else {
        propagateWalks<<<(NumNodes + kParentThreads - 1) / kParentThreads,
                         kParentThreads>>>(NumNodes, DFirst.data(),
                                           DNext.data(), DSize.data(),
                                           DTargets.data(), Walks, Next);
      }
      HARNESS_CHECK(cudaGetLastError());
      Walks = Next;
    }
  };

  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); }, Run,
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareExact(DOut.download(), Ref);
      });
  // Per step: the segment lists and the targets read once, the counts read
  // and written once.
  double Bytes =
      Steps * (sizeof(int) * (double(NumNodes) + 2.0 * G.numSegments() +
                              double(G.NumEdges)) +
               2.0 * sizeof(unsigned long long) * NumNodes);
  return harness::report(A, Res, Bytes);
}
