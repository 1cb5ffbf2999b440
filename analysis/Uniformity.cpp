//===- Uniformity.cpp - Values the same for every thread ------------------===//

#include "analysis/Uniformity.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/DenseMap.h"
#include <optional>

using namespace clang;

namespace cuda_rewrite {

namespace {

/// Finds a use of a parameter or local that may change it.
class ParamModification : public RecursiveASTVisitor<ParamModification> {
public:
  explicit ParamModification(const ValueDecl &Param) : Param(Param) {}

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

  const ValueDecl &Param;
};

/// Whether a kernel stores to memory through a pointer: an assignment or
/// increment of `*p`, `p[i]` or `p->m` (not of a local or __shared__
/// array's element), a call that is handed a pointer to non-const (atomics,
/// helpers), inline assembly.
class PointerStores : public RecursiveASTVisitor<PointerStores> {
public:
  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp() && throughPointer(B->getLHS()))
      Found = true;
    return !Found;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->isIncrementDecrementOp() && throughPointer(U->getSubExpr()))
      Found = true;
    return !Found;
  }
  bool VisitCallExpr(CallExpr *Call) {
    for (const Expr *Arg : Call->arguments())
      if (const auto *P = Arg->getType()->getAs<PointerType>();
          P && !P->getPointeeType().isConstQualified())
        Found = true;
    return !Found;
  }
  bool VisitAsmStmt(AsmStmt *) { return !(Found = true); }

  bool Found = false;

private:
  static bool throughPointer(const Expr *E) {
    E = E->IgnoreParenImpCasts();
    if (const auto *U = dyn_cast<UnaryOperator>(E))
      return U->getOpcode() == UO_Deref;
    if (const auto *M = dyn_cast<MemberExpr>(E))
      return M->isArrow() || throughPointer(M->getBase());
    if (const auto *A = dyn_cast<ArraySubscriptExpr>(E))
      return A->getBase()->IgnoreParenImpCasts()->getType()->isPointerType() &&
             !isa<ArrayType>(A->getBase()->IgnoreParenCasts()->getType());
    return false;
  }
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
      // `.x` of a uniform struct (dim3, blockIdx); `->` loads.
      return Member->isArrow()
                 ? readOnly(Member->getBase()) && check(Member->getBase())
                 : check(Member->getBase());
    if (const auto *Subscript = dyn_cast<ArraySubscriptExpr>(E))
      return readOnly(Subscript->getBase()) && check(Subscript->getBase()) &&
             check(Subscript->getIdx());
    if (const auto *Pseudo = dyn_cast<PseudoObjectExpr>(E))
      return check(Pseudo->getSyntacticForm());
    if (const auto *Opaque = dyn_cast<OpaqueValueExpr>(E))
      return Opaque->getSourceExpr() && check(Opaque->getSourceExpr());
    if (const auto *Property = dyn_cast<MSPropertyRefExpr>(E))
      // Clang spells blockIdx.x as a property of the builtin variable.
      return check(Property->getBaseExpr());
    if (const auto *Unary = dyn_cast<UnaryOperator>(E)) {
      if (Unary->getOpcode() == UO_Deref)
        return readOnly(Unary->getSubExpr()) && check(Unary->getSubExpr());
      return !Unary->isIncrementDecrementOp() &&
             Unary->getOpcode() != UO_AddrOf && check(Unary->getSubExpr());
    }
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
      if (Var->getType().isConstQualified() && Var->hasGlobalStorage() &&
          Var->getInit() &&
          Var->getInit()->isConstantInitializer(Var->getASTContext(), false))
        return true;
      // A local never changed holds its initialiser's value.
      if (!Assumptions.ReadOnlyLoads || !Var->hasLocalStorage() ||
          isa<ParmVarDecl>(Var) || !Var->getInit() ||
          Var->getDeclContext() != &Kernel)
        return false;
      auto [It, New] = Locals.try_emplace(Var, false); // False while checked.
      if (New)
        It->second = !mayModify(*Var) && check(Var->getInit());
      return Locals[Var];
    }
    return false;
  }

  /// Whether \p Pointer (a pointer-typed expression) reaches only memory
  /// the kernel cannot change (ReadOnlyLoads): a parameter pointing to
  /// const, plus or minus an offset, that is __restrict__ or in a kernel
  /// that stores through no pointer.
  bool readOnly(const Expr *Pointer) {
    if (!Assumptions.ReadOnlyLoads)
      return false;
    Pointer = Pointer->IgnoreParenImpCasts();
    if (const auto *B = dyn_cast<BinaryOperator>(Pointer);
        B && (B->getOpcode() == BO_Add || B->getOpcode() == BO_Sub))
      return readOnly(B->getLHS()->getType()->isPointerType() ? B->getLHS()
                                                              : B->getRHS());
    const auto *Ref = dyn_cast<DeclRefExpr>(Pointer);
    const auto *Param = Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
    if (!Param || Param->getDeclContext() != &Kernel)
      return false;
    const auto *P = Param->getType()->getAs<PointerType>();
    if (!P || !P->getPointeeType().isConstQualified())
      return false;
    if (Param->getType().isRestrictQualified())
      return true;
    if (!StoresThroughPointers) {
      PointerStores Stores;
      Stores.TraverseStmt(Kernel.getBody());
      StoresThroughPointers = Stores.Found;
    }
    return !*StoresThroughPointers;
  }

  bool mayModify(const VarDecl &Var) const {
    ParamModification Finder(Var);
    Finder.TraverseStmt(Kernel.getBody());
    return Finder.Found;
  }

  const FunctionDecl &Kernel;
  UniformScope Scope;
  const UniformityAssumptions &Assumptions;
  std::optional<bool> StoresThroughPointers;
  /// Locals already judged (and false while their initialiser is checked).
  llvm::DenseMap<const VarDecl *, bool> Locals;
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
