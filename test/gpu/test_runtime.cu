//===- test/gpu/test_runtime.cu - Tests of cuda_rewrite/runtime.cuh -------===//
//
// The umbrella header as rewritten code uses it. checkLaunch() reports a bad
// host launch, a device error and a pool overflow recorded in another
// translation unit, and clears them. Then launch aggregation end to end, at
// warp and block granularity as KLAP generates it: parent threads with
// random child grids (many empty) and block sizes scan their grid sizes,
// take the maximum block size, store their parameters in pool memory, and
// one thread launches a single aggregated child in which every block finds
// its original launch with findLaunch; the output must equal what the
// original one-launch-per-thread program writes.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/runtime.cuh"

#include "harness.cuh"

#include <string>

// From runtime_other_tu.cu.
void launchInOtherTu(cudaStream_t stream, cudaError_t error,
                     unsigned long long bytes);

namespace {

using namespace cuda_rewrite;

__global__ void emptyKernel() {}

//===----------------------------------------------------------------------===//
// Launch aggregation in miniature
//===----------------------------------------------------------------------===//

/// The original child's parameters, one entry per parent thread.
struct ChildParams {
  unsigned outputBase; ///< Where this child's output starts.
  unsigned value;      ///< Mixed into what it writes.
  unsigned threads;    ///< Its original block size.
  unsigned unused;     ///< Pads to kPoolAlignment: entry i is at 16 * i.
};
static_assert(sizeof(ChildParams) == kPoolAlignment);

/// What the original child writes: thread t of block b of the child of a
/// parent thread.
__host__ __device__ unsigned childValue(unsigned value, unsigned block,
                                        unsigned thread) {
  return value ^ (block * 2654435761u + thread);
}

/// The aggregated child: block b finds the launch it belongs to, its block
/// within that launch, and masks out threads beyond that launch's size.
__global__ void aggregatedChild(const unsigned *offsets,
                                const ChildParams *params, int launches,
                                unsigned *output) {
  const int launch = findLaunch(offsets, launches, blockIdx.x);
  const ChildParams p = params[launch];
  const unsigned block = blockIdx.x - offsets[launch];
  if (threadIdx.x < p.threads)
    output[p.outputBase + block * p.threads + threadIdx.x] =
        childValue(p.value, block, threadIdx.x);
}

/// One parent thread's original launch: child<<<grid, threads>>>.
struct ParentInput {
  unsigned grid;
  unsigned threads;
  unsigned outputBase;
  unsigned value;
};

/// Block granularity: every thread reaches the launch point (an empty launch
/// is a grid of zero blocks), the block scans and allocates together, and
/// thread 0 launches for all.
__global__ void blockParent(const ParentInput *inputs, unsigned *output) {
  const unsigned rank = linearThreadIndex();
  const ParentInput in = inputs[blockIdx.x * blockDim.x + rank];
  unsigned totalBlocks;
  const unsigned offset = blockExclusiveSumDynamic(in.grid, &totalBlocks);
  const unsigned maxThreads = blockMaxDynamic(in.threads);
  // Parameters: one 16-byte part per thread, contiguous in thread order.
  auto *params =
      static_cast<ChildParams *>(poolAllocateBlock(sizeof(ChildParams)));
  // Offsets: one array, allocated by thread 0 for the block.
  __shared__ unsigned *offsets;
  __shared__ ChildParams *paramsBase;
  if (rank == 0) {
    offsets =
        static_cast<unsigned *>(poolAllocate(blockDim.x * sizeof(unsigned)));
    paramsBase = params;
  }
  // `offsets` is visible to the block only after a barrier; then leave
  // together if the pool overflowed (checkPool() reports it).
  __syncthreads();
  if (!__syncthreads_and(offsets && params))
    return;
  offsets[rank] = offset;
  *params = {in.outputBase, in.value, in.threads, 0};
  __syncthreads();
  if (rank == 0 && totalBlocks > 0) {
    aggregatedChild<<<totalBlocks, maxThreads>>>(offsets, paramsBase,
                                                 blockDim.x, output);
    CUDA_REWRITE_DEVICE_CHECK_LAUNCH();
  }
}

/// Warp granularity with the launch under a condition: only the lanes that
/// reach it aggregate, through the active-lane scans and poolAllocateWarp.
__global__ void warpParent(const ParentInput *inputs, unsigned *output) {
  const ParentInput in = inputs[blockIdx.x * blockDim.x + threadIdx.x];
  if (in.grid == 0)
    return; // The original program launches nothing here.
  const unsigned mask = __activemask();
  unsigned totalBlocks;
  const unsigned offset = activeExclusiveSum(mask, in.grid, &totalBlocks);
  const unsigned maxThreads = activeMax(mask, in.threads);
  auto *params =
      static_cast<ChildParams *>(poolAllocateWarp(sizeof(ChildParams)));
  const unsigned leader = activeLeader(mask);
  const bool isLeader = cuda::ptx::get_sreg_laneid() == leader;
  unsigned *offsets = nullptr;
  if (isLeader)
    offsets =
        static_cast<unsigned *>(poolAllocate(__popc(mask) * sizeof(unsigned)));
  offsets = shuffle(mask, offsets, leader);
  ChildParams *paramsBase = shuffle(mask, params, leader);
  if (!__all_sync(mask, offsets && params))
    return; // The pool overflowed: checkPool() reports it.
  offsets[activeRank(mask)] = offset;
  *params = {in.outputBase, in.value, in.threads, 0};
  __syncwarp(mask); // Publishes the arrays to the leader.
  if (isLeader) {
    aggregatedChild<<<totalBlocks, maxThreads>>>(offsets, paramsBase,
                                                 __popc(mask), output);
    CUDA_REWRITE_DEVICE_CHECK_LAUNCH();
  }
}

enum class Granularity { Warp, Block };

void testAggregation(test::Suite &suite, Granularity granularity,
                     unsigned threadsPerBlock) {
  const unsigned blocks = suite.uniform(1, 16);
  suite.run(std::string(granularity == Granularity::Warp ? "warp" : "block") +
                "-granularity aggregation, " + std::to_string(blocks) +
                " parent blocks of " + std::to_string(threadsPerBlock),
            [&] {
              const unsigned parents = blocks * threadsPerBlock;
              std::vector<ParentInput> inputs(parents);
              unsigned outputSize = 0;
              for (ParentInput &in : inputs) {
                in.grid = suite.chance(0.3) ? 0 : suite.uniform(1u, 4u);
                in.threads = suite.uniform(1u, 64u);
                in.outputBase = outputSize;
                in.value = suite.uniform(0u, ~0u);
                outputSize += in.grid * in.threads;
              }
              std::vector<unsigned> want(outputSize);
              for (const ParentInput &in : inputs)
                for (unsigned b = 0; b < in.grid; ++b)
                  for (unsigned t = 0; t < in.threads; ++t)
                    want[in.outputBase + b * in.threads + t] =
                        childValue(in.value, b, t);

              test::DeviceArray<ParentInput> deviceInputs;
              test::DeviceArray<unsigned> output;
              CUDA_OK(deviceInputs.upload(inputs));
              CUDA_OK(output.allocatePoisoned(outputSize));
              cudaStream_t stream;
              CUDA_OK(cudaStreamCreate(&stream));
              CUDA_OK(resetPool(stream));
              if (granularity == Granularity::Warp)
                warpParent<<<blocks, threadsPerBlock, 0, stream>>>(
                    deviceInputs.get(), output.get());
              else
                blockParent<<<blocks, threadsPerBlock, 0, stream>>>(
                    deviceInputs.get(), output.get());
              const cudaError_t error = CUDA_REWRITE_CHECK_LAUNCH(stream);
              CUDA_OK(cudaStreamDestroy(stream));
              CUDA_OK(error);
              std::vector<unsigned> got;
              CUDA_OK(output.download(got));
              for (unsigned i = 0; i < outputSize; ++i)
                EXPECT(got[i] == want[i], "output[%u] = %#x, want %#x", i,
                       got[i], want[i]);
              std::printf("  %u parent threads, %u child threads\n", parents,
                          outputSize);
              return true;
            });
}

//===----------------------------------------------------------------------===//
// checkLaunch
//===----------------------------------------------------------------------===//

void testCheckLaunch(test::Suite &suite) {
  suite.run("checkLaunch: a clean launch", [] {
    CUDA_OK(resetPool());
    launchInOtherTu(nullptr, cudaSuccess, 64);
    CUDA_OK(CUDA_REWRITE_CHECK_LAUNCH(nullptr));
    return true;
  });

  suite.run("checkLaunch: a bad host launch configuration", [] {
    std::printf("  (an error report on stderr is expected)\n");
    emptyKernel<<<1, 4096>>>();
    // CUDA 13 reports this as cudaErrorInvalidValue, older releases as
    // cudaErrorInvalidConfiguration: what matters is that checkLaunch
    // returns the launch's own error.
    const cudaError_t launchError = cudaPeekAtLastError();
    const cudaError_t error = CUDA_REWRITE_CHECK_LAUNCH(nullptr);
    EXPECT(launchError != cudaSuccess && error == launchError,
           "launch error %s, checkLaunch returned %s",
           cudaGetErrorName(launchError), cudaGetErrorName(error));
    return true;
  });

  suite.run("checkLaunch: a device error from another translation unit", [] {
    std::printf("  (an error report on stderr is expected)\n");
    CUDA_OK(resetPool());
    launchInOtherTu(nullptr, cudaErrorLaunchPendingCountExceeded, 64);
    const cudaError_t error = CUDA_REWRITE_CHECK_LAUNCH(nullptr);
    EXPECT(error == cudaErrorLaunchPendingCountExceeded, "got %s",
           cudaGetErrorName(error));
    CUDA_OK(CUDA_REWRITE_CHECK_LAUNCH(nullptr)); // Cleared.
    return true;
  });

  suite.run("checkLaunch: a pool overflow in another translation unit", [] {
    std::printf("  (an error report on stderr is expected)\n");
    CUDA_OK(resetPool());
    launchInOtherTu(nullptr, cudaSuccess, 1ull << 30); // 32 GiB in all.
    const cudaError_t error = CUDA_REWRITE_CHECK_LAUNCH(nullptr);
    EXPECT(error == cudaErrorMemoryAllocation, "got %s",
           cudaGetErrorName(error));
    CUDA_OK(CUDA_REWRITE_CHECK_LAUNCH(nullptr)); // Cleared.
    return true;
  });

  suite.run("checkLaunch: a device error and an overflow, the error first", [] {
    std::printf("  (two error reports on stderr are expected)\n");
    CUDA_OK(resetPool());
    launchInOtherTu(nullptr, cudaErrorInvalidValue, 1ull << 30);
    const cudaError_t error = CUDA_REWRITE_CHECK_LAUNCH(nullptr);
    EXPECT(error == cudaErrorInvalidValue, "got %s", cudaGetErrorName(error));
    CUDA_OK(CUDA_REWRITE_CHECK_LAUNCH(nullptr)); // Both cleared.
    return true;
  });
}

} // namespace

int main() {
  test::Suite suite("test_runtime");
  testCheckLaunch(suite);
  for (unsigned threads : {32u, 128u, 100u, 1024u}) {
    testAggregation(suite, Granularity::Warp, threads);
    testAggregation(suite, Granularity::Block, threads);
  }
  return suite.finish();
}
