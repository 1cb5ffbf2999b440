//===- csr.cuh - Graphs in CSR form for the samples ------------*- CUDA -*-===//
//
// The graph samples (bfs, sssp, coloring) share the storage format and the
// one device-side lookup their flat versions need; each builds its own kind
// of random graph.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_CSR_CUH
#define CUDA_REWRITE_SAMPLES_CSR_CUH

#include <vector>

namespace samples {

/// A graph in CSR form: the out-neighbours of node v are
/// ColIdx[RowPtr[v] .. RowPtr[v + 1]).
struct CsrGraph {
  int NumNodes = 0;
  std::vector<int> RowPtr, ColIdx;
  long numEdges() const { return long(ColIdx.size()); }
};

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

} // namespace samples

#endif
