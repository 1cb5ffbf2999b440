//===- csr.cuh - Graphs in CSR form for the samples ------------*- CUDA -*-===//
//
// The graph samples (bfs, sssp, coloring) share the storage format, the
// one device-side lookup their flat versions need, and (bfs, sssp) the host
// loop over frontiers; each builds its own kind of random graph.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_CSR_CUH
#define CUDA_REWRITE_SAMPLES_CSR_CUH

#include "harness.cuh"

#include <algorithm>
#include <utility>
#include <vector>

namespace samples {

/// A graph in CSR form: the out-neighbours of node v are
/// ColIdx[RowPtr[v] .. RowPtr[v + 1]).
struct CsrGraph {
  int NumNodes = 0;
  std::vector<int> RowPtr, ColIdx;
  long numEdges() const { return long(ColIdx.size()); }
};

/// Fills \p G with a random graph of \p NumNodes nodes: out-degrees in
/// [0, MaxDegree], most of them small (the square of a uniform variable),
/// targets uniform.
inline void makeSkewedGraph(harness::Rng &R, int NumNodes, int MaxDegree,
                            CsrGraph &G) {
  G.NumNodes = NumNodes;
  G.RowPtr.resize(NumNodes + 1);
  G.RowPtr[0] = 0;
  for (int V = 0; V < NumNodes; ++V) {
    double U = double(R.next() >> 11) * 0x1.0p-53;
    G.RowPtr[V + 1] = G.RowPtr[V] + int(U * U * (MaxDegree + 1));
  }
  G.ColIdx.resize(G.RowPtr[NumNodes]);
  for (int &Target : G.ColIdx)
    Target = int(R.next() % uint64_t(NumNodes));
}

/// The node whose row holds edge \p e: the last v with rowPtr[v] <= e
/// (rows may be empty). A flat kernel with one thread per edge uses it to
/// find the edge's source.
__device__ inline int edgeSource(const int *__restrict__ rowPtr, int numNodes,
                                 int e) {
  int lo = 0, hi = numNodes; // rowPtr[lo] <= e < rowPtr[hi]
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (rowPtr[mid] <= e)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// What one run of a frontier loop did.
struct FrontierStats {
  int Rounds = 0;
  long Items = 0;   ///< Frontier nodes over all rounds.
  int MaxItems = 0; ///< The largest frontier.
};

/// The host loop of a frontier algorithm, starting from a frontier of one
/// node already in \p Current: round r calls
/// `LaunchRound(r, Current, Size, Next)`, whose kernels append the next
/// frontier to \p Next and count it in *\p NextSize; the loop ends after a
/// round that finds no node. Reading the count waits for the round's
/// kernels, child grids included.
template <typename LaunchRound>
FrontierStats runFrontiers(int *Current, int *Next, int *NextSize,
                           LaunchRound &&Launch) {
  FrontierStats Stats;
  for (int Size = 1; Size > 0; ++Stats.Rounds) {
    HARNESS_CHECK(cudaMemsetAsync(NextSize, 0, sizeof(int)));
    Launch(Stats.Rounds, Current, Size, Next);
    HARNESS_CHECK(cudaGetLastError());
    Stats.Items += Size;
    Stats.MaxItems = std::max(Stats.MaxItems, Size);
    HARNESS_CHECK(
        cudaMemcpy(&Size, NextSize, sizeof(int), cudaMemcpyDeviceToHost));
    std::swap(Current, Next);
  }
  return Stats;
}

} // namespace samples

#endif
