//===- cuda_rewrite/error.cuh - CUDA error reporting -----------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Failures that the rewrite introduces must surface as CUDA errors, never be
// lost. On the host, every CUDA call can be wrapped in CUDA_REWRITE_CHECK,
// which prints `file:line` with the error. In device code there is nobody to
// return an error to: a device-side launch past the pending-launch limit fails
// with cudaErrorLaunchPendingCountExceeded (69) and the child simply never
// runs. CUDA_REWRITE_DEVICE_CHECK_LAUNCH() after such a launch records the
// first failure of the whole program in sticky device state; the host reads it
// with getLastDeviceError(), which returns it as a cudaError_t.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_ERROR_CUH
#define CUDA_REWRITE_ERROR_CUH

#include "cuda_rewrite/config.cuh"

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

CUDA_REWRITE_REQUIRE_RDC("cuda_rewrite/error.cuh");

namespace cuda_rewrite {

//===----------------------------------------------------------------------===//
// Host-side checks
//===----------------------------------------------------------------------===//

/// Formats `file:line: error: <what>: cudaErrorX (N): <description>`, the
/// layout of compiler diagnostics so that editors can jump to the location.
inline std::string formatError(cudaError_t error, const char *what,
                               const char *file, int line) {
  std::string text = std::string(file) + ":" + std::to_string(line) +
                     ": error: " + what + ": " + cudaGetErrorName(error) +
                     " (" + std::to_string(static_cast<int>(error)) +
                     "): " + cudaGetErrorString(error);
  return text;
}

/// Prints `error` to stderr (see formatError) unless it is cudaSuccess, and
/// returns it so that callers can propagate it.
inline cudaError_t reportError(cudaError_t error, const char *what,
                               const char *file, int line) {
  if (error != cudaSuccess)
    std::fprintf(stderr, "%s\n", formatError(error, what, file, line).c_str());
  return error;
}

} // namespace cuda_rewrite

/// Evaluates a cudaError_t expression, prints it with file:line when it is not
/// cudaSuccess, and yields it: `if (CUDA_REWRITE_CHECK(x) != cudaSuccess) ...`.
#define CUDA_REWRITE_CHECK(expr)                                               \
  ::cuda_rewrite::reportError((expr), #expr, __FILE__, __LINE__)

/// As CUDA_REWRITE_CHECK, but aborts the program on failure; for host code
/// that has no error path of its own.
#define CUDA_REWRITE_CHECK_FATAL(expr)                                         \
  do {                                                                         \
    if (CUDA_REWRITE_CHECK(expr) != cudaSuccess)                               \
      ::std::abort();                                                          \
  } while (0)

namespace cuda_rewrite {

//===----------------------------------------------------------------------===//
// Sticky device-side error
//===----------------------------------------------------------------------===//

namespace detail {

/// The first error recorded in device code since the host last read it.
struct DeviceErrorState {
  int error; ///< A cudaError_t; cudaSuccess (0) while none was recorded.
  int line;  ///< __LINE__ of the check that recorded it, 0 if not known.
};

/// Program-wide: see config.cuh for why this is an inline __device__ variable.
CUDA_REWRITE_DEVICE_STATE DeviceErrorState deviceErrorState;

} // namespace detail

/// Records `error` as the program's first device-side error unless one is
/// already recorded (later errors are usually consequences of the first), and
/// returns `error`. cudaSuccess records nothing. The thread that records the
/// error also prints it with `file:line` (device printf reaches the host at the
/// next synchronization), unless CUDA_REWRITE_NO_DEVICE_PRINTF is defined.
__device__ inline cudaError_t
recordDeviceError(cudaError_t error, const char *file = nullptr, int line = 0) {
  if (error == cudaSuccess)
    return error;
  cuda::atomic_ref<int, cuda::thread_scope_device> first(
      detail::deviceErrorState.error);
  int none = cudaSuccess;
  // Relaxed is enough: the host reads the state only after the grid finished.
  if (first.compare_exchange_strong(none, static_cast<int>(error),
                                    cuda::std::memory_order_relaxed)) {
    detail::deviceErrorState.line = line;
#ifndef CUDA_REWRITE_NO_DEVICE_PRINTF
    printf("%s:%d: error: device-side CUDA error %d (%s) in block (%u,%u,%u) "
           "thread (%u,%u,%u)\n",
           file ? file : "<unknown>", line, static_cast<int>(error),
           cudaGetErrorString(error), blockIdx.x, blockIdx.y, blockIdx.z,
           threadIdx.x, threadIdx.y, threadIdx.z);
#endif
  }
  return error;
}

} // namespace cuda_rewrite

/// Device code: records a failing cudaError_t expression (see
/// recordDeviceError) and yields it.
#define CUDA_REWRITE_DEVICE_CHECK(expr)                                        \
  ::cuda_rewrite::recordDeviceError((expr), __FILE__, __LINE__)

/// Device code, right after a device-side `kernel<<<...>>>(...)`: records a
/// failed launch (e.g. cudaErrorLaunchPendingCountExceeded) and yields the
/// error. cudaGetLastError() also clears the thread's error, so one failure is
/// not reported again by a later check.
#define CUDA_REWRITE_DEVICE_CHECK_LAUNCH()                                     \
  CUDA_REWRITE_DEVICE_CHECK(cudaGetLastError())

namespace cuda_rewrite {

namespace detail {

/// Synchronizes `stream` and copies the device error state to `state`.
inline cudaError_t readDeviceErrorState(cudaStream_t stream,
                                        DeviceErrorState &state) {
  if (cudaError_t error =
          cudaMemcpyFromSymbolAsync(&state, deviceErrorState, sizeof state, 0,
                                    cudaMemcpyDeviceToHost, stream))
    return error;
  return cudaStreamSynchronize(stream);
}

inline std::string describeDeviceError(const DeviceErrorState &state) {
  cudaError_t error = static_cast<cudaError_t>(state.error);
  return std::string("device-side CUDA error ") + cudaGetErrorName(error) +
         " (" + std::to_string(state.error) +
         "): " + cudaGetErrorString(error) + ", first recorded at line " +
         std::to_string(state.line) + " of a rewritten source";
}

/// Returns the recorded error (or a failure to read it); with `clear`, the
/// state is reset. The explanation goes to `*message` or, if null, stderr.
inline cudaError_t takeDeviceError(cudaStream_t stream, bool clear,
                                   std::string *message) {
  DeviceErrorState state{};
  if (cudaError_t error = readDeviceErrorState(stream, state))
    return error;
  if (state.error == cudaSuccess)
    return cudaSuccess;
  if (clear) {
    const DeviceErrorState none{};
    if (cudaError_t error =
            cudaMemcpyToSymbolAsync(deviceErrorState, &none, sizeof none, 0,
                                    cudaMemcpyHostToDevice, stream))
      return error;
  }
  std::string text = describeDeviceError(state);
  if (message)
    *message = text;
  else
    std::fprintf(stderr, "cuda_rewrite: %s\n", text.c_str());
  return static_cast<cudaError_t>(state.error);
}

} // namespace detail

/// Waits for `stream`, then returns the first error recorded in device code
/// since the last call (cudaSuccess if none) and clears it, like
/// cudaGetLastError() does for host-side errors. A failure to synchronize or to
/// read the state is returned instead. When an error is returned, its
/// explanation (with the recording line) is stored in `*message` or, if
/// `message` is null, printed to stderr.
inline cudaError_t getLastDeviceError(cudaStream_t stream = nullptr,
                                      std::string *message = nullptr) {
  return detail::takeDeviceError(stream, /*clear=*/true, message);
}

/// As getLastDeviceError, but leaves the error recorded.
inline cudaError_t peekAtLastDeviceError(cudaStream_t stream = nullptr,
                                         std::string *message = nullptr) {
  return detail::takeDeviceError(stream, /*clear=*/false, message);
}

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_ERROR_CUH
