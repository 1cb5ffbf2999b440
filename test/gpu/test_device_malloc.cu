//===- test/gpu/test_device_malloc.cu - Tests of device_malloc.cuh --------===//
//
// Aggregated device-side cudaMalloc: every thread that asks gets its own
// part, 16-byte aligned, not overlapping any other thread's, and writable
// end to end; the threads of a group share one heap allocation (their parts
// come from one base), at warp granularity among the lanes that reach the
// call (divergent ones included) and at block granularity over any block
// shape; a request the heap cannot satisfy fails for the whole group with
// the error and null pointers.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/device_malloc.cuh"

#include "harness.cuh"

#include <algorithm>
#include <cstdint>
#include <string>

namespace {

/// Thread i asks for sizes[i] bytes (only the odd ones in `divergent`
/// mode) and fills its part with its index; it records its pointer.
template <bool Block>
__global__ void allocateKernel(const unsigned *sizes, unsigned count,
                               bool divergent, unsigned long long *pointers,
                               int *errors) {
  const unsigned i = blockIdx.x * blockDim.x * blockDim.y +
                     threadIdx.y * blockDim.x + threadIdx.x;
  const unsigned size = i < count ? sizes[i] : 0;
  unsigned char *part = nullptr;
  cudaError_t error = cudaSuccess;
  if (Block) {
    error = cuda_rewrite::aggregatedMallocBlock(&part, size);
  } else if (!divergent || i % 2) {
    error = cuda_rewrite::aggregatedMallocWarp(&part, size);
  } else if (i < count) { // Not asking: nothing to read back.
    pointers[i] = 0;
    errors[i] = cudaSuccess;
    return;
  }
  if (i >= count)
    return;
  errors[i] = error;
  pointers[i] = reinterpret_cast<unsigned long long>(part);
  if (part)
    for (unsigned b = 0; b < size; ++b)
      part[b] = static_cast<unsigned char>(i);
}

__global__ void readBack(const unsigned *sizes, unsigned count,
                         const unsigned long long *pointers, int *wrong) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count || !pointers[i])
    return;
  const auto *part = reinterpret_cast<const unsigned char *>(pointers[i]);
  for (unsigned b = 0; b < sizes[i]; ++b)
    if (part[b] != static_cast<unsigned char>(i))
      atomicAdd(wrong, 1);
}

bool checkParts(const std::vector<unsigned> &sizes,
                const std::vector<unsigned long long> &pointers,
                const std::vector<int> &errors, const std::vector<bool> &asked,
                unsigned groupSize) {
  std::vector<std::pair<unsigned long long, unsigned long long>> ranges;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!asked[i])
      continue;
    EXPECT(errors[i] == cudaSuccess, "thread %zu: error %d", i, errors[i]);
    EXPECT(pointers[i] % 16 == 0, "thread %zu: pointer %llx not aligned", i,
           pointers[i]);
    if (sizes[i])
      ranges.push_back({pointers[i], pointers[i] + sizes[i]});
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t r = 1; r < ranges.size(); ++r)
    EXPECT(ranges[r].first >= ranges[r - 1].second,
           "parts [%llx, %llx) and [%llx, %llx) overlap",
           ranges[r - 1].first, ranges[r - 1].second, ranges[r].first,
           ranges[r].second);
  // Within a group the parts follow each other: an asking thread's part
  // starts where the previous asking thread's (padded) part ends.
  if (groupSize == 0)
    return true;
  for (size_t first = 0; first < sizes.size(); first += groupSize) {
    size_t previous = SIZE_MAX;
    for (size_t i = first; i < std::min(first + groupSize, sizes.size());
         ++i) {
      if (!asked[i])
        continue;
      if (previous != SIZE_MAX) {
        const unsigned long long padded = (sizes[previous] + 15) / 16 * 16;
        EXPECT(pointers[i] == pointers[previous] + padded,
               "thread %zu's part does not follow thread %zu's", i, previous);
      }
      previous = i;
    }
  }
  return true;
}

template <bool Block>
void testAllocation(test::Suite &suite, dim3 block, unsigned blocks,
                    bool divergent) {
  const unsigned threads = block.x * block.y;
  const unsigned count = threads * blocks;
  suite.run(std::string(Block ? "block" : "warp") + " aggregation, blocks of " +
                std::to_string(block.x) + "x" + std::to_string(block.y) +
                (divergent ? ", odd threads only" : ""),
            [&] {
              std::vector<unsigned> sizes(count);
              for (unsigned &size : sizes)
                size = unsigned(suite.random()() % 100);
              std::vector<bool> asked(count, true);
              if (divergent)
                for (unsigned i = 0; i < count; i += 2)
                  asked[i] = false;
              test::DeviceArray<unsigned> deviceSizes;
              test::DeviceArray<unsigned long long> pointers;
              test::DeviceArray<int> errors, wrong;
              CUDA_OK(deviceSizes.upload(sizes));
              CUDA_OK(pointers.allocatePoisoned(count));
              CUDA_OK(errors.allocatePoisoned(count));
              CUDA_OK(wrong.upload(std::vector<int>{0}));
              allocateKernel<Block><<<blocks, block>>>(
                  deviceSizes.get(), count, divergent, pointers.get(),
                  errors.get());
              LAUNCH_OK();
              readBack<<<(count + 127) / 128, 128>>>(
                  deviceSizes.get(), count, pointers.get(), wrong.get());
              LAUNCH_OK();
              std::vector<unsigned long long> hostPointers;
              std::vector<int> hostErrors, hostWrong;
              CUDA_OK(pointers.download(hostPointers));
              CUDA_OK(errors.download(hostErrors));
              CUDA_OK(wrong.download(hostWrong));
              EXPECT(hostWrong[0] == 0, "%d bytes overwritten", hostWrong[0]);
              // Warps are 32 consecutive threads only in full blocks.
              const unsigned group =
                  Block ? threads : (threads % 32 ? 0 : 32);
              return checkParts(sizes, hostPointers, hostErrors, asked, group);
            });
}

/// More than the heap holds: every thread of the group gets the error and
/// a null pointer.
void testExhaustion(test::Suite &suite) {
  suite.run("a request beyond the heap fails for the whole warp", [&] {
    const unsigned count = 32;
    std::vector<unsigned> sizes(count, 1u << 30); // 32 GiB in all.
    test::DeviceArray<unsigned> deviceSizes;
    test::DeviceArray<unsigned long long> pointers;
    test::DeviceArray<int> errors;
    CUDA_OK(deviceSizes.upload(sizes));
    CUDA_OK(pointers.allocatePoisoned(count));
    CUDA_OK(errors.allocatePoisoned(count));
    allocateKernel<false><<<1, 32>>>(deviceSizes.get(), count, false,
                                     pointers.get(), errors.get());
    LAUNCH_OK();
    std::vector<unsigned long long> hostPointers;
    std::vector<int> hostErrors;
    CUDA_OK(pointers.download(hostPointers));
    CUDA_OK(errors.download(hostErrors));
    for (unsigned i = 0; i < count; ++i) {
      EXPECT(hostErrors[i] != cudaSuccess, "thread %u: no error", i);
      EXPECT(hostPointers[i] == 0, "thread %u: pointer %llx", i,
             hostPointers[i]);
    }
    return true;
  });
}

} // namespace

int main() {
  test::Suite suite("test_device_malloc");
  // Room for every case's parts in the device heap.
  suite.run("the device heap can be enlarged", [] {
    CUDA_OK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, size_t(256) << 20));
    return true;
  });
  testAllocation<false>(suite, dim3(64), 40, false);
  testAllocation<false>(suite, dim3(64), 40, true);
  testAllocation<false>(suite, dim3(37), 9, false); // Partial warps.
  testAllocation<true>(suite, dim3(128), 20, false);
  testAllocation<true>(suite, dim3(13, 5), 11, false);
  testExhaustion(suite);
  return suite.finish();
}
