//===- cuda_rewrite/config.cuh - Runtime configuration ---------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// How the runtime keeps device state (the memory pool, the first device-side
// error) when several rewritten translation units form one program.
//
// Rewritten code is compiled with `nvcc -rdc=true` (dynamic parallelism needs
// it), and one program may contain several rewritten .cu files. A plain
// `__device__` variable in a header would then be defined once per translation
// unit and nvlink rejects the duplicates. The alternatives are:
//
//  * `static __device__` (one copy per translation unit): a kernel in a.cu and
//    the host check in b.cu would look at different copies, so an overflow or
//    a failed device-side launch in a.cu would be lost. Not acceptable.
//  * Passing the state by value as a kernel parameter: correct, but the
//    rewriter would have to add a parameter to every kernel that allocates or
//    launches, and to every launch of those kernels, including host launches
//    in translation units it never sees. It cannot do that safely.
//  * A C++17 `inline __device__` variable: in separate compilation mode nvcc
//    emits it as a weak definition and nvlink keeps exactly one, so every
//    translation unit and the host (via its shadow symbol) share one
//    program-wide instance. This is what the runtime uses.
//
// nvcc accepts external-linkage `inline __device__` variables only with
// -rdc=true (whole-program mode requires internal linkage), so the stateful
// headers (error.cuh, memory_pool.cuh) require relocatable device code. The
// stateless ones (scan.cuh, search.cuh) work in either mode.
//
// One consequence: the state is per device (per CUDA context) and shared by all
// streams. Host functions that reset it take a stream and are meant to be
// called when no other stream is running rewritten kernels.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_CONFIG_CUH
#define CUDA_REWRITE_CONFIG_CUH

#if !defined(__CUDACC__)
#error                                                                         \
    "cuda_rewrite runtime headers must be compiled as CUDA (nvcc or clang -x cuda)"
#endif

#if defined(__CUDACC_RDC__) || defined(__CLANG_RDC__)
#define CUDA_REWRITE_HAS_RDC 1
#else
#define CUDA_REWRITE_HAS_RDC 0
#endif

/// Declares a program-wide device variable (see the comment at the top).
#define CUDA_REWRITE_DEVICE_STATE inline __device__

/// Include this from headers that own device state.
#define CUDA_REWRITE_REQUIRE_RDC(header)                                       \
  static_assert(CUDA_REWRITE_HAS_RDC,                                          \
                header " keeps program-wide device state and needs "           \
                       "relocatable device code: compile with nvcc -rdc=true " \
                       "(clang: -fgpu-rdc) and link with -lcudadevrt")

namespace cuda_rewrite {

/// Threads per warp. A constant rather than `warpSize` so that it can size
/// arrays and masks at compile time.
inline constexpr int kWarpThreads = 32;

/// Mask of all 32 lanes.
inline constexpr unsigned kFullWarpMask = 0xffffffffu;

} // namespace cuda_rewrite

#endif // CUDA_REWRITE_CONFIG_CUH
