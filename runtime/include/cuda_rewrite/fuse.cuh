//===- cuda_rewrite/fuse.cuh - Helpers of fused stage kernels --*- CUDA -*-===//
//
// Part of cuda-rewrite: what the kernels and launchers the fuse pass
// generates (docs/fuse.md) use. Standalone: needs neither relocatable device
// code nor the rest of the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_FUSE_CUH
#define CUDA_REWRITE_FUSE_CUH

#include <climits>
#include <cuda.h>
#include <cuda_runtime.h>
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
  /// Whether (X, Y) lies in the tile, of \p Rows rows.
  __device__ bool contains(int X, int Y, int Rows) const {
    return holdsColumn(X) && Y >= Y0 && Y < Y0 + Rows;
  }
  __device__ bool holdsColumn(int X) const {
    return X >= X0 && X < X0 + Width;
  }
};

//===-- Hybrid tiling (PolyMage-GPU section 5) ---------------------------===//
//
// Part of a hybrid tile lives in registers: Regs[J][R] of lane L holds the
// point at column Base + 32 J + L, row Row0 + R. Split along x (SplitAxis
// 0), the register chunks are the tile's right columns, every row; split
// along y (SplitAxis 1), they are its bottom rows, every column, and the
// lanes of chunk 0 left of the region compute nothing. A stage's point in a
// register chunk first gathers the register points it reads (all lanes
// together: shuffles need the whole warp), then runs its point function
// with a Gathered view in place of the tile.

/// Where a stage stores its point of a register chunk.
template <typename T> struct Slot {
  T &Value;
  __device__ T &operator()(int, int) const { return Value; }
};

/// The register points one point of a stage reads, by their coordinates.
template <typename T, int N> struct Gathered {
  int X[N], Y[N];
  T V[N];
  __device__ void set(int I, int Xs, int Ys, T Value) {
    X[I] = Xs;
    Y[I] = Ys;
    V[I] = Value;
  }
  /// The point at (Xq, Yq): in interior warps both are the point's own
  /// coordinates plus constants, so the compiler resolves the search.
  __device__ T operator()(int Xq, int Yq) const {
    T Value = V[0];
#pragma unroll
    for (int I = 1; I < N; ++I)
      if (Xq == X[I] && Yq == Y[I])
        Value = V[I];
    return Value;
  }
};

/// The producer's point Shift (-31..0) columns left of this lane's, in
/// chunk J, register row Row, in an interior warp (PolyMage-GPU, Figure 7):
/// this lane's register (type 1), another lane's in the chunk (type 3), in
/// the chunk on the left (type 4), or the shared part at (X, Y) (type 2):
/// the columns left of chunk 0 (split along x) or the rows above row 0
/// (split along y, Row < 0). J, Row and Shift are constants once the loops
/// are unrolled.
template <int SplitAxis = 0, typename T, int Chunks, int Rows,
          typename SharedTile>
__device__ __forceinline__ T registerRead(const T (&Regs)[Chunks][Rows], int J,
                                          int Row, int Shift, int Lane,
                                          const SharedTile &Shared, int X,
                                          int Y) {
  if (SplitAxis == 1 && Row < 0) // Lanes left of the region have no column.
    return Shared.holdsColumn(X) ? Shared(X, Y) : T();
  const int R = Row < 0 ? 0 : Row;
  if (Shift == 0)
    return Regs[J][R];
  const int Source = (Lane + Shift) & 31;
  const T Here = __shfl_sync(0xffffffffu, Regs[J][R], Source);
  if (J == 0) // Split along y, only lanes left of the region reach past it.
    return Lane + Shift >= 0 || SplitAxis == 1 ? Here : Shared(X, Y);
  const T Left = __shfl_sync(0xffffffffu, Regs[J == 0 ? 0 : J - 1][R], Source);
  return Lane + Shift >= 0 ? Here : Left;
}

/// The producer's point at (X, Y) in a border warp, where clamps move the
/// coordinates: at most one chunk left of chunk J, in register rows
/// FirstRow .. FirstRow + Span of the register part whose first point is
/// (Column0, Row0), or in the shared part (left of it split along x, above
/// it split along y). Lanes whose point is not computed get a value they
/// do not use.
template <int Span, int SplitAxis = 0, typename T, int Chunks, int Rows,
          typename SharedTile>
__device__ __forceinline__ T registerReadAt(const T (&Regs)[Chunks][Rows],
                                            int J, int FirstRow, int Column0,
                                            int Row0, const SharedTile &Shared,
                                            int X, int Y) {
  const int Offset = X - Column0, Row = Y - Row0;
  const int Source = Offset & 31;
  T Value = T();
#pragma unroll
  for (int K = 0; K <= Span; ++K) {
    if (FirstRow + K < 0) // A row of the shared part (split along y).
      continue;
    const T Here = __shfl_sync(0xffffffffu, Regs[J][FirstRow + K], Source);
    const T Left =
        J == 0 ? T()
               : __shfl_sync(0xffffffffu,
                             Regs[J == 0 ? 0 : J - 1][FirstRow + K], Source);
    if (Row == FirstRow + K)
      Value = (Offset >> 5) == J ? Here : Left;
  }
  // Split along y, the shared part is the rows from the tile's first to
  // Row0 (a warp past the image's end clamps its reads far above them).
  const bool InShared =
      SplitAxis == 0 ? Offset < 0 && Shared.contains(X, Y, Rows)
                     : Row < 0 && Shared.contains(X, Y, Row0 - Shared.Y0);
  if (InShared)
    Value = Shared(X, Y);
  return Value;
}

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
