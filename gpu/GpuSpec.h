//===- GpuSpec.h - The target GPU's figures for the cost models -*- C++ -*-===//
//
// The cost models (systolic block sizes, fusion tiles, aggregation, pipeline
// models) need the target's SM count, register file, shared memory, L2 and
// bandwidth. `--gpu=<arch>` picks a built-in spec (datasheet figures);
// `--gpu-spec=<file.json>` loads one that gpu/probe/cuda-rewrite-probe.cu
// wrote on the GPU itself, with a measured copy bandwidth.
//
// JSON schema, version 1. The loader below and the probe both follow this
// list, key for key and in this order; keep them in step. Every key is
// required; unknown keys are ignored so that a newer probe's extra figures
// do not break an older tool. Integers are plain JSON integers.
//
//   schema_version                 1
//   name                           string, e.g. "NVIDIA H100 80GB HBM3"
//   arch                           string, "sm_<major><minor>", e.g. "sm_90"
//   source                         "measured" (the probe: device properties
//                                  plus a timed copy) or "datasheet"
//   sm_count                       streaming multiprocessors
//   warp_size                      threads per warp
//   max_threads_per_sm             resident threads per SM
//   max_threads_per_block
//   max_blocks_per_sm              resident blocks per SM
//   registers_per_sm               32-bit registers per SM
//   registers_per_block            32-bit registers one block may use
//   max_registers_per_thread
//   shared_memory_per_sm           bytes
//   shared_memory_per_block        bytes, without opt-in (48 KiB)
//   shared_memory_per_block_optin  bytes, with cudaFuncAttributeMax-
//                                  DynamicSharedMemorySize
//   shared_memory_reserved_per_block  bytes the driver takes from each
//                                  resident block's share (>= 0)
//   l2_cache_bytes
//   global_memory_bytes
//   sm_clock_khz                   peak SM clock
//   memory_clock_khz               peak memory clock
//   memory_bus_width_bits
//   copy_bandwidth_gbps            device-to-device cudaMemcpy, counting
//                                  bytes read plus bytes written, in 1e9 B/s
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_GPU_GPUSPEC_H
#define CUDA_REWRITE_GPU_GPUSPEC_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <string>

namespace cuda_rewrite {

/// The schema version this build reads and writes.
constexpr int64_t GpuSpecSchemaVersion = 1;

/// A GPU's figures, one member per schema key (same order).
struct GpuSpec {
  std::string Name;
  std::string Arch;
  std::string Source; ///< "measured" or "datasheet".
  uint64_t SmCount = 0;
  uint64_t WarpSize = 0;
  uint64_t MaxThreadsPerSm = 0;
  uint64_t MaxThreadsPerBlock = 0;
  uint64_t MaxBlocksPerSm = 0;
  uint64_t RegistersPerSm = 0;
  uint64_t RegistersPerBlock = 0;
  uint64_t MaxRegistersPerThread = 0;
  uint64_t SharedMemoryPerSm = 0;
  uint64_t SharedMemoryPerBlock = 0;
  uint64_t SharedMemoryPerBlockOptin = 0;
  uint64_t SharedMemoryReservedPerBlock = 0;
  uint64_t L2CacheBytes = 0;
  uint64_t GlobalMemoryBytes = 0;
  uint64_t SmClockKHz = 0;
  uint64_t MemoryClockKHz = 0;
  uint64_t MemoryBusWidthBits = 0;
  double CopyBandwidthGBps = 0;

  /// The DRAM's theoretical peak (double data rate), in 1e9 B/s. The copy
  /// bandwidth is what kernels can actually reach; prefer it.
  double peakMemoryBandwidthGBps() const {
    return 2.0 * double(MemoryClockKHz) * 1e3 * double(MemoryBusWidthBits) /
           8.0 / 1e9;
  }

  /// The physical lower bound for a kernel that moves \p Bytes through DRAM
  /// (reads plus writes), in milliseconds.
  double minMillisecondsToMove(uint64_t Bytes) const {
    return double(Bytes) / (CopyBandwidthGBps * 1e9) * 1e3;
  }

  bool operator==(const GpuSpec &Other) const;
  bool operator!=(const GpuSpec &Other) const { return !(*this == Other); }
};

/// The architectures that have a built-in spec, sorted.
llvm::SmallVector<llvm::StringRef, 4> builtinGpuArchs();

/// The built-in spec for `--gpu=<Arch>` (datasheet figures). An arch-specific
/// variant such as "sm_90a" gets its base arch's figures. Fails for an
/// unknown arch with a message listing the known ones.
llvm::Expected<GpuSpec> getBuiltinGpuSpec(llvm::StringRef Arch);

/// Parses a spec from JSON text. \p FileName only labels error messages,
/// which name the bad or missing key.
llvm::Expected<GpuSpec> parseGpuSpec(llvm::StringRef JSONText,
                                     llvm::StringRef FileName);

/// Reads and parses the spec file at \p Path (for `--gpu-spec`).
llvm::Expected<GpuSpec> loadGpuSpecFile(llvm::StringRef Path);

/// What the driver gives the cost models: the file if \p SpecFile is not
/// empty (it is measured, so it wins), else the built-in spec for \p Arch.
llvm::Expected<GpuSpec> selectGpuSpec(llvm::StringRef Arch,
                                      llvm::StringRef SpecFile);

/// Writes \p Spec as pretty-printed JSON in schema order, newline-terminated.
/// parseGpuSpec() reads it back to an equal spec.
void writeGpuSpec(llvm::raw_ostream &OS, const GpuSpec &Spec);

/// writeGpuSpec() into a string.
std::string gpuSpecToJSON(const GpuSpec &Spec);

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_GPU_GPUSPEC_H
