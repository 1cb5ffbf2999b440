//===- compact.cu - Stream compaction as a chain of one-block launches ----===//
//
// Stream compaction (the `sc` benchmark of KLAP, Table I; Billeter et al.,
// HPG 2009): copies the elements of `in` that satisfy isKept() to the front
// of `out`, in their order, and writes how many there are to *count.
//
// Written the way dynamic parallelism invites: one block compacts one chunk
// of kChunk = 8192 elements (512 threads x 16) and then launches the block
// of the next chunk, a chain of ceil(n / kChunk) single-block grids (links).
// A chunk's place in the output is the number of elements that the chunks
// before it kept: that running offset is what each link hands to the next,
// as a launch argument. Link i + 1 cannot write before link i has counted,
// so the chain is serial; loading, flagging and numbering a chunk's
// elements within the chunk does not depend on it, which is what
// `overlap_boundary` marks for the promote pass (docs/design.md section 3).
//
// The next link is launched into cudaStreamTailLaunch (CDP2, CUDA 12+), so
// it starts when the launching grid has finished and sees all it wrote:
// whatever the chain's length, one link runs and one launch is pending at a
// time. (A plain <<<>>> would let the child start while its parent still
// runs, and keep every link's grid open until the end of the chain.)
//
// Input: ints uniform in [0, 999]; about half are kept. The output and the
// count are checked exactly against a CPU reference.
//
// --cub runs the same compaction with cub::DeviceSelect::If (temporary
// storage allocated once, outside the timed runs), the library baseline.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/promote/compact.cu -lcudadevrt -o compact
//   ./compact [n] [--cub] [--seed=N] [--reps=N]
//
//   small   ./compact 16384       2 links
//   medium  ./compact 204800      25 links
//   large   ./compact             33554432 ints (32M), 4096 links
//
//===----------------------------------------------------------------------===//

#include "chain.cuh"

#include <cub/device/device_select.cuh>

namespace {

/// The elements kept by the compaction.
__host__ __device__ bool isKept(int x) { return x < 500; }

/// isKept() for CUB.
struct IsKept {
  __host__ __device__ bool operator()(int x) const { return isKept(x); }
};

} // namespace

/// One link: compacts the chunk `chunk` of `in` (elements chunk * kChunk
/// onwards) into `out` from `offset`, the number of elements that the chunks
/// before it kept, and launches the link of the next chunk. The last link
/// writes the total to *count.
#pragma cuda_rewrite promote
__global__ void compactChunk(const int *__restrict__ in, int *__restrict__ out,
                             int *__restrict__ count, int n, int chunk,
                             int offset) {
  __shared__ chain::ChunkScan::TempStorage scanStorage;
  const int begin = chunk * chain::kChunk;

  // Independent of the parent: load the chunk, flag the elements to keep and
  // number them within the chunk.
  chain::SelectedChunk kept;
  chain::selectChunk(
      scanStorage, in, begin, n,
      [](int, int k, const int(&items)[chain::kItemsPerThread]) {
        return isKept(items[k]);
      },
      kept);

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the chunks before this one kept `offset`
  // elements, so those after it start at offset + kept.Count.
  const int nextOffset = offset + kept.Count;
  if (threadIdx.x == 0 && n - begin > chain::kChunk) {
    compactChunk<<<1, chain::kBlock, 0, cudaStreamTailLaunch>>>(
        in, out, count, n, chunk + 1, nextOffset);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // Write the kept elements; the last link reports how many there are.
  chain::writeSelected(out, offset, kept);
  if (threadIdx.x == 0 && n - begin <= chain::kChunk)
    *count = nextOffset;
}

namespace {

/// CPU reference: the kept elements in order, then their count.
std::vector<int> referenceCompact(const std::vector<int> &In, int &Kept) {
  std::vector<int> Out(In.size() + 1, 0);
  Kept = 0;
  for (int X : In)
    if (isKept(X))
      Out[Kept++] = X;
  Out[In.size()] = Kept;
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "compact", {1L << 25}, {"--cub"});
  harness::Rng R(A.Seed);
  std::vector<int> In(chain::elementCount(A));
  R.fill(In, 0, 999);
  chain::Selection S{"kept", "cub::DeviceSelect::If"};
  S.Ref = referenceCompact(In, S.Count);
  return chain::runSelection(
      A, In, S,
      [](const int *In, int *Out, int *Count, int N) {
        compactChunk<<<1, chain::kBlock>>>(In, Out, Count, N, 0, 0);
      },
      [](void *Temp, size_t &Bytes, const int *In, int *Out, int *Count,
         int N) {
        return cub::DeviceSelect::If(Temp, Bytes, In, Out, Count, N, IsKept());
      });
}
