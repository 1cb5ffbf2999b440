//===- hl_driver.cuh - What the Halide peer drivers share -----*- CUDA -*-===//
//
// Each bench/halide/<name>_run.cu builds the same input as
// samples/fuse/<name>.cu (same harness::Rng, same seed), computes the same
// float64 reference, runs the AOT-compiled Halide pipeline <name>.a on it and
// reports exactly as the sample does (harness::measure and harness::report:
// the same RESULT line, sample=<name>). It includes the sample with
// FUSE_SAMPLE_NO_MAIN defined (the sample's main() left out) and calls the
// sample's reference, tolerance (kTolerance) and helpers, not copies.
//
// GPU build (the default): the images live in harness::DeviceArrays, which
// are wrapped as Halide device buffers (halide_cuda_wrap_device_ptr, no host
// memory), so the pipeline reads its input already on the device and writes
// its output there; poisoning and checking go through the DeviceArray as in
// the samples. Halide is made to use the CUDA runtime's primary context and
// the legacy default stream, the ones harness::measure records its events
// on, and to keep its own intermediate allocations between runs
// (halide_reuse_device_allocations), as the samples allocate theirs once in
// main(). Each timed Launch is therefore exactly one call of the pipeline:
// its host-side bounds checks and kernel launches, and its kernels.
//
// Host check build (-DHLBENCH_HOST, linked against the same generator
// compiled for the host CPU, no GPU needed): the images live in host
// vectors; one run, checked against the same reference with the same
// tolerance. It checks the algorithm (stages, borders, constants), which the
// GPU schedule cannot change, on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_BENCH_HALIDE_HL_DRIVER_CUH
#define CUDA_REWRITE_BENCH_HALIDE_HL_DRIVER_CUH

#include "image.cuh"

// The drivers include their sample for its reference, tolerance and helpers;
// its pipeline function is left unused (warning 177).
#pragma nv_diag_suppress 177

#include "HalideRuntime.h"
#ifndef HLBENCH_HOST
#include "HalideRuntimeCuda.h"
#include <cuda.h>
#endif

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace hlbench {

//===-- Setup -------------------------------------------------------------===//

inline std::string &lastHalideError() {
  static std::string Message;
  return Message;
}

/// Keeps Halide's error message for the failure report.
inline void errorHandler(void *, const char *Message) {
  lastHalideError() = Message;
  std::fprintf(stderr, "halide: %s\n", Message);
}

#ifndef HLBENCH_HOST
/// Halide's CUDA context: the CUDA runtime's primary context, current on
/// this thread (init() made it so), not one of Halide's own.
inline int acquireContext(void *, void **Ctx, bool) {
  CUcontext C = nullptr;
  if (cuCtxGetCurrent(&C) != CUDA_SUCCESS || !C)
    return -1;
  *Ctx = C;
  return 0;
}
inline int releaseContext(void *) { return 0; }
/// The legacy default stream, on which harness::measure records its events.
inline int getStream(void *, void *, void **Stream) {
  *Stream = nullptr;
  return 0;
}
#endif

/// Call once, before any pipeline runs.
inline void init() {
  halide_set_error_handler(errorHandler);
#ifndef HLBENCH_HOST
  HARNESS_CHECK(cudaFree(nullptr)); // Makes the primary context current.
  halide_set_cuda_acquire_context(acquireContext);
  halide_set_cuda_release_context(releaseContext);
  halide_set_cuda_get_stream(getStream);
  if (halide_reuse_device_allocations(nullptr, true))
    harness::fail("halide_reuse_device_allocations failed");
#endif
}

/// Fails the sample if a pipeline call returned an error.
inline void check(int Err, const char *Pipeline) {
  if (Err)
    harness::fail(std::string("Halide pipeline ") + Pipeline +
                  " returned error " + std::to_string(Err) + ": " +
                  lastHalideError());
}

//===-- Images ------------------------------------------------------------===//

/// A float image, on the device (GPU build) or the host (host check), seen
/// by Halide as a halide_buffer_t with the given dimensions (x first: min,
/// extent, stride in elements) whose element at the minimum coordinates is
/// element \p Offset of the storage.
class Image {
public:
  Image(size_t N, std::vector<halide_dimension_t> Dims, size_t Offset = 0)
      : Storage(N), Dims(std::move(Dims)) {
    wrap(Offset);
  }
  Image(const std::vector<float> &Data, std::vector<halide_dimension_t> Dims,
        size_t Offset = 0)
      : Storage(Data), Dims(std::move(Dims)) {
    wrap(Offset);
  }
  ~Image() {
#ifndef HLBENCH_HOST
    halide_cuda_detach_device_ptr(nullptr, &Buf);
#endif
  }
  Image(const Image &) = delete;
  Image &operator=(const Image &) = delete;

  halide_buffer_t *raw() { return &Buf; }
  size_t bytes() const { return size() * sizeof(float); }

#ifndef HLBENCH_HOST
  size_t size() const { return Storage.size(); }
  void poison() { Storage.poison(); }
  std::vector<float> download() const { return Storage.download(); }
#else
  size_t size() const { return Storage.size(); }
  void poison() {
    std::memset(Storage.data(), harness::poisonByte<float>(),
                Storage.size() * sizeof(float));
  }
  std::vector<float> download() const { return Storage; }
#endif

private:
  void wrap(size_t Offset) {
    std::memset(&Buf, 0, sizeof Buf);
    Buf.type = halide_type_of<float>();
    Buf.dimensions = int(Dims.size());
    Buf.dim = Dims.data();
#ifndef HLBENCH_HOST
    if (halide_cuda_wrap_device_ptr(
            nullptr, &Buf, uint64_t(uintptr_t(Storage.data() + Offset))))
      harness::fail("halide_cuda_wrap_device_ptr failed");
#else
    Buf.host = reinterpret_cast<uint8_t *>(Storage.data() + Offset);
#endif
  }

#ifndef HLBENCH_HOST
  harness::DeviceArray<float> Storage;
#else
  std::vector<float> Storage;
#endif
  std::vector<halide_dimension_t> Dims;
  halide_buffer_t Buf;
};

/// The dimensions of a dense channel-planar W x H x C image (element
/// (c, y, x) at (c * H + y) * W + x); C = 0 for a 2-D W x H image.
inline std::vector<halide_dimension_t> planar(int W, int H, int C = 0) {
  std::vector<halide_dimension_t> D = {{0, W, 1}, {0, H, W}};
  if (C)
    D.push_back({0, C, W * H});
  return D;
}

//===-- Running -----------------------------------------------------------===//

/// harness::measure in the GPU build; in the host check, a single run
/// (host-timed, no warm-up), checked.
template <typename PoisonFn, typename LaunchFn, typename CheckFn>
harness::Result measure(const harness::Args &A, PoisonFn Poison,
                        LaunchFn Launch, CheckFn CheckOutput) {
#ifndef HLBENCH_HOST
  return harness::measure(A, Poison, Launch, CheckOutput);
#else
  (void)A;
  harness::Result R;
  Poison();
  auto T0 = std::chrono::steady_clock::now();
  Launch();
  auto T1 = std::chrono::steady_clock::now();
  R.Output = CheckOutput();
  R.MedianMs = R.MinMs = R.MaxMs =
      std::chrono::duration<double, std::milli>(T1 - T0).count();
  R.Runs = 1;
  std::printf("%s: host check of the Halide algorithm (CPU build), not a "
              "GPU timing\n",
              A.Name.c_str());
  return R;
#endif
}

/// The comparison of most drivers: every point \p Where selects against
/// \p Ref, within \p Tolerance.
template <typename WhereFn>
auto against(const std::vector<double> &Ref, WhereFn Where, double Tolerance) {
  return [&Ref, Where, Tolerance](const std::vector<float> &Got) {
    return harness::compareFloat(Got, Ref, Where, Tolerance);
  };
}

/// How every driver's main() ends: times \p Pipeline (one call of the
/// AOT-compiled Halide pipeline, returning its error code) writing \p Out,
/// poisoned before each run, checks Out with \p Compare, and prints the
/// sample's RESULT line with \p Bytes as the data moved.
template <typename PipelineFn, typename CompareFn>
int runAndReport(const harness::Args &A, const char *Name, Image &Out,
                 PipelineFn Pipeline, CompareFn Compare, double Bytes) {
  harness::Result Res = hlbench::measure(
      A, [&] { Out.poison(); }, [&] { check(Pipeline(), Name); },
      [&] { return Compare(Out.download()); });
  return harness::report(A, Res, Bytes);
}

} // namespace hlbench

#endif
