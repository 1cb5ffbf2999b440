//===- HybridTiles.h - Which tiles a fused kernel keeps in registers -*- C++
//-*-===//
//
// Hybrid tiling (PolyMage-GPU section 5, Algorithm 1; Appendix A of its
// extended version, docs/references.md, for other split dimensions): part of an
// intermediate's tile lives in registers, lane l of register chunk j holding
// column base + 32 j + l of some rows. A register chunk of a stage is shifted
// by its region's right edge (the paper's parallelogram tiles), so a reader's
// point at lane l reads its producer's points at lanes l + e with -31 <= e <=
// 0: its own register (type 1 of Figure 4), another lane of the same chunk
// (type 3), of the chunk on the left (type 4), or the shared part (type 2),
// through warp shuffles that the whole warp executes.
//
// - Split along x: the rightmost chunks of every row of the region are in
//   registers, the columns left of them (and the left overlap) in shared
//   memory.
// - Split along y: the last rows of the region are in registers, shifted by
//   the region's lower edge, so a read `y + k` of a producer is the same or
//   an earlier register row, or a row of the shared part above. The chunks
//   of a register row span the region's whole width (lanes left of the
//   region take part in the shuffles but compute nothing).
//
// This file decides which on-chip buffers go to registers and lists, per
// stage, the points of register buffers that one of its points reads
// (directly or through inlined stages), with the coordinates written out so
// that the kernel can gather them before it calls the point function.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_HYBRIDTILES_H
#define CUDA_REWRITE_REWRITERS_FUSE_HYBRIDTILES_H

#include "rewriters/fuse/FuseCodeGen.h"
#include "rewriters/fuse/FusePlan.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One read along an axis: `v + Offset`, or `Clamp(v + Offset, Lo, Hi)`,
/// with Lo and Hi in the fused kernel's parameter names.
struct CoordinateStep {
  int64_t Offset = 0;
  bool Clamped = false;
  std::string Clamp, Lo, Hi;
};

/// A point of a register buffer that a stage's point reads: the steps
/// from the reader's coordinate to the buffer's, through inlined stages.
struct RegisterSource {
  const FuseBuffer *Buffer = nullptr;
  std::vector<CoordinateStep> Steps[2]; ///< x, y.

  /// The offset when no clamp moves the coordinate (interior warps).
  int64_t offset(unsigned Axis) const;
  /// The least and greatest offset any clamping can give.
  int64_t lowest(unsigned Axis) const;
  int64_t highest(unsigned Axis) const;
  /// The coordinate as C++, from \p Origin ("x" or "y").
  std::string text(unsigned Axis, const std::string &Origin) const;
};

struct HybridPlan {
  unsigned Axis = 0; ///< The split dimension: 0 (x) or 1 (y).
  /// Split along x: the 32-column chunks of each tile in registers.
  unsigned Chunks = 0;
  /// Split along y: the rows of each region in registers.
  unsigned Rows = 0;
  unsigned TileWidth = 32, TileRows = 1; ///< The warp's output tile.
  std::set<const FuseBuffer *> InRegisters;
  /// Per stage of the group (not inlined): the register points one of its
  /// points reads, without repeats.
  std::map<unsigned, std::vector<RegisterSource>> Sources;
  /// Buffers that stay in shared memory only, with why ("'a': ...").
  std::vector<std::string> Kept;

  bool inRegisters(const FuseBuffer *B) const {
    return B && InRegisters.count(B);
  }
  /// Whether stage \p I has a register part: it writes or reads a register
  /// buffer.
  bool splits(const FuseGroup &G, unsigned I) const;

  // The register part of stage S's region, relative to the warp's tile
  // origin (x0, y0): chunkCount(S) chunks from column columnBase(S), rows
  // rowBase(S) + [0, rowCount(S)).
  unsigned chunkCount(const FuseStage &S) const;
  int64_t columnBase(const FuseStage &S) const;
  int64_t rowBase(const FuseStage &S) const;
  int64_t rowCount(const FuseStage &S) const;
  /// The lanes of chunk 0 left of S's region (split along y), which
  /// compute nothing.
  int64_t idleLanes(const FuseStage &S) const;
};

/// A clamp bound of stage \p S in the fused kernel's names, if it is a
/// parameter plus a constant.
using BoundText = llvm::function_ref<std::optional<std::string>(
    const FuseStage &S, const std::optional<ParamPlusConstant> &V)>;

/// The buffers of \p G whose tiles keep a part in registers for the warp
/// tile \p T (T.RegisterChunks chunks split along x, or T.RegisterRows rows
/// split along y): on-chip, not inlined, every read of them at constant
/// offsets (clamped with bounds \p Bound can write) and at most 31 columns
/// left of the reader's parallelogram, in at most \p MaxRegisters
/// registers per thread in all.
HybridPlan planHybridTiles(const FuseGroup &G, const FuseTile &T,
                           BoundText Bound, unsigned MaxRegisters = 96);

} // namespace cuda_rewrite

#endif
