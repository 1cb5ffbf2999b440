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
// (DESIGN.md section 3).
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

// nvcc warns (20199) about the unknown `#pragma cuda_rewrite
// overlap_boundary` inside the kernel; the tool reads it, nvcc need not.
#pragma nv_diag_suppress 20199

#include "harness.cuh"

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>

#include <climits>

namespace {

/// Threads of each link's one block.
constexpr int kBlock = 512;
/// Consecutive elements per thread.
constexpr int kItemsPerThread = 16;
/// Elements per link.
constexpr int kChunk = kBlock * kItemsPerThread;

/// Loads a chunk blocked: thread t gets its elements t * kItemsPerThread
/// onwards, in vector loads.
using ChunkLoad =
    cub::BlockLoad<int, kBlock, kItemsPerThread, cub::BLOCK_LOAD_VECTORIZE>;
/// Numbers the run heads of a chunk.
using ChunkScan = cub::BlockScan<int, kBlock>;

} // namespace

/// One link: copies the run heads of the chunk `chunk` of `in` (elements
/// chunk * kChunk onwards) to `out` from `offset`, the number of run heads in
/// the chunks before it, and launches the link of the next chunk. The last
/// link writes the total to *count.
#pragma cuda_rewrite promote
__global__ void uniqueChunk(const int *__restrict__ in, int *__restrict__ out,
                            int *__restrict__ count, int n, int chunk,
                            int offset) {
  __shared__ ChunkScan::TempStorage scanStorage;
  const int begin = chunk * kChunk;
  const int valid = min(n - begin, kChunk);

  // Independent of the parent: load the chunk, flag the run heads (the
  // elements that differ from the one before) and number them within the
  // chunk.
  int items[kItemsPerThread];
  if (valid == kChunk)
    ChunkLoad().Load(in + begin, items);
  else
    ChunkLoad().Load(in + begin, items, valid); // The last chunk, partial.
  int flags[kItemsPerThread];
  for (int k = 0; k < kItemsPerThread; ++k) {
    const int i = begin + threadIdx.x * kItemsPerThread + k;
    if (i >= n)
      flags[k] = 0;
    else if (i == 0)
      flags[k] = 1;
    else
      flags[k] = items[k] != (k > 0 ? items[k - 1] : in[i - 1]);
  }
  int ranks[kItemsPerThread];
  int headsHere;
  ChunkScan(scanStorage).ExclusiveSum(flags, ranks, headsHere);

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the chunks before this one have `offset` run
  // heads, so those after it start at offset + headsHere.
  const int nextOffset = offset + headsHere;
  if (threadIdx.x == 0 && n - begin > kChunk) {
    uniqueChunk<<<1, kBlock, 0, cudaStreamTailLaunch>>>(in, out, count, n,
                                                        chunk + 1, nextOffset);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // Write the run heads; the last link reports how many there are.
  for (int k = 0; k < kItemsPerThread; ++k)
    if (flags[k])
      out[offset + ranks[k]] = items[k];
  if (threadIdx.x == 0 && n - begin <= kChunk)
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
  const bool Cub = A.has("--cub");
  if (A.size(0) < 1 || A.size(0) > INT_MAX - kChunk)
    harness::fail("need 1 <= n < 2^31 - 8192");
  const int N = int(A.size(0));
  const int Links = (N + kChunk - 1) / kChunk;

  // Runs: each element repeats the one before with probability 1/2.
  harness::Rng R(A.Seed);
  std::vector<int> In(N);
  for (int I = 0; I < N; ++I)
    In[I] = (I > 0 && R.next() % 2) ? In[I - 1] : int(R.next() % 1000);
  int Heads;
  // The output's n elements, then the count, as the check downloads them.
  std::vector<int> Ref = referenceUnique(In, Heads);
  std::printf("unique: %d ints, %d run heads; %d links of %d elements%s\n", N,
              Heads, Links, kChunk,
              Cub ? "; running cub::DeviceSelect::Unique instead" : "");

  harness::DeviceArray<int> DIn(In), DOut(N), DCount(1);
  // CUB's temporary storage, sized and allocated once, outside the timing.
  size_t TempBytes = 0;
  HARNESS_CHECK(cub::DeviceSelect::Unique(nullptr, TempBytes, DIn.data(),
                                          DOut.data(), DCount.data(), N));
  harness::DeviceArray<unsigned char> DTemp(Cub ? TempBytes : 1);

  harness::Result Res = harness::measure(
      A,
      [&] {
        DOut.poison();
        DCount.poison();
      },
      [&] {
        if (Cub)
          HARNESS_CHECK(cub::DeviceSelect::Unique(DTemp.data(), TempBytes,
                                                  DIn.data(), DOut.data(),
                                                  DCount.data(), N));
        else
          uniqueChunk<<<1, kBlock>>>(DIn.data(), DOut.data(), DCount.data(), N,
                                     0, 0);
      },
      [&] {
        harness::checkDeviceLaunches();
        std::vector<int> Got = DOut.download();
        Got.push_back(DCount.download()[0]);
        // Past the run heads the output is not to be written.
        return harness::compareExact(Got, Ref, [&](size_t I) {
          return I < size_t(Heads) || I == size_t(N);
        });
      });
  // The input read once, the run heads written once.
  double Bytes = sizeof(int) * (double(N) + double(Heads));
  return harness::report(A, Res, Bytes);
}
