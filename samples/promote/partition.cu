//===- partition.cu - Partition as a chain of one-block launches ----------===//
//
// Stable partition (the `pt` benchmark of KLAP, Table I): copies the
// elements of `in` that satisfy isSelected() to the front of `out`, in their
// order, and the others to the back of `out` in reverse order (the layout of
// cub::DevicePartition::If), and writes how many were selected to *count.
//
// Written the way dynamic parallelism invites: one block partitions one
// chunk of kChunk = 8192 elements (512 threads x 16) and then launches the
// block of the next chunk, a chain of ceil(n / kChunk) single-block grids
// (links). Where a chunk's elements go depends on how many elements the
// chunks before it selected (the rejected ones before it are the rest): that
// running count is what each link hands to the next, as a launch argument.
// Link i + 1 cannot write before link i has counted, so the chain is serial;
// loading, flagging and numbering a chunk's elements within the chunk does
// not depend on it, which is what `overlap_boundary` marks for the promote
// pass (docs/design.md section 3).
//
// The next link is launched into cudaStreamTailLaunch (CDP2, CUDA 12+), so
// it starts when the launching grid has finished and sees all it wrote:
// whatever the chain's length, one link runs and one launch is pending at a
// time. (A plain <<<>>> would let the child start while its parent still
// runs, and keep every link's grid open until the end of the chain.)
//
// Input: ints uniform in [0, 999]; about a third are selected. The output
// and the count are checked exactly against a CPU reference.
//
// --cub runs the same partition with cub::DevicePartition::If (temporary
// storage allocated once, outside the timed runs), the library baseline.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/promote/partition.cu -lcudadevrt -o partition
//   ./partition [n] [--cub] [--seed=N] [--reps=N]
//
//   small   ./partition 16384     2 links
//   medium  ./partition 204800    25 links
//   large   ./partition           33554432 ints (32M), 4096 links
//
//===----------------------------------------------------------------------===//

#include "chain.cuh"

#include <cub/device/device_partition.cuh>

namespace {

/// The elements that go to the front.
__host__ __device__ bool isSelected(int x) { return x % 3 == 0; }

/// isSelected() for CUB.
struct IsSelected {
  __host__ __device__ bool operator()(int x) const { return isSelected(x); }
};

} // namespace

/// One link: partitions the chunk `chunk` of `in` (elements chunk * kChunk
/// onwards) into `out`, given `selectedBefore`, the number of elements that
/// the chunks before it selected, and launches the link of the next chunk.
/// The last link writes the number selected to *count.
#pragma cuda_rewrite promote
__global__ void partitionChunk(const int *__restrict__ in,
                               int *__restrict__ out, int *__restrict__ count,
                               int n, int chunk, int selectedBefore) {
  __shared__ chain::ChunkScan::TempStorage scanStorage;
  const int begin = chunk * chain::kChunk;

  // Independent of the parent: load the chunk, flag the selected elements
  // and number them within the chunk.
  chain::SelectedChunk selected;
  chain::selectChunk(
      scanStorage, in, begin, n,
      [](int, int k, const int(&items)[chain::kItemsPerThread]) {
        return isSelected(items[k]);
      },
      selected);

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the chunks before this one selected
  // `selectedBefore` elements, so those after it start at
  // selectedBefore + selected.Count.
  const int nextSelectedBefore = selectedBefore + selected.Count;
  if (threadIdx.x == 0 && n - begin > chain::kChunk) {
    partitionChunk<<<1, chain::kBlock, 0, cudaStreamTailLaunch>>>(
        in, out, count, n, chunk + 1, nextSelectedBefore);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // Write every element of the chunk. Element i, with s selected elements
  // before it, goes to s if it is selected; else i - s rejected elements come
  // before it, and it goes to n - 1 - (i - s).
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int i = chain::elementIndex(begin, k);
    if (i >= n)
      continue;
    const int before = selectedBefore + selected.Ranks[k];
    if (selected.Flags[k])
      out[before] = selected.Items[k];
    else
      out[n - 1 - (i - before)] = selected.Items[k];
  }
  if (threadIdx.x == 0 && n - begin <= chain::kChunk)
    *count = nextSelectedBefore;
}

namespace {

/// CPU reference: the partitioned elements, then the number selected.
std::vector<int> referencePartition(const std::vector<int> &In, int &Selected) {
  const size_t N = In.size();
  std::vector<int> Out(N + 1, 0);
  size_t Front = 0, Back = N;
  for (int X : In) {
    if (isSelected(X))
      Out[Front++] = X;
    else
      Out[--Back] = X;
  }
  Selected = int(Front);
  Out[N] = Selected;
  return Out;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "partition", {1L << 25}, {"--cub"});
  harness::Rng R(A.Seed);
  std::vector<int> In(chain::elementCount(A));
  R.fill(In, 0, 999);
  chain::Selection S{"selected", "cub::DevicePartition::If"};
  S.Ref = referencePartition(In, S.Count);
  S.WritesAll = true;
  return chain::runSelection(
      A, In, S,
      [](const int *In, int *Out, int *Count, int N) {
        partitionChunk<<<1, chain::kBlock>>>(In, Out, Count, N, 0, 0);
      },
      [](void *Temp, size_t &Bytes, const int *In, int *Out, int *Count,
         int N) {
        return cub::DevicePartition::If(Temp, Bytes, In, Out, Count, N,
                                        IsSelected());
      });
}
