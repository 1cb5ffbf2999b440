//===- StagedTables.cpp - Constant tables a fused kernel stages -----------===//

#include "rewriters/fuse/StagedTables.h"
#include "analysis/Uniformity.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

/// The `__constant__` one-dimensional array \p E subscripts, if any.
const VarDecl *constantTable(const ArraySubscriptExpr *E) {
  const auto *Ref = dyn_cast<DeclRefExpr>(E->getBase()->IgnoreParenImpCasts());
  const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!V || !V->hasAttr<CUDAConstantAttr>() || !V->hasGlobalStorage())
    return nullptr;
  const auto *Array =
      dyn_cast<ConstantArrayType>(V->getType()->getUnqualifiedDesugaredType());
  if (!Array || Array->getElementType()->isArrayType())
    return nullptr; // Rows of a matrix: its rows are indexed uniformly.
  return V;
}

/// Whether \p E is the same for all threads of a block in stage \p S: the
/// syntactic rule of analysis/Uniformity, plus the stage's channel
/// coordinate (`int c = blockIdx.z;`), which the fused kernel keeps per
/// block.
bool uniformInStage(const Expr *E, const FuseStage &S) {
  if (isUniform(E, *S.Kernel, UniformScope::Block))
    return true;
  E = E->IgnoreParenImpCasts();
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
    return Ref->getDecl() == S.Access.CoordinateVar[2] &&
           S.Access.Form[2] == CoordinateForm::BlockIndex;
  if (isa<IntegerLiteral>(E))
    return true;
  if (const auto *BO = dyn_cast<BinaryOperator>(E))
    return !BO->isAssignmentOp() && uniformInStage(BO->getLHS(), S) &&
           uniformInStage(BO->getRHS(), S);
  return false;
}

class TableReads : public RecursiveASTVisitor<TableReads> {
public:
  explicit TableReads(const FuseStage &S) : S(S) {}

  bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
    if (const VarDecl *V = constantTable(E))
      if (!uniformInStage(E->getIdx(), S) && !llvm::is_contained(Varying, V))
        Varying.push_back(V);
    return true;
  }

  std::vector<const VarDecl *> Varying;

private:
  const FuseStage &S;
};

} // namespace

std::vector<StagedTable> findStagedTables(const FuseGroup &G, ASTContext &Ctx,
                                          uint64_t MaxBytes) {
  std::vector<StagedTable> Tables;
  uint64_t Total = 0;
  for (const FuseStage &S : G.Stages) {
    if (!S.Needed)
      continue;
    TableReads Reads(S);
    Reads.TraverseStmt(S.Kernel->getBody());
    for (const VarDecl *V : Reads.Varying) {
      if (llvm::any_of(Tables,
                       [&](const StagedTable &T) { return T.Var == V; }))
        continue;
      const auto *Array =
          cast<ConstantArrayType>(V->getType()->getUnqualifiedDesugaredType());
      StagedTable T;
      T.Var = V;
      T.Name = V->getNameAsString() + "_staged";
      T.ElementType = Array->getElementType().getUnqualifiedType().getAsString(
          Ctx.getPrintingPolicy());
      T.Elements = Array->getSize().getZExtValue();
      // Spelled, not folded: the extent may be a macro another build
      // defines otherwise.
      T.ElementsText = "(sizeof(" + V->getNameAsString() + ") / sizeof(" +
                       V->getNameAsString() + "[0]))";
      T.Bytes = Ctx.getTypeSizeInChars(V->getType()).getQuantity();
      if (T.Elements == 0 || Total + T.Bytes > MaxBytes)
        continue;
      Total += T.Bytes;
      Tables.push_back(T);
    }
  }
  return Tables;
}

const StagedTable *stagedTableOf(const ArraySubscriptExpr *E,
                                 const std::vector<StagedTable> &Tables) {
  const VarDecl *V = constantTable(E);
  for (const StagedTable &T : Tables)
    if (T.Var == V)
      return &T;
  return nullptr;
}

std::string stagedTableSources(llvm::ArrayRef<StagedTable> Tables,
                               bool Declared) {
  std::string Text;
  for (const StagedTable &T : Tables)
    Text += ", " +
            (Declared ? "const " + T.ElementType + " *__restrict__ " : "") +
            T.sourceName();
  return Text;
}

} // namespace cuda_rewrite
