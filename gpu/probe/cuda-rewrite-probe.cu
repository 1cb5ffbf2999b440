//===- cuda-rewrite-probe.cu - Write this GPU's spec for --gpu-spec -------===//
//
// Run on the machine with the GPU; pass the file it writes to
// `cuda-rewrite --gpu-spec=<file.json>` on the machine with the tool:
//
//   nvcc -O2 -arch=sm_90 -o probe gpu/probe/cuda-rewrite-probe.cu
//   ./probe [--device=N] [out.json]          # no file: JSON on stdout
//
// The JSON follows the schema comment in gpu/GpuSpec.h, key for key and
// in the same order (keep them in step). The device's figures come from
// cudaGetDeviceProperties; the copy bandwidth is measured, because the
// datasheet's DRAM peak is never reached and the cost models and bench/
// compare kernels against what a copy actually achieves.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(Call) check((Call), #Call, __FILE__, __LINE__)

static void check(cudaError_t Err, const char *What, const char *File,
                  int Line) {
  if (Err == cudaSuccess)
    return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", File, Line, What,
               cudaGetErrorName(Err), cudaGetErrorString(Err));
  std::exit(1);
}

static int attribute(cudaDeviceAttr Attr, int Device) {
  int Value = 0;
  CHECK(cudaDeviceGetAttribute(&Value, Attr, Device));
  return Value;
}

/// Median device-to-device cudaMemcpy bandwidth in 1e9 B/s, counting bytes
/// read plus bytes written. A large copy (1 GiB, far beyond L2) measures
/// DRAM, not cache; warm-up copies take page mapping and clock ramp-up out
/// of the timed runs.
static double measureCopyGBps(size_t &Bytes) {
  const int WarmUp = 3, Reps = 21;
  size_t Free = 0, Total = 0;
  CHECK(cudaMemGetInfo(&Free, &Total));
  // Two buffers plus headroom; smaller GPUs get a smaller, still L2-busting
  // copy.
  while (Bytes > (64u << 20) && 2 * Bytes + (256u << 20) > Free)
    Bytes /= 2;

  void *Src = nullptr, *Dst = nullptr;
  CHECK(cudaMalloc(&Src, Bytes));
  CHECK(cudaMalloc(&Dst, Bytes));
  CHECK(cudaMemset(Src, 0x5a, Bytes));
  CHECK(cudaMemset(Dst, 0, Bytes));
  cudaEvent_t Start, Stop;
  CHECK(cudaEventCreate(&Start));
  CHECK(cudaEventCreate(&Stop));

  for (int I = 0; I < WarmUp; ++I)
    CHECK(cudaMemcpyAsync(Dst, Src, Bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaDeviceSynchronize());

  std::vector<float> Ms;
  for (int I = 0; I < Reps; ++I) {
    CHECK(cudaEventRecord(Start));
    CHECK(cudaMemcpyAsync(Dst, Src, Bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(Stop));
    CHECK(cudaEventSynchronize(Stop));
    float Elapsed = 0;
    CHECK(cudaEventElapsedTime(&Elapsed, Start, Stop));
    Ms.push_back(Elapsed);
  }
  std::sort(Ms.begin(), Ms.end());
  double MedianMs = Ms[Ms.size() / 2];

  CHECK(cudaEventDestroy(Start));
  CHECK(cudaEventDestroy(Stop));
  CHECK(cudaFree(Src));
  CHECK(cudaFree(Dst));
  return 2.0 * double(Bytes) / (MedianMs * 1e-3) / 1e9;
}

/// A JSON string literal (device names are ASCII, but be safe).
static std::string quote(const char *S) {
  std::string Out = "\"";
  for (; *S; ++S) {
    unsigned char C = *S;
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += char(C);
    } else if (C < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof Buf, "\\u%04x", C);
      Out += Buf;
    } else {
      Out += char(C);
    }
  }
  return Out + "\"";
}

int main(int argc, char **argv) {
  int Device = 0;
  const char *OutPath = nullptr;
  for (int I = 1; I < argc; ++I) {
    if (!std::strncmp(argv[I], "--device=", 9)) {
      Device = std::atoi(argv[I] + 9);
    } else if (argv[I][0] == '-' || OutPath) {
      std::fprintf(stderr, "usage: %s [--device=N] [out.json]\n", argv[0]);
      return 2;
    } else {
      OutPath = argv[I];
    }
  }

  CHECK(cudaSetDevice(Device));
  cudaDeviceProp P;
  CHECK(cudaGetDeviceProperties(&P, Device));
  size_t CopyBytes = size_t(1) << 30;
  double CopyGBps = measureCopyGBps(CopyBytes);

  // Key order and names: the schema in gpu/GpuSpec.h.
  struct Field {
    const char *Key;
    unsigned long long Value;
  };
  const Field Ints[] = {
      {"sm_count", (unsigned long long)P.multiProcessorCount},
      {"warp_size", (unsigned long long)P.warpSize},
      {"max_threads_per_sm", (unsigned long long)P.maxThreadsPerMultiProcessor},
      {"max_threads_per_block", (unsigned long long)P.maxThreadsPerBlock},
      {"max_blocks_per_sm", (unsigned long long)P.maxBlocksPerMultiProcessor},
      {"registers_per_sm", (unsigned long long)P.regsPerMultiprocessor},
      {"registers_per_block", (unsigned long long)P.regsPerBlock},
      // Not a device property: the ISA's limit since sm_35.
      {"max_registers_per_thread", 255},
      {"shared_memory_per_sm", P.sharedMemPerMultiprocessor},
      {"shared_memory_per_block", P.sharedMemPerBlock},
      {"shared_memory_per_block_optin", P.sharedMemPerBlockOptin},
      {"shared_memory_reserved_per_block", P.reservedSharedMemPerBlock},
      {"l2_cache_bytes", (unsigned long long)P.l2CacheSize},
      {"global_memory_bytes", P.totalGlobalMem},
      // CUDA 13 dropped the clock fields from cudaDeviceProp.
      {"sm_clock_khz",
       (unsigned long long)attribute(cudaDevAttrClockRate, Device)},
      {"memory_clock_khz",
       (unsigned long long)attribute(cudaDevAttrMemoryClockRate, Device)},
      {"memory_bus_width_bits", (unsigned long long)P.memoryBusWidth},
  };

  std::string Json = "{\n  \"schema_version\": 1,\n";
  Json += "  \"name\": " + quote(P.name) + ",\n";
  Json +=
      "  \"arch\": \"sm_" + std::to_string(P.major * 10 + P.minor) + "\",\n";
  Json += "  \"source\": \"measured\",\n";
  for (const Field &F : Ints)
    Json +=
        "  \"" + std::string(F.Key) + "\": " + std::to_string(F.Value) + ",\n";
  char Bandwidth[64];
  std::snprintf(Bandwidth, sizeof Bandwidth, "%.1f", CopyGBps);
  Json += "  \"copy_bandwidth_gbps\": " + std::string(Bandwidth) + "\n}\n";

  double PeakGBps = 2.0 * attribute(cudaDevAttrMemoryClockRate, Device) * 1e3 *
                    P.memoryBusWidth / 8 / 1e9;
  std::fprintf(stderr,
               "probe: %s (sm_%d%d), %d SMs; copy of %zu MiB: %.1f GB/s "
               "(read+write), %.0f%% of the %.0f GB/s DRAM peak\n",
               P.name, P.major, P.minor, P.multiProcessorCount, CopyBytes >> 20,
               CopyGBps, 100.0 * CopyGBps / PeakGBps, PeakGBps);

  FILE *Out = OutPath ? std::fopen(OutPath, "w") : stdout;
  if (!Out) {
    std::perror(OutPath);
    return 1;
  }
  bool Ok = std::fputs(Json.c_str(), Out) >= 0;
  Ok = (OutPath ? std::fclose(Out) : std::fflush(Out)) == 0 && Ok;
  if (!Ok) {
    std::fprintf(stderr, "probe: cannot write %s\n",
                 OutPath ? OutPath : "stdout");
    return 1;
  }
  return 0;
}
