//===- FusePlan.h - Which stages of a fuse block run together ---*- C++ -*-===//
//
// The fuse pass (PolyMage-GPU, docs/references.md) turns a host block of
// image-stage launches into fewer kernels, each computing a group of stages
// in overlapped tiles, one tile per warp (section 4 of PolyMage-GPU). This file
// decides what is legal: which consecutive stages form a group, which
// buffers stay on chip (shared memory tiles) and which go to global memory,
// and how far around the warp's output tile each stage must be computed.
//
// Legality, in one place (docs/fuse.md explains it at length):
// - A buffer is kept on chip only if one stage of the group writes it,
//   only later stages of the group read it, nothing reads it after the
//   block (StageGraph's liveness), and every read is a same-scale read at
//   a constant offset, clamped or not, whose points the producer provably
//   writes (its guards, compared symbolically through the launches'
//   arguments) and whose index names the same element as the producer's
//   store (same strides, rows no longer than the producer's guard).
// - Every other flow of data between two stages of a group is refused
//   (another warp's global store is not ordered before a read), as is any
//   write after read or write after write of a global buffer in a group.
// - A read at a scaled coordinate (`2 * y - 2`, `(x + 1) / 2`: pyramids)
//   may come from a tile too: the producer is then computed at that scale
//   of the warp's tile (FuseStage::Scale), and its launch may have another
//   grid than the group's last stage.
// - What the analysis cannot prove at compile time, the launcher checks
//   before the fused launch, running the original launches otherwise: the
//   launches' extents cover the guards, the relations between the levels'
//   sizes that scaled reads rely on hold, the fused grid covers every
//   stored point, and the buffers written through global memory share no
//   allocation with the other buffers.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSEPLAN_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSEPLAN_H

#include "analysis/Refusal.h"
#include "analysis/StageAccess.h"
#include "analysis/StageGraph.h"
#include "rewriters/fuse/HostExpr.h"
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// A bound in host terms: a launch argument's value plus a constant (Arg
/// empty: the constant alone), or, where LaunchExtent is set (Arg empty),
/// the launch's extent (grid times block) along the bound's axis plus the
/// constant.
struct HostBound {
  std::string Arg;
  int64_t Constant = 0;
  bool LaunchExtent = false;
  /// The constant alone.
  bool constant() const { return Arg.empty() && !LaunchExtent; }
};

/// The points a stage writes along one axis: at least every Lower bound,
/// below every Upper bound.
struct AxisDomain {
  std::vector<HostBound> Lower, Upper;
};

/// A stage's scale along an axis relative to the group's output tile: the
/// stage's point Num * c / Den corresponds to the output's point c (2 / 1
/// for the finer level a downsampling consumer reads, 1 / 2 for the coarser
/// level an upsampling consumer reads).
struct AxisScale {
  int64_t Num = 1, Den = 1;
  bool unit() const { return Num == Den; }
  friend bool operator==(const AxisScale &A, const AxisScale &B) {
    return A.Num == B.Num && A.Den == B.Den;
  }
};

/// A stage of the block, as the fused kernel computes it.
struct FuseStage {
  unsigned Index = 0; ///< In the stage graph.
  const clang::CUDAKernelCallExpr *Launch = nullptr;
  const clang::FunctionDecl *Kernel = nullptr; ///< The definition.
  StageAccess Access;
  std::vector<std::string> ArgText; ///< Per kernel parameter, host text.
  AxisDomain Domain[2];             ///< x, y.
  /// Around the warp's output tile at the stage's scale: the stage is
  /// computed over [s * x0 + RegionLo[0], s * (x0 + TileW) + RegionHi[0])
  /// with s = Scale[0], and likewise in y (see scaledOrigin, regionExtent).
  int64_t RegionLo[2] = {0, 0}, RegionHi[2] = {0, 0};
  AxisScale Scale[2];
  /// Its launch grid, an index into FuseGroup::Grids (0: the last stage's).
  unsigned Grid = 0;
  bool Needed = false;   ///< Some point of it is used (else skipped).
  bool NeedsOwn = false; ///< Writes global memory and computes past its tile.
  /// Computed where its consumers read it instead of into a tile (no tile,
  /// loop or __syncwarp, for some recomputation): see inlinePointwise() in
  /// FusePlan.cpp for which stages.
  bool Inlined = false;
};

/// A buffer written by a group's stage.
struct FuseBuffer {
  const clang::ValueDecl *Decl = nullptr;
  std::string Name;      ///< The host argument's text.
  unsigned Producer = 0; ///< Stage index in the group.
  bool OnChip = false;   ///< Read by later stages of the group.
  bool Global = false;   ///< Stored to global memory (read after the group).
  bool Inlined = false;  ///< Its producer is inlined: it has no tile.
  std::string ElementType;
};

/// The launcher's check that grid \p Grid's extent along \p Axis (grid
/// times block) is at least \p Bound: the stage's launch computes every
/// point its guards let through, which the fused kernel relies on.
struct ExtentCheck {
  unsigned Grid = 0, Axis = 0;
  HostBound Bound;
};

/// The launcher's check that the fused grid's tiles, at \p Scale, reach
/// \p Bound along \p Axis: every point of a stage that stores to global
/// memory and has a grid of its own is some warp's.
struct CoverageCheck {
  unsigned Axis = 0;
  AxisScale Scale;
  HostBound Bound;
};

struct FuseGroup {
  std::vector<FuseStage> Stages;
  std::vector<FuseBuffer> Written;
  /// The launch grids as written, the last stage's first.
  std::vector<std::string> Grids;
  std::vector<ExtentCheck> ExtentChecks;
  /// Relations between launch arguments that scaled reads and derived
  /// strides rely on ("2 * (H1 - 1) <= H0 - 1", "(W / 2) == W2"), sorted
  /// by their description.
  std::vector<RelationCheck> RelationChecks;
  std::vector<CoverageCheck> CoverageChecks;
  /// Buffers written through global memory, and every other buffer the
  /// group accesses that was not allocated fresh: they must not share an
  /// allocation (checked by the launcher).
  std::vector<std::string> GlobalWrites, OtherBuffers;

  /// The buffer of the group stage \p S's parameter \p P passes, if the
  /// group writes it.
  const FuseBuffer *bufferPassedAs(const FuseStage &S,
                                   const clang::ParmVarDecl *P) const;
};

/// `v + k` for a constant k, as a C++ expression: `v`, `v + 2`, `v - 1`.
std::string plusConstant(const std::string &V, int64_t K);

/// Where stage \p S's region along \p D starts before its RegionLo, as C++
/// over the tile origin \p Origin ("x0", "2 * x0", "x0 / 2"; the origin is
/// a multiple of the tile, which the scaled tile divides).
std::string scaledOrigin(const FuseStage &S, unsigned D,
                         const std::string &Origin);

/// The points of stage \p S's region along \p D for a tile of
/// \p TileExtent points, or -1 where the tile does not scale to whole
/// points.
int64_t regionExtent(const FuseStage &S, unsigned D, int64_t TileExtent);

/// "extent.x >= (W) - 1", "extent1.y >= (H0)".
std::string describeExtentCheck(const ExtentCheck &C);

/// A stage the pass leaves as its own launch, with the reason.
struct UnfusedStage {
  unsigned Index = 0;
  std::string Why;
};

/// One launch of the rewritten block: group Index of FusePlan::Groups, or
/// the stage graph's stage Index launched as written.
struct FuseStep {
  bool IsGroup = false;
  unsigned Index = 0;
};

struct FusePlan {
  /// Each of two stages or more, its stages in the order they run; a group
  /// of one stage is never formed.
  std::vector<FuseGroup> Groups;
  /// By stage index.
  std::vector<UnfusedStage> Unfused;
  /// The groups and the unfused stages in the order the block runs them:
  /// an order of the stage graph's stages that keeps every edge (not
  /// always the launch order), so that one group can take stages whose
  /// launches other launches separate.
  std::vector<FuseStep> Schedule;
};

/// The stages of \p Graph, each as late as the stages after it allow (by
/// its longest path of edges of any kind to the last stages; launch order
/// among equals): an image pipeline's levels one after another, so that one
/// group can take a whole level (camera's twelve demosaic planes, then their
/// six interleavings) before the stages that read it. Keeps every edge.
std::vector<unsigned> levelOrder(const StageGraph &Graph);

/// The stages of \p Graph, each as soon after what it reads as the edges
/// allow: next, of the stages whose edges all come from stages placed, the
/// one whose latest producer was placed last (launch order among equals).
/// Chains of levels (a pyramid level's up pair and blend) come out
/// consecutive. Keeps every edge.
std::vector<unsigned> consumersNextOrder(const StageGraph &Graph);

/// The cost of running \p G as one kernel, or none where it cannot run.
using GroupCostFn = std::function<std::optional<double>(const FuseGroup &G)>;

/// Groups the stages of \p Graph by DP-Fusion over an order of them that
/// keeps every edge of the graph: the partition into consecutive groups of
/// least summed \p GroupCost (a stage alone stays its launch), over the
/// launch order and two others (levels one after another; consumers right
/// after their producers), the cheapest plan winning; then a stage left
/// alone may join, at its end, the group that produces what it reads, or,
/// at its start, the group that reads what it produces, where nothing
/// placed in between is ordered with it and it costs no more. Without a cost,
/// the launch order's fewest kernels. Refused when the block cannot be
/// rewritten at all.
PlanOrRefusal<FusePlan> planFusion(const StageGraph &Graph,
                                   clang::ASTContext &Ctx,
                                   GroupCostFn GroupCost = nullptr);

/// Whether evaluating \p E does nothing but compute its value: no
/// assignments, increments or volatile reads, constructors only trivial or
/// constexpr, and calls only of functions whose body is one `return` of
/// such an expression (image::clamp, image::grid), a few calls deep. The
/// launcher evaluates what the block's launches pass once, and the fallback
/// again: only such expressions may be shared that way.
bool evaluatesOnlyItsValue(const clang::Stmt *E);

} // namespace cuda_rewrite

#endif
