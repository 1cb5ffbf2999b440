//===- FuseCostInput.cpp - A fused group as the cost model sees it --------===//

#include "rewriters/fuse/FuseCostInput.h"
#include "rewriters/fuse/StagedTables.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include <algorithm>
#include <map>

using namespace clang;

namespace cuda_rewrite {

static double workOf(const Stmt *S, unsigned Depth) {
  if (!S)
    return 0;
  double Work = 0;
  if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
    if (!BO->isCommaOp())
      Work += 1;
  } else if (const auto *UO = dyn_cast<UnaryOperator>(S)) {
    if (UO->getOpcode() == UO_Minus || UO->getOpcode() == UO_Not ||
        UO->getOpcode() == UO_LNot || UO->isIncrementDecrementOp())
      Work += 1;
  } else if (isa<ArraySubscriptExpr>(S) || isa<ConditionalOperator>(S)) {
    Work += 1;
  } else if (const auto *Call = dyn_cast<CallExpr>(S)) {
    // A call costs its body (clamps, small helpers); math functions
    // without a body here count as a few operations.
    const FunctionDecl *F = Call->getDirectCallee();
    const FunctionDecl *Def = F ? F->getDefinition() : nullptr;
    Work += Def && Def->hasBody() && Depth < 4
                ? workOf(Def->getBody(), Depth + 1)
                : 4;
  }
  for (const Stmt *C : S->children())
    Work += workOf(C, Depth);
  return Work;
}

double workOf(const Stmt *Body) { return workOf(Body, 0); }

namespace {

unsigned bytesOf(const ParmVarDecl *P, ASTContext &Ctx) {
  QualType T = P->getType();
  if (T->isPointerType())
    T = T->getPointeeType();
  return unsigned(Ctx.getTypeSizeInChars(T).getQuantity());
}

/// The offsets a read reaches along axis \p D: [k, k], or [min(k, 0),
/// max(k, 0)] when clamped (the clamp keeps it around the point); for a
/// scaled read, the offsets around the scaled point.
std::pair<int64_t, int64_t> reach(const StageRead &R, unsigned D) {
  if (R.Coordinates.size() <= D)
    return {0, 0};
  const CoordinateRead &C = R.Coordinates[D];
  int64_t K = C.Offset + C.Add;
  if (C.Scale != 1 || C.Divisor != 1)
    K = C.Offset + C.Add / std::max<int64_t>(1, C.Divisor);
  if (C.Clamped)
    return {std::min<int64_t>(K, 0), std::max<int64_t>(K, 0)};
  return {K, K};
}

} // namespace

std::vector<CostStage> costStagesOf(const FuseGroup &G, ASTContext &Ctx) {
  std::vector<CostStage> Out(G.Stages.size());
  for (unsigned I = 0; I != G.Stages.size(); ++I) {
    const FuseStage &S = G.Stages[I];
    CostStage &C = Out[I];
    C.Name = S.Kernel->getNameAsString();
    for (unsigned D : {0u, 1u}) {
      C.RegionLo[D] = S.RegionLo[D];
      C.RegionHi[D] = S.RegionHi[D];
      C.ScaleNum[D] = S.Scale[D].Num;
      C.ScaleDen[D] = S.Scale[D].Den;
    }
    C.Inlined = S.Inlined;
    // Register chunks follow the warp's own columns (HybridTiles.h): a
    // stage at another scale keeps all of its tile in shared memory.
    C.HybridEligible = S.Scale[0].unit() && S.Scale[1].unit();
    C.WorkPerPoint = std::max(1.0, workOf(S.Kernel->getBody()));
    std::map<const ParmVarDecl *, CostRead> Global;
    for (const StageRead &R : S.Access.Reads) {
      const FuseBuffer *B = G.bufferPassedAs(S, R.Buffer);
      if (B && B->OnChip && B->Producer < I) {
        // A read at a scaled coordinate is not a constant lane offset:
        // the producer's tile stays in shared memory (HybridTiles.h).
        for (const CoordinateRead &C : R.Coordinates)
          if (C.Scale != 1 || C.Divisor != 1)
            Out[B->Producer].HybridEligible = false;
        if (B->Inlined) {
          // Every read of an inlined stage evaluates it once more.
          CostStage &P = Out[B->Producer];
          if (!llvm::is_contained(P.Readers, I))
            P.Readers.push_back(I);
          unsigned Reads = 0;
          for (const StageRead &Other : S.Access.Reads)
            Reads += Other.Buffer == R.Buffer;
          P.ReadsPerReaderPoint = std::max(P.ReadsPerReaderPoint, Reads);
        }
        continue;
      }
      auto [It, New] = Global.try_emplace(R.Buffer);
      auto [XLo, XHi] = reach(R, 0);
      auto [YLo, YHi] = reach(R, 1);
      CostRead &G = It->second;
      G.ElementBytes = bytesOf(R.Buffer, Ctx);
      G.XLo = New ? XLo : std::min(G.XLo, XLo);
      G.XHi = New ? XHi : std::max(G.XHi, XHi);
      G.YLo = New ? YLo : std::min(G.YLo, YLo);
      G.YHi = New ? YHi : std::max(G.YHi, YHi);
      for (unsigned D : {0u, 1u})
        if (R.Coordinates.size() > D)
          (D ? G.YScale : G.XScale) =
              double(R.Coordinates[D].Scale) /
              double(std::max<int64_t>(1, R.Coordinates[D].Divisor));
    }
    for (auto &[P, R] : Global)
      C.GlobalReads.push_back(R);
    for (const ParmVarDecl *P : S.Kernel->parameters()) {
      const FuseBuffer *B = G.bufferPassedAs(S, P);
      if (!B || B->Producer != I)
        continue;
      if (B->Global)
        C.GlobalStoreBytes += bytesOf(P, Ctx);
      // A stage with several outputs on chip (camera's deinterleave) has
      // a tile of each, all of its region.
      if (B->OnChip && !B->Inlined)
        C.TileElementBytes += bytesOf(P, Ctx);
    }
    // A rough register estimate (ptxas on the samples: 32 to 64 per
    // fused kernel): a base for a loop stage plus its reads; an inlined
    // stage adds a few live values to its reader's.
    C.Registers =
        S.Inlined ? 2 : 24 + std::min(16u, unsigned(S.Access.Reads.size()));
  }
  if (!Out.empty())
    for (const StagedTable &T : findStagedTables(G, Ctx, kMaxStagedBytes))
      Out.front().StagedTableBytes += T.Bytes;
  return Out;
}

} // namespace cuda_rewrite
