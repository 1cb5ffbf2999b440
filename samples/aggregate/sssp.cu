//===- sssp.cu - Worklist Bellman-Ford, one child launch per active node --===//
//
// Single-source shortest paths over a directed graph with positive integer
// weights, in CSR form (the `sssp` benchmark of KLAP, Table I). The algorithm
// is Bellman-Ford with a worklist: in every round the host launches ssspRound
// with one thread per active node (one whose distance dropped in the previous
// round), and each of those threads launches ssspRelaxEdges with one thread
// per out-edge. A child lowers its neighbour's distance with atomicMin and, if
// that improved it, queues the neighbour for the next round (once per round,
// through a stamp). The host stops when a round queued nothing.
//
// A parent passes its node's distance as it reads it at launch time. A child
// of another node may lower that distance while the round runs; whoever
// lowers it also queues the node again, so the result is the exact shortest
// distance whatever the timing, and it is checked exactly against Dijkstra's
// algorithm on the CPU. (The number of rounds and launches does depend on
// timing.)
//
// --flat runs the same rounds without dynamic parallelism, topology-driven:
// one thread per edge of the whole graph finds its source node by a binary
// search in the row offsets and relaxes the edge if that node is active.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/sssp.cu -lcudadevrt -o sssp
//   ./sssp [nodes [max_degree [max_weight]]] [--flat] [--seed=N] [--reps=N]
//
// Default: 50000 nodes, out-degrees in [0, 32] skewed towards small ones
// (about 525k edges), weights in [1, 100]: about 21 rounds and 170k child
// launches, up to about 38k in one ssspRound call (both vary with timing).
//
//===----------------------------------------------------------------------===//

#include "csr.cuh"
#include "harness.cuh"

#include <climits>
#include <functional>
#include <queue>
#include <utility>

namespace {

/// The distance of a node that no path reached: every byte 0x7f, so that
/// cudaMemset sets it, and far from overflowing when an edge weight is added.
constexpr int kInfinity = 0x7f7f7f7f;
/// Threads per block of the child grid: one thread per edge.
constexpr int kEdgeThreads = 128;
/// Threads per block of the parent grid: one thread per active node.
constexpr int kRoundThreads = 128;

/// A directed graph with edge weights: the out-edges of node v are
/// colIdx[k], weights[k] for k in [rowPtr[v], rowPtr[v + 1]).
struct Graph : samples::CsrGraph {
  std::vector<int> Weights;
};

} // namespace

/// Relaxes an edge to \p v that offers the distance \p candidate; queues \p v
/// for round \p nextRound the first time it improves in this round.
__device__ void relaxEdge(int v, int candidate, int *dist, int *lastQueued,
                          int *nextActive, int *nextSize, int nextRound) {
  if (candidate < atomicMin(&dist[v], candidate) &&
      atomicExch(&lastQueued[v], nextRound) != nextRound)
    nextActive[atomicAdd(nextSize, 1)] = v;
}

/// Child: one thread per out-edge of one active node at distance \p distance.
__global__ void ssspRelaxEdges(const int *__restrict__ neighbours,
                               const int *__restrict__ weights, int degree,
                               int distance, int *dist, int *lastQueued,
                               int *nextActive, int *nextSize, int nextRound) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < degree)
    relaxEdge(neighbours[e], distance + weights[e], dist, lastQueued,
              nextActive, nextSize, nextRound);
}

/// Parent: one thread per active node, which launches one child thread per
/// out-edge of its node.
#pragma cuda_rewrite aggregate
__global__ void ssspRound(const int *__restrict__ rowPtr,
                          const int *__restrict__ colIdx,
                          const int *__restrict__ weights,
                          const int *__restrict__ active, int numActive,
                          int *dist, int *lastQueued, int *nextActive,
                          int *nextSize, int round) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < numActive) {
    int node = active[i];
    int begin = rowPtr[node];
    int degree = rowPtr[node + 1] - begin;
    if (degree > 0) {
      ssspRelaxEdges<<<(degree + kEdgeThreads - 1) / kEdgeThreads,
                       kEdgeThreads>>>(colIdx + begin, weights + begin, degree,
                                       dist[node], dist, lastQueued, nextActive,
                                       nextSize, round + 1);
      harness::checkDeviceLaunch(cudaGetLastError());
    }
  }
}

/// Flat version: one thread per edge of the graph, which finds its source.
__global__ void ssspRoundFlat(const int *__restrict__ rowPtr,
                              const int *__restrict__ colIdx,
                              const int *__restrict__ weights, int numNodes,
                              int numEdges, int *dist, int *lastQueued,
                              int *nextActive, int *nextSize, int round) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= numEdges)
    return;
  const int source = samples::edgeSource(rowPtr, numNodes, e);
  if (lastQueued[source] == round)
    relaxEdge(colIdx[e], dist[source] + weights[e], dist, lastQueued,
              nextActive, nextSize, round + 1);
}

/// Puts \p source at distance 0 and makes it the only active node of round 0.
__global__ void ssspStart(int *dist, int *lastQueued, int *active, int source) {
  dist[source] = 0;
  lastQueued[source] = 0;
  active[0] = source;
}

namespace {

/// Runs the whole search on the GPU, one round of relaxations per frontier;
/// the distances end up in \p Dist.
samples::FrontierStats runSssp(bool Flat, const Graph &G, int Source,
                               const int *RowPtr, const int *ColIdx,
                               const int *Weights, int *Dist, int *LastQueued,
                               int *Active, int *NextActive, int *NextSize) {
  const int NumNodes = G.NumNodes;
  const int NumEdges = int(G.numEdges());
  HARNESS_CHECK(cudaMemsetAsync(Dist, 0x7f, sizeof(int) * NumNodes));
  HARNESS_CHECK(cudaMemsetAsync(LastQueued, 0xff, sizeof(int) * NumNodes));
  ssspStart<<<1, 1>>>(Dist, LastQueued, Active, Source);
  HARNESS_CHECK(cudaGetLastError());
  return samples::runFrontiers(
      Active, NextActive, NextSize,
      [&](int Round, const int *Current, int Size, int *Next) {
        if (Flat) {
          ssspRoundFlat<<<(NumEdges + 255) / 256, 256>>>(
              RowPtr, ColIdx, Weights, NumNodes, NumEdges, Dist, LastQueued,
              Next, NextSize, Round);
        } else {
          ssspRound<<<(Size + kRoundThreads - 1) / kRoundThreads,
                      kRoundThreads>>>(RowPtr, ColIdx, Weights, Current, Size,
                                       Dist, LastQueued, Next, NextSize, Round);
        }
      });
}

/// A random graph: out-degrees in [0, MaxDegree], most of them small, targets
/// and weights uniform.
Graph makeGraph(harness::Rng &R, int NumNodes, int MaxDegree, int MaxWeight) {
  Graph G;
  samples::makeSkewedGraph(R, NumNodes, MaxDegree, G);
  G.Weights.resize(G.RowPtr[NumNodes]);
  R.fill(G.Weights, 1, MaxWeight);
  return G;
}

/// CPU reference: Dijkstra with a binary heap.
std::vector<int> referenceSssp(const Graph &G, int Source) {
  std::vector<int> Dist(G.NumNodes, kInfinity);
  using Entry = std::pair<int, int>; // distance, node
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> Heap;
  Dist[Source] = 0;
  Heap.push({0, Source});
  while (!Heap.empty()) {
    auto [D, U] = Heap.top();
    Heap.pop();
    if (D > Dist[U])
      continue;
    for (int E = G.RowPtr[U]; E < G.RowPtr[U + 1]; ++E) {
      int V = G.ColIdx[E], Candidate = D + G.Weights[E];
      if (Candidate < Dist[V]) {
        Dist[V] = Candidate;
        Heap.push({Candidate, V});
      }
    }
  }
  return Dist;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "sssp", {50000, 32, 100}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 1 || A.size(0) >= INT_MAX / 2 || A.size(1) < 1 ||
      A.size(0) * (A.size(1) + 1) >= INT_MAX || A.size(2) < 1 ||
      A.size(2) > 1000000)
    harness::fail("need 1 <= nodes, 1 <= max_degree, fewer than 2^31 edges "
                  "and 1 <= max_weight <= 10^6");
  const int NumNodes = int(A.size(0)), MaxDegree = int(A.size(1));
  const int MaxWeight = int(A.size(2));
  // Paths have fewer than NumNodes edges: no distance reaches kInfinity.
  if (double(MaxWeight) * NumNodes >= kInfinity)
    harness::fail("nodes * max_weight must stay below 0x7f7f7f7f");

  harness::Rng R(A.Seed);
  Graph G = makeGraph(R, NumNodes, MaxDegree, MaxWeight);
  int Source = 0;
  for (int V = 1; V < NumNodes; ++V)
    if (G.RowPtr[V + 1] - G.RowPtr[V] > G.RowPtr[Source + 1] - G.RowPtr[Source])
      Source = V;
  std::vector<int> Ref = referenceSssp(G, Source);
  long Reached = 0;
  for (int D : Ref)
    Reached += D != kInfinity;
  std::printf("sssp: %d nodes, %ld edges, weights in [1, %d], source %d "
              "reaches %ld nodes%s\n",
              NumNodes, G.numEdges(), MaxWeight, Source, Reached,
              Flat ? "; running the flat version" : "");

  // A node is queued at most once per round, so a round has at most
  // NumNodes active nodes and as many pending launches.
  if (!Flat)
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(NumNodes, 2048)));

  harness::DeviceArray<int> DRowPtr(G.RowPtr), DColIdx(G.ColIdx),
      DWeights(G.Weights);
  harness::DeviceArray<int> DDist(NumNodes), DLastQueued(NumNodes),
      DActive(NumNodes), DNextActive(NumNodes), DNextSize(1);
  samples::FrontierStats Stats;
  harness::Result Res = harness::measure(
      A, [&] { DDist.poison(); },
      [&] {
        Stats = runSssp(Flat, G, Source, DRowPtr.data(), DColIdx.data(),
                        DWeights.data(), DDist.data(), DLastQueued.data(),
                        DActive.data(), DNextActive.data(), DNextSize.data());
      },
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareExact(DDist.download(), Ref);
      });
  std::printf("sssp: last run: %d rounds, %ld active nodes in all (at most "
              "%d in one round)\n",
              Stats.Rounds, Stats.Items, Stats.MaxItems);
  // The graph read once, each distance written once.
  double Bytes = sizeof(int) * (double(NumNodes + 1) +
                                2 * double(G.numEdges()) + double(NumNodes));
  return harness::report(A, Res, Bytes);
}
