//===- KernelAccess.cpp - How a kernel uses its pointer parameters --------===//
//
// Each use of a pointer parameter, or of a local pointer/reference that may
// alias one, is classified by walking up from the DeclRefExpr through the
// expressions that keep its value a pointer (casts, pointer arithmetic,
// `?:`) or turn it into the pointee (`p[i]`, `*p`, `p->f`) until the use is
// a load, a store, a copy into another alias, a call argument, or something
// the analysis does not follow (an escape). Aliases are resolved
// flow-insensitively: a local pointer may point into every parameter whose
// value is ever copied into it.
//
//===----------------------------------------------------------------------===//

#include "analysis/KernelAccess.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include <map>
#include <optional>
#include <set>

using namespace clang;

namespace cuda_rewrite {
namespace {

/// What one use of a tracked variable does with the memory it points to.
struct UseEffect {
  bool Read = false;
  bool Written = false;
  bool Escapes = false;
  /// The pointer (or reference) is copied into this local alias.
  const VarDecl *FlowsInto = nullptr;
  /// The pointer (or reference) is argument ArgIndex of this call.
  const CallExpr *Call = nullptr;
  unsigned ArgIndex = 0;
  SourceLocation Loc;
  std::string Why;
};

/// What the walk up from a use currently holds.
enum class Form {
  PointerVar,   ///< An lvalue naming the pointer variable itself.
  PointerValue, ///< A pointer value derived from the variable.
  Element,      ///< An lvalue of (part of) the memory pointed to.
};

/// One step of the walk: either the use is classified, or the walk goes on
/// from Next in form NextForm.
struct Step {
  std::optional<UseEffect> Done;
  const Expr *Next = nullptr;
  Form NextForm = Form::PointerValue;
};

/// Load and store intrinsics and math functions with output pointers, by
/// name; only trusted when declared in a system header.
enum class KnownCall { None, Atomic, Load, Store, Copy, Set, MathOut };

} // namespace

static UseEffect readEffect() {
  UseEffect E;
  E.Read = true;
  return E;
}
static UseEffect writeEffect() {
  UseEffect E;
  E.Written = true;
  return E;
}
static UseEffect readWriteEffect() {
  UseEffect E;
  E.Read = E.Written = true;
  return E;
}
static UseEffect noEffect() { return UseEffect(); }
static UseEffect escapeEffect(const Stmt *Where, std::string Why) {
  UseEffect E;
  E.Read = E.Written = E.Escapes = true;
  E.Loc = Where->getBeginLoc();
  E.Why = std::move(Why);
  return E;
}

/// Whether a variable holds an address the analysis tracks: a data pointer
/// or a reference.
static bool isTrackedType(QualType T) {
  if (T->isReferenceType())
    return true;
  return T->isPointerType() && !T->isFunctionPointerType();
}

/// A reference to a pointer (`float *&r`) is handled like the pointer.
static bool holdsPointer(const VarDecl *V) {
  QualType T = V->getType();
  if (const auto *Ref = T->getAs<ReferenceType>())
    T = Ref->getPointeeType();
  return T->isPointerType();
}

static Step done(UseEffect E) {
  return Step{std::move(E), nullptr, Form::Element};
}
static Step next(const Expr *E, Form F) { return Step{std::nullopt, E, F}; }

static KnownCall classifyKnownCall(StringRef Name) {
  if (Name.starts_with("atomic") || Name.starts_with("__atomic") ||
      Name.starts_with("__nv_atomic"))
    return KnownCall::Atomic;
  static const llvm::StringSet<> Loads = {"__ldg",  "__ldca", "__ldcg",
                                          "__ldcs", "__ldlu", "__ldcv"};
  static const llvm::StringSet<> Stores = {"__stwb", "__stcg", "__stcs",
                                           "__stwt"};
  static const llvm::StringSet<> MathOut = {
      "sincosf", "sincos", "__sincosf", "sincospif", "sincospi", "modff",
      "modf",    "frexpf", "frexp",     "remquof",   "remquo"};
  if (Loads.contains(Name))
    return KnownCall::Load;
  if (Stores.contains(Name))
    return KnownCall::Store;
  if (Name == "memcpy" || Name == "memmove" || Name == "__builtin_memcpy")
    return KnownCall::Copy;
  if (Name == "memset" || Name == "__builtin_memset")
    return KnownCall::Set;
  if (MathOut.contains(Name))
    return KnownCall::MathOut;
  return KnownCall::None;
}

/// The effect on argument \p ArgIndex of a call to a known function.
static UseEffect knownCallEffect(KnownCall Kind, unsigned ArgIndex,
                                 const CallExpr *Call, StringRef Name) {
  switch (Kind) {
  case KnownCall::Atomic:
    if (ArgIndex == 0)
      return readWriteEffect();
    break;
  case KnownCall::Load:
    if (ArgIndex == 0)
      return readEffect();
    break;
  case KnownCall::Store:
    if (ArgIndex == 0)
      return writeEffect();
    break;
  case KnownCall::Copy:
    if (ArgIndex <= 1)
      return ArgIndex == 0 ? writeEffect() : readEffect();
    break;
  case KnownCall::Set:
    if (ArgIndex == 0)
      return writeEffect();
    break;
  case KnownCall::MathOut:
    if (ArgIndex >= 1)
      return writeEffect();
    break;
  case KnownCall::None:
    break;
  }
  return escapeEffect(Call, "passed to '" + Name.str() + "'");
}

static bool isTrivialCopyOrMoveAssignment(const FunctionDecl *FD) {
  const auto *M = dyn_cast_or_null<CXXMethodDecl>(FD);
  return M && M->isTrivial() &&
         (M->isCopyAssignmentOperator() || M->isMoveAssignmentOperator());
}

namespace {

/// Computes ParamAccess for every parameter of a function, following calls
/// into functions with visible bodies (memoized, recursion escapes).
class AccessAnalyzer {
public:
  explicit AccessAnalyzer(const ASTContext &Ctx) : Ctx(Ctx) {}

  /// One entry per parameter (untracked ones stay all-false); null when the
  /// function is already being analysed (recursion) or too deep.
  const std::vector<ParamAccess> *summarize(const FunctionDecl &F);

private:
  /// Per-function state of the walk.
  struct Scan {
    const FunctionDecl *F = nullptr;
    std::unique_ptr<ParentMap> Parents;
    /// Uses of tracked variables, in source order.
    std::vector<std::pair<const VarDecl *, UseEffect>> Uses;
  };

  void collectUses(Scan &S);
  UseEffect classifyUse(const Scan &S, const DeclRefExpr *Ref);
  Step stepPointerVar(const Expr *Cur, const Stmt *Parent);
  Step stepPointerValue(const Expr *Cur, const Stmt *Parent);
  Step stepElement(const Expr *Cur, const Stmt *Parent);
  UseEffect callArgument(const CallExpr *Call, const Expr *Arg);
  UseEffect resolveCall(const UseEffect &Use);
  bool isLocalAlias(const VarDecl *V, const FunctionDecl *F) const;

  const ASTContext &Ctx;
  std::map<const FunctionDecl *, std::vector<ParamAccess>> Memo;
  llvm::SmallPtrSet<const FunctionDecl *, 8> InProgress;
  static constexpr unsigned MaxCallDepth = 16;
};

} // namespace

bool AccessAnalyzer::isLocalAlias(const VarDecl *V,
                                  const FunctionDecl *F) const {
  if (!isTrackedType(V->getType()))
    return false;
  if (isa<ParmVarDecl>(V))
    return V->getDeclContext() == F;
  return V->hasLocalStorage() && V->getDeclContext() == F;
}

void AccessAnalyzer::collectUses(Scan &S) {
  struct Collector : RecursiveASTVisitor<Collector> {
    std::vector<const DeclRefExpr *> Refs;
    llvm::SmallPtrSet<const DeclRefExpr *, 32> Seen;
    bool VisitDeclRefExpr(DeclRefExpr *E) {
      if (isa<VarDecl>(E->getDecl()) && Seen.insert(E).second)
        Refs.push_back(E);
      return true;
    }
  } C;
  C.TraverseStmt(S.F->getBody());
  for (const DeclRefExpr *Ref : C.Refs) {
    const auto *V = cast<VarDecl>(Ref->getDecl());
    if (!isLocalAlias(V, S.F))
      continue;
    S.Uses.push_back({V, classifyUse(S, Ref)});
  }
}

UseEffect AccessAnalyzer::classifyUse(const Scan &S, const DeclRefExpr *Ref) {
  const auto *V = cast<VarDecl>(Ref->getDecl());
  if (Ref->refersToEnclosingVariableOrCapture())
    return escapeEffect(Ref, "captured by a lambda");
  Form F = holdsPointer(V) ? Form::PointerVar : Form::Element;
  const Expr *Cur = Ref;
  // Each step moves up one node; the depth of an expression bounds the walk.
  while (true) {
    const Stmt *Parent = S.Parents->getParent(Cur);
    if (!Parent)
      return noEffect();
    Step Next;
    switch (F) {
    case Form::PointerVar:
      Next = stepPointerVar(Cur, Parent);
      break;
    case Form::PointerValue:
      Next = stepPointerValue(Cur, Parent);
      break;
    case Form::Element:
      Next = stepElement(Cur, Parent);
      break;
    }
    if (Next.Done)
      return *Next.Done;
    Cur = Next.Next;
    F = Next.NextForm;
  }
}

/// Wrappers that do not change what an expression denotes.
static bool isTransparent(const Stmt *Parent) {
  return isa<ParenExpr, FullExpr>(Parent);
}

Step AccessAnalyzer::stepPointerVar(const Expr *Cur, const Stmt *Parent) {
  const auto *P = dyn_cast<Expr>(Parent);
  if (P && isTransparent(P))
    return next(P, Form::PointerVar);
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(Parent)) {
    if (Cast->getCastKind() == CK_LValueToRValue)
      return next(Cast, Form::PointerValue);
    if (Cast->getCastKind() == CK_NoOp)
      return next(Cast, Form::PointerVar);
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(Parent)) {
    // `p = q` and `p += n` change the variable, not the memory; what flows
    // into it is seen from the right-hand side.
    if (BO->isAssignmentOp() && BO->getLHS() == Cur)
      return done(noEffect());
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(Parent)) {
    if (UO->isIncrementDecrementOp())
      return done(noEffect());
    if (UO->getOpcode() == UO_AddrOf)
      return done(escapeEffect(UO, "the address of the pointer is taken"));
  }
  // `c ? a : b` of two pointer variables is an lvalue too.
  if (const auto *CO = dyn_cast<ConditionalOperator>(Parent)) {
    if (CO->getCond() == Cur)
      return done(noEffect());
    return next(CO, Form::PointerVar);
  }
  if (isa<UnaryExprOrTypeTraitExpr>(Parent))
    return done(noEffect());
  return done(escapeEffect(Parent, "the pointer variable is bound to a "
                                   "reference or used in an unknown way"));
}

Step AccessAnalyzer::stepPointerValue(const Expr *Cur, const Stmt *Parent) {
  const auto *P = dyn_cast<Expr>(Parent);
  if (P && isTransparent(P))
    return next(P, Form::PointerValue);
  if (const auto *Cast = dyn_cast<CastExpr>(Parent)) {
    QualType To = Cast->getType();
    if (To->isBooleanType() || To->isVoidType())
      return done(noEffect());
    if (To->isPointerType() && !To->isFunctionPointerType())
      return next(Cast, Form::PointerValue);
    return done(escapeEffect(Cast, "converted to a non-pointer type"));
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(Parent)) {
    switch (BO->getOpcode()) {
    case BO_Add:
      return next(BO, Form::PointerValue);
    case BO_Sub:
      // p - n is a pointer into the same memory; p - q is a distance.
      if (BO->getType()->isPointerType())
        return next(BO, Form::PointerValue);
      return done(noEffect());
    case BO_LT:
    case BO_GT:
    case BO_LE:
    case BO_GE:
    case BO_EQ:
    case BO_NE:
    case BO_Cmp:
    case BO_LAnd:
    case BO_LOr:
      return done(noEffect());
    case BO_Comma:
      if (BO->getLHS() == Cur)
        return done(noEffect());
      return next(BO, Form::PointerValue);
    case BO_Assign: {
      const auto *Target =
          dyn_cast<DeclRefExpr>(BO->getLHS()->IgnoreParenImpCasts());
      const auto *V = Target ? dyn_cast<VarDecl>(Target->getDecl()) : nullptr;
      if (V && V->getType()->isPointerType() &&
          (V->hasLocalStorage() || isa<ParmVarDecl>(V))) {
        UseEffect E;
        E.FlowsInto = V;
        return done(E);
      }
      return done(escapeEffect(BO, "stored to memory"));
    }
    default:
      return done(escapeEffect(BO, "used in an unsupported operator"));
    }
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Parent)) {
    if (ASE->getBase() == Cur)
      return next(ASE, Form::Element);
    return done(escapeEffect(ASE, "used as an array index"));
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(Parent)) {
    if (UO->getOpcode() == UO_Deref)
      return next(UO, Form::Element);
    if (UO->getOpcode() == UO_LNot)
      return done(noEffect());
    return done(escapeEffect(UO, "used in an unsupported operator"));
  }
  if (const auto *ME = dyn_cast<MemberExpr>(Parent)) {
    if (ME->isArrow() && ME->getBase() == Cur &&
        !isa<CXXMethodDecl>(ME->getMemberDecl()))
      return next(ME, Form::Element);
    return done(escapeEffect(ME, "used to call a member function"));
  }
  if (const auto *CO = dyn_cast<ConditionalOperator>(Parent)) {
    if (CO->getCond() == Cur)
      return done(noEffect());
    return next(CO, Form::PointerValue);
  }
  if (const auto *DS = dyn_cast<DeclStmt>(Parent)) {
    for (const Decl *D : DS->decls()) {
      const auto *V = dyn_cast<VarDecl>(D);
      if (!V || V->getInit() != Cur)
        continue;
      if (V->hasLocalStorage() && V->getType()->isPointerType()) {
        UseEffect E;
        E.FlowsInto = V;
        return done(E);
      }
    }
    return done(escapeEffect(DS, "stored in a variable the analysis does "
                                 "not follow"));
  }
  if (const auto *Call = dyn_cast<CallExpr>(Parent))
    return done(callArgument(Call, Cur));
  if (isa<ReturnStmt>(Parent))
    return done(escapeEffect(Parent, "returned"));
  if (isa<UnaryExprOrTypeTraitExpr>(Parent))
    return done(noEffect());
  return done(escapeEffect(Parent, "used in an expression the analysis does "
                                   "not follow"));
}

Step AccessAnalyzer::stepElement(const Expr *Cur, const Stmt *Parent) {
  const auto *P = dyn_cast<Expr>(Parent);
  if (P && isTransparent(P))
    return next(P, Form::Element);
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(Parent)) {
    switch (Cast->getCastKind()) {
    case CK_LValueToRValue:
      return done(readEffect());
    case CK_ArrayToPointerDecay:
      return next(Cast, Form::PointerValue);
    case CK_NoOp:
    case CK_LValueBitCast:
    case CK_DerivedToBase:
    case CK_UncheckedDerivedToBase:
      return next(Cast, Form::Element);
    default:
      return done(escapeEffect(Cast, "converted in an unsupported way"));
    }
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(Parent)) {
    if (BO->getOpcode() == BO_Assign && BO->getLHS() == Cur)
      return done(writeEffect());
    if (BO->isCompoundAssignmentOp() && BO->getLHS() == Cur)
      return done(readWriteEffect());
    if (BO->getOpcode() == BO_Comma)
      return BO->getLHS() == Cur ? done(noEffect()) : next(BO, Form::Element);
    return done(escapeEffect(BO, "used in an unsupported operator"));
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(Parent)) {
    if (UO->isIncrementDecrementOp())
      return done(readWriteEffect());
    if (UO->getOpcode() == UO_AddrOf)
      return next(UO, Form::PointerValue);
    if (UO->getOpcode() == UO_Real || UO->getOpcode() == UO_Imag)
      return next(UO, Form::Element);
    return done(escapeEffect(UO, "used in an unsupported operator"));
  }
  if (const auto *ME = dyn_cast<MemberExpr>(Parent)) {
    if (!ME->isArrow() && !isa<CXXMethodDecl>(ME->getMemberDecl()))
      return next(ME, Form::Element);
    return done(escapeEffect(ME, "used to call a member function"));
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Parent)) {
    if (ASE->getBase() == Cur) // a vector element, v[i]
      return next(ASE, Form::Element);
    return done(escapeEffect(ASE, "used as an array index"));
  }
  if (isa<ExtVectorElementExpr>(Parent))
    return next(cast<Expr>(Parent), Form::Element);
  if (const auto *CO = dyn_cast<ConditionalOperator>(Parent))
    return next(CO, Form::Element);
  if (const auto *DS = dyn_cast<DeclStmt>(Parent)) {
    for (const Decl *D : DS->decls()) {
      const auto *V = dyn_cast<VarDecl>(D);
      if (V && V->getInit() == Cur && V->hasLocalStorage() &&
          V->getType()->isReferenceType()) {
        UseEffect E;
        E.FlowsInto = V;
        return done(E);
      }
    }
    return done(escapeEffect(DS, "bound in a way the analysis does not "
                                 "follow"));
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Parent)) {
    const CXXConstructorDecl *Ctor = Construct->getConstructor();
    if (Ctor && Ctor->isTrivial() && Ctor->isCopyOrMoveConstructor())
      return done(readEffect());
    return done(escapeEffect(Construct, "passed to a constructor"));
  }
  if (const auto *Call = dyn_cast<CallExpr>(Parent)) {
    // `s = p[i]` on a struct calls its (trivial) assignment operator.
    if (isTrivialCopyOrMoveAssignment(Call->getDirectCallee()) &&
        isa<CXXOperatorCallExpr>(Call))
      return done(Call->getArg(0) == Cur ? writeEffect() : readEffect());
    return done(callArgument(Call, Cur));
  }
  if (isa<UnaryExprOrTypeTraitExpr>(Parent))
    return done(noEffect());
  if (isa<CompoundStmt>(Parent))
    return done(noEffect()); // `p[i];` discards the value.
  return done(escapeEffect(Parent, "used in an expression the analysis does "
                                   "not follow"));
}

UseEffect AccessAnalyzer::callArgument(const CallExpr *Call, const Expr *Arg) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Callee)
    return escapeEffect(Call, "passed through an indirect call");
  if (isa<CXXMethodDecl>(Callee))
    return escapeEffect(Call, "passed to member function '" +
                                  Callee->getNameAsString() + "'");
  for (unsigned I = 0, N = Call->getNumArgs(); I != N; ++I) {
    if (Call->getArg(I) != Arg)
      continue;
    UseEffect E;
    E.Call = Call;
    E.ArgIndex = I;
    E.Loc = Call->getBeginLoc();
    return E;
  }
  return escapeEffect(Call, "used as the callee of a call");
}

/// Turns a call-argument use into the callee's effect on that parameter.
UseEffect AccessAnalyzer::resolveCall(const UseEffect &Use) {
  const FunctionDecl *Callee = Use.Call->getDirectCallee();
  std::string Name = Callee->getNameAsString();
  const SourceManager &SM = Ctx.getSourceManager();
  const FunctionDecl *Def = Callee->getDefinition();
  bool System = SM.isInSystemHeader(Callee->getLocation());
  // Intrinsics are recognised by name only where the toolkit declares them,
  // so that a user's own function of the same name is followed instead.
  if (System || Callee->getBuiltinID() != 0) {
    // An element bound to `const T &` (std::min(a[i], b)) is only read; a
    // `const T &` with T a pointer still allows writes through it.
    if (Use.ArgIndex < Callee->getNumParams()) {
      QualType PT = Callee->getParamDecl(Use.ArgIndex)->getType();
      if (PT->isReferenceType() && PT->getPointeeType().isConstQualified() &&
          !PT->getPointeeType()->isPointerType())
        return readEffect();
    }
    return knownCallEffect(classifyKnownCall(Name), Use.ArgIndex, Use.Call,
                           Name);
  }
  if (!Def || !Def->hasBody())
    return escapeEffect(Use.Call, "passed to '" + Name +
                                      "', whose body is not available");
  if (Use.ArgIndex >= Def->getNumParams())
    return escapeEffect(Use.Call,
                        "passed as a variadic argument to '" + Name + "'");
  const std::vector<ParamAccess> *Summary = summarize(*Def);
  if (!Summary)
    return escapeEffect(Use.Call,
                        "passed to '" + Name + "', which is recursive");
  const ParamAccess &PA = (*Summary)[Use.ArgIndex];
  UseEffect E;
  E.Read = PA.Read;
  E.Written = PA.Written;
  E.Escapes = PA.Escapes;
  if (PA.Escapes) {
    E.Loc = Use.Call->getBeginLoc();
    E.Why = "passed to '" + Name + "', where it is " + PA.EscapeReason;
  }
  return E;
}

const std::vector<ParamAccess> *
AccessAnalyzer::summarize(const FunctionDecl &F) {
  const FunctionDecl *Def = F.getDefinition();
  if (!Def || !Def->hasBody())
    return nullptr;
  auto Found = Memo.find(Def);
  if (Found != Memo.end())
    return &Found->second;
  if (InProgress.contains(Def) || InProgress.size() >= MaxCallDepth)
    return nullptr;
  InProgress.insert(Def);

  Scan S;
  S.F = Def;
  S.Parents = std::make_unique<ParentMap>(Def->getBody());
  collectUses(S);

  // Which parameters each alias may point into; grows until it is stable
  // (each round adds at least one bit, so the loop is bounded).
  std::map<const VarDecl *, std::set<unsigned>> PointsTo;
  for (unsigned I = 0, N = Def->getNumParams(); I != N; ++I)
    PointsTo[Def->getParamDecl(I)].insert(I);
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const auto &[From, Use] : S.Uses) {
      if (!Use.FlowsInto)
        continue;
      std::set<unsigned> &To = PointsTo[Use.FlowsInto];
      for (unsigned I : PointsTo[From])
        Changed |= To.insert(I).second;
    }
  }

  std::vector<ParamAccess> Result(Def->getNumParams());
  for (unsigned I = 0, N = Def->getNumParams(); I != N; ++I)
    Result[I].Param = Def->getParamDecl(I);
  for (const auto &[From, Use] : S.Uses) {
    UseEffect E = Use.Call ? resolveCall(Use) : Use;
    for (unsigned I : PointsTo[From]) {
      ParamAccess &PA = Result[I];
      PA.Read |= E.Read;
      PA.Written |= E.Written;
      if (E.Escapes && !PA.Escapes) {
        PA.Escapes = true;
        PA.EscapeLoc = E.Loc;
        PA.EscapeReason = E.Why;
      }
    }
  }
  InProgress.erase(Def);
  return &(Memo[Def] = std::move(Result));
}

std::vector<ParamAccess> analyzeKernelParamAccess(const FunctionDecl &Kernel) {
  AccessAnalyzer Analyzer(Kernel.getASTContext());
  const std::vector<ParamAccess> *All = Analyzer.summarize(Kernel);
  std::vector<ParamAccess> Result;
  for (unsigned I = 0, N = Kernel.getNumParams(); I != N; ++I) {
    const ParmVarDecl *P = Kernel.getParamDecl(I);
    if (!isTrackedType(P->getType()))
      continue;
    if (All) {
      ParamAccess PA = (*All)[I];
      PA.Param = P; // The declaration the caller holds.
      Result.push_back(std::move(PA));
      continue;
    }
    // No body: nothing is known, so everything may happen.
    ParamAccess PA;
    PA.Param = P;
    PA.Read = PA.Written = PA.Escapes = true;
    PA.EscapeLoc = Kernel.getLocation();
    PA.EscapeReason = "the function has no body";
    Result.push_back(std::move(PA));
  }
  return Result;
}

const ParamAccess *findParamAccess(const std::vector<ParamAccess> &Accesses,
                                   const ParmVarDecl *Param) {
  for (const ParamAccess &PA : Accesses)
    if (PA.Param == Param)
      return &PA;
  return nullptr;
}

} // namespace cuda_rewrite
