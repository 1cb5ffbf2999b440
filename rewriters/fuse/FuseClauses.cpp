//===- FuseClauses.cpp - What a fuse pragma asks for ----------------------===//

#include "rewriters/fuse/FuseClauses.h"
#include "analysis/Pragmas.h"
#include "rewriters/fuse/FuseCostInput.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace cuda_rewrite {

/// tile(x, y[, w]): columns per lane and rows of the warp's tile, and
/// warps per block (4 when left out).
static std::string tileClause(const Candidate &C,
                              std::optional<FuseTile> &Tile) {
  const PragmaClause *Clause =
      C.Annotation ? C.Annotation->clause("tile") : nullptr;
  if (!Clause || (Clause->Args.size() == 1 && Clause->Args[0] == "auto"))
    return "";
  unsigned X, Y, Warps = 4;
  const std::vector<std::string> &Args = Clause->Args;
  if ((Args.size() != 2 && Args.size() != 3) ||
      llvm::StringRef(Args[0]).getAsInteger(10, X) ||
      llvm::StringRef(Args[1]).getAsInteger(10, Y) ||
      (Args.size() == 3 && llvm::StringRef(Args[2]).getAsInteger(10, Warps)) ||
      X < 1 || X > 8 || Y < 1 || Y > 64 || Warps < 1 || Warps > 32)
    return "tile(" + llvm::join(Args, ", ") +
           ") is not tile(x, y[, w]) with x (points per lane along x) in "
           "1..8, y (rows per warp) in 1..64 and w (warps per block) in 1..32";
  Tile = FuseTile{X, Y, Warps};
  return "";
}

/// hybrid(f): the grammar checked 0 <= f <= 1.
static std::optional<double> registerFraction(const Candidate &C) {
  const PragmaClause *Clause =
      C.Annotation ? C.Annotation->clause("hybrid") : nullptr;
  double F = 0;
  if (!Clause)
    return 0.0;
  if (Clause->Args[0] == "auto" ||
      llvm::StringRef(Clause->Args[0]).getAsDouble(F))
    return std::nullopt;
  return F;
}

FuseClauses parseFuseClauses(const Candidate &C) {
  FuseClauses Clauses;
  Clauses.Error = tileClause(C, Clauses.Tile);
  Clauses.Fraction = registerFraction(C);
  return Clauses;
}

std::vector<CostConfig> fuseCandidates(const FuseClauses &Clauses) {
  std::vector<CostConfig> Candidates;
  const std::optional<double> &Fraction = Clauses.Fraction;
  if (const std::optional<FuseTile> &Tile = Clauses.Tile) {
    // tile(..) fixes the tile; hybrid(auto) leaves the fraction open.
    for (double F : Fraction ? std::vector<double>{*Fraction}
                             : std::vector<double>{0, 0.5, 1}) {
      CostConfig K;
      K.ColumnsPerLane = Tile->ColumnsPerLane;
      K.Rows = Tile->Rows;
      K.Warps = Tile->Warps;
      K.RegisterFraction = F;
      if (F == 0 || K.registerChunks() > 0)
        Candidates.push_back(K);
    }
    return Candidates;
  }
  // Pruned to what the calibration sweeps measured and could win: blocks of
  // 4 or 8 warps (2 never beat 4 beyond run-to-run noise, and lost by up to
  // 46%: bench/experiments/data/fuse_sweep_warps_h100.txt) and tiles of at
  // most 16 rows (32 never won, and the linear model does not see why:
  // bench/RESULTS.md, 2026-11-21 20:10 entry). Where the model cannot tell
  // block sizes apart (its terms see them only through occupancy and
  // per-block table copies), 4 warps wins the tie.
  for (const CostConfig &K : defaultCandidates(!Fraction || *Fraction > 0))
    if (K.Warps >= 4 && K.Rows <= 16 &&
        (!Fraction || K.RegisterFraction == *Fraction))
      Candidates.push_back(K);
  llvm::stable_sort(Candidates, [](const CostConfig &A, const CostConfig &B) {
    return (A.Warps == 4) > (B.Warps == 4);
  });
  return Candidates;
}

GroupCostFn fuseGroupCost(clang::ASTContext &Ctx, const GpuSpec &Gpu,
                          std::vector<CostConfig> Candidates) {
  return [&Ctx, &Gpu, Candidates](const FuseGroup &G) -> std::optional<double> {
    std::optional<CostChoice> Best =
        chooseConfig(costStagesOf(G, Ctx), ImageExtent(), Gpu,
                     CostWeights::defaults(), Candidates, kFuseSharedPerBlock);
    if (!Best)
      return std::nullopt;
    return Best->Terms.Total;
  };
}

} // namespace cuda_rewrite
