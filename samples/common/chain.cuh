//===- chain.cuh - What the promote samples share --------------*- CUDA -*-===//
//
// The samples in samples/promote/ are chains of single-block launches
// (links): one block of kBlock threads handles kChunk elements and launches
// the link of the next chunk. Each sample keeps its kernel in its own file
// (the tool rewrites the file it is given); this header holds what they
// share: the link's shape, the CUB block primitives over a chunk of ints,
// the element count from the command line, and the host side of the three
// selection samples (compact, partition, unique), which differ only in
// their kernel, their reference and the CUB call that is their baseline.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_CHAIN_CUH
#define CUDA_REWRITE_SAMPLES_CHAIN_CUH

// nvcc warns (20199) about the unknown `#pragma cuda_rewrite
// overlap_boundary` inside the kernels; the tool reads it, nvcc need not.
#pragma nv_diag_suppress 20199

#include "harness.cuh"

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>

#include <climits>
#include <cstdio>
#include <vector>

namespace chain {

/// Threads of each link's one block.
constexpr int kBlock = 512;
/// Elements per thread.
constexpr int kItemsPerThread = 16;
/// Elements per link.
constexpr int kChunk = kBlock * kItemsPerThread;

/// Loads a chunk of ints blocked: thread t gets its elements
/// t * kItemsPerThread onwards, in vector loads.
using ChunkLoad =
    cub::BlockLoad<int, kBlock, kItemsPerThread, cub::BLOCK_LOAD_VECTORIZE>;
/// Numbers flagged elements within a chunk (an exclusive sum of the flags).
using ChunkScan = cub::BlockScan<int, kBlock>;

/// Loads the chunk of ints that starts at element \p Begin of \p In (n
/// elements in all) into \p Items, blocked; the last chunk may be partial.
__device__ inline void loadChunk(const int *In, int Begin, int N,
                                 int (&Items)[kItemsPerThread]) {
  const int Valid = min(N - Begin, kChunk);
  if (Valid == kChunk)
    ChunkLoad().Load(In + Begin, Items);
  else
    ChunkLoad().Load(In + Begin, Items, Valid);
}

/// The index in the whole input of this thread's element \p K of the chunk
/// that starts at \p Begin (chunks are loaded blocked).
__device__ inline int elementIndex(int Begin, int K) {
  return Begin + threadIdx.x * kItemsPerThread + K;
}

/// A chunk of a selection sample, per thread: its elements, which of them
/// are selected, and the rank of each among the chunk's selected ones.
struct SelectedChunk {
  int Items[kItemsPerThread];
  int Flags[kItemsPerThread];
  int Ranks[kItemsPerThread];
  int Count; ///< Selected elements in the whole chunk (every thread).
};

/// Loads the chunk of \p In that starts at \p Begin, flags the elements i
/// < N for which \p Selected(i, k, items) holds (element k of this thread,
/// index i in the input) and numbers them (an exclusive sum over the block).
/// This part of a link does not depend on the links before it.
template <class SelectedFn>
__device__ void selectChunk(ChunkScan::TempStorage &Scan, const int *In,
                            int Begin, int N, SelectedFn Selected,
                            SelectedChunk &C) {
  loadChunk(In, Begin, N, C.Items);
  for (int K = 0; K < kItemsPerThread; ++K) {
    const int I = elementIndex(Begin, K);
    C.Flags[K] = I < N && Selected(I, K, C.Items);
  }
  ChunkScan(Scan).ExclusiveSum(C.Flags, C.Ranks, C.Count);
}

/// Writes the selected elements of \p C to \p Out from \p Offset on, in
/// order.
__device__ inline void writeSelected(int *Out, int Offset,
                                     const SelectedChunk &C) {
  for (int K = 0; K < kItemsPerThread; ++K)
    if (C.Flags[K])
      Out[Offset + C.Ranks[K]] = C.Items[K];
}

/// Links of a chain over \p N elements.
inline int links(long long N) { return int((N + kChunk - 1) / kChunk); }

/// The element count n, the command line's first size, checked so that the
/// kernels' int arithmetic (begin + kChunk) cannot overflow.
inline int elementCount(const harness::Args &A) {
  if (A.size(0) < 1 || A.size(0) > INT_MAX - kChunk)
    harness::fail("need 1 <= n < 2^31 - 8192");
  return int(A.size(0));
}

/// A rows x cols matrix of ints stored at pitch cols + pad (padding.cu,
/// unpadding.cu), from the command line's sizes.
struct PaddedMatrix {
  int Rows, Cols, Pad, Pitch;
  int elements() const { return Rows * Cols; }
  size_t paddedElements() const { return size_t(Rows) * Pitch; }
};

inline PaddedMatrix paddedMatrix(const harness::Args &A) {
  if (A.size(0) < 1 || A.size(1) < 1 || A.size(2) < 0 ||
      A.size(0) * (A.size(1) + A.size(2)) > INT_MAX - kChunk)
    harness::fail("need 1 <= rows, 1 <= cols, 0 <= pad and "
                  "rows * (cols + pad) < 2^31 - 8192");
  PaddedMatrix M;
  M.Rows = int(A.size(0));
  M.Cols = int(A.size(1));
  M.Pad = int(A.size(2));
  M.Pitch = M.Cols + M.Pad;
  return M;
}

/// \p Packed (rows x cols) at M's pitch, \p Fill in the pad elements.
inline std::vector<int> padded(const std::vector<int> &Packed,
                               const PaddedMatrix &M, int Fill) {
  std::vector<int> Out(M.paddedElements(), Fill);
  for (int Row = 0; Row < M.Rows; ++Row)
    for (int Col = 0; Col < M.Cols; ++Col)
      Out[size_t(Row) * M.Pitch + Col] = Packed[size_t(Row) * M.Cols + Col];
  return Out;
}

/// What a selection sample computes on its input: the selected elements
/// first (Ref holds n outputs, then the count), and how the output is read.
struct Selection {
  const char *Selected;   ///< What the selected elements are, for the log.
  const char *CubName;    ///< The library call of --cub, for the log.
  std::vector<int> Ref;   ///< The n outputs, then the count.
  int Count = 0;          ///< Selected elements.
  bool WritesAll = false; ///< Every output is written, not only the first
                          ///< Count (partition), so all are checked.
};

/// The host side of a selection sample: runs the chain (\p LaunchChain
/// launches its first link on (in, out, count, n)) or, with --cub, the
/// library (\p RunCub has CUB's signature: temporary storage, its size, in,
/// out, count, n), checks the output and the count exactly and reports.
template <class LaunchChain, class RunCub>
int runSelection(const harness::Args &A, const std::vector<int> &In,
                 const Selection &S, LaunchChain Launch, RunCub Cub) {
  const bool UseCub = A.has("--cub");
  const int N = int(In.size());
  std::printf("%s: %d ints, %d %s; %d links of %d elements%s%s\n",
              harness::sampleName().c_str(), N, S.Count, S.Selected, links(N),
              kChunk, UseCub ? "; running " : "", UseCub ? S.CubName : "");

  harness::DeviceArray<int> DIn(In), DOut(N), DCount(1);
  // CUB's temporary storage, sized and allocated once, outside the timing.
  size_t TempBytes = 0;
  HARNESS_CHECK(
      Cub(nullptr, TempBytes, DIn.data(), DOut.data(), DCount.data(), N));
  harness::DeviceArray<unsigned char> DTemp(UseCub ? TempBytes : 1);

  harness::Result Res = harness::measure(
      A,
      [&] {
        DOut.poison();
        DCount.poison();
      },
      [&] {
        if (UseCub)
          HARNESS_CHECK(Cub(DTemp.data(), TempBytes, DIn.data(), DOut.data(),
                            DCount.data(), N));
        else
          Launch(DIn.data(), DOut.data(), DCount.data(), N);
      },
      [&] {
        harness::checkDeviceLaunches();
        std::vector<int> Got = DOut.download();
        Got.push_back(DCount.download()[0]);
        // Past the selected elements the output need not be written.
        return harness::compareExact(Got, S.Ref, [&](size_t I) {
          return S.WritesAll || I < size_t(S.Count) || I == size_t(N);
        });
      });
  // The input read once, the written outputs written once.
  double Bytes = sizeof(int) * (double(N) + (S.WritesAll ? N : S.Count));
  return harness::report(A, Res, Bytes);
}

} // namespace chain

#endif
