//===- LaunchSites.cpp - Kernel launches and where they sit ---------------===//

#include "analysis/LaunchSites.h"
#include "analysis/CudaBuiltins.h"
#include "analysis/FunctionTrackingVisitor.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

#include <cmath>

using namespace clang;

namespace cuda_rewrite {

namespace {

class LaunchCounter : public RecursiveASTVisitor<LaunchCounter> {
public:
  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *) {
    ++Count;
    return true;
  }
  unsigned Count = 0;
};

class LaunchFinder : public FunctionTrackingVisitor<LaunchFinder> {
public:
  explicit LaunchFinder(ASTContext &Ctx) : Ctx(Ctx) {}

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *Call) {
    const SourceManager &SM = Ctx.getSourceManager();
    if (!SM.isWrittenInMainFile(SM.getExpansionLoc(Call->getBeginLoc())))
      return true;
    LaunchSite Site;
    Site.Call = Call;
    Site.Callee = Call->getDirectCallee();
    Site.CalleeName = calleeName(Call);
    const FunctionDecl *Enclosing = currentFunction();
    Site.Enclosing = Enclosing;
    if (Enclosing) {
      bool Device = Enclosing->hasAttr<CUDAGlobalAttr>() ||
                    Enclosing->hasAttr<CUDADeviceAttr>();
      Site.FromDevice = Device;
      Site.FromHostDevice = Device && Enclosing->hasAttr<CUDAHostAttr>();
      Site.InTemplate = Enclosing->isTemplated();
    }
    Site.InMacro = Call->getConfig()->getBeginLoc().isMacroID() ||
                   Call->getBeginLoc().isMacroID();
    classifyControlFlow(Call, Site);
    Sites.push_back(Site);
    return true;
  }

  std::vector<LaunchSite> Sites;

private:
  static std::string calleeName(const CUDAKernelCallExpr *Call) {
    if (const FunctionDecl *F = Call->getDirectCallee())
      return F->getQualifiedNameAsString();
    const Expr *Callee = Call->getCallee()->IgnoreParenImpCasts();
    if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(Callee))
      return ULE->getName().getAsString();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(Callee))
      return DRE->getDecl()->getNameAsString();
    return "<indirect>";
  }

  /// Walks up from the launch to its function, noting conditional and
  /// repeated execution on the way.
  void classifyControlFlow(const Stmt *Launch, LaunchSite &Site) {
    DynTypedNode Child = DynTypedNode::create(*Launch);
    while (true) {
      DynTypedNodeList Parents = Ctx.getParents(Child);
      if (Parents.empty())
        return;
      const DynTypedNode &Parent = Parents[0];
      if (Parent.get<FunctionDecl>() || Parent.get<LambdaExpr>())
        return;
      const Stmt *C = Child.get<Stmt>();
      if (const auto *If = Parent.get<IfStmt>()) {
        if (C != If->getCond() && C != If->getInit() &&
            C != If->getConditionVariableDeclStmt())
          Site.InBranch = true;
      } else if (const auto *Switch = Parent.get<SwitchStmt>()) {
        if (C == Switch->getBody())
          Site.InBranch = true;
      } else if (const auto *Cond = Parent.get<AbstractConditionalOperator>()) {
        if (C != Cond->getCond())
          Site.InBranch = true;
      } else if (const auto *Bin = Parent.get<BinaryOperator>()) {
        if (Bin->isLogicalOp() && C == Bin->getRHS())
          Site.InBranch = true;
      } else if (Parent.get<ForStmt>() || Parent.get<WhileStmt>() ||
                 Parent.get<DoStmt>() || Parent.get<CXXForRangeStmt>()) {
        Site.InLoop = true;
      }
      Child = Parent;
    }
  }

  ASTContext &Ctx;
};

} // namespace

std::vector<LaunchSite> findLaunchSites(ASTContext &Ctx) {
  LaunchFinder Finder(Ctx);
  Finder.TraverseAST(Ctx);
  return std::move(Finder.Sites);
}

unsigned countKernelLaunches(const Stmt *S) {
  LaunchCounter Counter;
  Counter.TraverseStmt(const_cast<Stmt *>(S));
  return Counter.Count;
}

namespace {

/// Whether \p E, through `&&`, has a conjunct `threadIdx.x == <constant>`.
bool testsOneThreadX(ASTContext &Ctx, const Expr *E) {
  E = E->IgnoreParenImpCasts();
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return false;
  if (B->getOpcode() == BO_LAnd)
    return testsOneThreadX(Ctx, B->getLHS()) ||
           testsOneThreadX(Ctx, B->getRHS());
  if (B->getOpcode() != BO_EQ)
    return false;
  auto IsThreadX = [](const Expr *Side) {
    auto Builtin = cudaBuiltin(Side);
    return Builtin && Builtin->first == CudaBuiltinVar::ThreadIdx &&
           Builtin->second == 0;
  };
  auto IsConstant = [&](const Expr *Side) {
    return !Side->isValueDependent() && Side->isIntegerConstantExpr(Ctx);
  };
  return (IsThreadX(B->getLHS()) && IsConstant(B->getRHS())) ||
         (IsConstant(B->getLHS()) && IsThreadX(B->getRHS()));
}

struct ReadsThreadYZ : RecursiveASTVisitor<ReadsThreadYZ> {
  bool Found = false;
  bool VisitExpr(Expr *E) {
    auto Builtin = cudaBuiltin(E);
    Found |= Builtin && Builtin->first == CudaBuiltinVar::ThreadIdx &&
             Builtin->second > 0;
    return !Found;
  }
};

} // namespace

bool launchedByOneThread(ASTContext &Ctx, const CUDAKernelCallExpr &Launch,
                         const FunctionDecl &Function) {
  ReadsThreadYZ YZ;
  YZ.TraverseStmt(Function.getBody());
  if (YZ.Found)
    return false;
  DynTypedNode Child = DynTypedNode::create(Launch);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Child);
    if (Parents.empty() || Parents[0].get<FunctionDecl>() ||
        Parents[0].get<LambdaExpr>())
      return false;
    if (const auto *If = Parents[0].get<IfStmt>())
      if (Child.get<Stmt>() == If->getThen() &&
          testsOneThreadX(Ctx, If->getCond()))
        return true;
    Child = Parents[0];
  }
}

bool containsKernelLaunch(const Stmt *S) { return countKernelLaunches(S) > 0; }

namespace {

/// Whether a statement of \p Body may change \p V: an assignment to it or
/// a member of it, an increment, or its address taken.
bool mayChange(const Stmt *Body, const VarDecl *V) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const VarDecl *V;
    bool Found = false;
    explicit Finder(const VarDecl *V) : V(V) {}
    bool names(const Expr *E) const {
      E = E->IgnoreParenImpCasts();
      while (const auto *M = dyn_cast<MemberExpr>(E))
        E = M->getBase()->IgnoreParenImpCasts();
      const auto *Ref = dyn_cast<DeclRefExpr>(E);
      return Ref && Ref->getDecl() == V;
    }
    bool VisitBinaryOperator(BinaryOperator *B) {
      Found |= B->isAssignmentOp() && names(B->getLHS());
      return !Found;
    }
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *C) {
      Found |=
          C->isAssignmentOp() && C->getNumArgs() > 0 && names(C->getArg(0));
      return !Found;
    }
    bool VisitUnaryOperator(UnaryOperator *U) {
      Found |= (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf) &&
               names(U->getSubExpr());
      return !Found;
    }
  } F(V);
  F.TraverseStmt(const_cast<Stmt *>(Body));
  return F.Found;
}

/// The value of a dim3 or integer expression as threads, x * y * z.
std::optional<uint64_t> threadsOf(const ASTContext &Ctx, const Expr *E,
                                  const FunctionDecl *Enclosing,
                                  ConfigPins &Pins, unsigned Depth) {
  if (!E || Depth > 4)
    return std::nullopt;
  E = E->IgnoreImplicit();
  if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
    E = Temp->getSubExpr()->IgnoreImplicit();
  if (const auto *Cast = dyn_cast<CXXFunctionalCastExpr>(E))
    E = Cast->getSubExpr()->IgnoreImplicit();
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    if (Construct->getNumArgs() == 1 &&
        !Construct->getArg(0)->getType()->isIntegerType())
      return threadsOf(Ctx, Construct->getArg(0), Enclosing, Pins, Depth + 1);
    uint64_t Threads = 1;
    for (const Expr *Arg : Construct->arguments()) {
      if (isa<CXXDefaultArgExpr>(Arg))
        continue;
      std::optional<uint64_t> Dim =
          threadsOf(Ctx, Arg, Enclosing, Pins, Depth + 1);
      if (!Dim)
        return std::nullopt;
      Threads *= *Dim;
    }
    return Threads;
  }
  if (E->getType()->isIntegerType()) {
    Expr::EvalResult R;
    if (E->isValueDependent() || !E->EvaluateAsInt(R, Ctx) ||
        R.Val.getInt().isNegative() || !Pins.pin(E, Ctx))
      return std::nullopt;
    return R.Val.getInt().getZExtValue();
  }
  // A local dim3 built from constants and never changed.
  const auto *Ref = dyn_cast<DeclRefExpr>(E);
  const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!V || !V->isLocalVarDecl() || !V->getInit() || !Enclosing ||
      !Enclosing->getBody() || mayChange(Enclosing->getBody(), V))
    return std::nullopt;
  return threadsOf(Ctx, V->getInit(), Enclosing, Pins, Depth + 1);
}

} // namespace

const Expr *launchConfigArg(const CUDAKernelCallExpr *Call, unsigned I) {
  const auto *Config = dyn_cast_or_null<CallExpr>(Call->getConfig());
  if (!Config || Config->getNumArgs() < 4)
    return nullptr;
  const Expr *Arg = Config->getArg(Config->getNumArgs() - 4 + I);
  bool Omitted = isa<CXXDefaultArgExpr>(Arg->IgnoreImpCasts()) ||
                 Arg->getBeginLoc() == Config->getBeginLoc();
  return Omitted ? nullptr : Arg;
}

std::optional<uint64_t> constantBlockThreads(const ASTContext &Ctx,
                                             const LaunchSite &Launch,
                                             ConfigPins &Pins) {
  const Expr *Block = launchConfigArg(Launch.Call, 1);
  if (!Block)
    return std::nullopt;
  return threadsOf(Ctx, Block, Launch.Enclosing, Pins, 0);
}

std::optional<uint64_t> largestBlockThreads(const ASTContext &Ctx,
                                            llvm::ArrayRef<LaunchSite> Launches,
                                            const FunctionDecl &Kernel,
                                            ConfigPins &Pins) {
  std::optional<uint64_t> Largest;
  for (const LaunchSite &L : Launches) {
    if (!L.Callee || L.Callee->getCanonicalDecl() != Kernel.getCanonicalDecl())
      continue;
    std::optional<uint64_t> Threads = constantBlockThreads(Ctx, L, Pins);
    if (!Threads)
      return std::nullopt;
    Largest = std::max(Largest.value_or(0), *Threads);
  }
  return Largest;
}

/// An estimate of a floating-point expression: what the constant evaluator
/// folds, and calls of ceil and floor on such an expression, which grid
/// sizes use (`(unsigned)ceil((float)N / (float)BLOCK)`) and which it does
/// not fold.
static std::optional<double> estimateFloat(const ASTContext &Ctx,
                                           const Expr *E) {
  E = E->IgnoreParenImpCasts();
  llvm::APFloat Value(0.0);
  if (!E->isValueDependent() && E->EvaluateAsFloat(Value, Ctx)) {
    bool LosesInfo;
    Value.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
    return Value.convertToDouble();
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
  if (!Callee || Call->getNumArgs() != 1 || !Callee->getIdentifier())
    return std::nullopt;
  StringRef Name = Callee->getName();
  std::optional<double> Arg = estimateFloat(Ctx, Call->getArg(0));
  if (!Arg)
    return std::nullopt;
  if (Name == "ceil" || Name == "ceilf")
    return std::ceil(*Arg);
  if (Name == "floor" || Name == "floorf")
    return std::floor(*Arg);
  return std::nullopt;
}

/// Threads of a grid or block expression for an estimate: as threadsOf(),
/// where an integer may also be converted from an estimated floating-point
/// value.
static std::optional<uint64_t> estimateThreads(const ASTContext &Ctx,
                                               const Expr *E,
                                               const FunctionDecl *Enclosing) {
  ConfigPins Unused;
  if (std::optional<uint64_t> Threads = threadsOf(Ctx, E, Enclosing, Unused, 0))
    return Threads;
  E = E->IgnoreImplicit();
  if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
    E = Temp->getSubExpr()->IgnoreImplicit();
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    uint64_t Threads = 1;
    for (const Expr *Arg : Construct->arguments()) {
      if (isa<CXXDefaultArgExpr>(Arg))
        continue;
      std::optional<uint64_t> Dim = estimateThreads(Ctx, Arg, Enclosing);
      if (!Dim)
        return std::nullopt;
      Threads *= *Dim;
    }
    return Construct->getNumArgs() ? std::optional<uint64_t>(Threads)
                                   : std::nullopt;
  }
  E = E->IgnoreParens();
  const auto *Cast = dyn_cast<CastExpr>(E);
  if (!Cast || !Cast->getType()->isIntegerType())
    return std::nullopt;
  const Expr *Converted = Cast->getSubExprAsWritten()->IgnoreParenImpCasts();
  if (!Converted->getType()->isRealFloatingType())
    return std::nullopt;
  std::optional<double> Value = estimateFloat(Ctx, Converted);
  if (!Value || *Value < 0 || *Value >= 1e18)
    return std::nullopt;
  return uint64_t(*Value);
}

std::optional<uint64_t>
largestHostGridThreads(const ASTContext &Ctx,
                       llvm::ArrayRef<LaunchSite> Launches,
                       const FunctionDecl &Kernel) {
  std::optional<uint64_t> Largest;
  for (const LaunchSite &L : Launches) {
    if (!L.Callee || L.Callee->getCanonicalDecl() != Kernel.getCanonicalDecl())
      continue;
    const Expr *Grid = launchConfigArg(L.Call, 0);
    const Expr *Block = launchConfigArg(L.Call, 1);
    if (L.FromDevice || !Grid || !Block)
      return std::nullopt;
    std::optional<uint64_t> Blocks = estimateThreads(Ctx, Grid, L.Enclosing);
    std::optional<uint64_t> Threads = estimateThreads(Ctx, Block, L.Enclosing);
    if (!Blocks || !Threads)
      return std::nullopt;
    Largest = std::max(Largest.value_or(0), *Blocks * *Threads);
  }
  return Largest;
}

} // namespace cuda_rewrite
