//===- PromotePlan.cpp - Whether and how a chain kernel is promoted -------===//

#include "rewriters/promote/PromotePlan.h"
#include "analysis/LaunchSites.h"
#include "rewriters/common/SourceLines.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

using namespace clang;

namespace cuda_rewrite {

std::string PromoteVariant::name() const {
  std::string Name = "P";
  if (Pool)
    Name += "A";
  if (Overlap)
    Name += "O";
  return Name;
}

bool PromotePlan::hasPostponed() const {
  return llvm::any_of(
      Args, [](const PromoteArg &A) { return A.Kind == ArgKind::Postponed; });
}

namespace {

/// Parameters the body assigns, increments or takes the address of.
class ModifiedParams : public RecursiveASTVisitor<ModifiedParams> {
public:
  llvm::SmallPtrSet<const ValueDecl *, 8> Modified;

  bool VisitBinaryOperator(BinaryOperator *B) {
    if (B->isAssignmentOp())
      note(B->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    if (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf)
      note(U->getSubExpr());
    return true;
  }

private:
  void note(const Expr *E) {
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
      Modified.insert(Ref->getDecl());
  }
};

/// Every declaration a statement refers to.
class References : public RecursiveASTVisitor<References> {
public:
  llvm::SmallPtrSet<const Decl *, 16> Decls;
  bool HasCall = false;
  bool HasReturn = false;

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    Decls.insert(E->getDecl());
    return true;
  }
  bool VisitCallExpr(CallExpr *) {
    HasCall = true;
    return true;
  }
  bool VisitReturnStmt(ReturnStmt *) {
    HasReturn |= LambdaDepth == 0; // A lambda's return leaves the lambda.
    return true;
  }
  bool TraverseLambdaExpr(LambdaExpr *L) {
    ++LambdaDepth;
    bool Continue = RecursiveASTVisitor::TraverseLambdaExpr(L);
    --LambdaDepth;
    return Continue;
  }

private:
  unsigned LambdaDepth = 0;
};

References referencesOf(const Stmt *S) {
  References R;
  R.TraverseStmt(const_cast<Stmt *>(S));
  return R;
}

bool isBuiltinIndexVar(const Decl *D, llvm::StringRef Name) {
  const auto *V = dyn_cast<VarDecl>(D);
  return V && V->getName() == Name &&
         V->getType().getAsString().find("__cuda_builtin") != std::string::npos;
}

/// How the links use the memory behind each pointer parameter: like
/// analysis/KernelAccess, but the self-launch's forwarding of a parameter to
/// itself is no use (the next link's own accesses are this link's, one link
/// later), and a pointer passed to any function counts as read and, unless
/// it points to const, written.
class BufferUses : public RecursiveASTVisitor<BufferUses> {
public:
  BufferUses(ASTContext &Ctx, const CUDAKernelCallExpr *Self)
      : Ctx(Ctx), Self(Self) {}

  struct Use {
    bool Read = false, Written = false;
  };
  llvm::DenseMap<const ParmVarDecl *, Use> Uses;

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    const auto *P = dyn_cast<ParmVarDecl>(E->getDecl());
    if (!P || !P->getType()->isPointerType())
      return true;
    Use &U = Uses[P];
    const Expr *Pointer = E;
    for (;;) {
      const Stmt *Parent = parent(Pointer);
      if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Parent)) {
        Pointer = Cast;
        continue;
      }
      if (const auto *Paren = dyn_cast_or_null<ParenExpr>(Parent)) {
        Pointer = Paren;
        continue;
      }
      if (const auto *B = dyn_cast_or_null<BinaryOperator>(Parent);
          B && B->isAdditiveOp() && B->getType()->isPointerType()) {
        Pointer = B; // p + i is still p's memory.
        continue;
      }
      if (Parent == Self && forwardsItself(P, Pointer))
        return true;
      if (const auto *Sub = dyn_cast_or_null<ArraySubscriptExpr>(Parent);
          Sub && Sub->getBase() == Pointer) {
        element(Sub, U, P);
        return true;
      }
      if (const auto *Deref = dyn_cast_or_null<UnaryOperator>(Parent);
          Deref && Deref->getOpcode() == UO_Deref) {
        element(Deref, U, P);
        return true;
      }
      escape(U, P);
      return true;
    }
  }

private:
  bool forwardsItself(const ParmVarDecl *P, const Expr *Arg) const {
    unsigned I = P->getFunctionScopeIndex();
    return I < Self->getNumArgs() && Self->getArg(I) == Arg;
  }

  /// An element access `p[i]` or `*p`: read, written or both.
  void element(const Expr *Element, Use &U, const ParmVarDecl *P) {
    const Stmt *Parent = parent(Element);
    while (isa_and_nonnull<ParenExpr>(Parent))
      Parent = parent(cast<Expr>(Parent));
    if (const auto *B = dyn_cast_or_null<BinaryOperator>(Parent);
        B && B->isAssignmentOp() && B->getLHS()->IgnoreParens() == Element) {
      U.Written = true;
      U.Read |= B->isCompoundAssignmentOp();
      return;
    }
    if (const auto *Un = dyn_cast_or_null<UnaryOperator>(Parent)) {
      if (Un->isIncrementDecrementOp()) {
        U.Read = U.Written = true;
        return;
      }
      if (Un->getOpcode() == UO_AddrOf)
        return escape(U, P);
    }
    if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Parent);
        Cast && Cast->getCastKind() == CK_LValueToRValue) {
      U.Read = true;
      return;
    }
    escape(U, P); // Bound to a reference, a member call, ...
  }

  static void escape(Use &U, const ParmVarDecl *P) {
    U.Read = true;
    if (!P->getType()->getPointeeType().isConstQualified())
      U.Written = true;
  }

  const Stmt *parent(const Expr *E) const {
    auto Parents = Ctx.getParents(*E);
    return Parents.empty() ? nullptr : Parents[0].get<Stmt>();
  }

  ASTContext &Ctx;
  const CUDAKernelCallExpr *Self;
};

class Planner {
public:
  Planner(const FunctionDecl &Kernel, PromoteVariant Variant,
          llvm::ArrayRef<LaunchSite> Launches, ASTContext &Ctx)
      : Kernel(Kernel), Launches(Launches), Ctx(Ctx),
        SM(Ctx.getSourceManager()) {
    Plan.Kernel = &Kernel;
    Plan.Variant = Variant;
  }

  PromotePlanResult run() {
    std::string Why = plan();
    if (!Why.empty())
      return PromotePlanResult::refuse(Why);
    Plan.Pins = std::move(Pins);
    return PromotePlanResult::accept(std::move(Plan));
  }

private:
  std::string plan() {
    Plan.Body = dyn_cast_or_null<CompoundStmt>(Kernel.getBody());
    if (!Plan.Body)
      return "the kernel has no body here";
    if (!Kernel.getDeclContext()->getRedeclContext()->isTranslationUnit())
      return "the kernel is declared inside a namespace or class; the "
             "generated code is not placed there yet";
    if (Kernel.isTemplated())
      return "the kernel is a template";
    for (const ParmVarDecl *P : Kernel.parameters())
      if (P->getName().empty() || P->hasDefaultArg())
        return "parameter " + std::to_string(P->getFunctionScopeIndex() + 1) +
               " has no name or a default argument";
    if (std::string Why = findLaunches(); !Why.empty())
      return Why;
    if (std::string Why = findGuard(); !Why.empty())
      return Why;
    if (std::string Why = launchConfig(); !Why.empty())
      return Why;
    classify();
    if (std::string Why = checkArgs(); !Why.empty())
      return Why;
    if (std::string Why = findBoundary(); !Why.empty())
      return Why;
    if (std::string Why = checkBody(); !Why.empty())
      return Why;
    return checkBuffers();
  }

  //===--------------------------------------------------------------------===//
  // The launches
  //===--------------------------------------------------------------------===//

  std::string findLaunches() {
    const FunctionDecl *Def = Kernel.getDefinition();
    for (const LaunchSite &S : Launches) {
      bool Self =
          S.Callee && S.Callee->getCanonicalDecl() == Kernel.getCanonicalDecl();
      std::string At = " (line " + std::to_string(line(S.Call)) + ")";
      if (S.FromDevice && S.Enclosing == Def) {
        if (!Self)
          return "the kernel also launches '" + S.CalleeName + "'" + At +
                 "; only a chain of self-launches is promoted";
        if (Plan.SelfLaunch)
          return "the kernel launches itself more than once" + At +
                 "; a chain has one successor per link";
        if (S.InLoop)
          return "the self-launch" + At + " is inside a loop";
        if (S.InMacro)
          return "the self-launch" + At + " is written inside a macro";
        Plan.SelfLaunch = S.Call;
        continue;
      }
      if (!Self)
        continue;
      if (S.FromDevice)
        return "the kernel is also launched from device code" + At;
      if (S.InMacro || S.InTemplate)
        return std::string("a host launch") + At + " is inside a " +
               (S.InMacro ? "macro" : "template");
      if (SM.isBeforeInTranslationUnit(S.Call->getBeginLoc(), Def->getEndLoc()))
        return "a host launch" + At +
               " comes before the kernel's definition, where the generated "
               "launcher is not yet declared";
      Plan.HostLaunches.push_back(S.Call);
    }
    if (!Plan.SelfLaunch)
      return "no self-launch found in the kernel's body";
    if (Plan.HostLaunches.empty())
      return "no host launch of '" + Kernel.getNameAsString() +
             "' in this file: the first link must be launched from the host";
    return "";
  }

  /// The self-launch sits in an `if` that is a statement of the kernel's
  /// body itself, as a statement of its own, maybe inside further `if`s
  /// (`if (tid == 0) { if (more) next<<<..>>>(..); }`); the conjuncts of
  /// their conditions select one thread of the block (isThreadZeroTest)
  /// and give the condition under which the chain goes on.
  std::string findGuard() {
    for (const Stmt *S : Plan.Body->body()) {
      const auto *If = dyn_cast<IfStmt>(S);
      if (!If || !containsKernelLaunch(If))
        continue;
      Plan.LaunchIf = If;
      Plan.LaunchParent = If;
      Plan.LaunchStmt = nullptr;
      std::vector<const Expr *> Conjuncts;
      for (const IfStmt *Cur = If; Cur;) {
        if (Cur->getElse() || Cur->getInit() || Cur->getConditionVariable())
          return "an `if` around the self-launch has an else branch, an "
                 "initializer or a declaration";
        splitConjuncts(Cur->getCond(), Conjuncts);
        Plan.LaunchParent = Cur;
        const Stmt *Inner = statementWithLaunch(Cur->getThen());
        Cur = nullptr;
        if (Inner && isLaunchStatement(Inner))
          Plan.LaunchStmt = Inner;
        else if (Inner)
          Cur = dyn_cast<IfStmt>(Inner);
      }
      if (!Plan.LaunchStmt)
        break;
      bool Guarded = false;
      for (const Expr *C : Conjuncts) {
        if (!Guarded && isThreadZeroTest(C))
          Guarded = true;
        else
          Plan.Conditions.push_back(C);
      }
      if (!Guarded)
        return "the self-launch is not guarded by a test that selects one "
               "thread of the block (`threadIdx.x == 0`, or a local that "
               "holds threadIdx.x compared with 0): one thread must launch "
               "the next link";
      return "";
    }
    return "the self-launch is not a statement of an `if (threadIdx.x == 0 "
           "&& ...)` in the kernel's body itself (or of `if`s nested in it)";
  }

  /// The statement of \p Then (an `if`'s branch) that holds the launch:
  /// itself, or the one statement of its block that does.
  static const Stmt *statementWithLaunch(const Stmt *Then) {
    const auto *Block = dyn_cast<CompoundStmt>(Then);
    if (!Block)
      return Then;
    const Stmt *Found = nullptr;
    for (const Stmt *T : Block->body())
      if (containsKernelLaunch(T)) {
        if (Found)
          return nullptr;
        Found = T;
      }
    return Found;
  }

  static bool isLaunchStatement(const Stmt *S) {
    if (const auto *E = dyn_cast<Expr>(S))
      return isa<CUDAKernelCallExpr>(E->IgnoreImplicit());
    return false;
  }

  static void splitConjuncts(const Expr *E, std::vector<const Expr *> &Out) {
    E = E->IgnoreParenImpCasts();
    if (const auto *B = dyn_cast<BinaryOperator>(E);
        B && B->getOpcode() == BO_LAnd) {
      splitConjuncts(B->getLHS(), Out);
      splitConjuncts(B->getRHS(), Out);
      return;
    }
    Out.push_back(E);
  }

  /// `threadIdx.x == 0` (either way round), `!threadIdx.x` or
  /// `threadIdx.x < 1`, where threadIdx.x may also be a local of the body
  /// that holds it and is never changed (`int tid = threadIdx.x;`): true for
  /// exactly one thread of a one-dimensional block.
  bool isThreadZeroTest(const Expr *E) const {
    E = E->IgnoreParenImpCasts();
    if (const auto *Not = dyn_cast<UnaryOperator>(E);
        Not && Not->getOpcode() == UO_LNot)
      return isThreadX(Not->getSubExpr());
    const auto *B = dyn_cast<BinaryOperator>(E);
    if (!B)
      return false;
    auto IsConstant = [&](const Expr *Side, int64_t Value) {
      Expr::EvalResult R;
      return Side->EvaluateAsInt(R, Ctx) && R.Val.getInt() == Value &&
             Pins.pin(Side, Ctx);
    };
    switch (B->getOpcode()) {
    case BO_EQ:
    case BO_LE:
      return (isThreadX(B->getLHS()) && IsConstant(B->getRHS(), 0)) ||
             (B->getOpcode() == BO_EQ && IsConstant(B->getLHS(), 0) &&
              isThreadX(B->getRHS()));
    case BO_LT:
      return isThreadX(B->getLHS()) && IsConstant(B->getRHS(), 1);
    default:
      return false;
    }
  }

  bool isThreadX(const Expr *E) const {
    E = E->IgnoreParenImpCasts();
    std::string T = text(E->getSourceRange());
    llvm::erase_if(T, [](char C) { return C == ' '; });
    if (T == "threadIdx.x")
      return true;
    const auto *Ref = dyn_cast<DeclRefExpr>(E);
    const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    if (!Var || !Var->hasLocalStorage() || isa<ParmVarDecl>(Var) ||
        !Var->getInit() || !Var->getType()->isIntegerType() ||
        Ctx.getTypeSize(Var->getType()) < 32) // A char would wrap.
      return false;
    const auto *Owner = dyn_cast<FunctionDecl>(Var->getDeclContext());
    if (!Owner || Owner->getCanonicalDecl() != Kernel.getCanonicalDecl())
      return false;
    ModifiedParams Changes;
    Changes.TraverseStmt(const_cast<CompoundStmt *>(Plan.Body));
    return !Changes.Modified.contains(Var) && isThreadX(Var->getInit());
  }

  /// The expression written for a dim3 argument: `x` of an implicit
  /// dim3(x), or null when it names more than one dimension.
  static const Expr *written(const Expr *E) {
    E = E->IgnoreImplicit();
    if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
      E = Temp->getSubExpr()->IgnoreImplicit();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      if (Construct->getNumArgs() == 0 ||
          llvm::any_of(
              llvm::drop_begin(Construct->arguments()),
              [](const Expr *A) { return !isa<CXXDefaultArgExpr>(A); }))
        return nullptr;
      return written(Construct->getArg(0));
    }
    return E;
  }

  std::optional<llvm::APSInt> constant(const Expr *E) const {
    E = E ? written(E) : nullptr;
    Expr::EvalResult R;
    if (!E || !E->getType()->isIntegerType() || !E->EvaluateAsInt(R, Ctx) ||
        !Pins.pin(E, Ctx))
      return std::nullopt;
    return R.Val.getInt();
  }

  bool isOne(const Expr *E) const {
    std::optional<llvm::APSInt> V = E ? constant(E) : std::nullopt;
    return V && *V == 1;
  }

  std::string launchConfig() {
    const CUDAKernelCallExpr *Self = Plan.SelfLaunch;
    std::string At = " (line " + std::to_string(line(Self)) + ")";
    if (!isOne(launchConfigArg(Self, 0)))
      return "the self-launch" + At + " does not launch a grid of 1 block";
    const Expr *Block = launchConfigArg(Self, 1);
    Block = Block ? written(Block) : nullptr;
    if (!Block || !Block->getType()->isIntegerType())
      return "the self-launch's block size" + At +
             " is not an integer (a one-dimensional block)";
    Plan.Block = Block;
    std::string BlockText = text(Block->getSourceRange());
    std::string BlockKey = normalized(BlockText);
    bool SameAsParent = BlockKey == "blockDim.x";
    std::optional<llvm::APSInt> BlockValue = constant(Block);
    if (!SameAsParent && !BlockValue)
      return "the self-launch's block size '" + BlockText + "'" + At +
             " is neither a constant nor blockDim.x";
    if (const Expr *Shared = launchConfigArg(Self, 2);
        Shared && !(constant(Shared) && constant(Shared)->isZero()))
      return "the self-launch" + At +
             " passes dynamic shared memory, which the promoted launch "
             "cannot size before the body computes it";
    if (const Expr *Stream = launchConfigArg(Self, 3)) {
      std::string S = normalized(text(Stream->getSourceRange()));
      if (S != "cudaStreamTailLaunch" && S != "0" && S != "nullptr" &&
          S != "NULL")
        return "the self-launch" + At + " goes to stream '" + S +
               "'; only cudaStreamTailLaunch or the default stream keep the "
               "order that promotion reproduces";
    }
    Plan.BlockThreads =
        BlockValue ? std::optional<uint64_t>(BlockValue->getZExtValue())
                   : largestHostBlock();
    for (const CUDAKernelCallExpr *Host : Plan.HostLaunches) {
      std::string HostAt = " (line " + std::to_string(line(Host)) + ")";
      if (!isOne(launchConfigArg(Host, 0)))
        return "the host launch" + HostAt +
               " does not launch a grid of literally 1 block";
      const Expr *HostBlock = launchConfigArg(Host, 1);
      if (!HostBlock || SameAsParent || !(HostBlock = written(HostBlock)))
        continue;
      std::optional<llvm::APSInt> HostValue = constant(HostBlock);
      bool Same =
          HostValue ? llvm::APSInt::isSameValue(*HostValue, *BlockValue)
                    : normalized(text(HostBlock->getSourceRange())) == BlockKey;
      if (!Same)
        return "the host launch" + HostAt + " uses block size '" +
               text(HostBlock->getSourceRange()) + "', the self-launch '" +
               BlockText + "': every link must have the same block";
    }
    return "";
  }

  /// With a self-launch of `blockDim.x` blocks every link runs the host
  /// launches' block: their largest where each is a constant (pinned), else
  /// none (and nothing pinned for it).
  std::optional<uint64_t> largestHostBlock() const {
    ConfigPins Kept = Pins;
    std::optional<uint64_t> Largest;
    for (const CUDAKernelCallExpr *Host : Plan.HostLaunches) {
      std::optional<llvm::APSInt> Threads = constant(launchConfigArg(Host, 1));
      if (!Threads) {
        Pins = std::move(Kept);
        return std::nullopt;
      }
      Largest = std::max(Largest.value_or(0), Threads->getZExtValue());
    }
    return Largest;
  }

  //===--------------------------------------------------------------------===//
  // Arguments and the prefix
  //===--------------------------------------------------------------------===//

  /// Whether \p E can be evaluated at the start of the link (after the
  /// prefix), with the values the link had when it was launched.
  bool isEarly(const Stmt *E) const {
    References R = referencesOf(E);
    if (R.HasCall || R.HasReturn)
      return false;
    for (const Decl *D : R.Decls) {
      if (isa<EnumConstantDecl>(D))
        continue;
      if (const auto *P = dyn_cast<ParmVarDecl>(D)) {
        if (Postponed.contains(P) || Modified.contains(P))
          return false;
        continue;
      }
      const auto *V = dyn_cast<VarDecl>(D);
      if (!V)
        return false;
      if (isBuiltinIndexVar(V, "threadIdx") || isBuiltinIndexVar(V, "blockDim"))
        continue;
      if (V->hasLocalStorage()) {
        if (!PrefixVars.contains(V))
          return false;
        continue;
      }
      // File- or namespace-scope constants.
      if (!V->isConstexpr() && !V->getType().isConstQualified())
        return false;
      if (V->hasAttr<CUDADeviceAttr>() || V->hasAttr<CUDASharedAttr>())
        return false;
    }
    return true;
  }

  /// The leading declarations of the body that isEarly() can use.
  void findPrefix() {
    PrefixVars.clear();
    Plan.PrefixEnd = 0;
    for (const Stmt *S : Plan.Body->body()) {
      const auto *DS = dyn_cast<DeclStmt>(S);
      if (!DS)
        return;
      for (const Decl *D : DS->decls()) {
        const auto *V = dyn_cast<VarDecl>(D);
        if (!V || V->getType()->isReferenceType() || Modified.contains(V))
          return;
        bool Shared = V->hasAttr<CUDASharedAttr>() && !V->hasInit();
        if (!Shared && (!V->hasInit() || !isEarly(V->getInit())))
          return;
      }
      for (const Decl *D : DS->decls())
        PrefixVars.insert(cast<VarDecl>(D));
      ++Plan.PrefixEnd;
    }
  }

  /// Sorts the launch arguments into uniform, stepped, early and postponed,
  /// to a fixed point: a postponed parameter makes what uses it postponed.
  void classify() {
    ModifiedParams M;
    M.TraverseStmt(const_cast<CompoundStmt *>(Plan.Body));
    Modified = M.Modified;
    bool Changed = true;
    while (Changed) {
      Changed = false;
      findPrefix();
      Plan.Args.clear();
      for (const ParmVarDecl *P : Kernel.parameters()) {
        PromoteArg A;
        A.Param = P;
        const Expr *Arg = Plan.SelfLaunch->getArg(P->getFunctionScopeIndex());
        A.Value = Arg;
        A.Kind = argKind(P, Arg, A);
        if (A.Kind == ArgKind::Postponed && Postponed.insert(P).second)
          Changed = true;
        Plan.Args.push_back(A);
      }
    }
    Plan.EarlyCondition = llvm::all_of(Plan.Conditions, [&](const Expr *C) {
      return isThreadZeroTest(C) || isEarly(C);
    });
  }

  ArgKind argKind(const ParmVarDecl *P, const Expr *Arg,
                  PromoteArg &Out) const {
    const Expr *E = Arg->IgnoreParenImpCasts();
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E);
        Ref && Ref->getDecl() == P && !Modified.contains(P) &&
        !Postponed.contains(P))
      return ArgKind::Uniform;
    if (!isEarly(Arg))
      return ArgKind::Postponed;
    if (const auto *B = dyn_cast<BinaryOperator>(E);
        B && (B->getOpcode() == BO_Add || B->getOpcode() == BO_Sub)) {
      const auto *Ref =
          dyn_cast<DeclRefExpr>(B->getLHS()->IgnoreParenImpCasts());
      if (Ref && Ref->getDecl() == P && constant(B->getRHS())) {
        Out.StepSign = B->getOpcode() == BO_Add ? '+' : '-';
        Out.Step = B->getRHS();
        return ArgKind::Stepped;
      }
    }
    return ArgKind::Early;
  }

  std::string checkArgs() const {
    for (const PromoteArg &A : Plan.Args) {
      if (A.Kind == ArgKind::Early && Plan.Variant.Pool)
        return "argument '" + argText(A, Ctx) + "' for parameter '" +
               A.Param->getNameAsString() +
               "' is not the parameter plus or minus a constant, so a pool "
               "block cannot compute its link's value from its ticket "
               "(aggregate(n) needs that; plain promote does not)";
      if ((A.Kind == ArgKind::Postponed || A.Kind == ArgKind::Stepped) &&
          A.Param->getType().isConstQualified())
        return "parameter '" + A.Param->getNameAsString() +
               "' is declared const, but each link sets it from the previous "
               "one";
      if (A.Kind == ArgKind::Postponed &&
          (A.Param->getType()->isReferenceType() ||
           !A.Param->getType().getNonReferenceType()->isScalarType()))
        return "postponed argument for parameter '" +
               A.Param->getNameAsString() +
               "' is not a scalar, which the slot holds";
    }
    if (!Plan.EarlyCondition && Plan.Variant.Overlap)
      return "the launch condition '" + conditionText(Plan, Ctx) +
             "' depends on values computed in the body, so the next link "
             "would be launched speculatively; with `overlap` its prologue "
             "would run before it knows whether it exists";
    return "";
  }

  //===--------------------------------------------------------------------===//
  // The body
  //===--------------------------------------------------------------------===//

  std::string findBoundary() {
    unsigned Begin = offset(Plan.Body->getLBracLoc());
    unsigned End = offset(Plan.Body->getRBracLoc());
    llvm::StringRef Buffer = SM.getBufferData(SM.getMainFileID());
    llvm::StringRef Text = Buffer.slice(Begin, End);
    llvm::Regex Pragma("(^|\n)[ \t]*#[ \t]*pragma[ \t]+cuda_rewrite[ \t]+"
                       "overlap_boundary[^\n]*");
    llvm::SmallVector<llvm::StringRef, 2> Match;
    if (!Pragma.match(Text, &Match)) {
      if (Plan.Variant.Overlap)
        return "`overlap` needs `#pragma cuda_rewrite overlap_boundary` in "
               "the kernel's body, where the part of the prologue "
               "independent of the previous link ends";
      return "";
    }
    unsigned At = Begin + (Match[0].data() - Text.data());
    if (Match[0].starts_with("\n"))
      ++At;
    Plan.BoundaryPragmaBegin = At;
    Plan.BoundaryPragmaEnd = Begin + (Match[0].end() - Text.data());
    unsigned Index = 0;
    for (const Stmt *S : Plan.Body->body()) {
      unsigned SBegin = offset(S->getBeginLoc()), SEnd = offset(S->getEndLoc());
      if (SBegin < At && At < SEnd)
        return "overlap_boundary (line " +
               std::to_string(SM.getLineNumber(SM.getMainFileID(), At)) +
               ") is inside a nested statement; it must be a statement of "
               "the kernel's body itself";
      if (SBegin > At) {
        Plan.Boundary = Index;
        break;
      }
      ++Index;
    }
    if (!Plan.Boundary || !launchIfAfter(*Plan.Boundary))
      return "overlap_boundary must come before the self-launch";
    // Declarations the hoisted code needs stay before the wait.
    Plan.Boundary = std::max(*Plan.Boundary, Plan.PrefixEnd);
    return "";
  }

  bool launchIfAfter(unsigned Index) const {
    for (unsigned I = Index; I < Plan.Body->size(); ++I)
      if (Plan.Body->body_begin()[I] == Plan.LaunchIf)
        return true;
    return false;
  }

  std::string checkBody() {
    unsigned IfIndex = 0;
    while (Plan.Body->body_begin()[IfIndex] != Plan.LaunchIf)
      ++IfIndex;
    // Thread 0 must reach the launch, and every thread the waits.
    for (unsigned I = 0; I <= IfIndex; ++I)
      if (referencesOf(Plan.Body->body_begin()[I]).HasReturn)
        return "a return before the self-launch (line " +
               std::to_string(line(Plan.Body->body_begin()[I])) +
               ") would leave the next link waiting";
    References All = referencesOf(Plan.Body);
    if (Plan.Variant.Pool)
      for (const Decl *D : All.Decls)
        if (isBuiltinIndexVar(D, "blockIdx") || isBuiltinIndexVar(D, "gridDim"))
          return "the body reads blockIdx or gridDim, which differ between "
                 "the blocks of a pool (aggregate(n))";
    for (const Decl *D : All.Decls)
      if (const auto *V = dyn_cast<VarDecl>(D);
          V && V->hasGlobalStorage() && !V->isStaticLocal() &&
          V->hasAttr<CUDADeviceAttr>() && !V->getType().isConstQualified())
        return "the body uses the __device__ variable '" +
               V->getNameAsString() +
               "', whose accesses the pass cannot order between links";
      else if (V && V->hasAttr<CUDASharedAttr>() &&
               V->getType()->isIncompleteArrayType())
        return "the body uses dynamic shared memory ('extern __shared__ " +
               V->getNameAsString() + "')";
    // What the prologue may not touch with `overlap`: postponed values.
    if (Plan.Variant.Overlap)
      for (unsigned I = 0; I < *Plan.Boundary; ++I) {
        References R = referencesOf(Plan.Body->body_begin()[I]);
        for (const PromoteArg &A : Plan.Args)
          if (A.Kind == ArgKind::Postponed && R.Decls.contains(A.Param))
            return "the prologue before overlap_boundary (line " +
                   std::to_string(line(Plan.Body->body_begin()[I])) +
                   ") uses '" + A.Param->getNameAsString() +
                   "', which the previous link computes";
      }
    return "";
  }

  //===--------------------------------------------------------------------===//
  // The buffers
  //===--------------------------------------------------------------------===//

  /// Links run concurrently after promotion: link t + 1 (and later ones)
  /// with whatever link t does after it publishes. A buffer that links only
  /// read is no concern. A written one is made safe by publishing at the end
  /// of the link, after a barrier: then every access of link t precedes
  /// every access after the wait of link t + 1, as in the original. (Links
  /// of the data-sliding samples write disjoint elements, which would allow
  /// publishing where the original launched; the pass cannot prove it, so
  /// it does not.) The `overlap` prologue, which runs before the wait, may
  /// not touch a written buffer.
  std::string checkBuffers() {
    BufferUses Scan(Ctx, Plan.SelfLaunch);
    Scan.TraverseStmt(const_cast<CompoundStmt *>(Plan.Body));
    unsigned Pointers = llvm::count_if(Kernel.parameters(), [](const auto *P) {
      return P->getType()->isPointerType();
    });
    for (const ParmVarDecl *P : Kernel.parameters()) {
      if (P->getType()->isReferenceType())
        return "parameter '" + P->getNameAsString() +
               "' is a reference, which the pass does not follow";
      if (!P->getType()->isPointerType())
        continue;
      BufferUses::Use U = Scan.Uses.lookup(P);
      Plan.Buffers.push_back({P, U.Read, U.Written});
      if (!U.Written)
        continue;
      std::string Name = "'" + P->getNameAsString() + "'";
      if (Pointers > 1 && !P->getType().isRestrictQualified())
        return Name + " is written and may alias another pointer parameter; "
                      "mark the pointers __restrict__ if they never overlap";
      Plan.PublishAtEnd = true;
      if (!Plan.Variant.Overlap)
        continue;
      for (unsigned I = 0; I < *Plan.Boundary; ++I) {
        const Stmt *S = Plan.Body->body_begin()[I];
        if (!referencesOf(S).Decls.contains(P))
          continue;
        std::string Where = "the prologue before overlap_boundary (line " +
                            std::to_string(line(S)) + ") accesses " + Name;
        return U.Read ? Where + ", which the links both read and write: the "
                                "pass cannot show that it does not read what "
                                "an earlier link writes, so only the "
                                "variants without `overlap` apply"
                      : Where + ", which the links write, before the link "
                                "knows that the previous one has run";
      }
    }
    if (Plan.PublishAtEnd)
      for (const Stmt *S : Plan.Body->body())
        if (referencesOf(S).HasReturn)
          return "a buffer is written, so each link publishes at its end, "
                 "which a return (line " +
                 std::to_string(line(S)) + ") would skip";
    return "";
  }

  //===--------------------------------------------------------------------===//
  // Source text
  //===--------------------------------------------------------------------===//

  std::string text(SourceRange Range) const { return sourceText(Ctx, Range); }

  static std::string normalized(std::string S) {
    llvm::erase_if(S, [](char C) { return C == ' ' || C == '\n'; });
    return S;
  }

  unsigned offset(SourceLocation Loc) const {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  }

  unsigned line(const Stmt *S) const {
    return SM.getExpansionLineNumber(S->getBeginLoc());
  }

  const FunctionDecl &Kernel;
  llvm::ArrayRef<LaunchSite> Launches;
  ASTContext &Ctx;
  const SourceManager &SM;
  PromotePlan Plan;
  /// The plan's pins, filled by const tests too; moved into Plan at the end.
  mutable ConfigPins Pins;
  llvm::SmallPtrSet<const ValueDecl *, 8> Modified;
  llvm::SmallPtrSet<const ParmVarDecl *, 8> Postponed;
  llvm::SmallPtrSet<const VarDecl *, 8> PrefixVars;
};

} // namespace

std::string conditionText(const PromotePlan &Plan, const ASTContext &Ctx) {
  if (Plan.Conditions.empty())
    return "true";
  std::vector<std::string> Conjuncts;
  for (const Expr *C : Plan.Conditions)
    Conjuncts.push_back(sourceText(Ctx, C->getSourceRange()));
  return llvm::join(Conjuncts, " && ");
}

std::string blockText(const PromotePlan &Plan, const ASTContext &Ctx) {
  return sourceText(Ctx, Plan.Block->getSourceRange());
}

std::string argText(const PromoteArg &Arg, const ASTContext &Ctx) {
  return sourceText(Ctx, Arg.Value->getSourceRange());
}

std::string stepAmountText(const PromoteArg &Arg, const ASTContext &Ctx) {
  std::string C = sourceText(Ctx, Arg.Step->getSourceRange());
  bool Token = llvm::all_of(
      C, [](char Ch) { return isalnum(Ch) || Ch == '_' || Ch == ':'; });
  return Token ? C : "(" + C + ")";
}

PromotePlanResult planPromotion(const FunctionDecl &Kernel,
                                PromoteVariant Variant,
                                llvm::ArrayRef<LaunchSite> Launches,
                                ASTContext &Ctx) {
  return Planner(Kernel, Variant, Launches, Ctx).run();
}

} // namespace cuda_rewrite
