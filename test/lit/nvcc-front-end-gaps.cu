// Code nvcc compiles and clang 22 rejected, each form of it found in public
// benchmark code; the parse now takes all of it (tool/ParsePrelude.cpp, the
// -Wno-register of tool/CompilerArgs.cpp), so the file's stencil is
// rewritten, and nothing of the prelude reaches the rewritten file, which
// nvcc compiles:
// - CUDA 13's atomic builtins and their constants, built into nvcc and
//   declared in a header clang's CUDA wrapper never includes;
// - host code calling min and max, which nvcc declares for the host too and
//   clang's wrapper for the device only;
// - `register` locals in C++17, which nvcc takes with a warning;
// - <omp.h>, which g++ (nvcc's host compiler) has among its own headers and
//   clang only with LLVM's OpenMP runtime installed;
// - device code calling malloc and free under `using namespace std;`, which
//   clang's CUDA wrapper made ambiguous (its std::malloc and std::free are
//   functions of their own; nvcc's are the global ones);
// - `#if __CUDACC__`, which nvcc defines as 1 and clang's wrapper as empty;
// - the cache-hinted stores (__stcs, __stcg, __stwb) and __ldlu of float,
//   which clang's intrinsics header declares for the half types only.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -std=c++17 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -std=c++17 %t.cu -o %t.o

// REMARK-NOT: error
// REMARK: remark: rewritten: 'smooth' runs as smooth_systolic

__device__ unsigned long long counted(unsigned long long *counter) {
  __nv_atomic_fetch_add(counter, 1, __NV_ATOMIC_RELAXED,
                        __NV_THREAD_SCOPE_DEVICE);
  return __nv_atomic_load_n(counter, __NV_ATOMIC_ACQUIRE);
}

__global__ void count(unsigned long long *counter, unsigned long long *seen) {
  seen[threadIdx.x] = counted(counter);
}

#if __CUDACC__
__global__ void hinted(float *out, const float *in, float v) {
  __stcs(out + threadIdx.x, v);
  __stcg(out, __ldlu(in));
  __stwb(out + 1, 2.0f);
}
#endif

#include <cstdlib>
using namespace std;

__global__ void scratch(int n, int *out) {
  int *p = (int *)malloc(n * sizeof(int));
  p[0] = n;
  out[threadIdx.x] = p[0];
  free(p);
  int *q = (int *)std::malloc(sizeof(int));
  std::free(q);
}

#pragma cuda_rewrite systolic
__global__ void smooth(const float *in, float *out, int W, int H) {
  register int x = blockIdx.x * blockDim.x + threadIdx.x;
  register int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

float largestError(const float *a, const float *b, int n, unsigned *worst) {
  float e = 0.f;
  int at = 0;
  for (int i = 0; i < n; ++i) {
    e = max(e, a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
    at = max(at, i);
  }
  *worst = min(*worst, at);
  return max(e, 0.5);
}

#include <omp.h>

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  if (omp_get_max_threads() < 1)
    return;
  smooth<<<grid, block>>>(in, out, W, H);
}

// CHECK-NOT: cuda-rewrite's parse only
// CHECK: __nv_atomic_fetch_add(counter, 1, __NV_ATOMIC_RELAXED,
// CHECK: smooth_systolic
// CHECK: e = max(e, a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
// CHECK-NOT: static inline __host__
