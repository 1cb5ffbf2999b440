//===- Uniformity.cpp - Values the same for every thread ------------------===//

#include "analysis/Uniformity.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

/// Finds a use of the parameter that may change it.
class ParamModification : public RecursiveASTVisitor<ParamModification> {
public:
  explicit ParamModification(const ParmVarDecl &Param) : Param(Param) {}

  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp() && refersToParam(B->getLHS()))
      Found = true;
    return !Found;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if ((U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf) &&
        refersToParam(U->getSubExpr()))
      Found = true;
    return !Found;
  }
  bool VisitVarDecl(VarDecl *V) {
    // `T &alias = param;` can change it later.
    if (V->getType()->isReferenceType() &&
        !V->getType().getNonReferenceType().isConstQualified() &&
        V->getInit() && refersToParam(V->getInit()))
      Found = true;
    return !Found;
  }
  bool VisitCallExpr(CallExpr *Call) {
    // Passed by non-const reference.
    const FunctionDecl *Callee = Call->getDirectCallee();
    for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
      if (!refersToParam(Call->getArg(I)))
        continue;
      if (!Callee || I >= Callee->getNumParams())
        continue;
      QualType T = Callee->getParamDecl(I)->getType();
      if (T->isReferenceType() && !T.getNonReferenceType().isConstQualified())
        Found = true;
    }
    return !Found;
  }
  bool VisitCXXMemberCallExpr(CXXMemberCallExpr *Call) {
    // A non-const member function may change the object.
    if (refersToParam(Call->getImplicitObjectArgument()) &&
        !Call->getMethodDecl()->isConst())
      Found = true;
    return !Found;
  }

  bool Found = false;

private:
  bool refersToParam(const Expr *E) const {
    E = E->IgnoreParenImpCasts();
    while (const auto *M = dyn_cast<MemberExpr>(E))
      E = M->getBase()->IgnoreParenImpCasts();
    const auto *Ref = dyn_cast<DeclRefExpr>(E);
    return Ref && Ref->getDecl() == &Param;
  }

  const ParmVarDecl &Param;
};

/// blockDim and gridDim, and within a block blockIdx, unless the kernel
/// also runs aggregated, where they are per original launch.
bool isUniformBuiltin(const VarDecl *D, UniformScope Scope,
                      const UniformityAssumptions &Assumptions) {
  const CXXRecordDecl *Record = D->getType()->getAsCXXRecordDecl();
  if (!Record || !Record->getName().starts_with("__cuda_builtin_") ||
      Assumptions.LaunchShapeVaries)
    return false;
  StringRef Name = D->getName();
  if (Name == "blockDim" || Name == "gridDim")
    return true;
  return Name == "blockIdx" && Scope == UniformScope::Block;
}

class UniformityChecker {
public:
  UniformityChecker(const FunctionDecl &Kernel, UniformScope Scope,
                    const UniformityAssumptions &Assumptions)
      : Kernel(Kernel), Scope(Scope), Assumptions(Assumptions) {}

  bool check(const Expr *E) {
    E = E->IgnoreParens();
    if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral,
            CXXBoolLiteralExpr, CXXNullPtrLiteralExpr, StringLiteral,
            UnaryExprOrTypeTraitExpr>(E))
      return true;
    if (const auto *Cast = dyn_cast<CastExpr>(E))
      // A cast is uniform if its operand is; an lvalue-to-rvalue cast of a
      // parameter or builtin reads no memory that threads could see apart.
      return check(Cast->getSubExpr());
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
      return isUniformDecl(Ref->getDecl());
    if (const auto *Member = dyn_cast<MemberExpr>(E))
      // `.x` of a uniform struct (dim3, blockIdx); not `->`, which loads.
      return !Member->isArrow() && check(Member->getBase());
    if (const auto *Pseudo = dyn_cast<PseudoObjectExpr>(E))
      return check(Pseudo->getSyntacticForm());
    if (const auto *Opaque = dyn_cast<OpaqueValueExpr>(E))
      return Opaque->getSourceExpr() && check(Opaque->getSourceExpr());
    if (const auto *Property = dyn_cast<MSPropertyRefExpr>(E))
      // Clang spells blockIdx.x as a property of the builtin variable.
      return check(Property->getBaseExpr());
    if (const auto *Unary = dyn_cast<UnaryOperator>(E))
      return !Unary->isIncrementDecrementOp() &&
             Unary->getOpcode() != UO_Deref &&
             Unary->getOpcode() != UO_AddrOf && check(Unary->getSubExpr());
    if (const auto *Binary = dyn_cast<BinaryOperator>(E))
      return !Binary->isAssignmentOp() && !Binary->isCommaOp() &&
             check(Binary->getLHS()) && check(Binary->getRHS());
    if (const auto *Cond = dyn_cast<ConditionalOperator>(E))
      return check(Cond->getCond()) && check(Cond->getTrueExpr()) &&
             check(Cond->getFalseExpr());
    if (const auto *Call = dyn_cast<CallExpr>(E)) {
      // The property getters of blockIdx and friends, and nothing else.
      if (const auto *Member =
              dyn_cast<MemberExpr>(Call->getCallee()->IgnoreParenImpCasts()))
        return Call->getNumArgs() == 0 && check(Member->getBase());
      return false;
    }
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      // dim3(a, b, c) and copies.
      for (const Expr *Arg : Construct->arguments())
        if (!check(Arg))
          return false;
      return true;
    }
    if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
      return check(Temp->getSubExpr());
    if (const auto *Bind = dyn_cast<CXXBindTemporaryExpr>(E))
      return check(Bind->getSubExpr());
    if (const auto *Default = dyn_cast<CXXDefaultArgExpr>(E))
      return check(Default->getExpr());
    return false;
  }

private:
  bool isUniformDecl(const ValueDecl *D) {
    if (isa<EnumConstantDecl>(D))
      return true;
    if (const auto *Param = dyn_cast<ParmVarDecl>(D))
      // A kernel's parameters are the same in every thread; a __device__
      // function's may differ between the threads that call it.
      return Param->getDeclContext() == &Kernel &&
             Kernel.hasAttr<CUDAGlobalAttr>() &&
             !Assumptions.VaryingParams.count(Param) &&
             !mayModifyParam(Kernel, *Param);
    if (const auto *Var = dyn_cast<VarDecl>(D)) {
      if (isUniformBuiltin(Var, Scope, Assumptions))
        return true;
      // Compile-time constants (constexpr, const with constant init).
      return Var->getType().isConstQualified() && Var->hasGlobalStorage() &&
             Var->getInit() &&
             Var->getInit()->isConstantInitializer(Var->getASTContext(), false);
    }
    return false;
  }

  const FunctionDecl &Kernel;
  UniformScope Scope;
  const UniformityAssumptions &Assumptions;
};

} // namespace

bool mayModifyParam(const FunctionDecl &Kernel, const ParmVarDecl &Param) {
  if (!Kernel.hasBody())
    return true;
  ParamModification Finder(Param);
  Finder.TraverseStmt(Kernel.getBody());
  return Finder.Found;
}

bool isUniform(const Expr *E, const FunctionDecl &Kernel, UniformScope Scope,
               const UniformityAssumptions &Assumptions) {
  return UniformityChecker(Kernel, Scope, Assumptions).check(E);
}

} // namespace cuda_rewrite
