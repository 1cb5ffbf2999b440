//===- dry_run.cpp - The CUDA pipelines' host side, without a GPU ---------===//
//
// Runs the host side of every AOT-compiled CUDA pipeline (build-bench/
// halide/cuda/<name>.a) on a machine without a GPU, against a stand-in for
// the CUDA driver API defined below (Halide's runtime looks its cu*
// functions up in the process first: halide_cuda_get_symbol). Kernels are
// not run; everything else is: the pipeline's argument and bounds checks
// (a buffer of the wrong size, a bound_extent too small, a constraint), its
// allocation of intermediates, and every kernel launch, whose grid, block
// and shared memory are printed and checked against the GPU's limits
// (1024 threads and 48 KiB of shared memory per block, grid y and z below
// 65536). It checks what the host check (the CPU build) cannot: the GPU
// schedule's own runtime conditions, at the sizes given.
//
//   build.sh --dry-run          # builds it and runs it at the default sizes
//   build-bench/halide/dry_run [NAME...]
//
// The buffers are the drivers' (same shapes, same crops), on fake device
// addresses.
//
//===----------------------------------------------------------------------===//

#include "HalideRuntime.h"
#include "HalideRuntimeCuda.h"

#include "bilateral.h"
#include "blur.h"
#include "camera.h"
#include "harris.h"
#include "interpolate.h"
#include "pyramid.h"
#include "unsharp.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

//===-- A stand-in for libcuda --------------------------------------------===//

namespace {

int Failures = 0;
int Launches = 0;
bool Quiet = false; // Launches are checked, not printed.
uint64_t NextAddress = 0x100000000ull;
uint64_t AllocatedBytes = 0;

void fail(const std::string &Message) {
  std::printf("  FAIL: %s\n", Message.c_str());
  ++Failures;
}

} // namespace

extern "C" {
#define STUB(Name, ...)                                                        \
  __attribute__((visibility("default"))) int Name(__VA_ARGS__)

STUB(cuInit, unsigned) { return 0; }
STUB(cuDeviceGetCount, int *N) { return *N = 1, 0; }
STUB(cuDeviceGet, int *D, int) { return *D = 0, 0; }
STUB(cuDeviceGetAttribute, int *V, int Attribute, int) {
  // 75, 76: compute capability major, minor (an H100's 9.0).
  *V = Attribute == 75 ? 9 : Attribute == 76 ? 0 : 1024;
  return 0;
}
STUB(cuDeviceGetName, char *Name, int Len, int) {
  std::snprintf(Name, size_t(Len), "dry run");
  return 0;
}
STUB(cuDeviceTotalMem_v2, size_t *Bytes, int) {
  return *Bytes = size_t(80) << 30, 0;
}
STUB(cuCtxCreate_v2, void **Ctx, unsigned, int) {
  static int Context;
  return *Ctx = &Context, 0;
}
STUB(cuCtxDestroy_v2, void *) { return 0; }
STUB(cuCtxGetApiVersion, void *, unsigned *V) { return *V = 12000, 0; }
STUB(cuCtxGetDevice, int *D) { return *D = 0, 0; }
STUB(cuCtxPushCurrent_v2, void *) { return 0; }
STUB(cuCtxPopCurrent_v2, void **Ctx) {
  if (Ctx)
    *Ctx = nullptr;
  return 0;
}
STUB(cuCtxSynchronize) { return 0; }
STUB(cuStreamSynchronize, void *) { return 0; }
STUB(cuProfilerStop) { return 0; }
STUB(cuModuleLoadData, void **Module, const void *) {
  static int M;
  return *Module = &M, 0;
}
STUB(cuModuleLoadDataEx, void **Module, const void *, unsigned, void *,
     void *) {
  static int M;
  return *Module = &M, 0;
}
STUB(cuModuleUnload, void *) { return 0; }
STUB(cuModuleGetFunction, void **Function, void *, const char *Name) {
  static std::map<std::string, std::string> Names;
  *Function = &(Names[Name] = Name);
  return 0;
}
STUB(cuMemAlloc_v2, uint64_t *Ptr, size_t Bytes) {
  *Ptr = NextAddress;
  NextAddress += (Bytes + 0xffff) & ~uint64_t(0xffff);
  AllocatedBytes += Bytes;
  return 0;
}
STUB(cuMemFree_v2, uint64_t) { return 0; }
STUB(cuMemcpyHtoD_v2, uint64_t, const void *, size_t) { return 0; }
STUB(cuMemcpyDtoH_v2, void *, uint64_t, size_t) { return 0; }
STUB(cuMemcpyDtoD_v2, uint64_t, uint64_t, size_t) { return 0; }
STUB(cuMemcpyHtoDAsync_v2, uint64_t, const void *, size_t, void *) { return 0; }
STUB(cuMemcpyDtoHAsync_v2, void *, uint64_t, size_t, void *) { return 0; }
STUB(cuMemcpyDtoDAsync_v2, uint64_t, uint64_t, size_t, void *) { return 0; }
STUB(cuMemcpy3D_v2, const void *) { return 0; }
STUB(cuPointerGetAttribute, void *, int, uint64_t) { return 0; }
STUB(cuLaunchKernel, void *Function, unsigned GX, unsigned GY, unsigned GZ,
     unsigned BX, unsigned BY, unsigned BZ, unsigned Shared, void *, void **,
     void **) {
  const std::string &Name = *static_cast<std::string *>(Function);
  ++Launches;
  if (!Quiet)
    std::printf("  launch %-44s grid %5u x %4u x %2u  block %4u x %2u x %u  "
              "shared %6u B\n",
              Name.c_str(), GX, GY, GZ, BX, BY, BZ, Shared);
  if (!GX || !GY || !GZ)
    fail(Name + ": empty grid");
  if (GY > 65535 || GZ > 65535)
    fail(Name + ": grid y or z above 65535");
  if (BX * BY * BZ > 1024 || BZ > 64)
    fail(Name + ": more than 1024 threads per block");
  if (Shared > 48 * 1024)
    fail(Name + ": more than 48 KiB of shared memory per block");
  return 0;
}
#undef STUB
}

//===-- The pipelines' buffers --------------------------------------------===//

namespace {

std::string LastError;

void errorHandler(void *, const char *Message) { LastError = Message; }

/// A float buffer on a fake device address: dims x first (min, extent,
/// stride).
struct FakeBuffer {
  std::vector<halide_dimension_t> Dims;
  halide_buffer_t Buf;
  explicit FakeBuffer(std::vector<halide_dimension_t> D) : Dims(std::move(D)) {
    std::memset(&Buf, 0, sizeof Buf);
    Buf.type = halide_type_of<float>();
    Buf.dimensions = int(Dims.size());
    Buf.dim = Dims.data();
    int64_t Elements = 1;
    for (const halide_dimension_t &Dim : Dims)
      Elements += int64_t(Dim.extent - 1) * Dim.stride;
    halide_cuda_wrap_device_ptr(nullptr, &Buf, NextAddress);
    NextAddress += (uint64_t(Elements) * 4 + 0xffff) & ~uint64_t(0xffff);
  }
  ~FakeBuffer() { halide_cuda_detach_device_ptr(nullptr, &Buf); }
  operator halide_buffer_t *() { return &Buf; }
};

std::vector<halide_dimension_t> planar(int W, int H, int C = 0) {
  std::vector<halide_dimension_t> D = {{0, W, 1}, {0, H, W}};
  if (C)
    D.push_back({0, C, W * H});
  return D;
}

/// Runs the pipeline twice, as the drivers do: the second run reuses the
/// first one's allocations (halide_reuse_device_allocations).
void run(const char *Name, int W, int H, const std::function<int()> &Call) {
  std::printf("%s %d x %d:\n", Name, W, H);
  for (int Run = 0; Run < 2; ++Run) {
    LastError.clear();
    AllocatedBytes = 0;
    Quiet = Run > 0;
    const int Before = Launches;
    const int Err = Call();
    if (Err)
      fail(std::string(Name) + " returned " + std::to_string(Err) + ": " +
           LastError);
    std::printf("  run %d: %d kernels, %.1f MB of device memory allocated\n",
                Run + 1, Launches - Before, double(AllocatedBytes) / 1e6);
  }
}

} // namespace

int main(int argc, char **argv) {
  halide_set_error_handler(errorHandler);
  halide_reuse_device_allocations(nullptr, true);
  auto Wanted = [&](const char *Name) {
    if (argc < 2)
      return true;
    for (int I = 1; I < argc; ++I)
      if (!std::strcmp(argv[I], Name))
        return true;
    return false;
  };
  // The samples' default sizes, odd ones, and the smallest the drivers
  // accept.
  for (auto [W, H] : {std::pair{6400, 4800}, std::pair{6401, 4799}, std::pair{128, 32}})
    if (Wanted("blur")) {
      FakeBuffer In(planar(W, H)), Out(planar(W, H));
      run("blur", W, H, [&] { return blur(In, Out); });
    }
  for (auto [W, H] : {std::pair{4256, 2832}, std::pair{4255, 2833}, std::pair{128, 32}})
    if (Wanted("unsharp")) {
      FakeBuffer In(planar(W, H, 3)), Out(planar(W, H, 3));
      run("unsharp", W, H, [&] { return unsharp(In, Out); });
    }
  for (auto [W, H] : {std::pair{4256, 2832}, std::pair{4257, 2833}, std::pair{36, 36}})
    if (Wanted("harris")) {
      FakeBuffer In(planar(W, H)),
          Out({{2, W - 4, 1}, {2, H - 4, W}});
      run("harris", W, H, [&] { return harris(In, Out); });
    }
  for (auto [W, H] : {std::pair{2560, 1536}, std::pair{2561, 1537}, std::pair{32, 8}})
    if (Wanted("bilateral")) {
      FakeBuffer In(planar(W, H)), Out(planar(W, H));
      run("bilateral", W, H, [&] { return bilateral(In, Out); });
    }
  for (auto [W, H] : {std::pair{3840, 2160}, std::pair{3839, 2161},
                      std::pair{17, 9}, std::pair{1, 1}})
    if (Wanted("pyramid")) {
      FakeBuffer A(planar(W, H, 3)), B(planar(W, H, 3)), M(planar(W, H)),
          Out(planar(W, H, 3));
      run("pyramid", W, H, [&] { return pyramid(A, B, M, Out); });
    }
  for (auto [W, H] : {std::pair{2560, 1536}, std::pair{2561, 1537},
                      std::pair{3, 5}, std::pair{1, 1}})
    if (Wanted("interpolate")) {
      FakeBuffer In(planar(W, H, 4)), Out(planar(W, H, 3));
      run("interpolate", W, H, [&] { return interpolate(In, Out); });
    }
  for (auto [W, H] : {std::pair{2592, 1968}, std::pair{2594, 1970},
                      std::pair{64, 56}})
    if (Wanted("camera")) {
      const int OW = (W - 32) / 32 * 32, OH = (H - 24) / 32 * 32;
      FakeBuffer Raw(planar(W, H)), Matrix({{0, 4, 1}, {0, 3, 4}}),
          Curve({{0, 1024, 1}}), Out(planar(OW, OH, 3));
      run("camera", W, H, [&] { return camera(Raw, Matrix, Curve, Out); });
    }
  std::printf("dry run: %d kernel launches, %s\n", Launches,
              Failures ? "FAILED" : "all within limits, no pipeline errors");
  return Failures ? 1 : 0;
}
