//===- test/gpu/common/harness.cuh - Minimal GPU test harness --*- CUDA -*-===//
//
// The GPU machine has no GoogleTest, so each test is a plain program: cases
// are lambdas returning true on success, every CUDA call and every launch is
// checked, each case prints one PASS/FAIL line (with the reason before it on
// failure), and the program ends with `N passed, N failed` and a non-zero
// exit status on any failure. Inputs are random; the seed is printed and can
// be fixed with CUDA_REWRITE_TEST_SEED to repeat a run.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_TEST_GPU_HARNESS_CUH
#define CUDA_REWRITE_TEST_GPU_HARNESS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

/// Fails the current case, with the location and the CUDA error, unless
/// `expr` yields cudaSuccess.
#define CUDA_OK(expr)                                                          \
  do {                                                                         \
    const cudaError_t cudaOkError_ = (expr);                                   \
    if (cudaOkError_ != cudaSuccess) {                                         \
      std::printf("  %s:%d: %s: %s (%d): %s\n", __FILE__, __LINE__, #expr,     \
                  cudaGetErrorName(cudaOkError_),                              \
                  static_cast<int>(cudaOkError_),                              \
                  cudaGetErrorString(cudaOkError_));                           \
      return false;                                                            \
    }                                                                          \
  } while (0)

/// After a kernel launch: checks the launch and waits for the grid.
#define LAUNCH_OK()                                                            \
  do {                                                                         \
    CUDA_OK(cudaGetLastError());                                               \
    CUDA_OK(cudaDeviceSynchronize());                                          \
  } while (0)

/// Fails the current case with a printf-style explanation unless `cond`.
#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("  %s:%d: expected %s: ", __FILE__, __LINE__, #cond);        \
      std::printf(__VA_ARGS__);                                                \
      std::printf("\n");                                                       \
      return false;                                                            \
    }                                                                          \
  } while (0)

namespace test {

/// A device array that frees itself; every operation returns the CUDA error.
template <typename T> class DeviceArray {
public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  ~DeviceArray() { cudaFree(data_); }

  cudaError_t allocate(std::size_t count) {
    cudaFree(data_);
    data_ = nullptr;
    count_ = count;
    return cudaMalloc(&data_, sizeof(T) * (count ? count : 1));
  }
  /// Allocates and fills every byte with 0xff, so unwritten results show.
  cudaError_t allocatePoisoned(std::size_t count) {
    if (cudaError_t error = allocate(count))
      return error;
    return cudaMemset(data_, 0xff, sizeof(T) * (count ? count : 1));
  }
  cudaError_t upload(const std::vector<T> &host) {
    if (cudaError_t error = allocate(host.size()))
      return error;
    if (host.empty()) // host.data() may be null.
      return cudaSuccess;
    return cudaMemcpy(data_, host.data(), sizeof(T) * host.size(),
                      cudaMemcpyHostToDevice);
  }
  cudaError_t download(std::vector<T> &host) const {
    host.resize(count_);
    if (host.empty())
      return cudaSuccess;
    return cudaMemcpy(host.data(), data_, sizeof(T) * count_,
                      cudaMemcpyDeviceToHost);
  }
  T *get() const { return data_; }
  std::size_t size() const { return count_; }

private:
  T *data_ = nullptr;
  std::size_t count_ = 0;
};

/// A hardware warp: consecutive threads (in linear order) of one block.
struct Warp {
  std::size_t first; ///< Global index of lane 0.
  unsigned lanes;    ///< 32, or fewer for the last warp of a block.
};

/// The warps of `blocks` blocks of `threadsPerBlock` threads, where thread
/// `block * threadsPerBlock + linear index` is numbered globally.
inline std::vector<Warp> hardwareWarps(unsigned blocks,
                                       unsigned threadsPerBlock) {
  std::vector<Warp> warps;
  for (unsigned block = 0; block < blocks; ++block)
    for (unsigned lane0 = 0; lane0 < threadsPerBlock; lane0 += 32)
      warps.push_back({std::size_t(block) * threadsPerBlock + lane0,
                       std::min(32u, threadsPerBlock - lane0)});
  return warps;
}

/// Groups the threads with take[i] by the __activemask() each saw (masks[i],
/// 0 for threads that do not take part), in lane order, after checking that
/// the masks are consistent: each contains its own lane, only taking lanes,
/// and is seen by exactly the lanes it names. Normally a group is all taking
/// lanes of a warp, but the hardware may split them, so the CPU reference
/// follows the masks. Prints the first inconsistency and returns false.
inline bool groupByMask(const std::vector<Warp> &warps,
                        const std::vector<int> &take,
                        const std::vector<unsigned> &masks,
                        std::vector<std::vector<std::size_t>> &groups) {
  std::size_t splitWarps = 0;
  for (const Warp &warp : warps) {
    unsigned taking = 0;
    for (unsigned lane = 0; lane < warp.lanes; ++lane)
      taking |= unsigned(take[warp.first + lane] != 0) << lane;
    std::map<unsigned, std::vector<std::size_t>> byMask;
    for (unsigned lane = 0; lane < warp.lanes; ++lane) {
      const std::size_t i = warp.first + lane;
      const unsigned mask = masks[i];
      if (!take[i]) {
        EXPECT(mask == 0, "thread %zu does not take part, wrote mask %#x", i,
               mask);
        continue;
      }
      EXPECT((mask >> lane & 1) && (mask & ~taking) == 0,
             "thread %zu saw mask %#x; taking lanes %#x", i, mask, taking);
      byMask[mask].push_back(i);
    }
    for (auto &entry : byMask) {
      EXPECT(entry.second.size() == unsigned(__builtin_popcount(entry.first)),
             "mask %#x seen by %zu lanes of the warp at thread %zu",
             entry.first, entry.second.size(), warp.first);
      groups.push_back(entry.second);
    }
    splitWarps += byMask.size() > 1;
  }
  if (splitWarps)
    std::printf("  note: %zu warps reached the call in several groups\n",
                splitWarps);
  return true;
}

inline std::uint64_t chooseSeed() {
  if (const char *text = std::getenv("CUDA_REWRITE_TEST_SEED"))
    return std::strtoull(text, nullptr, 0);
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

/// Runs the cases of one test program and keeps the score.
class Suite {
public:
  explicit Suite(const char *name) : seed_(chooseSeed()), random_(seed_) {
    std::printf("%s: seed %" PRIu64 " (CUDA_REWRITE_TEST_SEED=%" PRIu64
                " repeats this run)\n",
                name, seed_, seed_);
    run("a CUDA device is present", [] {
      int devices = 0;
      CUDA_OK(cudaGetDeviceCount(&devices));
      EXPECT(devices > 0, "%d devices", devices);
      cudaDeviceProp properties;
      CUDA_OK(cudaGetDeviceProperties(&properties, 0));
      std::printf("  device 0: %s, sm_%d%d, %d SMs\n", properties.name,
                  properties.major, properties.minor,
                  properties.multiProcessorCount);
      return true;
    });
    hasDevice_ = failed_ == 0;
  }

  /// Without a device the remaining cases are counted as failed, not run.
  template <typename Case> void run(const std::string &name, Case &&body) {
    bool ok = false;
    if (hasDevice_)
      ok = body();
    else
      std::printf("  not run: no usable CUDA device\n");
    ++(ok ? passed_ : failed_);
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", name.c_str());
    std::fflush(stdout);
  }

  std::mt19937_64 &random() { return random_; }

  /// A uniformly random integer in [low, high].
  template <typename T> T uniform(T low, T high) {
    return std::uniform_int_distribution<T>(low, high)(random_);
  }
  bool chance(double probability) {
    return std::bernoulli_distribution(probability)(random_);
  }

  /// Prints the closing line; returns the exit status.
  int finish() const {
    std::printf("%d passed, %d failed\n", passed_, failed_);
    return failed_ == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  }

private:
  std::uint64_t seed_;
  std::mt19937_64 random_;
  bool hasDevice_ = true;
  int passed_ = 0;
  int failed_ = 0;
};

} // namespace test

#endif // CUDA_REWRITE_TEST_GPU_HARNESS_CUH
