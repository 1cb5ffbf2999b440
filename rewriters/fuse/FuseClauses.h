//===- FuseClauses.h - What a fuse pragma asks for --------------*- C++ -*-===//
//
// `#pragma cuda_rewrite fuse [tile(auto|x, y[, w])] [hybrid(auto|f[, x|y])]`:
// the configurations the cost model may choose from for a block, and the
// cost of a group that DP-Fusion compares. The pass and --list share them, so
// that --list shows the groups the pass forms.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSECLAUSES_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSECLAUSES_H

#include "analysis/Candidates.h"
#include "gpu/GpuSpec.h"
#include "rewriters/fuse/FuseCodeGen.h"
#include "rewriters/fuse/FuseCostModel.h"
#include "rewriters/fuse/FusePlan.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The fused kernels' tiles are static shared memory: 48 KiB per block.
constexpr unsigned kFuseSharedPerBlock = 48 * 1024;

struct FuseClauses {
  std::optional<FuseTile> Tile; ///< tile(x, y); none for tile(auto) or none.
  /// hybrid(f); 0 without the clause; none for hybrid(auto), where the
  /// cost model chooses.
  std::optional<double> Fraction = 0.0;
  /// hybrid(f, x|y): the split dimension, 0 (x) or 1 (y); none where the
  /// cost model chooses (hybrid(auto)). hybrid(f) splits along x.
  std::optional<unsigned> SplitAxis = 0u;
};

FuseClauses parseFuseClauses(const Candidate &C);

/// The configurations the cost model chooses from: the clauses' where
/// given, else the candidates the calibration measured.
std::vector<CostConfig> fuseCandidates(const FuseClauses &Clauses);

/// The cost of a group for DP-Fusion: the least total of Algorithm 2 over
/// \p Candidates, none where no candidate is feasible.
GroupCostFn fuseGroupCost(clang::ASTContext &Ctx, const GpuSpec &Gpu,
                          std::vector<CostConfig> Candidates);

} // namespace cuda_rewrite

#endif
