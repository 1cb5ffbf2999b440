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

#include <algorithm>
#include <string>
#include <vector>

namespace cuda_rewrite {
namespace pipeline {

/// SM partitions, each a green context with streams of its own.
class GreenPartitions {
public:
  /// SMs per unit of a split: Hopper partitions in steps of 8.
  static constexpr unsigned kUnitSms = 8;

  GreenPartitions() = default;
  GreenPartitions(const GreenPartitions &) = delete;
  GreenPartitions &operator=(const GreenPartitions &) = delete;

  /// Splits the device's SMs into partitions of about \p smCounts[i] SMs
  /// (whole units of the driver's smallest group, at least one; the last
  /// partition takes what is left) with \p streamCounts[i] streams each.
  /// False (with \p why) where the driver cannot.
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
    // One split into equal units; partitions are unions of units (resources
    // combined into one descriptor must come from the same split).
    unsigned units = 0;
    if (!ok(split(nullptr, &units, &all, nullptr, 0, kUnitSms),
            "cuDevSmResourceSplitByCount", why))
      return false;
    std::vector<CUdevResource> unit(units);
    CUdevResource remaining{};
    if (!ok(split(unit.data(), &units, &all, &remaining, 0, kUnitSms),
            "cuDevSmResourceSplitByCount", why))
      return false;
    size_t parts = smCounts.size();
    if (units < parts) {
      why = "fewer SM units than groups";
      return false;
    }
    unsigned next = 0;
    for (size_t i = 0; i < parts; ++i) {
      unsigned size = unit[0].sm.smCount;
      unsigned want = std::max(1u, (smCounts[i] + size / 2) / size);
      unsigned left = units - next - static_cast<unsigned>(parts - 1 - i);
      unsigned take = i + 1 == parts ? units - next : std::min(want, left);
      std::vector<CUdevResource> mine(unit.begin() + next,
                                      unit.begin() + next + take);
      next += take;
      if (i + 1 == parts && remaining.sm.smCount)
        mine.push_back(remaining);
      CUdevResourceDesc desc{};
      CUgreenCtx context{};
      if (!ok(generateDesc(&desc, mine.data(),
                           static_cast<unsigned>(mine.size())),
              "cuDevResourceGenerateDesc", why) ||
          !ok(createContext(&context, desc, device,
                            CU_GREEN_CTX_DEFAULT_STREAM),
              "cuGreenCtxCreate", why))
        return false;
      contexts.push_back(context);
      int count = 0;
      for (const CUdevResource &r : mine)
        count += static_cast<int>(r.sm.smCount);
      sms.push_back(count);
      streams.emplace_back();
      for (int s = 0; s < streamCounts[i]; ++s) {
        CUstream stream{};
        if (!ok(createStream(&stream, context, CU_STREAM_NON_BLOCKING, 0),
                "cuGreenCtxStreamCreate", why))
          return false;
        streams.back().push_back(reinterpret_cast<cudaStream_t>(stream));
      }
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
