// Helpers for main.cu; included with a relative #include "util.cuh", which
// must still resolve when nvcc compiles the rewritten copy of main.cu from the
// build tree.
#ifndef EXAMPLE_UTIL_CUH
#define EXAMPLE_UTIL_CUH

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

/// Number of blocks of \p BlockSize threads that cover \p N items.
__host__ __device__ inline int ceilDiv(int N, int BlockSize) {
  return (N + BlockSize - 1) / BlockSize;
}

/// Aborts with the failing call and CUDA's message when \p Call fails.
#define CHECK_CUDA(Call)                                                       \
  do {                                                                         \
    cudaError_t Err = (Call);                                                  \
    if (Err != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #Call,       \
                   cudaGetErrorString(Err));                                   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#endif // EXAMPLE_UTIL_CUH
