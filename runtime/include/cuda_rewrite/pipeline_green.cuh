//===- cuda_rewrite/pipeline_green.cuh - SM partitions ---------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Green contexts (driver API, CUDA 12.4 and later) as the other way to bind
// a pipeline's stage groups to their own SMs (`green on` in a configuration,
// or CUDA_REWRITE_PIPELINE_GREEN=1): each group's kernels run in streams of
// a green context that owns that many SMs, so the hardware, not the %smid
// filter of pipeline_queue.cuh, keeps them apart. Partitions come in steps
// of 8 SMs on Hopper. The driver's entry points are found at run time
// (cudaGetDriverEntryPointByVersion), so programs need no -lcuda; where
// anything fails the runner falls back to the %smid filter and says so.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_PIPELINE_GREEN_CUH
#define CUDA_REWRITE_PIPELINE_GREEN_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace cuda_rewrite {
namespace pipeline {

/// SM partitions, each a green context with streams of its own.
class GreenPartitions {
public:
  GreenPartitions() = default;
  GreenPartitions(const GreenPartitions &) = delete;
  GreenPartitions &operator=(const GreenPartitions &) = delete;

  /// Splits the device's SMs into partitions of at least \p smCounts[i] SMs
  /// (rounded as the driver requires; the last takes what is left) with
  /// \p streams[i] streams each. False (with \p why) where the driver cannot.
  bool create(const std::vector<int> &smCounts,
              const std::vector<int> &streamCounts, std::string &why) {
    if (!loadEntryPoints(why))
      return false;
    int device = 0;
    cudaGetDevice(&device);
    CUdevResource all{};
    if (!ok(getDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM),
            "cuDeviceGetDevResource", why))
      return false;
    CUdevResource rest = all;
    for (size_t i = 0; i < smCounts.size(); ++i) {
      CUdevResource part{}, remaining{};
      unsigned groups = 1;
      bool last = i + 1 == smCounts.size();
      if (last) {
        part = rest;
      } else if (!ok(split(&part, &groups, &rest, &remaining, 0,
                           static_cast<unsigned>(smCounts[i])),
                     "cuDevSmResourceSplitByCount", why)) {
        return false;
      }
      CUdevResourceDesc desc{};
      CUgreenCtx context{};
      if (!ok(generateDesc(&desc, &part, 1), "cuDevResourceGenerateDesc",
              why) ||
          !ok(createContext(&context, desc, device,
                            CU_GREEN_CTX_DEFAULT_STREAM),
              "cuGreenCtxCreate", why))
        return false;
      contexts.push_back(context);
      sms.push_back(static_cast<int>(part.sm.smCount));
      streams.emplace_back();
      for (int s = 0; s < streamCounts[i]; ++s) {
        CUstream stream{};
        if (!ok(createStream(&stream, context, CU_STREAM_NON_BLOCKING, 0),
                "cuGreenCtxStreamCreate", why))
          return false;
        streams.back().push_back(reinterpret_cast<cudaStream_t>(stream));
      }
      rest = remaining;
    }
    return true;
  }

  /// SMs of partition \p i, and its streams.
  int smCount(size_t i) const { return sms[i]; }
  cudaStream_t stream(size_t i, size_t s) const { return streams[i][s]; }
  bool empty() const { return contexts.empty(); }

private:
  using GetDevResource = CUresult (*)(CUdevice, CUdevResource *,
                                      CUdevResourceType);
  using Split = CUresult (*)(CUdevResource *, unsigned *,
                             const CUdevResource *, CUdevResource *, unsigned,
                             unsigned);
  using GenerateDesc = CUresult (*)(CUdevResourceDesc *, CUdevResource *,
                                    unsigned);
  using CreateContext = CUresult (*)(CUgreenCtx *, CUdevResourceDesc,
                                     CUdevice, unsigned);
  using CreateStream = CUresult (*)(CUstream *, CUgreenCtx, unsigned, int);

  template <class F>
  static bool entryPoint(const char *name, F &function, std::string &why) {
    void *address = nullptr;
    cudaDriverEntryPointQueryResult found{};
    // The ABI of this toolkit's headers, which declared the types used.
    if (cudaGetDriverEntryPointByVersion(name, &address, CUDART_VERSION,
                                         cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !address) {
      why = std::string("the driver has no ") + name;
      return false;
    }
    function = reinterpret_cast<F>(address);
    return true;
  }

  bool loadEntryPoints(std::string &why) {
    return entryPoint("cuDeviceGetDevResource", getDevResource, why) &&
           entryPoint("cuDevSmResourceSplitByCount", split, why) &&
           entryPoint("cuDevResourceGenerateDesc", generateDesc, why) &&
           entryPoint("cuGreenCtxCreate", createContext, why) &&
           entryPoint("cuGreenCtxStreamCreate", createStream, why);
  }

  static bool ok(CUresult result, const char *what, std::string &why) {
    if (result == CUDA_SUCCESS)
      return true;
    why = std::string(what) + " failed with CUresult " +
          std::to_string(static_cast<int>(result));
    return false;
  }

  GetDevResource getDevResource = nullptr;
  Split split = nullptr;
  GenerateDesc generateDesc = nullptr;
  CreateContext createContext = nullptr;
  CreateStream createStream = nullptr;
  std::vector<CUgreenCtx> contexts;
  std::vector<int> sms;
  std::vector<std::vector<cudaStream_t>> streams;
};

} // namespace pipeline
} // namespace cuda_rewrite

#endif // CUDA_REWRITE_PIPELINE_GREEN_CUH
