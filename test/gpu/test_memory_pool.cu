//===- test/gpu/test_memory_pool.cu - Tests of memory_pool.cuh ------------===//
//
// Random requests (sizes with zeros, mixed alignments) through the thread,
// warp-aggregated and block-aggregated allocators. Every granted allocation
// must be aligned, inside the pool, disjoint from all others and writable
// (each thread fills its bytes with a tag that is read back); aggregated
// allocations must be laid out as the exclusive prefix sum of the padded
// sizes within the warp (the lanes that called together) or block, and the
// pool's `used` counter must match the CPU's count of one reservation per
// group. Overflows must give null pointers, never memory past the end, and
// be reported by checkPool() with a message, also after a reset; absurd sizes
// must not wrap around.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/memory_pool.cuh"

#include "harness.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

// From memory_pool_other_tu.cu.
cudaError_t allocateInOtherTu(const unsigned long long *sizes,
                              unsigned long long *addresses, int count);
cudaError_t poolStateAddressInOtherTu(void **address);

namespace {

using cuda_rewrite::kPoolAlignment;
using cuda_rewrite::PoolInfo;

constexpr std::size_t kMiB = std::size_t(1) << 20;

struct Request {
  unsigned long long bytes;
  unsigned long long alignment;
  int take; ///< Whether the thread calls the allocator (warp and thread modes).
};

enum class Mode { Thread, Warp, Block };

const char *modeName(Mode mode) {
  switch (mode) {
  case Mode::Thread:
    return "poolAllocate";
  case Mode::Warp:
    return "poolAllocateWarp";
  case Mode::Block:
    return "poolAllocateBlock";
  }
  return "?";
}

__host__ __device__ unsigned char tagOf(std::size_t thread) {
  return static_cast<unsigned char>(thread * 131 + 7);
}

/// Each thread allocates as `mode` says, stores the address (0 for null) and
/// the mask it ran with (warp mode), and fills its memory with its tag.
__global__ void allocateKernel(Mode mode, const Request *requests,
                               unsigned long long *addresses, unsigned *masks) {
  const std::size_t i =
      blockIdx.x * std::size_t(blockDim.x * blockDim.y * blockDim.z) +
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const Request request = requests[i];
  void *memory = nullptr;
  unsigned mask = 0;
  switch (mode) {
  case Mode::Thread:
    if (request.take)
      memory = cuda_rewrite::poolAllocate(request.bytes, request.alignment);
    break;
  case Mode::Warp:
    if (request.take) {
      mask = __activemask();
      memory = cuda_rewrite::poolAllocateWarp(request.bytes, request.alignment);
    }
    break;
  case Mode::Block:
    memory = cuda_rewrite::poolAllocateBlock(request.bytes, request.alignment);
    break;
  }
  addresses[i] = reinterpret_cast<std::uintptr_t>(memory);
  masks[i] = mask;
  if (memory)
    for (unsigned long long k = 0; k < request.bytes; ++k)
      static_cast<unsigned char *>(memory)[k] = tagOf(i);
}

/// One launch of allocateKernel and what came back.
struct Run {
  Mode mode;
  unsigned blocks;
  dim3 shape;
  std::vector<Request> requests;
  std::vector<unsigned long long> addresses;
  std::vector<unsigned> masks;
  PoolInfo before, after;
  std::vector<unsigned char> content; ///< The pool's first `used` bytes.

  std::size_t threadsPerBlock() const { return shape.x * shape.y * shape.z; }
};

bool launch(Run &run) {
  test::DeviceArray<Request> requests;
  test::DeviceArray<unsigned long long> addresses;
  test::DeviceArray<unsigned> masks;
  CUDA_OK(requests.upload(run.requests));
  CUDA_OK(addresses.allocatePoisoned(run.requests.size()));
  CUDA_OK(masks.allocatePoisoned(run.requests.size()));
  CUDA_OK(cuda_rewrite::getPoolInfo(run.before));
  allocateKernel<<<run.blocks, run.shape>>>(run.mode, requests.get(),
                                            addresses.get(), masks.get());
  LAUNCH_OK();
  CUDA_OK(addresses.download(run.addresses));
  CUDA_OK(masks.download(run.masks));
  CUDA_OK(cuda_rewrite::getPoolInfo(run.after));
  run.content.resize(std::min(run.after.used, run.after.capacity));
  if (!run.content.empty())
    CUDA_OK(cudaMemcpy(run.content.data(), run.after.base, run.content.size(),
                       cudaMemcpyDeviceToHost));
  return true;
}

unsigned long long alignUp(unsigned long long value,
                           unsigned long long alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// The alignment the pool gives a request (see detail::effectiveAlignment).
unsigned long long effectiveAlignment(unsigned long long alignment) {
  unsigned long long result = kPoolAlignment;
  while (result < alignment)
    result *= 2;
  return result;
}

/// The threads that allocated together, each group in scan order.
bool allocationGroups(const Run &run,
                      std::vector<std::vector<std::size_t>> &groups) {
  const std::size_t count = run.requests.size();
  if (run.mode == Mode::Thread) {
    for (std::size_t i = 0; i < count; ++i)
      if (run.requests[i].take)
        groups.push_back({i});
    return true;
  }
  if (run.mode == Mode::Block) {
    for (std::size_t first = 0; first < count; first += run.threadsPerBlock()) {
      groups.emplace_back();
      for (std::size_t i = first; i < first + run.threadsPerBlock(); ++i)
        groups.back().push_back(i);
    }
    return true;
  }
  std::vector<int> take(count);
  for (std::size_t i = 0; i < count; ++i)
    take[i] = run.requests[i].take;
  return test::groupByMask(
      test::hardwareWarps(run.blocks, unsigned(run.threadsPerBlock())), take,
      run.masks, groups);
}

/// Checks every allocation of `run`. With `allGranted`, every request must
/// have succeeded, the layout within each group must be the prefix sum of
/// the padded sizes, and `used` must have grown by one reservation per group.
/// Without it, some requests may have failed but those granted must still be
/// sound.
bool verify(const Run &run, bool allGranted) {
  std::vector<std::vector<std::size_t>> groups;
  if (!allocationGroups(run, groups))
    return false;
  const auto base = reinterpret_cast<std::uintptr_t>(run.after.base);
  const std::uintptr_t end = base + run.after.capacity;
  unsigned long long reserved = 0;
  struct Interval {
    std::uintptr_t begin, end;
    std::size_t thread;
  };
  std::vector<Interval> intervals;
  std::size_t granted = 0;

  for (const std::vector<std::size_t> &group : groups) {
    unsigned long long alignment = kPoolAlignment;
    for (std::size_t i : group)
      alignment =
          std::max(alignment, effectiveAlignment(run.requests[i].alignment));
    unsigned long long offset = 0; // Within the group's reservation.
    const std::uintptr_t first = run.addresses[group.front()];
    for (std::size_t i : group) {
      const Request &request = run.requests[i];
      const std::uintptr_t address = run.addresses[i];
      if (allGranted) {
        EXPECT(address != 0, "thread %zu got null for %llu bytes", i,
               request.bytes);
        EXPECT(address - first == offset,
               "thread %zu is %llu bytes into its group's reservation, want "
               "%llu",
               i, (unsigned long long)(address - first), offset);
      }
      offset += alignUp(request.bytes, alignment);
      if (address == 0)
        continue;
      ++granted;
      EXPECT(address % alignment == 0, "thread %zu: %#llx not aligned to %llu",
             i, (unsigned long long)address, alignment);
      EXPECT(address >= base && address <= end &&
                 request.bytes <= end - address,
             "thread %zu: %llu bytes at %#llx, outside the pool [%#llx, "
             "%#llx)",
             i, request.bytes, (unsigned long long)address,
             (unsigned long long)base, (unsigned long long)end);
      // A zero-byte allocation owns no memory: its address may equal the
      // next allocation's.
      if (request.bytes > 0)
        intervals.push_back({address, address + request.bytes, i});
    }
    reserved += offset + alignment - kPoolAlignment;
  }

  if (allGranted)
    EXPECT(run.after.used - run.before.used == reserved,
           "used grew by %zu bytes, want %llu (one reservation per group)",
           run.after.used - run.before.used, reserved);
  std::sort(
      intervals.begin(), intervals.end(),
      [](const Interval &a, const Interval &b) { return a.begin < b.begin; });
  for (std::size_t k = 1; k < intervals.size(); ++k)
    EXPECT(intervals[k - 1].end <= intervals[k].begin,
           "threads %zu and %zu got overlapping memory: [%#llx, %#llx) and "
           "[%#llx, %#llx)",
           intervals[k - 1].thread, intervals[k].thread,
           (unsigned long long)intervals[k - 1].begin,
           (unsigned long long)intervals[k - 1].end,
           (unsigned long long)intervals[k].begin,
           (unsigned long long)intervals[k].end);
  for (const Interval &interval : intervals)
    for (std::uintptr_t byte = interval.begin; byte < interval.end; ++byte) {
      const std::size_t at = byte - base;
      EXPECT(at < run.content.size() &&
                 run.content[at] == tagOf(interval.thread),
             "byte %zu of the pool does not hold thread %zu's tag", at,
             interval.thread);
    }
  std::printf("  %zu of %zu requests granted, %zu groups, %zu bytes used\n",
              granted, run.requests.size(), groups.size(), run.after.used);
  return true;
}

/// Random requests: sizes up to `maxBytes` (a tenth of them zero), mixed
/// alignments up to `maxAlignment` (0 and 24 included, which the pool rounds
/// up), each thread taking part with `probability`.
std::vector<Request> randomRequests(test::Suite &suite, std::size_t count,
                                    unsigned long long maxBytes,
                                    unsigned long long maxAlignment,
                                    double probability) {
  const unsigned long long alignments[] = {0,  1,  4,  8,  16,  16,
                                           16, 24, 32, 64, 256, 4096};
  std::vector<Request> requests(count);
  for (Request &request : requests) {
    request.bytes =
        suite.chance(0.1) ? 0 : suite.uniform<unsigned long long>(1, maxBytes);
    do
      request.alignment =
          alignments[suite.uniform<std::size_t>(0, std::size(alignments) - 1)];
    while (request.alignment > maxAlignment);
    request.take = suite.chance(probability);
  }
  return requests;
}

std::string describe(dim3 shape) {
  return std::to_string(shape.x) + "x" + std::to_string(shape.y) + "x" +
         std::to_string(shape.z);
}

/// A launch of `minBlocks` to 48 blocks making random requests. Alignments
/// go up to 4096 for single threads but only to 256 for aggregated
/// allocations, where the largest alignment pads the whole group.
Run makeRun(test::Suite &suite, Mode mode, dim3 shape,
            unsigned long long maxBytes, double probability,
            unsigned minBlocks = 1) {
  Run run;
  run.mode = mode;
  run.blocks = suite.uniform(minBlocks, 48u);
  run.shape = shape;
  run.requests =
      randomRequests(suite, run.blocks * run.threadsPerBlock(), maxBytes,
                     mode == Mode::Thread ? 4096 : 256, probability);
  return run;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// A pool of `bytes`, reset and without an overflow record, whatever earlier
/// (possibly failed) cases left.
cudaError_t freshPool(std::size_t bytes = 64 * kMiB) {
  std::string ignored;
  const cudaError_t stale = cuda_rewrite::checkPool(nullptr, &ignored);
  if (stale != cudaSuccess && stale != cudaErrorMemoryAllocation)
    return stale;
  if (cudaError_t error = cuda_rewrite::setPoolSize(bytes))
    return error;
  return cuda_rewrite::resetPool();
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

void testHostSetup(test::Suite &suite) {
  suite.run("parseByteSize accepts sizes with K/M/G suffixes only", [] {
    struct Case {
      const char *text;
      bool ok;
      std::size_t bytes;
    };
    const Case cases[] = {
        {"4096", true, 4096},
        {"64K", true, 64 << 10},
        {"256M", true, 256 * kMiB},
        {"1G", true, std::size_t(1) << 30},
        {"3MiB", true, 3 * kMiB},
        {"2mb", true, 2 * kMiB},
        {"0", false, 0},
        {"", false, 0},
        {"-1", false, 0},
        {"12X", false, 0},
        {"M", false, 0},
        {"64 M", false, 0},
        {"99999999999999999999999", false, 0},
        {"17179869184G", false, 0}, // 2^64 bytes.
    };
    for (const Case &c : cases) {
      std::size_t bytes = 0;
      const bool ok = cuda_rewrite::parseByteSize(c.text, bytes);
      EXPECT(ok == c.ok && (!ok || bytes == c.bytes), "\"%s\": %s, %zu bytes",
             c.text, ok ? "accepted" : "rejected", bytes);
    }
    return true;
  });

  suite.run("the first resetPool sets up a 64 MiB pool", [] {
    CUDA_OK(cuda_rewrite::resetPool());
    PoolInfo info;
    CUDA_OK(cuda_rewrite::getPoolInfo(info));
    EXPECT(info.base && info.capacity == 64 * kMiB && info.used == 0 &&
               !info.overflowed,
           "base %p, capacity %zu, used %zu, overflowed %d", info.base,
           info.capacity, info.used, info.overflowed);
    return true;
  });

  suite.run(
      "CUDA_REWRITE_POOL_SIZE sizes a new pool; a bad value is an error", [] {
        PoolInfo info;
        setenv(cuda_rewrite::kPoolSizeVariable, "3M", 1);
        CUDA_OK(cuda_rewrite::releasePool());
        CUDA_OK(cuda_rewrite::resetPool());
        CUDA_OK(cuda_rewrite::getPoolInfo(info));
        EXPECT(info.capacity == 3 * kMiB, "capacity %zu", info.capacity);

        setenv(cuda_rewrite::kPoolSizeVariable, "lots", 1);
        CUDA_OK(cuda_rewrite::releasePool());
        std::printf("  (a report about \"lots\" on stderr is expected)\n");
        const cudaError_t error = cuda_rewrite::resetPool();
        EXPECT(error == cudaErrorInvalidValue, "resetPool gave %s",
               cudaGetErrorName(error));

        unsetenv(cuda_rewrite::kPoolSizeVariable);
        CUDA_OK(cuda_rewrite::resetPool());
        CUDA_OK(cuda_rewrite::getPoolInfo(info));
        EXPECT(info.capacity == 64 * kMiB, "capacity %zu", info.capacity);
        return true;
      });

  suite.run("one pool state in both translation units", [] {
    void *here = nullptr, *there = nullptr;
    CUDA_OK(cudaGetSymbolAddress(&here, cuda_rewrite::detail::poolState));
    CUDA_OK(poolStateAddressInOtherTu(&there));
    EXPECT(here == there, "%p here, %p in the other translation unit", here,
           there);
    return true;
  });
}

void testAllocation(test::Suite &suite, Mode mode, dim3 shape,
                    double probability) {
  Run run = makeRun(suite, mode, shape, 600, probability);
  suite.run(std::string(modeName(mode)) + ", " + std::to_string(run.blocks) +
                " blocks of " + describe(shape) + ", " +
                std::to_string(int(probability * 100)) + "% of threads",
            [&] {
              CUDA_OK(freshPool());
              if (!launch(run) || !verify(run, /*allGranted=*/true))
                return false;
              CUDA_OK(cuda_rewrite::checkPool());
              return true;
            });
}

void testReset(test::Suite &suite) {
  suite.run("launches without a reset take disjoint memory; a reset starts "
            "over at the base",
            [&] {
              CUDA_OK(freshPool());
              Run first = makeRun(suite, Mode::Warp, dim3(256), 300, 0.7);
              Run second = makeRun(suite, Mode::Block, dim3(128), 300, 1);
              if (!launch(first) || !verify(first, true) || !launch(second) ||
                  !verify(second, true))
                return false;
              const std::uintptr_t firstEnd =
                  reinterpret_cast<std::uintptr_t>(first.after.base) +
                  first.after.used;
              for (unsigned long long address : second.addresses)
                EXPECT(address >= firstEnd,
                       "second launch got %#llx, below the first's end %#llx",
                       address, (unsigned long long)firstEnd);

              CUDA_OK(cuda_rewrite::resetPool());
              Run third;
              third.mode = Mode::Thread;
              third.blocks = 1;
              third.shape = dim3(1);
              third.requests = {{100, 16, 1}};
              if (!launch(third) || !verify(third, true))
                return false;
              EXPECT(third.before.used == 0 &&
                         third.addresses[0] ==
                             reinterpret_cast<std::uintptr_t>(third.after.base),
                     "after a reset: used %zu, allocation at %#llx, base %p",
                     third.before.used, third.addresses[0], third.after.base);
              CUDA_OK(cuda_rewrite::checkPool());
              return true;
            });
}

void testOtherTranslationUnit(test::Suite &suite) {
  suite.run("allocations from another translation unit share the pool", [&] {
    CUDA_OK(freshPool());
    Run run = makeRun(suite, Mode::Thread, dim3(128), 200, 1);
    if (!launch(run) || !verify(run, true))
      return false;
    const int count = suite.uniform(1, 5000);
    std::vector<unsigned long long> sizes(count);
    for (unsigned long long &size : sizes)
      size = suite.uniform<unsigned long long>(0, 200);
    test::DeviceArray<unsigned long long> deviceSizes, addresses;
    CUDA_OK(deviceSizes.upload(sizes));
    CUDA_OK(addresses.allocatePoisoned(count));
    CUDA_OK(allocateInOtherTu(deviceSizes.get(), addresses.get(), count));
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<unsigned long long> got;
    CUDA_OK(addresses.download(got));
    PoolInfo info;
    CUDA_OK(cuda_rewrite::getPoolInfo(info));
    const std::uintptr_t firstEnd =
        reinterpret_cast<std::uintptr_t>(info.base) + run.after.used;
    const std::uintptr_t end =
        reinterpret_cast<std::uintptr_t>(info.base) + info.used;
    for (int i = 0; i < count; ++i)
      EXPECT(got[i] >= firstEnd && got[i] + sizes[i] <= end,
             "other unit's thread %d: %llu bytes at %#llx, outside [%#llx, "
             "%#llx)",
             i, sizes[i], got[i], (unsigned long long)firstEnd,
             (unsigned long long)end);
    CUDA_OK(cuda_rewrite::checkPool());
    return true;
  });
}

/// Requests more than a 64 KiB pool holds.
void testOverflow(test::Suite &suite, Mode mode, dim3 shape) {
  suite.run(
      std::string(modeName(mode)) +
          " past the end of a 64 KiB pool: null pointers, sound "
          "memory, reported once",
      [&] {
        CUDA_OK(freshPool(64 << 10));
        // At least 16 blocks of 100 requests of 128 bytes on average.
        Run run = makeRun(suite, mode, shape, 256, 1, 16);
        if (!launch(run) || !verify(run, /*allGranted=*/false))
          return false;
        EXPECT(std::count(run.addresses.begin(), run.addresses.end(), 0ull) > 0,
               "no request failed, %zu bytes used", run.after.used);
        EXPECT(run.after.overflowed && run.after.firstRequest > 0 &&
                   run.after.requiredBytes > run.after.capacity,
               "overflowed %d, first request %zu, required %zu",
               run.after.overflowed, run.after.firstRequest,
               run.after.requiredBytes);
        std::string message;
        const cudaError_t error = cuda_rewrite::checkPool(nullptr, &message);
        EXPECT(error == cudaErrorMemoryAllocation, "checkPool gave %s",
               cudaGetErrorName(error));
        EXPECT(contains(message, "65536 bytes") &&
                   contains(message, cuda_rewrite::kPoolSizeVariable) &&
                   contains(message, "setPoolSize"),
               "message: %s", message.c_str());
        std::printf("  message: %s\n", message.c_str());
        CUDA_OK(cuda_rewrite::checkPool()); // Cleared.
        return true;
      });
}

void testOverflowEdges(test::Suite &suite) {
  suite.run("an overflow is still reported after a reset", [&] {
    CUDA_OK(freshPool(4096));
    Run big = makeRun(suite, Mode::Thread, dim3(64), 256, 1, 4);
    if (!launch(big) || !verify(big, false))
      return false;
    CUDA_OK(cuda_rewrite::resetPool());
    Run small;
    small.mode = Mode::Thread;
    small.blocks = 1;
    small.shape = dim3(1);
    small.requests = {{64, 16, 1}};
    if (!launch(small) || !verify(small, true))
      return false;
    std::string message;
    const cudaError_t error = cuda_rewrite::checkPool(nullptr, &message);
    EXPECT(error == cudaErrorMemoryAllocation, "checkPool gave %s",
           cudaGetErrorName(error));
    CUDA_OK(cuda_rewrite::checkPool());
    return true;
  });

  suite.run("a request larger than the pool fails alone and is recorded", [&] {
    CUDA_OK(freshPool(1 << 20));
    Run run = makeRun(suite, Mode::Thread, dim3(256), 100, 1);
    run.blocks = std::min(run.blocks, 4u); // At most 1024 * 112 bytes.
    run.requests.resize(run.blocks * run.threadsPerBlock());
    for (Request &request : run.requests)
      request.alignment = 16;
    const std::size_t huge =
        suite.uniform<std::size_t>(0, run.requests.size() - 1);
    run.requests[huge] = {(1 << 20) + 1, 16, 1};
    if (!launch(run))
      return false;
    for (std::size_t i = 0; i < run.requests.size(); ++i)
      EXPECT((run.addresses[i] == 0) == (i == huge),
             "thread %zu: %#llx (the huge request is thread %zu)", i,
             run.addresses[i], huge);
    if (!verify(run, false))
      return false;
    EXPECT(run.after.overflowed && run.after.firstRequest == (1 << 20) + 1 &&
               run.after.requiredBytes >= (1 << 20) + 1,
           "first request %zu, required %zu", run.after.firstRequest,
           run.after.requiredBytes);
    std::string message;
    EXPECT(cuda_rewrite::checkPool(nullptr, &message) ==
               cudaErrorMemoryAllocation,
           "not reported");
    EXPECT(contains(message, "1048577 bytes") && contains(message, "2M"),
           "message: %s", message.c_str());
    return true;
  });

  for (Mode mode : {Mode::Thread, Mode::Warp, Mode::Block})
    suite.run(std::string(modeName(mode)) +
                  " with absurd sizes (2^50, 2^63, SIZE_MAX) among normal "
                  "ones: no wrap-around",
              [&] {
                CUDA_OK(freshPool());
                Run run = makeRun(suite, mode, dim3(256), 300, 1);
                const unsigned long long absurd[] = {1ull << 50, 1ull << 63,
                                                     ~0ull, ~0ull - 15};
                std::vector<bool> isAbsurd(run.requests.size());
                for (int k = 0; k < 40; ++k) {
                  const std::size_t i =
                      suite.uniform<std::size_t>(0, run.requests.size() - 1);
                  run.requests[i].bytes = absurd[k % 4];
                  isAbsurd[i] = true;
                }
                if (!launch(run) || !verify(run, false))
                  return false;
                for (std::size_t i = 0; i < run.requests.size(); ++i)
                  EXPECT(!isAbsurd[i] || run.addresses[i] == 0,
                         "thread %zu got %#llx for %llu bytes", i,
                         run.addresses[i], run.requests[i].bytes);
                EXPECT(run.after.used < run.after.capacity,
                       "used %zu of %zu: failed requests consumed the pool",
                       run.after.used, run.after.capacity);
                EXPECT(cuda_rewrite::checkPool(nullptr, nullptr) ==
                           cudaErrorMemoryAllocation,
                       "not reported");
                return true;
              });

  suite.run("allocating without a pool gives null and is reported", [&] {
    CUDA_OK(cuda_rewrite::releasePool());
    Run run = makeRun(suite, Mode::Warp, dim3(64), 100, 1);
    if (!launch(run))
      return false;
    for (std::size_t i = 0; i < run.requests.size(); ++i)
      EXPECT(run.addresses[i] == 0, "thread %zu got %#llx", i,
             run.addresses[i]);
    std::string message;
    EXPECT(cuda_rewrite::checkPool(nullptr, &message) ==
                   cudaErrorMemoryAllocation &&
               contains(message, "no pool was set up"),
           "message: %s", message.c_str());
    CUDA_OK(cuda_rewrite::resetPool()); // Sets the pool up again.
    PoolInfo info;
    CUDA_OK(cuda_rewrite::getPoolInfo(info));
    EXPECT(info.capacity == 64 * kMiB, "capacity %zu", info.capacity);
    return true;
  });
}

} // namespace

int main() {
  unsetenv(cuda_rewrite::kPoolSizeVariable); // Tests expect the default.
  test::Suite suite("test_memory_pool");
  testHostSetup(suite);

  testAllocation(suite, Mode::Thread, dim3(256), 1);
  testAllocation(suite, Mode::Thread, dim3(256), 0.5);
  for (double probability : {1.0, 0.5, 0.1})
    testAllocation(suite, Mode::Warp, dim3(256), probability);
  testAllocation(suite, Mode::Warp, dim3(100), 0.7); // Partial warps.
  // At most 48 blocks of 1024 requests of 768 padded bytes: 36 MiB.
  for (dim3 shape :
       {dim3(256), dim3(100), dim3(1000), dim3(7, 9), dim3(32, 32), dim3(1)})
    testAllocation(suite, Mode::Block, shape, 1);

  testReset(suite);
  testOtherTranslationUnit(suite);
  testOverflow(suite, Mode::Thread, dim3(256));
  testOverflow(suite, Mode::Warp, dim3(256));
  testOverflow(suite, Mode::Block, dim3(100));
  testOverflowEdges(suite);
  return suite.finish();
}
