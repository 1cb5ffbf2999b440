//===- coloring.cu - Jones-Plassmann graph colouring with child launches --===//
//
// Colours an undirected random graph (the `gc` benchmark of KLAP, Table I)
// with the Jones-Plassmann algorithm and first-fit colours. Every node has a
// distinct random priority. In each round:
//
//  1. colorRound (the parent) has one thread per uncoloured node, which
//     launches scanNeighbours with one thread per neighbour. A child ORs the
//     colour of an already coloured neighbour into the node's used-colour
//     mask, and marks the node as blocked if an uncoloured neighbour has a
//     higher priority.
//  2. assignColors, a plain kernel, gives every unblocked node the smallest
//     colour not in its mask, resets the flags and compacts the still
//     uncoloured nodes into the next round's list.
//
// The nodes coloured in one round are local maxima among the uncoloured
// ones, so no two are neighbours, and colours change only in step 2: the
// result does not depend on timing and is checked exactly against the same
// algorithm on the CPU. The parent never reads what its children wrote; the
// host orders the two steps.
//
// --flat replaces step 1 by a topology-driven kernel without dynamic
// parallelism: one thread per edge of the graph, which finds its source node
// by a binary search in the row offsets and does the child's work if that
// node is still uncoloured.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/coloring.cu -lcudadevrt -o coloring
//   ./coloring [nodes [avg_degree [max_degree]]] [--flat] [--seed=N]
//
// Default: 16384 nodes, average degree 8 (at most 48): about 23 rounds and
// 120k child launches, up to 16k in one colorRound call.
//
//===----------------------------------------------------------------------===//

#include "csr.cuh"
#include "harness.cuh"

#include <algorithm>
#include <climits>
#include <numeric>
#include <unordered_set>
#include <utility>

namespace {

/// The colour of a node that has none yet.
constexpr int kUncoloured = -1;
/// Colours are bits of a 64-bit mask; first-fit colours stay below the
/// largest degree plus one.
constexpr int kMaxColours = 64;
/// Threads per block of the child grid: one thread per neighbour.
constexpr int kNeighbourThreads = 32;
/// Threads per block of the parent grid: one thread per uncoloured node.
constexpr int kParentThreads = 256;

/// An undirected graph, each edge stored in both directions.
using Graph = samples::CsrGraph;

} // namespace

/// What node \p v learns from its neighbour \p u: u's colour if it has one,
/// else whether u outranks v in this round.
__device__ void inspectNeighbour(int v, int u, int priorityV,
                                 const int *__restrict__ priority,
                                 const int *__restrict__ colours,
                                 unsigned long long *usedColours,
                                 int *blocked) {
  int colour = colours[u];
  if (colour != kUncoloured)
    atomicOr(&usedColours[v], 1ull << colour);
  else if (priority[u] > priorityV)
    blocked[v] = 1;
}

/// Child: one thread per neighbour of node \p v.
__global__ void scanNeighbours(const int *__restrict__ neighbours, int degree,
                               int v, int priorityV,
                               const int *__restrict__ priority,
                               const int *__restrict__ colours,
                               unsigned long long *usedColours, int *blocked) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < degree)
    inspectNeighbour(v, neighbours[k], priorityV, priority, colours,
                     usedColours, blocked);
}

/// Parent: one thread per uncoloured node, which launches one child thread
/// per neighbour of its node.
#pragma cuda_rewrite aggregate
__global__ void
colorRound(const int *__restrict__ rowPtr, const int *__restrict__ colIdx,
           const int *__restrict__ priority, const int *__restrict__ colours,
           const int *__restrict__ uncoloured, int numUncoloured,
           unsigned long long *usedColours, int *blocked) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < numUncoloured) {
    int v = uncoloured[i];
    int begin = rowPtr[v];
    int degree = rowPtr[v + 1] - begin;
    if (degree > 0) {
      scanNeighbours<<<(degree + kNeighbourThreads - 1) / kNeighbourThreads,
                       kNeighbourThreads>>>(colIdx + begin, degree, v,
                                            priority[v], priority, colours,
                                            usedColours, blocked);
      harness::checkDeviceLaunch(cudaGetLastError());
    }
  }
}

/// Flat version of step 1: one thread per edge of the whole graph, which
/// finds its source.
__global__ void colorRoundFlat(const int *__restrict__ rowPtr,
                               const int *__restrict__ colIdx,
                               const int *__restrict__ priority,
                               const int *__restrict__ colours, int numNodes,
                               int numEdges, unsigned long long *usedColours,
                               int *blocked) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= numEdges)
    return;
  const int source = samples::edgeSource(rowPtr, numNodes, e);
  if (colours[source] == kUncoloured)
    inspectNeighbour(source, colIdx[e], priority[source], priority, colours,
                     usedColours, blocked);
}

/// Step 2: colours the unblocked nodes first-fit, resets the per-round state
/// and lists the nodes left for the next round.
__global__ void assignColors(const int *__restrict__ uncoloured,
                             int numUncoloured, int *colours,
                             unsigned long long *usedColours, int *blocked,
                             int *nextUncoloured, int *nextCount) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= numUncoloured)
    return;
  int v = uncoloured[i];
  if (blocked[v])
    nextUncoloured[atomicAdd(nextCount, 1)] = v;
  else
    colours[v] = __ffsll(~usedColours[v]) - 1;
  usedColours[v] = 0;
  blocked[v] = 0;
}

/// Every node uncoloured and listed, no colour used, nothing blocked.
__global__ void startColoring(int numNodes, int *colours, int *uncoloured,
                              unsigned long long *usedColours, int *blocked) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < numNodes) {
    colours[v] = kUncoloured;
    uncoloured[v] = v;
    usedColours[v] = 0;
    blocked[v] = 0;
  }
}

namespace {

struct RunStats {
  int Rounds = 0;
  long ParentThreads = 0;
};

/// Colours the whole graph on the GPU; the colours end up in \p Colours.
RunStats runColoring(bool Flat, const Graph &G, const int *RowPtr,
                     const int *ColIdx, const int *Priority, int *Colours,
                     int *Uncoloured, int *NextUncoloured,
                     unsigned long long *UsedColours, int *Blocked,
                     int *NextCount) {
  const int NumNodes = G.NumNodes, NumEdges = int(G.numEdges());
  RunStats Stats;
  startColoring<<<(NumNodes + 255) / 256, 256>>>(NumNodes, Colours, Uncoloured,
                                                 UsedColours, Blocked);
  HARNESS_CHECK(cudaGetLastError());
  for (int Count = NumNodes; Count > 0; ++Stats.Rounds) {
    if (Flat)
      colorRoundFlat<<<(NumEdges + 255) / 256, 256>>>(
          RowPtr, ColIdx, Priority, Colours, NumNodes, NumEdges, UsedColours,
          Blocked);
    else
      colorRound<<<(Count + kParentThreads - 1) / kParentThreads,
                   kParentThreads>>>(RowPtr, ColIdx, Priority, Colours,
                                     Uncoloured, Count, UsedColours, Blocked);
    HARNESS_CHECK(cudaGetLastError());
    Stats.ParentThreads += Count;
    HARNESS_CHECK(cudaMemsetAsync(NextCount, 0, sizeof(int)));
    assignColors<<<(Count + 255) / 256, 256>>>(Uncoloured, Count, Colours,
                                               UsedColours, Blocked,
                                               NextUncoloured, NextCount);
    HARNESS_CHECK(cudaGetLastError());
    HARNESS_CHECK(
        cudaMemcpy(&Count, NextCount, sizeof(int), cudaMemcpyDeviceToHost));
    std::swap(Uncoloured, NextUncoloured);
  }
  return Stats;
}

/// A random undirected graph without loops or repeated edges: NumNodes *
/// AvgDegree / 2 random node pairs, skipping repeats and pairs with a node
/// that already has MaxDegree neighbours.
Graph makeGraph(harness::Rng &R, int NumNodes, int AvgDegree, int MaxDegree) {
  std::vector<std::vector<int>> Adjacent(NumNodes);
  std::unordered_set<uint64_t> Seen;
  long Pairs = long(NumNodes) * AvgDegree / 2;
  for (long P = 0; P < Pairs; ++P) {
    int U = int(R.next() % uint64_t(NumNodes));
    int V = int(R.next() % uint64_t(NumNodes));
    if (U == V || int(Adjacent[U].size()) >= MaxDegree ||
        int(Adjacent[V].size()) >= MaxDegree)
      continue;
    if (!Seen.insert(uint64_t(std::min(U, V)) * NumNodes + std::max(U, V))
             .second)
      continue;
    Adjacent[U].push_back(V);
    Adjacent[V].push_back(U);
  }
  Graph G;
  G.NumNodes = NumNodes;
  G.RowPtr.assign(NumNodes + 1, 0);
  for (int V = 0; V < NumNodes; ++V) {
    G.RowPtr[V + 1] = G.RowPtr[V] + int(Adjacent[V].size());
    G.ColIdx.insert(G.ColIdx.end(), Adjacent[V].begin(), Adjacent[V].end());
  }
  return G;
}

/// CPU reference: the same rounds, one node at a time.
std::vector<int> referenceColoring(const Graph &G,
                                   const std::vector<int> &Priority,
                                   int &Rounds, long &Launches,
                                   long &MaxLaunches) {
  std::vector<int> Colours(G.NumNodes, kUncoloured), Uncoloured(G.NumNodes);
  std::iota(Uncoloured.begin(), Uncoloured.end(), 0);
  std::vector<int> Winners, Next;
  Rounds = 0;
  Launches = MaxLaunches = 0;
  while (!Uncoloured.empty()) {
    ++Rounds;
    long RoundLaunches = 0;
    Winners.clear();
    Next.clear();
    for (int V : Uncoloured) {
      RoundLaunches += G.RowPtr[V + 1] > G.RowPtr[V];
      bool Blocked = false;
      for (int E = G.RowPtr[V]; E < G.RowPtr[V + 1] && !Blocked; ++E) {
        int U = G.ColIdx[E];
        Blocked = Colours[U] == kUncoloured && Priority[U] > Priority[V];
      }
      (Blocked ? Next : Winners).push_back(V);
    }
    for (int V : Winners) {
      uint64_t Used = 0;
      for (int E = G.RowPtr[V]; E < G.RowPtr[V + 1]; ++E)
        if (Colours[G.ColIdx[E]] != kUncoloured)
          Used |= 1ull << Colours[G.ColIdx[E]];
      int Colour = 0;
      while (Used >> Colour & 1)
        ++Colour;
      Colours[V] = Colour;
    }
    Launches += RoundLaunches;
    MaxLaunches = std::max(MaxLaunches, RoundLaunches);
    std::swap(Uncoloured, Next);
  }
  return Colours;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "coloring", {16384, 8, 48}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 2 || A.size(0) > (1 << 26) || A.size(1) < 1 ||
      A.size(2) < 1 || A.size(2) >= kMaxColours ||
      A.size(0) * A.size(2) >= INT_MAX)
    harness::fail("need 2 <= nodes <= 2^26, 1 <= avg_degree, 1 <= max_degree "
                  "< 64 and fewer than 2^31 edges");
  const int NumNodes = int(A.size(0)), AvgDegree = int(A.size(1));
  const int MaxDegree = int(A.size(2));

  harness::Rng R(A.Seed);
  Graph G = makeGraph(R, NumNodes, AvgDegree, MaxDegree);
  // Distinct priorities: a random permutation.
  std::vector<int> Priority(NumNodes);
  std::iota(Priority.begin(), Priority.end(), 0);
  for (int I = NumNodes - 1; I > 0; --I)
    std::swap(Priority[I], Priority[R.next() % uint64_t(I + 1)]);

  int Rounds;
  long Launches, MaxLaunches;
  std::vector<int> Ref =
      referenceColoring(G, Priority, Rounds, Launches, MaxLaunches);
  int NumColours = *std::max_element(Ref.begin(), Ref.end()) + 1;
  std::printf("coloring: %d nodes, %ld edges (both directions), %d colours in "
              "%d rounds, %ld child launches (at most %ld in one colorRound "
              "call)%s\n",
              NumNodes, G.numEdges(), NumColours, Rounds, Launches, MaxLaunches,
              Flat ? "; running the flat version" : "");

  // One launch per uncoloured node and round.
  if (!Flat)
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(NumNodes, 2048)));

  harness::DeviceArray<int> DRowPtr(G.RowPtr), DColIdx(G.ColIdx),
      DPriority(Priority);
  harness::DeviceArray<int> DColours(NumNodes), DUncoloured(NumNodes),
      DNextUncoloured(NumNodes), DBlocked(NumNodes), DNextCount(1);
  harness::DeviceArray<unsigned long long> DUsedColours(NumNodes);
  RunStats Stats;
  harness::Result Res = harness::measure(
      A, [&] { DColours.poison(); },
      [&] {
        Stats = runColoring(
            Flat, G, DRowPtr.data(), DColIdx.data(), DPriority.data(),
            DColours.data(), DUncoloured.data(), DNextUncoloured.data(),
            DUsedColours.data(), DBlocked.data(), DNextCount.data());
      },
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareExact(DColours.download(), Ref);
      });
  std::printf("coloring: last run: %d rounds, %ld parent threads\n",
              Stats.Rounds, Stats.ParentThreads);
  // The graph and the priorities read once, the colours written once.
  double Bytes = sizeof(int) * (double(NumNodes + 1) + double(G.numEdges()) +
                                2 * double(NumNodes));
  return harness::report(A, Res, Bytes);
}
