//===- CudaBuiltins.cpp - threadIdx, blockIdx, blockDim, gridDim ----------===//

#include "analysis/CudaBuiltins.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;

namespace cuda_rewrite {

std::optional<std::pair<CudaBuiltinVar, unsigned>> cudaBuiltin(const Expr *E) {
  const auto *POE = dyn_cast<PseudoObjectExpr>(E->IgnoreParenImpCasts());
  if (!POE)
    return std::nullopt;
  const auto *Prop =
      dyn_cast<MSPropertyRefExpr>(POE->getSyntacticForm()->IgnoreParens());
  if (!Prop)
    return std::nullopt;
  const Expr *Base = Prop->getBaseExpr()->IgnoreParenImpCasts();
  if (const auto *OVE = dyn_cast<OpaqueValueExpr>(Base))
    Base = OVE->getSourceExpr()->IgnoreParenImpCasts();
  const auto *Ref = dyn_cast<DeclRefExpr>(Base);
  if (!Ref || !Ref->getDecl()->getIdentifier())
    return std::nullopt;
  StringRef Var = Ref->getDecl()->getName();
  StringRef Field = Prop->getPropertyDecl()->getName();
  if (Field.size() != 1 || Field[0] < 'x' || Field[0] > 'z')
    return std::nullopt;
  unsigned Dim = Field[0] - 'x';
  if (Var == "threadIdx")
    return std::make_pair(CudaBuiltinVar::ThreadIdx, Dim);
  if (Var == "blockIdx")
    return std::make_pair(CudaBuiltinVar::BlockIdx, Dim);
  if (Var == "blockDim")
    return std::make_pair(CudaBuiltinVar::BlockDim, Dim);
  if (Var == "gridDim")
    return std::make_pair(CudaBuiltinVar::GridDim, Dim);
  return std::nullopt;
}

} // namespace cuda_rewrite
