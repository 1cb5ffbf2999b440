//===- test/gpu/test_scan.cu - Tests of cuda_rewrite/scan.cuh -------------===//
//
// Every scan family against a sequential CPU reference, on random values of
// int, unsigned long long (values above 2^32, so 64-bit shuffles are
// exercised) and float (compared with a tolerance: the parallel sums
// reassociate), over full warps, blocks of compile-time and run-time shapes
// (partial last warps, 2-D and 3-D blocks) and random subsets of lanes.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/scan.cuh"

#include "harness.cuh"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace {

using namespace cuda_rewrite;

/// Where a kernel stores its per-thread results.
template <typename T> struct Outputs {
  T *inclusive;
  T *exclusive;
  T *inclusiveTotal; ///< Total returned by the inclusive scan.
  T *exclusiveTotal; ///< Total returned by the exclusive scan.
  T *max;
};

template <typename T> struct HostOutputs {
  std::vector<T> inclusive, exclusive, inclusiveTotal, exclusiveTotal, max;
};

/// Device buffers behind Outputs.
template <typename T> struct DeviceOutputs {
  test::DeviceArray<T> inclusive, exclusive, inclusiveTotal, exclusiveTotal,
      max;

  cudaError_t allocate(std::size_t count) {
    for (test::DeviceArray<T> *array :
         {&inclusive, &exclusive, &inclusiveTotal, &exclusiveTotal, &max})
      if (cudaError_t error = array->allocatePoisoned(count))
        return error;
    return cudaSuccess;
  }
  Outputs<T> view() const {
    return {inclusive.get(), exclusive.get(), inclusiveTotal.get(),
            exclusiveTotal.get(), max.get()};
  }
  cudaError_t download(HostOutputs<T> &host) const {
    for (auto [device, result] :
         {std::pair{&inclusive, &host.inclusive},
          std::pair{&exclusive, &host.exclusive},
          std::pair{&inclusiveTotal, &host.inclusiveTotal},
          std::pair{&exclusiveTotal, &host.exclusiveTotal},
          std::pair{&max, &host.max}})
      if (cudaError_t error = device->download(*result))
        return error;
    return cudaSuccess;
  }
};

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

__device__ unsigned blockLinearThread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ std::size_t globalThread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x * blockDim.y *
             blockDim.z +
         blockLinearThread();
}

template <typename T> __global__ void warpKernel(const T *in, Outputs<T> out) {
  const std::size_t i = globalThread();
  out.inclusive[i] = warpInclusiveSum(in[i], &out.inclusiveTotal[i]);
  out.exclusive[i] = warpExclusiveSum(in[i], &out.exclusiveTotal[i]);
  out.max[i] = warpMax(in[i]);
}

template <int X, int Y, int Z, typename T>
__global__ void blockKernel(const T *in, Outputs<T> out) {
  const std::size_t i = globalThread();
  T total;
  out.inclusive[i] = blockInclusiveSum<X, Y, Z>(in[i], &total);
  out.inclusiveTotal[i] = total;
  out.exclusive[i] = blockExclusiveSum<X, Y, Z>(in[i], &total);
  out.exclusiveTotal[i] = total;
  out.max[i] = blockMax<X, Y, Z>(in[i]);
}

template <typename T>
__global__ void blockDynamicKernel(const T *in, Outputs<T> out) {
  const std::size_t i = globalThread();
  T total;
  out.inclusive[i] = blockInclusiveSumDynamic(in[i], &total);
  out.inclusiveTotal[i] = total;
  out.exclusive[i] = blockExclusiveSumDynamic(in[i], &total);
  out.exclusiveTotal[i] = total;
  out.max[i] = blockMaxDynamic(in[i]);
}

/// Threads with take[i] set scan over the lanes that reach the branch
/// together; each records the mask it saw, its rank and its leader.
template <typename T>
__global__ void activeKernel(const T *in, const int *take, Outputs<T> out,
                             unsigned *masks, unsigned *ranks,
                             unsigned *leaders) {
  const std::size_t i = globalThread();
  if (take[i]) {
    const unsigned mask = __activemask();
    T total;
    out.inclusive[i] = activeInclusiveSum(mask, in[i], &total);
    out.inclusiveTotal[i] = total;
    out.exclusive[i] = activeExclusiveSum(mask, in[i], &total);
    out.exclusiveTotal[i] = total;
    out.max[i] = activeMax(mask, in[i]);
    masks[i] = mask;
    ranks[i] = activeRank(mask);
    leaders[i] = activeLeader(mask);
  } else {
    masks[i] = 0;
  }
}

//===----------------------------------------------------------------------===//
// Reference and comparison
//===----------------------------------------------------------------------===//

template <typename T>
std::vector<T> randomValues(test::Suite &suite, std::size_t count) {
  std::vector<T> values(count);
  for (T &value : values) {
    if constexpr (std::is_floating_point_v<T>)
      value = std::uniform_real_distribution<T>(-1, 1)(suite.random());
    else if constexpr (std::is_signed_v<T>)
      value = suite.uniform<T>(-1000, 1000);
    else
      value = suite.uniform<T>(0, T(1) << 40);
  }
  return values;
}

template <typename T> const char *typeName() {
  if constexpr (std::is_same_v<T, int>)
    return "int";
  else if constexpr (std::is_same_v<T, unsigned long long>)
    return "unsigned long long";
  else
    return "float";
}

/// Sequential scans of `in` over each group (thread indices in scan order),
/// in double for floats; each result gets a tolerance (zero for integers).
template <typename T> struct Expected {
  using Wide = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  std::vector<Wide> inclusive, exclusive, total, max;
  std::vector<double> tolerance;

  Expected(const std::vector<T> &in,
           const std::vector<std::vector<std::size_t>> &groups)
      : inclusive(in.size()), exclusive(in.size()), total(in.size()),
        max(in.size()), tolerance(in.size(), 0) {
    for (const std::vector<std::size_t> &group : groups) {
      Wide sum = 0;
      Wide largest = in[group.front()];
      double magnitude = 0;
      for (std::size_t i : group) {
        exclusive[i] = sum;
        sum += in[i];
        inclusive[i] = sum;
        largest = std::max<Wide>(largest, in[i]);
        magnitude += std::fabs(static_cast<double>(in[i]));
      }
      for (std::size_t i : group) {
        total[i] = sum;
        max[i] = largest;
        if constexpr (std::is_floating_point_v<T>)
          tolerance[i] = 1e-5 * (1 + magnitude);
      }
    }
  }
};

template <typename T, typename Wide>
bool matches(const char *what, const std::vector<T> &got,
             const std::vector<Wide> &want,
             const std::vector<double> &tolerance,
             const std::vector<std::size_t> &indices) {
  for (std::size_t i : indices) {
    const double error =
        std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    const bool exact = static_cast<Wide>(got[i]) == want[i];
    if (!(exact || error <= tolerance[i])) {
      std::printf("  %s of thread %zu: got %.17g, want %.17g\n", what, i,
                  static_cast<double>(got[i]), static_cast<double>(want[i]));
      return false;
    }
  }
  return true;
}

/// Compares every result of the threads in `groups`.
template <typename T>
bool verify(const std::vector<T> &in,
            const std::vector<std::vector<std::size_t>> &groups,
            const HostOutputs<T> &got) {
  const Expected<T> want(in, groups);
  std::vector<std::size_t> indices;
  for (const std::vector<std::size_t> &group : groups)
    indices.insert(indices.end(), group.begin(), group.end());
  return matches("inclusive sum", got.inclusive, want.inclusive, want.tolerance,
                 indices) &&
         matches("exclusive sum", got.exclusive, want.exclusive, want.tolerance,
                 indices) &&
         matches("inclusive scan total", got.inclusiveTotal, want.total,
                 want.tolerance, indices) &&
         matches("exclusive scan total", got.exclusiveTotal, want.total,
                 want.tolerance, indices) &&
         matches("max", got.max, want.max, std::vector<double>(in.size(), 0),
                 indices);
}

/// Consecutive groups of `size` threads.
std::vector<std::vector<std::size_t>> chunks(std::size_t count,
                                             std::size_t size) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t begin = 0; begin < count; begin += size) {
    groups.emplace_back();
    for (std::size_t i = begin; i < std::min(count, begin + size); ++i)
      groups.back().push_back(i);
  }
  return groups;
}

std::string describe(dim3 block) {
  return std::to_string(block.x) + "x" + std::to_string(block.y) + "x" +
         std::to_string(block.z);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

template <typename T> void testWarp(test::Suite &suite) {
  const unsigned blocks = suite.uniform(1, 64);
  const unsigned threads = 256;
  suite.run(std::string("warp scans, ") + typeName<T>() + ", " +
                std::to_string(blocks) + " blocks of 256",
            [&] {
              const std::size_t count = std::size_t(blocks) * threads;
              const std::vector<T> in = randomValues<T>(suite, count);
              test::DeviceArray<T> input;
              DeviceOutputs<T> out;
              CUDA_OK(input.upload(in));
              CUDA_OK(out.allocate(count));
              warpKernel<<<blocks, threads>>>(input.get(), out.view());
              LAUNCH_OK();
              HostOutputs<T> got;
              CUDA_OK(out.download(got));
              return verify(in, chunks(count, kWarpThreads), got);
            });
}

template <int X, int Y, int Z, typename T> void testBlock(test::Suite &suite) {
  const unsigned blocks = suite.uniform(1, 40);
  const dim3 shape(X, Y, Z);
  suite.run(std::string("block scans (CUB), ") + typeName<T>() + ", " +
                std::to_string(blocks) + " blocks of " + describe(shape),
            [&] {
              const std::size_t perBlock = X * Y * Z;
              const std::size_t count = blocks * perBlock;
              const std::vector<T> in = randomValues<T>(suite, count);
              test::DeviceArray<T> input;
              DeviceOutputs<T> out;
              CUDA_OK(input.upload(in));
              CUDA_OK(out.allocate(count));
              blockKernel<X, Y, Z><<<blocks, shape>>>(input.get(), out.view());
              LAUNCH_OK();
              HostOutputs<T> got;
              CUDA_OK(out.download(got));
              return verify(in, chunks(count, perBlock), got);
            });
}

template <typename T> void testBlockDynamic(test::Suite &suite, dim3 shape) {
  const unsigned blocks = suite.uniform(1, 40);
  suite.run(std::string("block scans (run-time size), ") + typeName<T>() +
                ", " + std::to_string(blocks) + " blocks of " + describe(shape),
            [&] {
              const std::size_t perBlock = shape.x * shape.y * shape.z;
              const std::size_t count = blocks * perBlock;
              const std::vector<T> in = randomValues<T>(suite, count);
              test::DeviceArray<T> input;
              DeviceOutputs<T> out;
              CUDA_OK(input.upload(in));
              CUDA_OK(out.allocate(count));
              blockDynamicKernel<<<blocks, shape>>>(input.get(), out.view());
              LAUNCH_OK();
              HostOutputs<T> got;
              CUDA_OK(out.download(got));
              return verify(in, chunks(count, perBlock), got);
            });
}

/// How the threads that take part in an active-lane scan are chosen.
enum class Pattern { Random, OneLanePerWarp, Alternating };

template <typename T>
void testActive(test::Suite &suite, Pattern pattern, double probability,
                unsigned threads) {
  const unsigned blocks = suite.uniform(1, 32);
  std::string name = std::string("active-lane scans, ") + typeName<T>() +
                     ", blocks of " + std::to_string(threads) + ", ";
  if (pattern == Pattern::Random)
    name += "each lane with probability " +
            std::to_string(int(probability * 100)) + "%";
  else
    name += pattern == Pattern::OneLanePerWarp ? "one lane per warp"
                                               : "alternate lanes";
  suite.run(name, [&] {
    const std::size_t count = std::size_t(blocks) * threads;
    const std::vector<T> in = randomValues<T>(suite, count);
    const std::vector<test::Warp> warps = test::hardwareWarps(blocks, threads);
    std::vector<int> take(count);
    for (const test::Warp &warp : warps) {
      const unsigned chosen = suite.uniform(0u, warp.lanes - 1);
      for (unsigned lane = 0; lane < warp.lanes; ++lane) {
        int &takes = take[warp.first + lane];
        if (pattern == Pattern::Random)
          takes = suite.chance(probability);
        else if (pattern == Pattern::OneLanePerWarp)
          takes = lane == chosen;
        else
          takes = lane % 2;
      }
    }
    test::DeviceArray<T> input;
    test::DeviceArray<int> takeInput;
    test::DeviceArray<unsigned> masks, ranks, leaders;
    DeviceOutputs<T> out;
    CUDA_OK(input.upload(in));
    CUDA_OK(takeInput.upload(take));
    CUDA_OK(masks.allocatePoisoned(count));
    CUDA_OK(ranks.allocatePoisoned(count));
    CUDA_OK(leaders.allocatePoisoned(count));
    CUDA_OK(out.allocate(count));
    activeKernel<<<blocks, threads>>>(input.get(), takeInput.get(), out.view(),
                                      masks.get(), ranks.get(), leaders.get());
    LAUNCH_OK();
    HostOutputs<T> got;
    std::vector<unsigned> gotMasks, gotRanks, gotLeaders;
    CUDA_OK(out.download(got));
    CUDA_OK(masks.download(gotMasks));
    CUDA_OK(ranks.download(gotRanks));
    CUDA_OK(leaders.download(gotLeaders));

    std::vector<std::vector<std::size_t>> groups;
    if (!test::groupByMask(warps, take, gotMasks, groups))
      return false;
    for (const std::vector<std::size_t> &members : groups)
      for (std::size_t rank = 0; rank < members.size(); ++rank) {
        const std::size_t i = members[rank];
        const unsigned leader = __builtin_ctz(gotMasks[i]); // Lowest lane.
        EXPECT(gotRanks[i] == rank, "thread %zu: rank %u, want %zu", i,
               gotRanks[i], rank);
        EXPECT(gotLeaders[i] == leader, "thread %zu: leader %u, want %u", i,
               gotLeaders[i], leader);
      }
    return groups.empty() || verify(in, groups, got);
  });
}

} // namespace

int main() {
  test::Suite suite("test_scan");

  testWarp<int>(suite);
  testWarp<unsigned long long>(suite);
  testWarp<float>(suite);

  testBlock<128, 1, 1, int>(suite);
  testBlock<256, 1, 1, int>(suite);
  testBlock<1024, 1, 1, int>(suite);
  testBlock<32, 4, 1, int>(suite);
  testBlock<16, 8, 2, int>(suite);
  testBlock<256, 1, 1, unsigned long long>(suite);
  testBlock<256, 1, 1, float>(suite);

  for (dim3 shape :
       {dim3(1), dim3(31), dim3(32), dim3(33), dim3(100), dim3(1000),
        dim3(1024), dim3(7, 9), dim3(5, 5, 5), dim3(32, 32)})
    testBlockDynamic<int>(suite, shape);
  testBlockDynamic<unsigned long long>(suite, dim3(1000));
  testBlockDynamic<unsigned long long>(suite, dim3(7, 9));
  testBlockDynamic<float>(suite, dim3(1000));
  testBlockDynamic<float>(suite, dim3(5, 5, 5));

  for (double probability : {1.0, 0.9, 0.5, 0.1, 0.02})
    testActive<int>(suite, Pattern::Random, probability, 256);
  testActive<int>(suite, Pattern::Random, 0.5, 100); // Partial last warp.
  testActive<int>(suite, Pattern::OneLanePerWarp, 0, 256);
  testActive<int>(suite, Pattern::Alternating, 0, 256);
  testActive<unsigned long long>(suite, Pattern::Random, 0.5, 256);
  testActive<float>(suite, Pattern::Random, 0.7, 256);

  return suite.finish();
}
