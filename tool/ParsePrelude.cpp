//===- ParsePrelude.cpp - What nvcc builds in and clang lacks -------------===//

#include "tool/ParsePrelude.h"
#include "tool/RemovedApis.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <string>

namespace cuda_rewrite {

namespace {

llvm::StringRef builtinsText() {
  // The constants' values are CUDA 13's (crt/device_functions.h). The
  // builtins take any pointee and operand type, as nvcc's do; a second
  // type parameter lets an operand differ from the pointee (`long long *`
  // and `1`).
  return R"cpp(// cuda-rewrite's parse only: what nvcc has and clang lacks.
#if defined(__CUDA__) && !__has_builtin(__nv_atomic_load_n)
enum {
  __NV_ATOMIC_RELAXED, __NV_ATOMIC_CONSUME, __NV_ATOMIC_ACQUIRE,
  __NV_ATOMIC_RELEASE, __NV_ATOMIC_ACQ_REL, __NV_ATOMIC_SEQ_CST
};
enum {
  __NV_THREAD_SCOPE_THREAD, __NV_THREAD_SCOPE_BLOCK, __NV_THREAD_SCOPE_CLUSTER,
  __NV_THREAD_SCOPE_DEVICE, __NV_THREAD_SCOPE_SYSTEM
};
template <class T>
__device__ T __nv_atomic_load_n(T *, int, int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U>
__device__ void __nv_atomic_load(T *, U *, int, int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U>
__device__ void __nv_atomic_store_n(T *, U, int, int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U>
__device__ void __nv_atomic_store(T *, U *, int, int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U>
__device__ T __nv_atomic_exchange_n(T *, U, int, int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U, class V>
__device__ void __nv_atomic_exchange(T *, U *, V *, int,
                                     int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U, class V>
__device__ bool __nv_atomic_compare_exchange_n(T *, U *, V, bool, int, int,
                                               int = __NV_THREAD_SCOPE_SYSTEM);
template <class T, class U, class V>
__device__ bool __nv_atomic_compare_exchange(T *, U *, V *, bool, int, int,
                                             int = __NV_THREAD_SCOPE_SYSTEM);
#define CUDA_REWRITE_NV_ATOMIC_FETCH(Op)                                       \
  template <class T, class U>                                                  \
  __device__ T __nv_atomic_fetch_##Op(T *, U, int,                             \
                                      int = __NV_THREAD_SCOPE_SYSTEM);         \
  template <class T, class U>                                                  \
  __device__ T __nv_atomic_##Op##_fetch(T *, U, int,                           \
                                        int = __NV_THREAD_SCOPE_SYSTEM);
CUDA_REWRITE_NV_ATOMIC_FETCH(add)
CUDA_REWRITE_NV_ATOMIC_FETCH(sub)
CUDA_REWRITE_NV_ATOMIC_FETCH(and)
CUDA_REWRITE_NV_ATOMIC_FETCH(or)
CUDA_REWRITE_NV_ATOMIC_FETCH(xor)
CUDA_REWRITE_NV_ATOMIC_FETCH(min)
CUDA_REWRITE_NV_ATOMIC_FETCH(max)
#undef CUDA_REWRITE_NV_ATOMIC_FETCH
__device__ void __nv_atomic_thread_fence(int, int = __NV_THREAD_SCOPE_SYSTEM);
#endif
// The cache-hinted stores and the last-use load, which nvcc declares for
// every built-in and vector type (sm_32_intrinsics.h) and clang's
// intrinsics header only for the half types.
#if defined(__CUDA__) && defined(__cplusplus)
template <class T, class U> __device__ void __stcg(T *, U);
template <class T, class U> __device__ void __stcs(T *, U);
template <class T, class U> __device__ void __stwb(T *, U);
template <class T> __device__ T __ldlu(const T *);
#endif
// nvcc's crt/math_functions.h and .hpp make these min and max overloads host
// and device functions; clang's CUDA wrapper declares them for the device
// only.
#if defined(__CUDA__) && defined(__cplusplus)
#define CUDA_REWRITE_HOST_MIN_MAX(R, A, B)                                     \
  static inline __host__ R min(const A a, const B b) { return a < b ? a : b; } \
  static inline __host__ R max(const A a, const B b) { return a > b ? a : b; }
CUDA_REWRITE_HOST_MIN_MAX(int, int, int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned int, unsigned int, unsigned int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned int, int, unsigned int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned int, unsigned int, int)
CUDA_REWRITE_HOST_MIN_MAX(long int, long int, long int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned long int, unsigned long int, unsigned long int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned long int, long int, unsigned long int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned long int, unsigned long int, long int)
CUDA_REWRITE_HOST_MIN_MAX(long long int, long long int, long long int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned long long int, unsigned long long int,
                          unsigned long long int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned long long int, long long int,
                          unsigned long long int)
CUDA_REWRITE_HOST_MIN_MAX(unsigned long long int, unsigned long long int,
                          long long int)
CUDA_REWRITE_HOST_MIN_MAX(float, float, float)
CUDA_REWRITE_HOST_MIN_MAX(double, double, double)
CUDA_REWRITE_HOST_MIN_MAX(double, float, double)
CUDA_REWRITE_HOST_MIN_MAX(double, double, float)
#undef CUDA_REWRITE_HOST_MIN_MAX
#endif
)cpp";
}

} // namespace

llvm::StringRef parsePreludeText() {
  // CUDA 13 removed runtime functions old programs call: declared again so
  // that such a file parses, for RemovedApis to report or replace.
  static const std::string Text =
      builtinsText().str() + removedApiDeclarations();
  return Text;
}

std::optional<PatchedHeader>
patchedCudaRuntimeWrapper(llvm::StringRef ResourceDir) {
  llvm::SmallString<256> Path(ResourceDir);
  llvm::sys::path::append(Path, "include", "__clang_cuda_runtime_wrapper.h");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> File =
      llvm::MemoryBuffer::getFile(Path);
  if (!File)
    return std::nullopt;
  std::string Text = (*File)->getBuffer().str();
  bool Changed = false;
  // clang 22's definitions, replaced by using-declarations of the global
  // functions, which by then include the device-side ones declared above
  // them (<cstdlib>'s own came before those and name only the host's).
  static constexpr llvm::StringLiteral Own =
      "namespace std {\n"
      "__device__ static inline void free(void *__ptr) { ::free(__ptr); }\n"
      "__device__ static inline void *malloc(size_t __size) {\n"
      "  return ::malloc(__size);\n"
      "}\n"
      "} // namespace std\n";
  if (size_t At = Text.find(Own.str());
      At != std::string::npos &&
      Text.find(Own.str(), At + 1) == std::string::npos) {
    Text.replace(At, Own.size(),
                 "namespace std { using ::free; using ::malloc; } "
                 "// cuda-rewrite's parse: nvcc's overloads\n");
    Changed = true;
  }
  // nvcc defines __CUDACC__ as 1, so `#if __CUDACC__` works; the wrapper's
  // last definition, the one user code sees, is empty.
  static constexpr llvm::StringLiteral Empty = "#define __CUDACC__\n";
  if (size_t Last = Text.rfind(Empty.str()); Last != std::string::npos) {
    Text.replace(Last, Empty.size(), "#define __CUDACC__ 1\n");
    Changed = true;
  }
  if (!Changed)
    return std::nullopt;
  std::string Patched = std::move(Text);
  return PatchedHeader{Path.str().str(), std::move(Patched)};
}

} // namespace cuda_rewrite
