//===- cuda_rewrite/fuse.cuh - Helpers of fused stage kernels --*- CUDA -*-===//
//
// Part of cuda-rewrite: what the kernels and launchers the fuse pass
// generates (docs/fuse.md) use. Standalone: needs neither relocatable device
// code nor the rest of the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_FUSE_CUH
#define CUDA_REWRITE_FUSE_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <climits>
#include <initializer_list>

namespace cuda_rewrite {
namespace fuse {

/// A warp's tile of an intermediate stage in shared memory: Width columns
/// per row, addressed by image coordinates, (X0, Y0) its first point.
template <typename T, int Width> struct Tile {
  T *Data;
  int X0, Y0;
  __device__ T &operator()(int X, int Y) const {
    return Data[(Y - Y0) * Width + (X - X0)];
  }
};

/// A stage's store to an intermediate that is also read after the fused
/// kernel: the value goes to the tile, and to global memory where
/// \p Global is not null (the warp's own tile: overlapping points are
/// computed by several warps, but stored by one).
template <typename T, typename U, typename V>
__device__ void keepAndStore(T &Slot, U *Global, V Value) {
  Slot = Value;
  if (Global)
    *Global = Slot;
}

/// A stage's store to global memory from a point computed past the warp's
/// own tile: only the tile's owner stores it.
template <typename U, typename V>
__device__ void storeIf(bool Own, U *Global, V Value) {
  if (Own)
    *Global = Value;
}

/// The allocation holding \p P (its base), or null where the driver does not
/// know it.
inline CUdeviceptr allocationOf(const void *P) {
  using GetRange = CUresult (*)(CUdeviceptr *, size_t *, CUdeviceptr);
  static GetRange Get = [] {
    void *Fn = nullptr;
    cudaDriverEntryPointQueryResult Found;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &Fn, 12000,
                                         cudaEnableDefault,
                                         &Found) != cudaSuccess ||
        Found != cudaDriverEntryPointSuccess)
      return GetRange(nullptr);
    return reinterpret_cast<GetRange>(Fn);
  }();
  CUdeviceptr Base = 0;
  size_t Size = 0;
  if (!Get || Get(&Base, &Size, CUdeviceptr(P)) != CUDA_SUCCESS)
    return 0;
  return Base;
}

/// Whether every buffer in \p Written lies in an allocation of its own,
/// shared with no other buffer of \p Written or \p Others: then what a fused
/// kernel stores through global memory cannot change what another of its
/// stages reads. False (the launcher then runs the original launches) also
/// where the driver cannot tell.
inline bool separateAllocations(std::initializer_list<const void *> Written,
                                std::initializer_list<const void *> Others) {
  for (const void *W : Written) {
    CUdeviceptr Base = allocationOf(W);
    if (!Base)
      return false;
    int Same = 0;
    for (const void *P : Written)
      Same += allocationOf(P) == Base;
    for (const void *P : Others)
      Same += allocationOf(P) == Base;
    if (Same != 1)
      return false;
  }
  return true;
}

} // namespace fuse
} // namespace cuda_rewrite

#endif
