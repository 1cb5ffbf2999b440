//===- InteriorWarps.h - Fused kernels' interior warps ----------*- C++ -*-===//
//
// Most warps of a fused kernel compute points well inside the image: every
// point of every stage's region in the warp lies inside the launch and the
// stage's guards, and every clamp of a read at the point's own coordinate
// plus a constant leaves that coordinate as it is. Such an interior warp
// runs the point functions without guards, bounds checks or those clamps
// (Halide partitions its loops likewise): the kernel computes a flag per
// warp, and the point functions take it as their template argument
// Interior.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_INTERIORWARPS_H
#define CUDA_REWRITE_REWRITERS_FUSE_INTERIORWARPS_H

#include "rewriters/fuse/FuseCodeGen.h"
#include "rewriters/fuse/HybridTiles.h"
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// `(Scale * V + Add) / Divisor + Offset` for read coordinate \p C,
/// without the parts that are 1 or 0 (C division, as the stage's).
std::string readCoordinate(const CoordinateRead &C, const std::string &V);

/// The clamps an interior warp skips: those of reads at the point's own
/// coordinate plus a constant, whose bounds are parameters plus constants.
std::set<const clang::CallExpr *> clampsInteriorWarpsSkip(const FuseGroup &G);

/// What makes a warp of the tile \p T interior, over its tile origin
/// (x0, y0) and the kernel's names (bounds in them from \p Bound): the
/// conditions to hold together, with the clamps \p Unclamped skipped; none
/// where a bound has no such text (no warp is interior).
std::optional<std::vector<std::string>>
interiorConditions(const FuseGroup &G, const FuseTile &T,
                   const std::set<const clang::CallExpr *> &Unclamped,
                   BoundText Bound);

} // namespace cuda_rewrite

#endif
