//===- unique.cu - Unique as a chain of one-block launches ----------------===//
//
// Unique (the `unq` benchmark of KLAP, Table I): copies the first element of
// every run of equal consecutive elements of `in` to the front of `out`, in
// order (what cub::DeviceSelect::Unique and std::unique do), and writes how
// many there are to *count.
//
// Written the way dynamic parallelism invites: one block handles one chunk
// of kChunk = 8192 elements (512 threads x 16) and then launches the block of
// the next chunk, a chain of ceil(n / kChunk) single-block grids (links). A
// chunk's place in the output is the number of run heads in the chunks
// before it: that running count is what each link hands to the next, as a
// launch argument. Link i + 1 cannot write before link i has counted, so the
// chain is serial; loading a chunk, finding its run heads (comparing with the
// element before, which may lie in the chunk before: it is read from the
// input, not from the parent) and numbering them within the chunk does not
// depend on it, which is what `overlap_boundary` marks for the promote pass
// (docs/design.md section 3).
//
// The next link is launched into cudaStreamTailLaunch (CDP2, CUDA 12+), so
// it starts when the launching grid has finished and sees all it wrote:
// whatever the chain's length, one link runs and one launch is pending at a
// time. (A plain <<<>>> would let the child start while its parent still
// runs, and keep every link's grid open until the end of the chain.)
//
// Input: ints in runs; each element repeats the one before with probability
// 1/2, else is uniform in [0, 999]: about half are run heads. The output and
// the count are checked exactly against a CPU reference.
//
// --cub runs the same computation with cub::DeviceSelect::Unique (temporary
// storage allocated once, outside the timed runs), the library baseline.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/promote/unique.cu -lcudadevrt -o unique
//   ./unique [n] [--cub] [--seed=N] [--reps=N]
//
//   small   ./unique 16384        2 links
//   medium  ./unique 204800       25 links
//   large   ./unique              33554432 ints (32M), 4096 links
//
//===----------------------------------------------------------------------===//

#include "chain.cuh"

#include <cub/device/device_select.cuh>

/// One link: copies the run heads of the chunk `chunk` of `in` (elements
/// chunk * kChunk onwards) to `out` from `offset`, the number of run heads in
/// the chunks before it, and launches the link of the next chunk. The last
/// link writes the total to *count.
#pragma cuda_rewrite promote
__global__ void uniqueChunk(const int *__restrict__ in, int *__restrict__ out,
                            int *__restrict__ count, int n, int chunk,
                            int offset) {
  __shared__ chain::ChunkScan::TempStorage scanStorage;
  const int begin = chunk * chain::kChunk;

  // Independent of the parent: load the chunk, flag the run heads (the
  // elements that differ from the one before) and number them within the
  // chunk.
  chain::SelectedChunk heads;
  chain::selectChunk(
      scanStorage, in, begin, n,
      [in](int i, int k, const int(&items)[chain::kItemsPerThread]) {
        return i == 0 || items[k] != (k > 0 ? items[k - 1] : in[i - 1]);
      },
      heads);

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the chunks before this one have `offset` run
  // heads, so those after it start at offset + heads.Count.
  const int nextOffset = offset + heads.Count;
  if (threadIdx.x == 0 && n - begin > chain::kChunk) {
    uniqueChunk<<<1, chain::kBlock, 0, cudaStreamTailLaunch>>>(
        in, out, count, n, chunk + 1, nextOffset);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // Write the run heads; the last link reports how many there are.
  chain::writeSelected(out, offset, heads);
  if (threadIdx.x == 0 && n - begin <= chain::kChunk)
    *count = nextOffset;
}

namespace {

/// CPU reference: the run heads in order, then their count.
std::vector<int> referenceUnique(const std::vector<int> &In, int &Heads) {
  std::vector<int> Out(In.size() + 1, 0);
  Heads = 0;
  for (size_t I = 0; I < In.size(); ++I)
    if (I == 0 || In[I] != In[I - 1])
      Out[Heads++] = In[I];
  Out[In.size()] = Heads;
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "unique", {1L << 25}, {"--cub"});
  // Runs: each element repeats the one before with probability 1/2.
  harness::Rng R(A.Seed);
  std::vector<int> In(chain::elementCount(A));
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = (I > 0 && R.next() % 2) ? In[I - 1] : int(R.next() % 1000);
  chain::Selection S{"run heads", "cub::DeviceSelect::Unique"};
  S.Ref = referenceUnique(In, S.Count);
  return chain::runSelection(
      A, In, S,
      [](const int *In, int *Out, int *Count, int N) {
        uniqueChunk<<<1, chain::kBlock>>>(In, Out, Count, N, 0, 0);
      },
      [](void *Temp, size_t &Bytes, const int *In, int *Out, int *Count,
         int N) {
        return cub::DeviceSelect::Unique(Temp, Bytes, In, Out, Count, N);
      });
}
