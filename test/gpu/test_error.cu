//===- test/gpu/test_error.cu - Tests of cuda_rewrite/error.cuh -----------===//
//
// Host checks format file:line; device code records its first error in
// sticky state that getLastDeviceError() returns and clears; real failed
// device-side launches (an invalid configuration, and more pending launches
// than the device runtime holds) are recorded and none is lost: every launch
// either ran its child or reported an error.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/error.cuh"

#include "harness.cuh"

#include <algorithm>
#include <set>
#include <string>

namespace {

using cuda_rewrite::getLastDeviceError;
using cuda_rewrite::peekAtLastDeviceError;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Threads with codes[i] != 0 record that error.
__global__ void recordKernel(const int *codes, std::size_t count) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < count)
    cuda_rewrite::recordDeviceError(static_cast<cudaError_t>(codes[i]));
}

/// Records an error through the macro and stores the macro's line.
__global__ void recordAtLineKernel(int *line) {
  *line = (CUDA_REWRITE_DEVICE_CHECK(cudaErrorNotReady), __LINE__);
}

__global__ void childKernel(unsigned *ran) { atomicAdd(ran, 1u); }

/// Launches a child with more threads per block than any GPU allows.
__global__ void invalidLaunchKernel(unsigned *ran, int *code) {
  childKernel<<<1, 4096>>>(ran);
  *code = CUDA_REWRITE_DEVICE_CHECK_LAUNCH();
}

/// Every thread tail-launches a child: none can start before this grid ends,
/// so past the pending-launch limit (2048 by default) launches fail.
__global__ void manyLaunchesKernel(unsigned *ran, int *codes) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  childKernel<<<1, 1, 0, cudaStreamTailLaunch>>>(ran);
  codes[i] = CUDA_REWRITE_DEVICE_CHECK_LAUNCH();
}

void testHostChecks(test::Suite &suite) {
  suite.run("formatError gives file:line, the error name and number", [] {
    const std::string text = cuda_rewrite::formatError(
        cudaErrorInvalidValue, "cudaMalloc(&p, n)", "some/file.cu", 42);
    EXPECT(contains(text, "some/file.cu:42: error: cudaMalloc(&p, n)") &&
               contains(text, "cudaErrorInvalidValue (1)"),
           "got \"%s\"", text.c_str());
    return true;
  });

  suite.run("CUDA_REWRITE_CHECK yields the error it reports", [] {
    EXPECT(CUDA_REWRITE_CHECK(cudaSuccess) == cudaSuccess, "success changed");
    std::printf(
        "  (an 'invalid device ordinal' report on stderr is expected)\n");
    const cudaError_t error = CUDA_REWRITE_CHECK(cudaSetDevice(-1));
    EXPECT(error == cudaErrorInvalidDevice, "got %s", cudaGetErrorName(error));
    CUDA_OK(cudaSetDevice(0));
    cudaGetLastError();       // The failed call above set the last error.
    if (error == cudaSuccess) // Never: shows that the fatal variant compiles.
      CUDA_REWRITE_CHECK_FATAL(cudaSuccess);
    return true;
  });
}

void testRecording(test::Suite &suite) {
  suite.run("no device error before any is recorded", [] {
    std::string message;
    const cudaError_t error = getLastDeviceError(nullptr, &message);
    EXPECT(error == cudaSuccess, "got %s: %s", cudaGetErrorName(error),
           message.c_str());
    return true;
  });

  suite.run("recording cudaSuccess records nothing", [&] {
    const std::vector<int> codes(4096, cudaSuccess);
    test::DeviceArray<int> deviceCodes;
    CUDA_OK(deviceCodes.upload(codes));
    recordKernel<<<16, 256>>>(deviceCodes.get(), codes.size());
    LAUNCH_OK();
    CUDA_OK(getLastDeviceError());
    return true;
  });

  suite.run(
      "the first of many errors recorded at once is kept, then cleared", [&] {
        // A few random threads record one of several errors.
        const std::vector<cudaError_t> kinds = {
            cudaErrorInvalidValue, cudaErrorNotReady,
            cudaErrorLaunchPendingCountExceeded, cudaErrorInvalidDevice};
        const std::size_t count = 64 * 256;
        std::vector<int> codes(count, cudaSuccess);
        std::set<int> recorded;
        const int recorders = suite.uniform(1, 50);
        for (int k = 0; k < recorders; ++k) {
          const cudaError_t kind =
              kinds[suite.uniform<std::size_t>(0, kinds.size() - 1)];
          codes[suite.uniform<std::size_t>(0, count - 1)] = kind;
        }
        for (int code : codes)
          if (code != cudaSuccess)
            recorded.insert(code);
        test::DeviceArray<int> deviceCodes;
        CUDA_OK(deviceCodes.upload(codes));
        recordKernel<<<64, 256>>>(deviceCodes.get(), count);
        LAUNCH_OK();

        std::string message;
        const cudaError_t peeked = peekAtLastDeviceError(nullptr, &message);
        EXPECT(recorded.count(peeked), "peeked %s, not one recorded",
               cudaGetErrorName(peeked));
        EXPECT(contains(message, cudaGetErrorName(peeked)),
               "message \"%s\" does not name the error", message.c_str());
        const cudaError_t again = peekAtLastDeviceError(nullptr, &message);
        EXPECT(again == peeked, "peek cleared the error: %s then %s",
               cudaGetErrorName(peeked), cudaGetErrorName(again));
        const cudaError_t taken = getLastDeviceError(nullptr, &message);
        EXPECT(taken == peeked, "got %s after peeking %s",
               cudaGetErrorName(taken), cudaGetErrorName(peeked));
        const cudaError_t after = getLastDeviceError(nullptr, &message);
        EXPECT(after == cudaSuccess, "not cleared: %s",
               cudaGetErrorName(after));
        return true;
      });

  suite.run("CUDA_REWRITE_DEVICE_CHECK records the source line", [] {
    test::DeviceArray<int> line;
    CUDA_OK(line.allocatePoisoned(1));
    recordAtLineKernel<<<1, 1>>>(line.get());
    LAUNCH_OK();
    std::vector<int> gotLine;
    CUDA_OK(line.download(gotLine));
    std::string message;
    const cudaError_t error = getLastDeviceError(nullptr, &message);
    EXPECT(error == cudaErrorNotReady, "got %s", cudaGetErrorName(error));
    EXPECT(contains(message, "line " + std::to_string(gotLine[0])),
           "message \"%s\" lacks line %d", message.c_str(), gotLine[0]);
    return true;
  });
}

void testDeviceLaunches(test::Suite &suite) {
  suite.run(
      "a device-side launch with an invalid configuration is recorded", [] {
        test::DeviceArray<unsigned> ran;
        test::DeviceArray<int> code;
        CUDA_OK(ran.allocate(1));
        CUDA_OK(cudaMemset(ran.get(), 0, sizeof(unsigned)));
        CUDA_OK(code.allocatePoisoned(1));
        invalidLaunchKernel<<<1, 1>>>(ran.get(), code.get());
        LAUNCH_OK();
        std::vector<int> gotCode;
        std::vector<unsigned> gotRan;
        CUDA_OK(code.download(gotCode));
        CUDA_OK(ran.download(gotRan));
        EXPECT(gotCode[0] != cudaSuccess && gotRan[0] == 0,
               "launch returned %d and the child ran %u times", gotCode[0],
               gotRan[0]);
        std::string message;
        const cudaError_t error = getLastDeviceError(nullptr, &message);
        EXPECT(error == gotCode[0], "host read %s, the launch failed with %d",
               cudaGetErrorName(error), gotCode[0]);
        std::printf("  recorded: %s\n", message.c_str());
        return true;
      });

  suite.run("launches past the pending-launch limit: each one either ran or "
            "was recorded as failed",
            [&] {
              const unsigned blocks = 64, threads = 256; // 16384 launches.
              const unsigned launches = blocks * threads;
              test::DeviceArray<unsigned> ran;
              test::DeviceArray<int> codes;
              CUDA_OK(ran.allocate(1));
              CUDA_OK(cudaMemset(ran.get(), 0, sizeof(unsigned)));
              CUDA_OK(codes.allocatePoisoned(launches));
              manyLaunchesKernel<<<blocks, threads>>>(ran.get(), codes.get());
              LAUNCH_OK();
              std::vector<int> gotCodes;
              std::vector<unsigned> gotRan;
              CUDA_OK(codes.download(gotCodes));
              CUDA_OK(ran.download(gotRan));
              std::set<int> kinds;
              unsigned failed = 0;
              for (int code : gotCodes)
                if (code != cudaSuccess) {
                  ++failed;
                  kinds.insert(code);
                }
              std::printf("  %u of %u launches failed, %u children ran\n",
                          failed, launches, gotRan[0]);
              EXPECT(gotRan[0] + failed == launches,
                     "%u children ran and %u launches failed, of %u", gotRan[0],
                     failed, launches);
              EXPECT(failed > 0, "no launch failed, so nothing was tested");
              std::string message;
              const cudaError_t error = getLastDeviceError(nullptr, &message);
              EXPECT(kinds.count(error), "host read %s, not a launch's error",
                     cudaGetErrorName(error));
              std::printf("  recorded: %s\n", message.c_str());
              if (error != cudaErrorLaunchPendingCountExceeded)
                std::printf("  note: expected cudaErrorLaunchPendingCount"
                            "Exceeded (69)\n");
              return true;
            });
}

} // namespace

int main() {
  test::Suite suite("test_error");
  testHostChecks(suite);
  testRecording(suite);
  testDeviceLaunches(suite);
  return suite.finish();
}
