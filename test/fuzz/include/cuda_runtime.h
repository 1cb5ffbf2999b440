//===- cuda_runtime.h - A small CUDA runtime for the fuzzer ------*- C++
//-*-===//
//
// The fuzzer parses with -nocudainc and force-includes this file where the
// tool's parse gets clang's __clang_cuda_runtime_wrapper.h, which pulls in
// the whole CUDA toolkit (0.8 s a parse; with clang's own device headers
// and the C library it is still 0.15 s, most of a fuzzer's input). It
// follows the wrapper's order: CUDA's keywords, the built-in index
// variables, vector types, then declarations, without bodies, of the
// device functions and runtime API that the samples and lit tests use.
// The tool treats all of them as it treats the toolkit's: calls into a
// system header. What is missing here is missing for the fuzzer: an input
// that uses it fails to parse (README.md).
//
//===----------------------------------------------------------------------===//
#pragma clang system_header
#ifndef CUDA_REWRITE_FUZZ_CUDA_RUNTIME_H
#define CUDA_REWRITE_FUZZ_CUDA_RUNTIME_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

// What the wrapper's <cstdlib>, <cstdio> and <cstring> declare and the
// seeds call without including them, declared as glibc does (noexcept is
// its __THROW), so that an input that includes them too still parses.
extern "C" {
void *malloc(size_t size) noexcept;
void *calloc(size_t count, size_t size) noexcept;
void *realloc(void *ptr, size_t size) noexcept;
void free(void *ptr) noexcept;
void *memcpy(void *dst, const void *src, size_t count) noexcept;
void *memmove(void *dst, const void *src, size_t count) noexcept;
void *memset(void *dst, int value, size_t count) noexcept;
int memcmp(const void *a, const void *b, size_t count) noexcept;
size_t strlen(const char *s) noexcept;
int printf(const char *format, ...);
int puts(const char *s);
void abort(void) noexcept __attribute__((noreturn));
void exit(int status) noexcept __attribute__((noreturn));
int atoi(const char *s) noexcept;
}

#define CUDA_VERSION 13000
#define CUDART_VERSION 13000

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__ __attribute__((grid_constant))

#include "__clang_cuda_builtin_vars.h"

// Vector types (vector_types.h).
#define CUDA_REWRITE_FUZZ_VECTORS(T, N, A)                                     \
  struct __align__(A) N##1 {                                                   \
    T x;                                                                       \
  };                                                                           \
  struct __align__(2 * A) N##2 {                                               \
    T x, y;                                                                    \
  };                                                                           \
  struct N##3 {                                                                \
    T x, y, z;                                                                 \
  };                                                                           \
  struct __align__(4 * A) N##4 {                                               \
    T x, y, z, w;                                                              \
  };                                                                           \
  __host__ __device__ inline N##1 make_##N##1(T x) { return {x}; }             \
  __host__ __device__ inline N##2 make_##N##2(T x, T y) { return {x, y}; }     \
  __host__ __device__ inline N##3 make_##N##3(T x, T y, T z) {                 \
    return {x, y, z};                                                          \
  }                                                                            \
  __host__ __device__ inline N##4 make_##N##4(T x, T y, T z, T w) {            \
    return {x, y, z, w};                                                       \
  }
CUDA_REWRITE_FUZZ_VECTORS(signed char, char, 1)
CUDA_REWRITE_FUZZ_VECTORS(unsigned char, uchar, 1)
CUDA_REWRITE_FUZZ_VECTORS(short, short, 2)
CUDA_REWRITE_FUZZ_VECTORS(unsigned short, ushort, 2)
CUDA_REWRITE_FUZZ_VECTORS(int, int, 4)
CUDA_REWRITE_FUZZ_VECTORS(unsigned int, uint, 4)
CUDA_REWRITE_FUZZ_VECTORS(long, long, 8)
CUDA_REWRITE_FUZZ_VECTORS(unsigned long, ulong, 8)
CUDA_REWRITE_FUZZ_VECTORS(long long, longlong, 8)
CUDA_REWRITE_FUZZ_VECTORS(unsigned long long, ulonglong, 8)
CUDA_REWRITE_FUZZ_VECTORS(float, float, 4)
CUDA_REWRITE_FUZZ_VECTORS(double, double, 8)
#undef CUDA_REWRITE_FUZZ_VECTORS

struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1,
                                     unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ constexpr operator uint3() const { return {x, y, z}; }
};

// Device functions (clang's __clang_cuda_device_functions.h and
// __clang_cuda_intrinsics.h; __syncthreads is a clang builtin). Math is
// static, as clang's __clang_cuda_math.h has it, so that it overloads the C
// library's host functions of an input that includes <cmath>.
__device__ int __syncthreads_count(int predicate);
__device__ int __syncthreads_and(int predicate);
__device__ int __syncthreads_or(int predicate);
__device__ void __syncwarp(unsigned int mask = 0xffffffff);
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
__device__ void __threadfence_system(void);
__device__ void __nanosleep(unsigned int ns);
__device__ long long clock64(void);
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ int __any_sync(unsigned int mask, int predicate);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ unsigned int __activemask(void);
__device__ unsigned int __lanemask_lt(void);
__device__ int __popc(unsigned int x);
__device__ int __popcll(unsigned long long x);
__device__ int __ffs(int x);
__device__ int __ffsll(long long x);
__device__ int __clz(int x);
__device__ int __clzll(long long x);
__device__ unsigned int __brev(unsigned int x);
__device__ unsigned int __match_any_sync(unsigned int mask, int value);
__device__ unsigned int __match_any_sync(unsigned int mask, unsigned int value);
__device__ unsigned int __match_any_sync(unsigned int mask,
                                         unsigned long long value);
#define CUDA_REWRITE_FUZZ_SHUFFLE(T)                                           \
  __device__ T __shfl_sync(unsigned int mask, T var, int srcLane,              \
                           int width = warpSize);                              \
  __device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta,    \
                              int width = warpSize);                           \
  __device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta,  \
                                int width = warpSize);                         \
  __device__ T __shfl_xor_sync(unsigned int mask, T var, int laneMask,         \
                               int width = warpSize);
CUDA_REWRITE_FUZZ_SHUFFLE(int)
CUDA_REWRITE_FUZZ_SHUFFLE(unsigned int)
CUDA_REWRITE_FUZZ_SHUFFLE(long long)
CUDA_REWRITE_FUZZ_SHUFFLE(unsigned long long)
CUDA_REWRITE_FUZZ_SHUFFLE(float)
CUDA_REWRITE_FUZZ_SHUFFLE(double)
#undef CUDA_REWRITE_FUZZ_SHUFFLE
template <typename T> __device__ T __ldg(const T *ptr);
template <typename T> __device__ T __ldcg(const T *ptr);
template <typename T> __device__ T __ldca(const T *ptr);
template <typename T> __device__ T __ldcs(const T *ptr);
template <typename T> __device__ void __stcg(T *ptr, T value);
template <typename T> __device__ void __stcs(T *ptr, T value);

__device__ int __float_as_int(float x);
__device__ unsigned int __float_as_uint(float x);
__device__ float __int_as_float(int x);
__device__ float __uint_as_float(unsigned int x);
__device__ long long __double_as_longlong(double x);
__device__ double __longlong_as_double(long long x);
__device__ int __float2int_rn(float x);
__device__ int __float2int_rz(float x);
__device__ unsigned int __float2uint_rn(float x);
__device__ float __int2float_rn(int x);
__device__ int __double2int_rn(double x);
__device__ float __fadd_rn(float a, float b);
__device__ float __fsub_rn(float a, float b);
__device__ float __fmul_rn(float a, float b);
__device__ float __fdiv_rn(float a, float b);
__device__ float __fmaf_rn(float a, float b, float c);
__device__ float __fsqrt_rn(float x);
__device__ float __frcp_rn(float x);
__device__ float __fdividef(float a, float b);
__device__ float __saturatef(float x);
__device__ float __expf(float x);
__device__ float __logf(float x);
__device__ float __powf(float a, float b);
__device__ float __sinf(float x);
__device__ float __cosf(float x);
__device__ double __dadd_rn(double a, double b);
__device__ double __dmul_rn(double a, double b);

#define CUDA_REWRITE_FUZZ_MATH1(Name)                                          \
  static __device__ float Name##f(float x);                                    \
  static __device__ double Name(double x);
#define CUDA_REWRITE_FUZZ_MATH2(Name)                                          \
  static __device__ float Name##f(float a, float b);                           \
  static __device__ double Name(double a, double b);
CUDA_REWRITE_FUZZ_MATH1(sqrt)
CUDA_REWRITE_FUZZ_MATH1(rsqrt)
CUDA_REWRITE_FUZZ_MATH1(cbrt)
CUDA_REWRITE_FUZZ_MATH1(fabs)
CUDA_REWRITE_FUZZ_MATH1(floor)
CUDA_REWRITE_FUZZ_MATH1(ceil)
CUDA_REWRITE_FUZZ_MATH1(round)
CUDA_REWRITE_FUZZ_MATH1(rint)
CUDA_REWRITE_FUZZ_MATH1(nearbyint)
CUDA_REWRITE_FUZZ_MATH1(trunc)
CUDA_REWRITE_FUZZ_MATH1(exp)
CUDA_REWRITE_FUZZ_MATH1(exp2)
CUDA_REWRITE_FUZZ_MATH1(expm1)
CUDA_REWRITE_FUZZ_MATH1(log)
CUDA_REWRITE_FUZZ_MATH1(log2)
CUDA_REWRITE_FUZZ_MATH1(log10)
CUDA_REWRITE_FUZZ_MATH1(log1p)
CUDA_REWRITE_FUZZ_MATH1(sin)
CUDA_REWRITE_FUZZ_MATH1(cos)
CUDA_REWRITE_FUZZ_MATH1(tan)
CUDA_REWRITE_FUZZ_MATH1(asin)
CUDA_REWRITE_FUZZ_MATH1(acos)
CUDA_REWRITE_FUZZ_MATH1(atan)
CUDA_REWRITE_FUZZ_MATH1(sinh)
CUDA_REWRITE_FUZZ_MATH1(cosh)
CUDA_REWRITE_FUZZ_MATH1(tanh)
CUDA_REWRITE_FUZZ_MATH1(erf)
CUDA_REWRITE_FUZZ_MATH2(fmax)
CUDA_REWRITE_FUZZ_MATH2(fmin)
CUDA_REWRITE_FUZZ_MATH2(pow)
CUDA_REWRITE_FUZZ_MATH2(atan2)
CUDA_REWRITE_FUZZ_MATH2(fmod)
CUDA_REWRITE_FUZZ_MATH2(hypot)
CUDA_REWRITE_FUZZ_MATH2(copysign)
#undef CUDA_REWRITE_FUZZ_MATH1
#undef CUDA_REWRITE_FUZZ_MATH2
static __device__ float fmaf(float a, float b, float c);
static __device__ double fma(double a, double b, double c);
static __device__ void sincosf(float x, float *s, float *c);
static __device__ int abs(int x);
static __device__ int min(int a, int b);
static __device__ unsigned int min(unsigned int a, unsigned int b);
static __device__ long long min(long long a, long long b);
static __device__ float min(float a, float b);
static __device__ double min(double a, double b);
static __device__ int max(int a, int b);
static __device__ unsigned int max(unsigned int a, unsigned int b);
static __device__ long long max(long long a, long long b);
static __device__ float max(float a, float b);
static __device__ double max(double a, double b);

// driver_types.h
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorLaunchFailure = 719,
  cudaErrorLaunchPendingCountExceeded = 69,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaLimit {
  cudaLimitStackSize = 0,
  cudaLimitPrintfFifoSize = 1,
  cudaLimitMallocHeapSize = 2,
  cudaLimitDevRuntimeSyncDepth = 3,
  cudaLimitDevRuntimePendingLaunchCount = 4
};
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamTailLaunch ((cudaStream_t)0x3)
#define cudaStreamFireAndForget ((cudaStream_t)0x4)
#define cudaStreamNonBlocking 0x01

// cuda_runtime_api.h and cuda_device_runtime_api.h
extern "C" {
__host__ __device__ cudaError_t cudaGetLastError(void);
__host__ __device__ cudaError_t cudaPeekAtLastError(void);
__host__ __device__ const char *cudaGetErrorString(cudaError_t error);
__host__ __device__ const char *cudaGetErrorName(cudaError_t error);
__host__ __device__ cudaError_t cudaMalloc(void **devPtr, size_t size);
__host__ __device__ cudaError_t cudaFree(void *devPtr);
__host__ cudaError_t cudaMallocManaged(void **devPtr, size_t size,
                                       unsigned int flags = 1);
__host__ cudaError_t cudaMallocHost(void **ptr, size_t size);
__host__ cudaError_t cudaFreeHost(void *ptr);
__host__ cudaError_t cudaMallocAsync(void **devPtr, size_t size,
                                     cudaStream_t stream);
__host__ cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream);
__host__ cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                                cudaMemcpyKind kind);
__host__ __device__ cudaError_t cudaMemcpyAsync(void *dst, const void *src,
                                                size_t count,
                                                cudaMemcpyKind kind,
                                                cudaStream_t stream = 0);
__host__ cudaError_t cudaMemset(void *devPtr, int value, size_t count);
__host__ __device__ cudaError_t cudaMemsetAsync(void *devPtr, int value,
                                                size_t count,
                                                cudaStream_t stream = 0);
__host__ cudaError_t cudaMemcpyToSymbol(
    const void *symbol, const void *src, size_t count, size_t offset = 0,
    cudaMemcpyKind kind = cudaMemcpyHostToDevice);
__host__ cudaError_t cudaMemcpyFromSymbol(
    void *dst, const void *symbol, size_t count, size_t offset = 0,
    cudaMemcpyKind kind = cudaMemcpyDeviceToHost);
__host__ cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol);
__host__ __device__ cudaError_t cudaDeviceSynchronize(void);
__host__ cudaError_t cudaDeviceReset(void);
__host__ cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
__host__ __device__ cudaError_t cudaDeviceGetLimit(size_t *value,
                                                   cudaLimit limit);
__host__ __device__ cudaError_t cudaGetDevice(int *device);
__host__ cudaError_t cudaSetDevice(int device);
__host__ __device__ cudaError_t cudaGetDeviceCount(int *count);
__host__ cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool,
                                                 int device);
__host__ cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                             cudaMemPoolAttr attr, void *value);
__host__ cudaError_t cudaStreamCreate(cudaStream_t *stream);
__host__ __device__ cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream,
                                                          unsigned int flags);
__host__ __device__ cudaError_t cudaStreamDestroy(cudaStream_t stream);
__host__ cudaError_t cudaStreamSynchronize(cudaStream_t stream);
__host__ __device__ cudaError_t cudaEventCreate(cudaEvent_t *event);
__host__ __device__ cudaError_t cudaEventRecord(cudaEvent_t event,
                                                cudaStream_t stream = 0);
__host__ cudaError_t cudaEventSynchronize(cudaEvent_t event);
__host__ cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                          cudaEvent_t end);
__host__ __device__ cudaError_t cudaEventDestroy(cudaEvent_t event);
__host__ cudaError_t cudaFuncSetAttribute(const void *func,
                                          cudaFuncAttribute attr, int value);
__host__ cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim,
                                      dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream);

// What clang's kernel launches (<<<...>>>) call: host side and, with
// -fgpu-rdc, device side.
__host__ __device__ unsigned __cudaPushCallConfiguration(dim3 gridDim,
                                                         dim3 blockDim,
                                                         size_t sharedMem = 0,
                                                         void *stream = 0);
__device__ void *cudaGetParameterBuffer(size_t alignment, size_t size);
__device__ cudaError_t cudaLaunchDevice(void *func, void *parameterBuffer,
                                        dim3 gridDimension, dim3 blockDimension,
                                        unsigned int sharedMemSize,
                                        cudaStream_t stream);

// Device-side C library (the wrapper's).
__device__ int printf(const char *, ...);
__device__ void *malloc(size_t);
__device__ void free(void *);
__device__ void *memcpy(void *, const void *, size_t);
__device__ void *memset(void *, int, size_t);
__device__ void __assertfail(const char *message, const char *file,
                             unsigned int line, const char *function,
                             size_t charSize);
} // extern "C"

// cuda_runtime.h's templates over the symbol or pointer type.
template <class T>
__host__ __device__ cudaError_t cudaMalloc(T **devPtr, size_t size) {
  return cudaMalloc((void **)devPtr, size);
}
template <class T>
__host__ cudaError_t cudaMallocManaged(T **devPtr, size_t size,
                                       unsigned int flags = 1) {
  return cudaMallocManaged((void **)devPtr, size, flags);
}
template <class T>
__host__ cudaError_t cudaMallocAsync(T **devPtr, size_t size,
                                     cudaStream_t stream) {
  return cudaMallocAsync((void **)devPtr, size, stream);
}
template <class T>
__host__ cudaError_t cudaMemcpyToSymbol(
    const T &symbol, const void *src, size_t count, size_t offset = 0,
    cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return cudaMemcpyToSymbol((const void *)&symbol, src, count, offset, kind);
}
template <class T>
__host__ cudaError_t cudaMemcpyFromSymbol(
    void *dst, const T &symbol, size_t count, size_t offset = 0,
    cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return cudaMemcpyFromSymbol(dst, (const void *)&symbol, count, offset, kind);
}
template <class T>
__host__ cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol) {
  return cudaGetSymbolAddress(devPtr, (const void *)&symbol);
}
template <class T>
__host__ cudaError_t cudaFuncSetAttribute(T *entry, cudaFuncAttribute attr,
                                          int value) {
  return cudaFuncSetAttribute((const void *)entry, attr, value);
}

// Atomics (device_atomic_functions.h, sm_60_atomic_functions.h).
#define CUDA_REWRITE_FUZZ_ATOMIC(Name)                                         \
  __device__ int Name(int *address, int val);                                  \
  __device__ unsigned int Name(unsigned int *address, unsigned int val);       \
  __device__ unsigned long long Name(unsigned long long *address,              \
                                     unsigned long long val);
CUDA_REWRITE_FUZZ_ATOMIC(atomicAdd)
CUDA_REWRITE_FUZZ_ATOMIC(atomicSub)
CUDA_REWRITE_FUZZ_ATOMIC(atomicMin)
CUDA_REWRITE_FUZZ_ATOMIC(atomicMax)
CUDA_REWRITE_FUZZ_ATOMIC(atomicExch)
CUDA_REWRITE_FUZZ_ATOMIC(atomicAnd)
CUDA_REWRITE_FUZZ_ATOMIC(atomicOr)
CUDA_REWRITE_FUZZ_ATOMIC(atomicXor)
#undef CUDA_REWRITE_FUZZ_ATOMIC
__device__ float atomicAdd(float *address, float val);
__device__ double atomicAdd(double *address, double val);
__device__ float atomicExch(float *address, float val);
__device__ int atomicCAS(int *address, int compare, int val);
__device__ unsigned int atomicCAS(unsigned int *address, unsigned int compare,
                                  unsigned int val);
__device__ unsigned long long atomicCAS(unsigned long long *address,
                                        unsigned long long compare,
                                        unsigned long long val);
__device__ unsigned int atomicInc(unsigned int *address, unsigned int val);
__device__ unsigned int atomicDec(unsigned int *address, unsigned int val);

// Out-of-line members of __clang_cuda_builtin_vars.h, now that dim3 and
// uint3 exist (as in the wrapper).
#define CUDA_REWRITE_FUZZ_BUILTIN(Var)                                         \
  __device__ inline __cuda_builtin_##Var##_t::operator dim3() const {          \
    return dim3(x, y, z);                                                      \
  }                                                                            \
  __device__ inline __cuda_builtin_##Var##_t::operator uint3() const {         \
    return {x, y, z};                                                          \
  }
CUDA_REWRITE_FUZZ_BUILTIN(threadIdx)
CUDA_REWRITE_FUZZ_BUILTIN(blockIdx)
CUDA_REWRITE_FUZZ_BUILTIN(blockDim)
CUDA_REWRITE_FUZZ_BUILTIN(gridDim)
#undef CUDA_REWRITE_FUZZ_BUILTIN

#endif
