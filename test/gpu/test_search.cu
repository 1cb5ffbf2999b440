//===- test/gpu/test_search.cu - Tests of cuda_rewrite/search.cuh ---------===//
//
// findLaunch/upperBound against std::upper_bound on random launch sizes with
// many empty launches, at every block id and at the edges (0, total - 1,
// total, beyond, below the first offset, n == 0), with 32- and 64-bit
// offsets, and as an aggregated child grid uses it: each block looks up its
// original launch from blockIdx.x.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/aggregate.cuh"
#include "cuda_rewrite/search.cuh"

#include "harness.cuh"

#include <algorithm>
#include <string>

namespace {

using cuda_rewrite::findLaunch;
using cuda_rewrite::upperBound;

// The functions are constexpr: a few cases checked by the compiler.
constexpr int kOffsets[] = {0, 0, 3, 3, 3, 7}; // Sizes 0, 3, 0, 0, 4, ...
static_assert(findLaunch(kOffsets, 6, 0) == 1, "skips the empty launch 0");
static_assert(findLaunch(kOffsets, 6, 2) == 1);
static_assert(findLaunch(kOffsets, 6, 3) == 4, "skips empty launches 2, 3");
static_assert(findLaunch(kOffsets, 6, 6) == 4);
static_assert(findLaunch(kOffsets, 6, 7) == 5);
static_assert(findLaunch(kOffsets, 0, 0) == -1, "no launches");
static_assert(upperBound(kOffsets, 6, -1) == 0);
static_assert(upperBound(kOffsets, 6, 100) == 6);

template <typename T, typename Index>
__global__ void findKernel(const T *offsets, Index n, const T *queries,
                           std::size_t count, Index *results) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < count)
    results[i] = findLaunch(offsets, n, queries[i]);
}

/// An aggregated child grid in miniature: block b finds its launch and its
/// block id within that launch.
__global__ void aggregatedChildKernel(const unsigned *offsets, int n,
                                      int *launch, unsigned *localBlock) {
  __shared__ int mine;
  if (threadIdx.x == 0)
    mine = findLaunch(offsets, n, blockIdx.x);
  __syncthreads();
  // Every thread searched the same way; they must agree with thread 0.
  if (findLaunch(offsets, n, blockIdx.x) != mine)
    mine = -2;
  __syncthreads();
  if (threadIdx.x == 0) {
    launch[blockIdx.x] = mine;
    localBlock[blockIdx.x] = mine >= 0 ? blockIdx.x - offsets[mine] : ~0u;
  }
}

/// The aggregated child's warp-cooperative search, in blocks of any size
/// (a partial last warp, a one-lane warp): every thread must find what the
/// plain binary search finds.
__global__ void warpSearchKernel(const unsigned *offsets, unsigned n,
                                 int *mismatches) {
  const unsigned found =
      cuda_rewrite::findLaunchInWarp(offsets, n, blockIdx.x);
  if (int(found) != findLaunch(offsets, int(n), blockIdx.x))
    atomicAdd(mismatches, 1);
}

/// Random launch sizes in [0, maxSize], each zero with `zeroChance`.
template <typename T>
std::vector<T> randomSizes(test::Suite &suite, std::size_t n, double zeroChance,
                           T maxSize) {
  std::vector<T> sizes(n);
  for (T &size : sizes)
    size = suite.chance(zeroChance) ? 0 : suite.uniform<T>(1, maxSize);
  return sizes;
}

template <typename T>
std::vector<T> exclusiveSums(const std::vector<T> &sizes) {
  std::vector<T> offsets(sizes.size());
  T sum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    offsets[i] = sum;
    sum += sizes[i];
  }
  return offsets;
}

/// Searches `queries` on the device and compares with std::upper_bound - 1;
/// for ids below the total, also checks that the launch found is non-empty
/// and contains the id.
template <typename T, typename Index>
bool checkQueries(const std::vector<T> &sizes, const std::vector<T> &offsets,
                  const std::vector<T> &queries) {
  test::DeviceArray<T> deviceOffsets, deviceQueries;
  test::DeviceArray<Index> results;
  CUDA_OK(deviceOffsets.upload(offsets));
  CUDA_OK(deviceQueries.upload(queries));
  CUDA_OK(results.allocatePoisoned(queries.size()));
  const Index n = static_cast<Index>(offsets.size());
  const unsigned threads = 256;
  const unsigned blocks = unsigned((queries.size() + threads - 1) / threads);
  // n == 0 passes a null array: the search must not read it.
  findKernel<<<blocks, threads>>>(n ? deviceOffsets.get() : nullptr, n,
                                  deviceQueries.get(), queries.size(),
                                  results.get());
  LAUNCH_OK();
  std::vector<Index> got;
  CUDA_OK(results.download(got));

  const T total = offsets.empty() ? 0 : offsets.back() + sizes.back();
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const T id = queries[q];
    const Index want =
        Index(std::upper_bound(offsets.begin(), offsets.end(), id) -
              offsets.begin() - 1);
    EXPECT(got[q] == want, "block id %llu: launch %lld, want %lld",
           (unsigned long long)id, (long long)got[q], (long long)want);
    if (id < total && !offsets.empty() && id >= offsets.front()) {
      const std::size_t i = std::size_t(got[q]);
      EXPECT(sizes[i] > 0 && offsets[i] <= id && id - offsets[i] < sizes[i],
             "block id %llu is not in launch %zu (offset %llu, size %llu)",
             (unsigned long long)id, i, (unsigned long long)offsets[i],
             (unsigned long long)sizes[i]);
    }
  }
  return true;
}

/// Every block id below the total (or a random sample if there are too
/// many) plus the edges.
template <typename T>
std::vector<T> queriesFor(test::Suite &suite, const std::vector<T> &offsets,
                          T total) {
  std::vector<T> queries;
  const std::size_t kMaxAll = 1 << 20;
  if (total <= kMaxAll) {
    for (T id = 0; id < total; ++id)
      queries.push_back(id);
  } else {
    for (std::size_t k = 0; k < kMaxAll; ++k)
      queries.push_back(suite.uniform<T>(0, total - 1));
  }
  for (T edge : {T(0), total ? T(total - 1) : T(0), total, T(total + 1),
                 T(total + 1000)})
    queries.push_back(edge);
  for (T offset : offsets) { // Each boundary and its neighbours.
    queries.push_back(offset);
    queries.push_back(offset + 1);
    if (offset > 0)
      queries.push_back(offset - 1);
  }
  return queries;
}

template <typename T, typename Index>
void testRandom(test::Suite &suite, std::size_t n, double zeroChance,
                T maxSize) {
  const std::string name = "findLaunch, " + std::to_string(n) +
                           " launches of up to " + std::to_string(maxSize) +
                           " blocks, " + std::to_string(int(zeroChance * 100)) +
                           "% empty, " + std::to_string(sizeof(T) * 8) +
                           "-bit offsets";
  suite.run(name, [&] {
    const std::vector<T> sizes = randomSizes<T>(suite, n, zeroChance, maxSize);
    const std::vector<T> offsets = exclusiveSums(sizes);
    const T total = n ? offsets.back() + sizes.back() : 0;
    return checkQueries<T, Index>(sizes, offsets,
                                  queriesFor(suite, offsets, total));
  });
}

/// Hand-made size lists for the corner cases.
void testEdges(test::Suite &suite) {
  const std::vector<std::pair<const char *, std::vector<unsigned>>> cases = {
      {"no launches", {}},
      {"one launch", {5}},
      {"one empty launch", {0}},
      {"only the first launch is non-empty", {4, 0, 0, 0, 0}},
      {"only the last launch is non-empty", {0, 0, 0, 0, 4}},
      {"all launches empty", {0, 0, 0}},
      {"launches of one block", {1, 1, 1, 1, 1, 1, 1}},
      {"empty launches between single blocks", {1, 0, 1, 0, 0, 1, 0}},
  };
  for (const auto &entry : cases)
    suite.run(std::string("findLaunch edge case: ") + entry.first, [&] {
      const std::vector<unsigned> &sizes = entry.second;
      const std::vector<unsigned> offsets = exclusiveSums(sizes);
      const unsigned total = sizes.empty() ? 0 : offsets.back() + sizes.back();
      return checkQueries<unsigned, int>(sizes, offsets,
                                         queriesFor(suite, offsets, total));
    });

  suite.run("findLaunch: ids below a first offset that is not zero", [&] {
    const std::vector<unsigned> sizes = {3, 0, 2};
    const std::vector<unsigned> offsets = {10, 13, 13}; // Starts at 10.
    return checkQueries<unsigned, int>(sizes, offsets, {0, 9, 10, 12, 13, 14});
  });
}

void testAggregatedChild(test::Suite &suite) {
  const int n = suite.uniform(1, 2000);
  suite.run(
      "aggregated child grid: " + std::to_string(n) +
          " launches, each block finds its own",
      [&] {
        const std::vector<unsigned> sizes =
            randomSizes<unsigned>(suite, n, 0.4, 40);
        const std::vector<unsigned> offsets = exclusiveSums(sizes);
        const unsigned total = offsets.back() + sizes.back();
        if (total == 0)
          return true; // Nothing to launch.
        test::DeviceArray<unsigned> deviceOffsets, localBlock;
        test::DeviceArray<int> launch;
        CUDA_OK(deviceOffsets.upload(offsets));
        CUDA_OK(launch.allocatePoisoned(total));
        CUDA_OK(localBlock.allocatePoisoned(total));
        aggregatedChildKernel<<<total, 64>>>(deviceOffsets.get(), n,
                                             launch.get(), localBlock.get());
        LAUNCH_OK();
        std::vector<int> gotLaunch;
        std::vector<unsigned> gotLocal;
        CUDA_OK(launch.download(gotLaunch));
        CUDA_OK(localBlock.download(gotLocal));
        // Walk the launches in order: the blocks must come out as
        // launch i, blocks 0..sizes[i]-1, for every non-empty launch.
        unsigned block = 0;
        for (int i = 0; i < n; ++i)
          for (unsigned local = 0; local < sizes[i]; ++local, ++block)
            EXPECT(gotLaunch[block] == i && gotLocal[block] == local,
                   "block %u: launch %d block %u, want launch %d block %u",
                   block, gotLaunch[block], gotLocal[block], i, local);
        return true;
      });
}

} // namespace

void testWarpSearch(test::Suite &suite) {
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(33),
                        std::size_t(5000)})
    for (unsigned threads : {1u, 7u, 32u, 33u, 64u, 256u})
      suite.run("warp-cooperative search, " + std::to_string(n) +
                    " launches, blocks of " + std::to_string(threads),
                [&] {
                  std::vector<unsigned> sizes =
                      randomSizes<unsigned>(suite, n, 0.3, 8u);
                  sizes.back() = std::max(sizes.back(), 1u);
                  sizes.front() = std::max(sizes.front(), 1u);
                  std::vector<unsigned> offsets = exclusiveSums(sizes);
                  const unsigned total = offsets.back() + sizes.back();
                  test::DeviceArray<unsigned> deviceOffsets;
                  test::DeviceArray<int> mismatches;
                  CUDA_OK(deviceOffsets.upload(offsets));
                  CUDA_OK(mismatches.upload(std::vector<int>{0}));
                  warpSearchKernel<<<total, threads>>>(
                      deviceOffsets.get(), unsigned(n), mismatches.get());
                  LAUNCH_OK();
                  std::vector<int> got;
                  CUDA_OK(mismatches.download(got));
                  EXPECT(got[0] == 0, "%d threads found another launch",
                         got[0]);
                  return true;
                });
}

int main() {
  test::Suite suite("test_search");
  testEdges(suite);
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7),
                        std::size_t(1000), std::size_t(5000)})
    for (double zeroChance : {0.0, 0.3, 0.9})
      testRandom<unsigned, int>(suite, n, zeroChance, 64u);
  // Offsets beyond 2^32 with a 64-bit index type.
  testRandom<unsigned long long, long long>(suite, 3000, 0.3, 1ull << 33);
  testAggregatedChild(suite);
  testWarpSearch(suite);
  return suite.finish();
}
