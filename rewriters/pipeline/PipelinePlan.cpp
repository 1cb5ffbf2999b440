//===- PipelinePlan.cpp - A pipeline's stages and their legality ----------===//

#include "rewriters/pipeline/PipelinePlan.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include <functional>

using namespace clang;

namespace cuda_rewrite {

bool PipelinePlan::hasCycles() const {
  // Depth-first search over the stage-to-stage calls; a stage reached again
  // while it is on the path closes a cycle.
  enum Mark { New, OnPath, Done };
  std::vector<Mark> Marks(Stages.size(), New);
  std::function<bool(unsigned)> Visit = [&](unsigned S) {
    Marks[S] = OnPath;
    for (const StageCall &C : Calls)
      if (C.Caller == int(S) && (Marks[C.Callee] == OnPath ||
                                 (Marks[C.Callee] == New && Visit(C.Callee))))
        return true;
    Marks[S] = Done;
    return false;
  };
  for (unsigned S = 0; S != Stages.size(); ++S)
    if (Marks[S] == New && Visit(S))
      return true;
  return false;
}

namespace {

/// Functions whose meaning depends on the block or on which threads run
/// together; a stage runs in a block of other items' groups.
bool isBlockLevel(StringRef Name) {
  return Name.starts_with("__syncthreads") || Name == "__barrier_sync" ||
         Name == "cudaDeviceSynchronize" || Name == "__trap";
}

/// Warp-level intrinsics: right only where a group is exactly one warp.
bool isWarpLevel(StringRef Name) {
  return Name == "__syncwarp" || Name.starts_with("__shfl") ||
         Name.starts_with("__ballot") || Name.starts_with("__any_sync") ||
         Name.starts_with("__all_sync") || Name.starts_with("__uni_sync") ||
         Name == "__activemask" || Name.starts_with("__match") ||
         Name.starts_with("__reduce_");
}

bool isBuiltinIndex(StringRef Name) {
  return Name == "threadIdx" || Name == "blockIdx" || Name == "blockDim" ||
         Name == "gridDim";
}

/// Checks one function that runs inside a stage (the stage or a device
/// function it calls) and collects its calls of stages.
class StageBodyChecker : public RecursiveASTVisitor<StageBodyChecker> {
public:
  /// \p IsEntry: the entry kernel or a function it calls, which may do
  /// anything but call stages from a helper.
  StageBodyChecker(const StageGroupSizes &Stages, const SourceManager &SM,
                   unsigned GroupSize, bool IsEntry)
      : Stages(Stages), SM(SM), GroupSize(GroupSize), IsEntry(IsEntry) {}

  std::string Why;
  bool UsesWarpIntrinsics = false;
  std::vector<const CallExpr *> StageCalls;
  std::vector<const FunctionDecl *> Helpers;

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (IsEntry)
      return true;
    if (const auto *V = dyn_cast<VarDecl>(E->getDecl())) {
      if (V->getIdentifier() && isBuiltinIndex(V->getName()))
        return fail("reads '" + V->getNameAsString() +
                    "', which means another thread or block once the stage "
                    "runs from a queue");
      if (V->hasAttr<CUDASharedAttr>())
        return fail("uses __shared__ '" + V->getNameAsString() +
                    "', which items of other stages in the same block would "
                    "share");
    }
    return true;
  }

  bool VisitVarDecl(VarDecl *V) {
    if (!IsEntry && V->hasAttr<CUDASharedAttr>())
      return fail("declares __shared__ '" + V->getNameAsString() +
                  "', which items of other stages in the same block would "
                  "share");
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *) {
    return IsEntry || fail("launches a kernel");
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *) {
    return IsEntry ||
           fail("has inline assembly, which may read the thread's position");
  }

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CUDAKernelCallExpr>(E))
      return true;
    const FunctionDecl *F = E->getDirectCallee();
    if (!F)
      return IsEntry ||
             fail("calls through a function pointer, which the pipeline "
                  "cannot follow");
    F = F->getCanonicalDecl();
    if (Stages.count(F)) {
      StageCalls.push_back(E);
      return true;
    }
    if (!IsEntry && !checkCallee(F))
      return false;
    const FunctionDecl *Def = F->getDefinition();
    if (Def && Def->hasBody() &&
        SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getLocation())))
      Helpers.push_back(Def);
    return true;
  }

private:
  /// Whether a stage may call \p F.
  bool checkCallee(const FunctionDecl *F) {
    StringRef Name = F->getIdentifier() ? F->getName() : "";
    if (isBlockLevel(Name))
      return fail("calls " + Name.str() +
                  ", a barrier that the other groups of the block, running "
                  "other items, never reach");
    UsesWarpIntrinsics |= isWarpLevel(Name);
    if (isWarpLevel(Name) && GroupSize != 32)
      return fail("calls " + Name.str() + " in a threads(" +
                  std::to_string(GroupSize) +
                  ") stage; warp intrinsics need threads(32), where a group "
                  "is exactly one warp");
    for (const DeclContext *DC = F->getDeclContext(); DC; DC = DC->getParent())
      if (const auto *NS = dyn_cast<NamespaceDecl>(DC))
        if (NS->getName() == "cooperative_groups")
          return fail("uses cooperative groups, whose groups are the block's "
                      "and the grid's");
    return true;
  }

  bool fail(const std::string &Reason) {
    if (Why.empty())
      Why = Reason;
    return false;
  }

  const StageGroupSizes &Stages;
  const SourceManager &SM;
  unsigned GroupSize;
  bool IsEntry;
};

/// Whether a value of type \p T can hold an address: a pointer, reference
/// or member pointer, or a record or array with one inside.
bool mayHoldAddress(QualType T, unsigned Depth = 0) {
  T = T.getCanonicalType();
  if (T->isPointerType() || T->isReferenceType() || T->isMemberPointerType())
    return true;
  if (const auto *A = dyn_cast<ArrayType>(T.getTypePtr()))
    return mayHoldAddress(A->getElementType(), Depth);
  if (const RecordDecl *R = T->getAsRecordDecl()) {
    if (Depth > 8)
      return true;
    if (const auto *C = dyn_cast<CXXRecordDecl>(R))
      for (const CXXBaseSpecifier &B : C->bases())
        if (mayHoldAddress(B.getType(), Depth + 1))
          return true;
    for (const FieldDecl *F : R->fields())
      if (mayHoldAddress(F->getType(), Depth + 1))
        return true;
  }
  return false;
}

/// Whether a record of type \p T has a reference member (at any depth).
bool holdsReference(QualType T, unsigned Depth = 0) {
  const RecordDecl *R = T.getCanonicalType()->getAsRecordDecl();
  if (!R || Depth > 8)
    return false;
  for (const FieldDecl *F : R->fields())
    if (F->getType()->isReferenceType() ||
        holdsReference(F->getType(), Depth + 1))
      return true;
  return false;
}

/// Whether \p E takes the address of a local variable or lets a local array
/// decay to a pointer: an item holding it would outlive the caller's frame.
bool pointsIntoFrame(const Stmt *E) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    llvm::SmallPtrSet<const Expr *, 4> ElementReads;
    // The conversions of a braced item (`Pointer{a}`) are in the semantic
    // form of its initializer list.
    bool shouldVisitImplicitCode() const { return true; }
    /// The local variable whose storage \p E designates (`x`, `x.f`,
    /// `a[i]` of a local array a), if any.
    static const VarDecl *localRoot(const Expr *E) {
      for (;;) {
        E = E->IgnoreParenImpCasts();
        if (const auto *M = dyn_cast<MemberExpr>(E); M && !M->isArrow())
          E = M->getBase();
        else if (const auto *A = dyn_cast<ArraySubscriptExpr>(E);
                 A &&
                 A->getBase()->IgnoreParenImpCasts()->getType()->isArrayType())
          E = A->getBase();
        else
          break;
      }
      const auto *R = dyn_cast<DeclRefExpr>(E);
      const auto *V = R ? dyn_cast<VarDecl>(R->getDecl()) : nullptr;
      return V && V->hasLocalStorage() ? V : nullptr;
    }
    bool VisitUnaryOperator(UnaryOperator *U) {
      Found |= U->getOpcode() == UO_AddrOf && localRoot(U->getSubExpr());
      return !Found;
    }
    // `a[i]` reads an element: the decay of `a` there is no escape.
    bool VisitArraySubscriptExpr(ArraySubscriptExpr *A) {
      ElementReads.insert(A->getBase()->IgnoreParens());
      return true;
    }
    bool VisitImplicitCastExpr(ImplicitCastExpr *C) {
      Found |= C->getCastKind() == CK_ArrayToPointerDecay &&
               !ElementReads.count(C) && localRoot(C->getSubExpr());
      return !Found;
    }
  } F;
  F.TraverseStmt(const_cast<Stmt *>(E));
  return F.Found;
}

/// Whether \p E reads a local variable (not a parameter) whose type can
/// hold an address.
bool readsLocalAddress(const Expr *E) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool Found = false;
    bool VisitDeclRefExpr(DeclRefExpr *R) {
      const auto *V = dyn_cast<VarDecl>(R->getDecl());
      Found |= V && V->hasLocalStorage() && !isa<ParmVarDecl>(V) &&
               mayHoldAddress(V->getType());
      return !Found;
    }
  } F;
  F.TraverseStmt(const_cast<Expr *>(E));
  return F.Found;
}

/// Whether \p F takes the address of one of its locals anywhere (then a
/// local pointer of F may hold it).
bool takesLocalAddress(const FunctionDecl *F) {
  return F->getBody() && pointsIntoFrame(F->getBody());
}

class Planner {
public:
  Planner(const Candidate &EntryCandidate, const StageGroupSizes &Sizes,
          ASTContext &Ctx)
      : EntryCandidate(EntryCandidate), Sizes(Sizes), Ctx(Ctx),
        SM(Ctx.getSourceManager()) {}

  PipelinePlanResult run() {
    PipelinePlanResult Result;
    if (!findLaunch() || !readClauses() || !collectStages() ||
        !checkPlacement()) {
      Result.Refused.Reason = Why;
      return Result;
    }
    Plan.Pins = std::move(Pins);
    Result.Plan = std::move(Plan);
    return Result;
  }

private:
  bool refuse(const std::string &Reason) {
    Why = Reason;
    return false;
  }

  bool findLaunch() {
    const Stmt *S = EntryCandidate.Statement;
    if (const auto *E = dyn_cast_or_null<Expr>(S))
      S = E->IgnoreImplicit();
    Plan.Launch = dyn_cast_or_null<CUDAKernelCallExpr>(S);
    if (!Plan.Launch)
      return refuse("the pragma must precede a kernel launch statement "
                    "'entry<<<grid, block>>>(...);'");
    const FunctionDecl *Entry = Plan.Launch->getDirectCallee();
    if (!Entry || !Entry->getDefinition())
      return refuse("the launched kernel's definition is not in this file");
    Plan.Entry = Entry->getDefinition();
    if (Plan.Entry->isTemplateInstantiation() ||
        Plan.Entry->getDescribedFunctionTemplate())
      return refuse("the entry kernel is a template");
    Plan.HostFunction = EntryCandidate.Function;
    if (!Plan.HostFunction || Plan.HostFunction->hasAttr<CUDAGlobalAttr>() ||
        (Plan.HostFunction->hasAttr<CUDADeviceAttr>() &&
         !Plan.HostFunction->hasAttr<CUDAHostAttr>()))
      return refuse("the pipeline is launched from device code; the runtime "
                    "that schedules it runs on the host");
    return true;
  }

  bool readClauses() {
    if (!EntryCandidate.Annotation)
      return true;
    if (const PragmaClause *Model = EntryCandidate.Annotation->clause("model"))
      Plan.Model = Model->Args.front();
    if (const PragmaClause *Config =
            EntryCandidate.Annotation->clause("config")) {
      Plan.ConfigFile = StringRef(Config->Args.front()).trim('"').str();
      if (Plan.ConfigFile.find_first_of("\"\\\n") != std::string::npos)
        return refuse("config(" + Config->Args.front() +
                      ") is not a plain file name");
    }
    return true;
  }

  /// Index of stage \p F, adding it (and queueing its body) if new.
  int stageIndex(const FunctionDecl *F) {
    F = F->getCanonicalDecl();
    for (unsigned I = 0; I != Plan.Stages.size(); ++I)
      if (Plan.Stages[I].Function->getCanonicalDecl() == F)
        return int(I);
    PipelineStage S;
    S.Function = F->getDefinition() ? F->getDefinition() : F;
    S.GroupSize = Sizes.lookup(F);
    Plan.Stages.push_back(S);
    return int(Plan.Stages.size() - 1);
  }

  bool checkSignature(PipelineStage &S) {
    const FunctionDecl *F = S.Function;
    std::string Name = "stage '" + F->getNameAsString() + "'";
    if (!F || !F->hasBody())
      return refuse(Name + " has no definition in this file");
    if (!F->hasAttr<CUDADeviceAttr>() || F->hasAttr<CUDAGlobalAttr>())
      return refuse(Name + " is not a __device__ function");
    if (!F->getReturnType()->isVoidType())
      return refuse(Name + " returns a value; stages hand results on by "
                           "calling the next stage");
    if (F->isTemplated() || isa<CXXMethodDecl>(F) ||
        !F->getDeclContext()->getRedeclContext()->isTranslationUnit())
      return refuse(Name + " must be a plain function at file scope (not a "
                           "template, member or namespace member)");
    if (F->isVariadic())
      return refuse(Name + " is variadic");
    if (!llvm::isPowerOf2_32(S.GroupSize) || S.GroupSize > kMaxGroupSize)
      return refuse(Name + " is threads(" + std::to_string(S.GroupSize) +
                    "); n must be a power of two up to " +
                    std::to_string(kMaxGroupSize));
    unsigned Want = S.GroupSize > 1 ? 2 : 1;
    if (F->getNumParams() != Want)
      return refuse(Name + (S.GroupSize > 1
                                ? " is threads(" + std::to_string(S.GroupSize) +
                                      ") and must take (item, int rank)"
                                : std::string(" must take one item")));
    S.Item = F->getParamDecl(0);
    QualType T = S.Item->getType();
    if (T->isReferenceType() || T->isArrayType() ||
        !T.getNonReferenceType()->isObjectType() || T->isIncompleteType() ||
        !T.isTriviallyCopyableType(Ctx))
      return refuse(Name + " must take its item by value, of a trivially "
                           "copyable type");
    if (holdsReference(T))
      return refuse(Name + "'s item holds a reference, which would refer into "
                           "the caller's frame once the item is queued");
    if (const TagDecl *Tag = T->getAsTagDecl())
      if (!Tag->getDeclContext()->getRedeclContext()->isFileContext())
        return refuse(Name + "'s item type is declared inside a function");
    S.ItemType = TypeName::getFullyQualifiedName(T.getUnqualifiedType(), Ctx,
                                                 Ctx.getPrintingPolicy());
    if (S.GroupSize > 1) {
      S.Rank = F->getParamDecl(1);
      if (!S.Rank->getType()->isIntegerType())
        return refuse(Name + "'s rank parameter must be an int");
    }
    if (F->getNumParams() &&
        (!S.Item->getIdentifier() || (S.Rank && !S.Rank->getIdentifier())))
      return refuse(Name + "'s parameters must be named");
    return true;
  }

  /// Checks \p F (a stage, a helper it calls, or the entry) and the helpers
  /// it calls; appends its calls of stages.
  bool checkBody(const FunctionDecl *F, int Caller, unsigned GroupSize,
                 llvm::SmallPtrSetImpl<const FunctionDecl *> &Seen) {
    if (!Seen.insert(F).second)
      return true;
    // The entry kernel and what it calls run as written (with the original
    // launch's threads); only their calls of stages change.
    bool InEntry = Caller < 0;
    bool IsEntry = InEntry && F == Plan.Entry;
    StageBodyChecker Checker(Sizes, SM, GroupSize, InEntry);
    Checker.TraverseStmt(F->getBody());
    std::string Where = IsEntry
                            ? "the entry kernel '" + F->getNameAsString() + "'"
                            : "'" + F->getNameAsString() + "'";
    if (!Checker.Why.empty())
      return refuse(Where + " " + Checker.Why);
    if (Caller >= 0)
      Plan.Stages[Caller].UsesWarpIntrinsics |= Checker.UsesWarpIntrinsics;
    bool IsStageBody =
        IsEntry || (Caller >= 0 && Plan.Stages[Caller].Function == F);
    if (!IsStageBody && !Checker.StageCalls.empty())
      return refuse(Where + ", a device function that the pipeline calls, "
                            "calls a stage; only stages and the entry kernel "
                            "may");
    for (const CallExpr *Call : Checker.StageCalls)
      if (!addCall(Call, Caller))
        return false;
    for (const FunctionDecl *H : Checker.Helpers)
      if (!checkBody(H, Caller, GroupSize, Seen))
        return false;
    return true;
  }

  bool addCall(const CallExpr *Call, int Caller) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    unsigned Index = stageIndex(Callee);
    unsigned CalleeGroup = Plan.Stages[Index].GroupSize;
    std::string Name = "the call of stage '" + Callee->getNameAsString() + "'";
    if (Call->getNumArgs() != (CalleeGroup > 1 ? 2u : 1u))
      return refuse("stage '" + Callee->getNameAsString() +
                    (CalleeGroup > 1
                         ? "' is threads(" + std::to_string(CalleeGroup) +
                               ") and must take (item, int rank)"
                         : std::string("' must take one item")));
    bool SerialRanks = false;
    if (Caller >= 0 && CalleeGroup > 1 &&
        Plan.Stages[Caller].GroupSize != CalleeGroup) {
      SerialRanks =
          Plan.Stages[Caller].GroupSize == 1 && isRankLoop(Call, CalleeGroup);
      if (!SerialRanks)
        return refuse(Name + " comes from '" + Plan.Stages[Caller].name() +
                      "', whose groups are not threads(" +
                      std::to_string(CalleeGroup) +
                      "); a threads(n) stage is called by n threads together, "
                      "or by one thread in a loop over its ranks, 'for (int "
                      "r = 0; r < n; ++r) stage(item, r);'");
    }
    // An item that cannot hold an address cannot point into the frame, what
    // ever its value was computed from.
    const FunctionDecl *CallerFunction =
        Caller < 0 ? Plan.Entry : Plan.Stages[Caller].Function;
    if (Call->getNumArgs() && mayHoldAddress(Call->getArg(0)->getType())) {
      if (pointsIntoFrame(Call->getArg(0)))
        return refuse(Name + " passes the address of a local variable; the "
                             "item outlives the caller once it is queued");
      if (readsLocalAddress(Call->getArg(0)) &&
          takesLocalAddress(CallerFunction))
        return refuse(Name +
                      " passes a local that may hold the address of a "
                      "local variable ('" +
                      CallerFunction->getNameAsString() +
                      "' takes one); the item outlives the caller once it "
                      "is queued");
    }
    if (Call->getCallee()->getBeginLoc().isMacroID())
      return refuse(Name + " is written in a macro");
    Plan.Calls.push_back({Call, Index, Caller, SerialRanks});
    return true;
  }

  /// The single parent of \p S, through expression wrappers and braces
  /// around it alone.
  const Stmt *enclosing(const Stmt *S) const {
    for (;;) {
      auto Parents = Ctx.getParents(*S);
      if (Parents.size() != 1)
        return nullptr;
      const Stmt *P = Parents[0].get<Stmt>();
      if (!P)
        return nullptr;
      const auto *Braces = dyn_cast<CompoundStmt>(P);
      if (isa<ExprWithCleanups>(P) || (Braces && Braces->size() == 1)) {
        S = P;
        continue;
      }
      return P;
    }
  }

  /// Whether \p Call is the whole body of `for (int r = 0; r < n; ++r)`,
  /// passing r as the rank and an item that does not depend on r.
  bool isRankLoop(const CallExpr *Call, unsigned N) const {
    const auto *Loop = dyn_cast_or_null<ForStmt>(enclosing(Call));
    if (!Loop || !Loop->getInit() || !Loop->getCond() || !Loop->getInc())
      return false;
    const auto *Init = dyn_cast<DeclStmt>(Loop->getInit());
    const auto *R = Init && Init->isSingleDecl()
                        ? dyn_cast<VarDecl>(Init->getSingleDecl())
                        : nullptr;
    Expr::EvalResult Value;
    if (!R || !R->getInit() || !R->getInit()->EvaluateAsInt(Value, Ctx) ||
        Value.Val.getInt() != 0 || !Pins.pin(R->getInit(), Ctx))
      return false;
    auto IsR = [&](const Expr *E) {
      const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
      return Ref && Ref->getDecl() == R;
    };
    const auto *Cond =
        dyn_cast<BinaryOperator>(Loop->getCond()->IgnoreParens());
    if (!Cond || Cond->getOpcode() != BO_LT || !IsR(Cond->getLHS()) ||
        !Cond->getRHS()->EvaluateAsInt(Value, Ctx) || Value.Val.getInt() != N ||
        !Pins.pin(Cond->getRHS(), Ctx))
      return false;
    const auto *Inc = dyn_cast<UnaryOperator>(Loop->getInc()->IgnoreParens());
    if (!Inc || !Inc->isIncrementOp() || !IsR(Inc->getSubExpr()))
      return false;
    if (Call->getNumArgs() != 2 || !IsR(Call->getArg(1)))
      return false;
    struct Refers : RecursiveASTVisitor<Refers> {
      const VarDecl *R;
      bool Found = false;
      bool VisitDeclRefExpr(DeclRefExpr *E) {
        Found |= E->getDecl() == R;
        return !Found;
      }
    } Uses;
    Uses.R = R;
    Uses.TraverseStmt(const_cast<Expr *>(Call->getArg(0)));
    return !Uses.Found;
  }

  /// A stage whose ranks a loop runs one after another must not exchange
  /// values between them through warp intrinsics (the original could not).
  bool checkSerialRanks() {
    for (const StageCall &C : Plan.Calls)
      if (C.SerialRanks && Plan.Stages[C.Callee].UsesWarpIntrinsics)
        return refuse("'" + Plan.Stages[C.Caller].name() +
                      "' runs the ranks of stage '" +
                      Plan.Stages[C.Callee].name() +
                      "' one after another, but that stage uses warp "
                      "intrinsics, which need its ranks together");
    return true;
  }

  bool collectStages() {
    llvm::SmallPtrSet<const FunctionDecl *, 8> EntrySeen;
    if (!checkBody(Plan.Entry, -1, 1, EntrySeen))
      return false;
    if (Plan.Calls.empty())
      return refuse("the entry kernel '" + Plan.name() +
                    "' calls no stage; mark the stages with '#pragma "
                    "cuda_rewrite stage'");
    for (unsigned I = 0; I != Plan.Stages.size(); ++I) {
      if (!checkSignature(Plan.Stages[I]))
        return false;
      llvm::SmallPtrSet<const FunctionDecl *, 8> Seen;
      if (!checkBody(Plan.Stages[I].Function, int(I), Plan.Stages[I].GroupSize,
                     Seen))
        return false;
    }
    if (Plan.Stages.size() > 16)
      return refuse("the pipeline has " + std::to_string(Plan.Stages.size()) +
                    " stages; the runtime schedules at most 16");
    return checkSerialRanks() && checkNames();
  }

  /// The generated struct has a member per stage and one named `control`;
  /// the stage copies take a parameter named `pipeline`.
  bool checkNames() {
    llvm::StringSet<> Names;
    for (const PipelineStage &S : Plan.Stages) {
      if (S.name() == "control")
        return refuse("a stage is named 'control', the name of the "
                      "pipeline's own member");
      if (!Names.insert(S.name()).second)
        return refuse("two stages are named '" + S.name() +
                      "'; stages may not be overloaded");
    }
    struct Uses : RecursiveASTVisitor<Uses> {
      bool Found = false;
      bool VisitNamedDecl(NamedDecl *D) {
        Found |= D->getIdentifier() && D->getName() == "pipeline";
        return !Found;
      }
      bool VisitDeclRefExpr(DeclRefExpr *E) {
        Found |= E->getDecl()->getIdentifier() &&
                 E->getDecl()->getName() == "pipeline";
        return !Found;
      }
    };
    for (const PipelineStage &S : Plan.Stages) {
      Uses U;
      U.TraverseDecl(const_cast<FunctionDecl *>(S.Function));
      if (U.Found)
        return refuse("stage '" + S.name() +
                      "' uses the name 'pipeline', which its rewritten copy "
                      "needs for the pipeline's queues");
    }
    Uses U;
    U.TraverseDecl(const_cast<FunctionDecl *>(Plan.Entry));
    if (U.Found)
      return refuse("the entry kernel uses the name 'pipeline', which its "
                    "rewritten copy needs for the pipeline's queues");
    return true;
  }

  /// The generated code goes before the host function of the launch; every
  /// stage and the entry must be defined above it.
  bool checkPlacement() {
    unsigned Host = SM.getFileOffset(
        SM.getExpansionLoc(Plan.HostFunction->getSourceRange().getBegin()));
    auto Before = [&](const FunctionDecl *F) {
      return SM.isWrittenInMainFile(SM.getExpansionLoc(F->getEndLoc())) &&
             SM.getFileOffset(SM.getExpansionLoc(F->getEndLoc())) < Host;
    };
    if (!Before(Plan.Entry))
      return refuse("the entry kernel must be defined in this file above "
                    "the function that launches it");
    for (const PipelineStage &S : Plan.Stages)
      if (!Before(S.Function))
        return refuse("stage '" + S.name() +
                      "' must be defined in this file above the function "
                      "that launches the pipeline");
    return true;
  }

  const Candidate &EntryCandidate;
  const StageGroupSizes &Sizes;
  ASTContext &Ctx;
  const SourceManager &SM;
  PipelinePlan Plan;
  /// Filled by const matchers too; moved into Plan when it is made.
  mutable ConfigPins Pins;
  std::string Why;
};

} // namespace

PipelinePlanResult planPipeline(const Candidate &Entry,
                                const StageGroupSizes &Stages,
                                ASTContext &Ctx) {
  return Planner(Entry, Stages, Ctx).run();
}

} // namespace cuda_rewrite
