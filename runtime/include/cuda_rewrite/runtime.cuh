//===- cuda_rewrite/runtime.cuh - The cuda-rewrite runtime -----*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// The one header that rewritten code includes. Compile with
// `nvcc -rdc=true -arch=sm_90 ... -lcudadevrt` (see config.cuh for why
// relocatable device code is required).
//
// A rewritten host launch looks like:
//
//   CUDA_REWRITE_CHECK(cuda_rewrite::resetPool(stream));
//   parent<<<grid, block, 0, stream>>>(...);   // allocates, launches children
//   CUDA_REWRITE_CHECK_LAUNCH(stream);         // or later, at a sync point
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_RUNTIME_CUH
#define CUDA_REWRITE_RUNTIME_CUH

#include "cuda_rewrite/config.cuh"
#include "cuda_rewrite/aggregate.cuh"
#include "cuda_rewrite/device_malloc.cuh"
#include "cuda_rewrite/error.cuh"
#include "cuda_rewrite/memory_pool.cuh"
#include "cuda_rewrite/promote.cuh"
#include "cuda_rewrite/scan.cuh"
#include "cuda_rewrite/search.cuh"

#include <cstdio>
#include <string>

namespace cuda_rewrite {

/// Checks everything that can go wrong in a host launch of rewritten kernels,
/// in this order: the launch itself (cudaGetLastError), the grid and all its
/// device-side work (synchronizes `stream`), the first failed device-side
/// launch or other recorded device error, and a pool overflow. Returns the
/// first failure and prints each with `file:line` to stderr; clears the
/// device error and the overflow record. Synchronizing costs the overlap of
/// host and device, so put this where the program synchronizes anyway when
/// that matters.
inline cudaError_t checkLaunch(cudaStream_t stream, const char *file,
                               int line) {
  if (cudaError_t error = cudaGetLastError())
    return reportError(error, "kernel launch", file, line);
  if (cudaError_t error = cudaStreamSynchronize(stream))
    return reportError(error, "kernel execution", file, line);

  cudaError_t first = cudaSuccess;
  std::string message;
  if (cudaError_t error = getLastDeviceError(stream, &message)) {
    std::fprintf(stderr, "%s:%d: error: %s\n", file, line,
                 message.empty() ? cudaGetErrorString(error) : message.c_str());
    first = error;
  }
  message.clear();
  if (cudaError_t error = checkPool(stream, &message)) {
    std::fprintf(stderr, "%s:%d: error: %s\n", file, line,
                 message.empty() ? cudaGetErrorString(error) : message.c_str());
    if (first == cudaSuccess)
      first = error;
  }
  return first;
}

} // namespace cuda_rewrite

/// checkLaunch at the current source location; yields the cudaError_t.
#define CUDA_REWRITE_CHECK_LAUNCH(stream)                                      \
  ::cuda_rewrite::checkLaunch((stream), __FILE__, __LINE__)

#endif // CUDA_REWRITE_RUNTIME_CUH
