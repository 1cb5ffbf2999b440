//===- FuseCodeGen.h - Fused kernels for groups of stages -------*- C++ -*-===//
//
// One fused group (FusePlan) becomes a namespace of generated code:
//
//   namespace fused_blurX_to_blurY {
//   __device__ void blurX_point(int x, int y, ...);  // a stage at one point
//   __device__ void blurY_point(int x, int y, ...);
//   __global__ void kernel(...);  // each warp: one tile, stage after stage
//   static bool launch(...);      // checks, then launches; false: run the
//   }                             // original launches instead
//
// A stage's point function is its kernel's body with the coordinates as
// parameters (the prologue's declarations removed), its reads of on-chip
// intermediates turned into reads of the warp's tile at the same
// coordinates (clamps kept), and its stores sent to the tile, to global
// memory, or both. The kernel runs each stage over its region of the warp's
// tile, lanes taking consecutive points, with __syncwarp between stages
// (overlapped tile per warp, section 4 of PolyMage-GPU).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSECODEGEN_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSECODEGEN_H

#include "rewriters/fuse/FusePlan.h"
#include "clang/AST/ASTContext.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The warp's output tile: 32 * LanesX columns (LanesX points per lane
/// along x), Rows rows; Warps warps per block, stacked along y. Hybrid
/// tiling (HybridTiles.h) keeps part of each intermediate that allows it in
/// registers: split along x, its last RegisterChunks 32-column chunks; split
/// along y, its last RegisterRows rows. At most one of the two is set.
struct FuseTile {
  unsigned ColumnsPerLane = 1, Rows = 8, Warps = 4, RegisterChunks = 0;
  unsigned RegisterRows = 0;
  unsigned width() const { return 32 * ColumnsPerLane; }
  bool hybrid() const { return RegisterChunks || RegisterRows; }
};

/// Shared memory per warp, in bytes, for \p G's on-chip tiles.
unsigned sharedBytesPerWarp(const FuseGroup &G, const FuseTile &T,
                            clang::ASTContext &Ctx);

struct FuseCode {
  std::string Definitions; ///< The namespace, to go before the host function.
  std::string Call;        ///< `fused_a_to_b::launch(grid, block, ...)`.
  /// Why no code could be generated, if so.
  std::optional<Refusal> Refused;
  unsigned SharedBytesPerWarp = 0;
  /// Constant tables copied to shared memory once per block
  /// (StagedTables.h), and their bytes.
  std::vector<std::string> StagedTables;
  unsigned StagedBytes = 0;
  /// Hybrid tiling: the buffers with register chunks, and those kept in
  /// shared memory only, with why.
  std::vector<std::string> InRegisters, KeptShared;
};

/// The code of group \p G, named \p Name, from the block at \p Where.
FuseCode generateFusedGroup(const FuseGroup &G, const FuseTile &T,
                            const std::string &Name, const std::string &Where,
                            clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
