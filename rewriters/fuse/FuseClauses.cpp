//===- FuseClauses.cpp - What a fuse pragma asks for ----------------------===//

#include "rewriters/fuse/FuseClauses.h"
#include "analysis/Pragmas.h"
#include "rewriters/fuse/FuseCostInput.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>

namespace cuda_rewrite {

/// tile(x, y[, w]): columns per lane and rows of the warp's tile, and
/// warps per block (4 when left out).
static void tileClause(const Candidate &C, std::optional<FuseTile> &Tile) {
  const PragmaClause *Clause =
      C.Annotation ? C.Annotation->clause("tile") : nullptr;
  if (!Clause || (Clause->Args.size() == 1 && Clause->Args[0] == "auto"))
    return;
  // The pragma's grammar checked the form and the ranges (x in 1..8, y in
  // 1..64, w in 1..32).
  unsigned X = 1, Y = 1, Warps = 4;
  const std::vector<std::string> &Args = Clause->Args;
  (void)llvm::StringRef(Args[0]).getAsInteger(10, X);
  (void)llvm::StringRef(Args[1]).getAsInteger(10, Y);
  if (Args.size() == 3)
    (void)llvm::StringRef(Args[2]).getAsInteger(10, Warps);
  Tile = FuseTile{X, Y, Warps};
}

/// hybrid(f[, x|y]): the grammar checked 0 <= f <= 1 and the dimension.
static void hybridClause(const Candidate &C, FuseClauses &Clauses) {
  const PragmaClause *Clause =
      C.Annotation ? C.Annotation->clause("hybrid") : nullptr;
  if (!Clause)
    return;
  const std::vector<std::string> &Args = Clause->Args;
  double F = 0;
  if (Args[0] == "auto" || llvm::StringRef(Args[0]).getAsDouble(F))
    Clauses.Fraction = std::nullopt;
  else
    Clauses.Fraction = F;
  if (Args.size() > 1)
    Clauses.SplitAxis = Args[1] == "y" ? 1u : 0u;
  else if (!Clauses.Fraction)
    Clauses.SplitAxis = std::nullopt;
}

FuseClauses parseFuseClauses(const Candidate &C) {
  FuseClauses Clauses;
  tileClause(C, Clauses.Tile);
  hybridClause(C, Clauses);
  return Clauses;
}

/// The register splits a block may use: hybrid(f[, x|y]) names one (the
/// dimension x where left out); hybrid(auto[, x|y]) leaves the fraction
/// (0, 0.5 or 1) and, without a dimension, the dimension open.
static std::vector<std::pair<double, unsigned>>
registerSplits(const FuseClauses &Clauses) {
  std::vector<double> Fractions = {0, 0.5, 1};
  if (Clauses.Fraction)
    Fractions = {*Clauses.Fraction};
  std::vector<std::pair<double, unsigned>> Splits;
  for (double F : Fractions)
    for (unsigned A : {0u, 1u})
      if ((F == 0 && A == 0) || (F > 0 && A == Clauses.SplitAxis.value_or(A)))
        Splits.push_back({F, A});
  return Splits;
}

std::vector<CostConfig> fuseCandidates(const FuseClauses &Clauses) {
  // The tiles: tile(..)'s, or those the calibration sweeps measured and
  // that could win: blocks of 4 or 8 warps (2 never beat 4 beyond
  // run-to-run noise, and lost by up to 46%:
  // bench/experiments/data/fuse_sweep_warps_h100.txt) and tiles of at most
  // 16 rows (32 never won, and the linear model does not see why:
  // bench/RESULTS.md, 2026-11-21 20:10 entry).
  std::vector<CostConfig> Tiles;
  if (const std::optional<FuseTile> &Tile = Clauses.Tile) {
    CostConfig K;
    K.ColumnsPerLane = Tile->ColumnsPerLane;
    K.Rows = Tile->Rows;
    K.Warps = Tile->Warps;
    Tiles.push_back(K);
  } else {
    for (const CostConfig &K : defaultCandidates(false))
      if (K.Warps >= 4 && K.Rows <= 16)
        Tiles.push_back(K);
  }
  std::vector<CostConfig> Candidates;
  for (const CostConfig &Tile : Tiles)
    for (auto [F, A] : registerSplits(Clauses)) {
      CostConfig K = Tile;
      K.RegisterFraction = F;
      K.SplitAxis = A;
      // The model's tiles keep whole chunks or rows in registers; the
      // tile that tile(..) names rounds, but must keep some.
      double Kept = F * (A ? K.Rows : K.ColumnsPerLane);
      if (F == 0 ||
          (Clauses.Tile ? Kept >= 0.5 : Kept >= 1 && Kept == std::floor(Kept)))
        Candidates.push_back(K);
    }
  // Where the model cannot tell block sizes apart (its terms see them only
  // through occupancy and per-block table copies), 4 warps wins the tie.
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
