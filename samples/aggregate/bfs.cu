//===- bfs.cu - Breadth-first search, one child launch per frontier node --===//
//
// Level-synchronous BFS over a directed graph in CSR form (the `bfs`
// benchmark of KLAP, Table I). For every level the host launches bfsExpand
// with one thread per frontier node, and each of those threads launches
// bfsVisitEdges with one thread per out-edge of its node: the inner loop of
// the textbook kernel, turned into a child grid. A child claims an unvisited
// neighbour with atomicCAS and appends it to the next frontier; the host reads
// the next frontier's size and goes on until it is empty.
//
// The frontier's order depends on timing, a node's level does not, so the
// levels are checked exactly against a CPU BFS.
//
// --flat runs the same algorithm without dynamic parallelism: one warp per
// frontier node, its lanes striding over the node's edges.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/bfs.cu -lcudadevrt -o bfs
//   ./bfs [nodes [max_degree]] [--flat] [--seed=N] [--reps=N]
//
// compile-defines: BFS_EXPAND_THREADS=1024
//
// Default: 100000 nodes with out-degrees in [0, 64], skewed towards small
// ones (about 2.1M edges); about 6 levels and 88k child launches, up to about
// 65k in one bfsExpand call.
//
//===----------------------------------------------------------------------===//

#include "csr.cuh"
#include "harness.cuh"

#include <climits>
#include <utility>

namespace {

/// The level of a node that no frontier reached (yet).
constexpr int kUnvisited = -1;
/// Threads per block of the child grid: one thread per edge.
constexpr int kEdgeThreads = 32;
/// Threads per block of the parent grid: one thread per frontier node.
/// -DBFS_EXPAND_THREADS=1024 runs the parents in 1024-thread blocks, the
/// largest CUDA allows: the rewritten parent must still launch (its
/// registers bounded for them).
#ifndef BFS_EXPAND_THREADS
#define BFS_EXPAND_THREADS 256
#endif
constexpr int kExpandThreads = BFS_EXPAND_THREADS;

/// A directed graph.
using Graph = samples::CsrGraph;

} // namespace

/// Visits the edge to \p v: the first visitor sets its level and queues it.
__device__ void visitNeighbour(int v, int *levels, int *nextFrontier,
                               int *nextSize, int nextLevel) {
  if (atomicCAS(&levels[v], kUnvisited, nextLevel) == kUnvisited)
    nextFrontier[atomicAdd(nextSize, 1)] = v;
}

/// Child: one thread per out-edge of one frontier node.
__global__ void bfsVisitEdges(const int *__restrict__ neighbours, int degree,
                              int *levels, int *nextFrontier, int *nextSize,
                              int nextLevel) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < degree)
    visitNeighbour(neighbours[e], levels, nextFrontier, nextSize, nextLevel);
}

/// Parent: one thread per node of the current frontier, which launches one
/// child thread per out-edge of its node.
#pragma cuda_rewrite aggregate
__global__ void bfsExpand(const int *__restrict__ rowPtr,
                          const int *__restrict__ colIdx,
                          const int *__restrict__ frontier, int frontierSize,
                          int *levels, int *nextFrontier, int *nextSize,
                          int level) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= frontierSize)
    return;
  int node = frontier[i];
  int begin = rowPtr[node];
  int degree = rowPtr[node + 1] - begin;
  if (degree > 0) {
    bfsVisitEdges<<<(degree + kEdgeThreads - 1) / kEdgeThreads, kEdgeThreads>>>(
        colIdx + begin, degree, levels, nextFrontier, nextSize, level + 1);
    harness::checkDeviceLaunch(cudaGetLastError());
  }
}

/// Flat version: one warp per frontier node; the lanes stride over its edges.
__global__ void bfsExpandFlat(const int *__restrict__ rowPtr,
                              const int *__restrict__ colIdx,
                              const int *__restrict__ frontier,
                              int frontierSize, int *levels, int *nextFrontier,
                              int *nextSize, int level) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (warp >= frontierSize)
    return;
  int node = frontier[warp];
  for (int e = rowPtr[node] + lane; e < rowPtr[node + 1]; e += 32)
    visitNeighbour(colIdx[e], levels, nextFrontier, nextSize, level + 1);
}

/// Makes \p source the only node of level 0 and of the first frontier.
__global__ void bfsStart(int *levels, int *frontier, int source) {
  levels[source] = 0;
  frontier[0] = source;
}

namespace {

/// Runs the whole BFS on the GPU, one level per round; the levels end up in
/// \p Levels.
samples::FrontierStats runBfs(bool Flat, int NumNodes, int Source,
                              const int *RowPtr, const int *ColIdx, int *Levels,
                              int *Frontier, int *NextFrontier, int *NextSize) {
  HARNESS_CHECK(cudaMemsetAsync(Levels, 0xff, sizeof(int) * NumNodes));
  bfsStart<<<1, 1>>>(Levels, Frontier, Source);
  HARNESS_CHECK(cudaGetLastError());
  return samples::runFrontiers(
      Frontier, NextFrontier, NextSize,
      [&](int Level, const int *Current, int Size, int *Next) {
        if (Flat) {
          long Threads = long(Size) * 32;
          bfsExpandFlat<<<(Threads + kExpandThreads - 1) / kExpandThreads,
                          kExpandThreads>>>(RowPtr, ColIdx, Current, Size,
                                            Levels, Next, NextSize, Level);
        } else {
          bfsExpand<<<(Size + kExpandThreads - 1) / kExpandThreads,
                      kExpandThreads>>>(RowPtr, ColIdx, Current, Size, Levels,
                                        Next, NextSize, Level);
        }
      });
}

/// CPU reference: levels by a queue-based BFS; also counts the launches the
/// CDP version makes (frontier nodes with edges) per level.
std::vector<int> referenceBfs(const Graph &G, int Source, long &Launches,
                              long &MaxLaunches, int &NumLevels) {
  std::vector<int> Levels(G.NumNodes, kUnvisited);
  std::vector<int> Frontier{Source}, Next;
  Levels[Source] = 0;
  Launches = MaxLaunches = NumLevels = 0;
  for (int Level = 0; !Frontier.empty(); ++Level) {
    long LevelLaunches = 0;
    Next.clear();
    for (int U : Frontier) {
      LevelLaunches += G.RowPtr[U + 1] > G.RowPtr[U];
      for (int E = G.RowPtr[U]; E < G.RowPtr[U + 1]; ++E)
        if (Levels[G.ColIdx[E]] == kUnvisited) {
          Levels[G.ColIdx[E]] = Level + 1;
          Next.push_back(G.ColIdx[E]);
        }
    }
    Launches += LevelLaunches;
    MaxLaunches = std::max(MaxLaunches, LevelLaunches);
    NumLevels = Level + 1;
    std::swap(Frontier, Next);
  }
  return Levels;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "bfs", {100000, 64}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 1 || A.size(0) >= INT_MAX / 2 || A.size(1) < 1 ||
      A.size(0) * (A.size(1) + 1) >= INT_MAX)
    harness::fail("need 1 <= nodes, 1 <= max_degree and fewer than 2^31 "
                  "edges");
  const int NumNodes = int(A.size(0)), MaxDegree = int(A.size(1));

  harness::Rng R(A.Seed);
  Graph G;
  samples::makeSkewedGraph(R, NumNodes, MaxDegree, G);
  // Start from the node with the most edges, so that the search goes far.
  int Source = 0;
  for (int V = 1; V < NumNodes; ++V)
    if (G.RowPtr[V + 1] - G.RowPtr[V] > G.RowPtr[Source + 1] - G.RowPtr[Source])
      Source = V;

  long Launches, MaxLaunches;
  int NumLevels;
  std::vector<int> Ref =
      referenceBfs(G, Source, Launches, MaxLaunches, NumLevels);
  std::printf("bfs: %d nodes, %ld edges, source %d, %d levels, %ld child "
              "launches (at most %ld in one bfsExpand call)%s\n",
              NumNodes, G.numEdges(), Source, NumLevels, Launches, MaxLaunches,
              Flat ? "; running the flat version" : "");

  // Every frontier node may launch, and a frontier holds each node at most
  // once: the pending launches of one level never exceed the node count.
  if (!Flat)
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(NumNodes, 2048)));

  harness::DeviceArray<int> DRowPtr(G.RowPtr), DColIdx(G.ColIdx);
  harness::DeviceArray<int> DLevels(NumNodes), DFrontier(NumNodes),
      DNextFrontier(NumNodes), DNextSize(1);
  samples::FrontierStats Stats;
  harness::Result Res = harness::measure(
      A, [&] { DLevels.poison(); },
      [&] {
        Stats = runBfs(Flat, NumNodes, Source, DRowPtr.data(), DColIdx.data(),
                       DLevels.data(), DFrontier.data(), DNextFrontier.data(),
                       DNextSize.data());
      },
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareExact(DLevels.download(), Ref);
      });
  std::printf("bfs: last run: %d levels, %ld %s (at most %d per call)\n",
              Stats.Rounds, Stats.Items,
              Flat ? "frontier warps" : "parent threads", Stats.MaxItems);
  // The graph read once, each level written once.
  double Bytes = sizeof(int) * (double(NumNodes + 1) + double(G.numEdges()) +
                                double(NumNodes));
  return harness::report(A, Res, Bytes);
}
