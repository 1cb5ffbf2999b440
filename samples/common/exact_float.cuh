//===- exact_float.cuh - Float arithmetic the CPU repeats bit for bit -*- CUDA -*-===//
//
// For samples whose GPU results are checked exactly against a CPU reference
// (samples/pipeline/reyes.cu, raster.cu): one rounding per call, the same on
// both sides. The device uses the _rn intrinsics, which the compiler does not
// fuse into FMAs; the host stores through a volatile, so that a host compiler
// that contracts by default (GCC on AArch64, for instance) cannot fuse them
// either.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_EXACT_FLOAT_CUH
#define CUDA_REWRITE_SAMPLES_EXACT_FLOAT_CUH

#include <cstring>

__host__ __device__ inline float addRn(float A, float B) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(A, B);
#else
  volatile float R = A + B;
  return R;
#endif
}

__host__ __device__ inline float subRn(float A, float B) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(A, B);
#else
  volatile float R = A - B;
  return R;
#endif
}

__host__ __device__ inline float mulRn(float A, float B) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(A, B);
#else
  volatile float R = A * B;
  return R;
#endif
}

__host__ __device__ inline float divRn(float A, float B) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(A, B);
#else
  volatile float R = A / B;
  return R;
#endif
}

__host__ __device__ inline float sqrtRn(float A) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(A);
#else
  volatile float R = std::sqrt(A);
  return R;
#endif
}

__host__ __device__ inline unsigned floatBits(float X) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(X);
#else
  unsigned U;
  std::memcpy(&U, &X, sizeof U);
  return U;
#endif
}

#endif // CUDA_REWRITE_SAMPLES_EXACT_FLOAT_CUH
