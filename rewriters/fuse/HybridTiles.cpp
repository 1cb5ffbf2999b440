//===- HybridTiles.cpp - Which tiles a fused kernel keeps in registers ----===//

#include "rewriters/fuse/HybridTiles.h"
#include "llvm/ADT/STLExtras.h"

namespace cuda_rewrite {

int64_t RegisterSource::offset(unsigned Axis) const {
  int64_t K = 0;
  for (const CoordinateStep &S : Steps[Axis])
    K += S.Offset;
  return K;
}

// A clamp keeps a coordinate between the unclamped one and the reading
// point's own (the fuse plan proves the clamp's bounds lie around the
// point), so a clamped step moves it by anything from min(k, 0) to max(k, 0).
int64_t RegisterSource::lowest(unsigned Axis) const {
  int64_t K = 0;
  for (const CoordinateStep &S : Steps[Axis])
    K += S.Clamped ? std::min<int64_t>(S.Offset, 0) : S.Offset;
  return K;
}

int64_t RegisterSource::highest(unsigned Axis) const {
  int64_t K = 0;
  for (const CoordinateStep &S : Steps[Axis])
    K += S.Clamped ? std::max<int64_t>(S.Offset, 0) : S.Offset;
  return K;
}

std::string RegisterSource::text(unsigned Axis,
                                 const std::string &Origin) const {
  std::string V = Origin;
  for (const CoordinateStep &S : Steps[Axis]) {
    V = plusConstant(V, S.Offset);
    if (S.Clamped)
      V = S.Clamp + "(" + V + ", " + S.Lo + ", " + S.Hi + ")";
  }
  return V;
}

bool HybridPlan::splits(const FuseGroup &G, unsigned I) const {
  if (auto It = Sources.find(I); It != Sources.end() && !It->second.empty())
    return true;
  return llvm::any_of(InRegisters,
                      [&](const FuseBuffer *B) { return B->Producer == I; });
}

unsigned HybridPlan::chunkCount(const FuseStage &S) const {
  if (Axis == 0)
    return Chunks;
  int64_t Width = int64_t(TileWidth) + S.RegionHi[0] - S.RegionLo[0];
  return unsigned((Width + 31) / 32);
}

int64_t HybridPlan::columnBase(const FuseStage &S) const {
  return int64_t(TileWidth) + S.RegionHi[0] - 32 * int64_t(chunkCount(S));
}

int64_t HybridPlan::rowBase(const FuseStage &S) const {
  return Axis == 0 ? S.RegionLo[1]
                   : int64_t(TileRows) + S.RegionHi[1] - int64_t(Rows);
}

int64_t HybridPlan::rowCount(const FuseStage &S) const {
  return Axis == 0 ? int64_t(TileRows) + S.RegionHi[1] - S.RegionLo[1]
                   : int64_t(Rows);
}

int64_t HybridPlan::idleLanes(const FuseStage &S) const {
  return Axis == 0 ? 0 : S.RegionLo[0] - columnBase(S);
}

namespace {

class Planner {
public:
  Planner(const FuseGroup &G, BoundText Bound) : G(G), Bound(Bound) {}

  /// The register candidates stage \p I reads at one of its points, with
  /// the steps that lead there. Candidates read in a way the kernel cannot
  /// gather go to Bad.
  std::vector<RegisterSource> sourcesOf(unsigned I) {
    const FuseStage &S = G.Stages[I];
    std::vector<RegisterSource> Out;
    for (const StageRead &R : S.Access.Reads) {
      const FuseBuffer *B = G.bufferPassedAs(S, R.Buffer);
      if (!B || !B->OnChip || B->Producer == I)
        continue;
      std::vector<RegisterSource> Inner;
      if (B->Inlined) {
        Inner = sourcesOf(B->Producer);
      } else {
        Inner.emplace_back();
        Inner.back().Buffer = B;
      }
      std::optional<CoordinateStep> Step[2];
      std::string Why;
      for (unsigned D : {0u, 1u})
        if (R.Coordinates.size() > D)
          Step[D] = stepOf(S, R.Coordinates[D], D, Why);
      for (RegisterSource &Src : Inner) {
        if (!Step[0] || !Step[1]) {
          Bad.emplace(Src.Buffer, Why.empty() ? "a read of it has no x and "
                                                "y coordinates"
                                              : Why);
          continue;
        }
        for (unsigned D : {0u, 1u})
          Src.Steps[D].insert(Src.Steps[D].begin(), *Step[D]);
        Out.push_back(Src);
      }
    }
    return Out;
  }

  /// The sources of the group's stages that run loops, without repeats.
  void collect(HybridPlan &Plan) {
    for (unsigned I = 0; I != G.Stages.size(); ++I) {
      if (!G.Stages[I].Needed || G.Stages[I].Inlined)
        continue;
      std::vector<RegisterSource> &Unique = Plan.Sources[I];
      for (RegisterSource &Src : sourcesOf(I))
        if (llvm::none_of(Unique, [&](const RegisterSource &U) {
              return U.Buffer == Src.Buffer &&
                     U.text(0, "x") == Src.text(0, "x") &&
                     U.text(1, "y") == Src.text(1, "y");
            }))
          Unique.push_back(Src);
    }
  }

  /// Whether reader \p C can gather \p Src from its producer's registers:
  /// at most 31 columns left of C's parallelogram (one chunk back), never
  /// right of it, and inside the producer's rows.
  std::string reachable(unsigned C, const RegisterSource &Src) const {
    const FuseStage &P = G.Stages[Src.Buffer->Producer];
    const FuseStage &R = G.Stages[C];
    int64_t Lag = P.RegionHi[0] - R.RegionHi[0];
    if (Src.highest(0) > Lag || Src.lowest(1) + R.RegionLo[1] < P.RegionLo[1] ||
        Src.highest(1) + R.RegionHi[1] > P.RegionHi[1])
      return "a read of it lies outside its producer's region";
    if (Lag - Src.lowest(0) > 31)
      return "'" + R.Kernel->getNameAsString() +
             "' reads it more than 31 columns left of its own point";
    return "";
  }

  std::map<const FuseBuffer *, std::string> Bad;

private:
  std::optional<CoordinateStep> stepOf(const FuseStage &S,
                                       const CoordinateRead &C, unsigned D,
                                       std::string &Why) {
    if (C.Axis != D || C.Scale != 1 || C.Divisor != 1) {
      Why = "a read of it is not at a constant offset";
      return std::nullopt;
    }
    CoordinateStep Step;
    Step.Offset = C.Offset + C.Add;
    if (!C.Clamped)
      return Step;
    std::optional<std::string> Lo = Bound(S, C.LoValue),
                               Hi = Bound(S, C.HiValue);
    if (!C.ClampCall || !Lo || !Hi) {
      Why = "a read of it is clamped to bounds that are not a parameter "
            "plus a constant";
      return std::nullopt;
    }
    Step.Clamped = true;
    Step.Clamp = C.ClampFunction;
    Step.Lo = *Lo;
    Step.Hi = *Hi;
    return Step;
  }

  const FuseGroup &G;
  BoundText Bound;
};

} // namespace

HybridPlan planHybridTiles(const FuseGroup &G, const FuseTile &T,
                           BoundText Bound, unsigned MaxRegisters) {
  HybridPlan Plan;
  Plan.Axis = T.RegisterRows ? 1 : 0;
  Plan.Chunks = T.RegisterChunks;
  Plan.Rows = std::min(T.RegisterRows, T.Rows);
  Plan.TileWidth = T.width();
  Plan.TileRows = T.Rows;
  if (!Plan.Chunks && !Plan.Rows)
    return Plan;
  Planner P(G, Bound);
  P.collect(Plan);
  for (const auto &[Stage, Sources] : Plan.Sources)
    for (const RegisterSource &Src : Sources)
      if (std::string Why = P.reachable(Stage, Src); !Why.empty())
        P.Bad.emplace(Src.Buffer, Why);
  // Register chunks follow the warp's own columns and rows: a stage at
  // another scale (a pyramid's other level) keeps its tile in shared
  // memory.
  for (const FuseBuffer &B : G.Written) {
    const FuseStage &S = G.Stages[B.Producer];
    if (B.OnChip && !B.Inlined && !(S.Scale[0].unit() && S.Scale[1].unit()))
      P.Bad.emplace(&B, "it is computed at another scale than the warp's "
                        "tile");
  }
  unsigned Registers = 0;
  for (const FuseBuffer &B : G.Written) {
    if (!B.OnChip || B.Inlined)
      continue;
    if (auto It = P.Bad.find(&B); It != P.Bad.end()) {
      Plan.Kept.push_back("'" + B.Name + "': " + It->second);
      continue;
    }
    const FuseStage &S = G.Stages[B.Producer];
    unsigned Rows = unsigned(Plan.rowCount(S)), Chunks = Plan.chunkCount(S);
    unsigned Words = B.ElementType == "double" ? 2 : 1;
    if (Registers + Chunks * Rows * Words > MaxRegisters) {
      Plan.Kept.push_back("'" + B.Name + "': its " + std::to_string(Chunks) +
                          " x " + std::to_string(Rows) +
                          " register points per lane would take more than " +
                          std::to_string(MaxRegisters) +
                          " registers per thread with the others");
      continue;
    }
    Registers += Chunks * Rows * Words;
    Plan.InRegisters.insert(&B);
  }
  for (auto &[Stage, Sources] : Plan.Sources)
    llvm::erase_if(Sources, [&](const RegisterSource &Src) {
      return !Plan.InRegisters.count(Src.Buffer);
    });
  return Plan;
}

} // namespace cuda_rewrite
