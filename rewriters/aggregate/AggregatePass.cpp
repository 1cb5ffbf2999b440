//===- AggregatePass.cpp - Kernel launch aggregation (KLAP) ---------------===//

#include "rewriters/aggregate/AggregatePass.h"
#include "analysis/DeviceCallGraph.h"
#include "analysis/LaunchSites.h"
#include "analysis/Uniformity.h"
#include "rewriters/aggregate/AggregateCodeGen.h"
#include "rewriters/aggregate/ChildKernel.h"
#include "rewriters/aggregate/DeviceMalloc.h"
#include "rewriters/common/CodeWriter.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/GeneratedLayout.h"
#include "rewriters/common/SourceLines.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

std::optional<Granularity> parseGranularity(StringRef Name) {
  if (Name == "warp")
    return Granularity::Warp;
  if (Name == "block")
    return Granularity::Block;
  if (Name == "kernel")
    return Granularity::Kernel;
  return std::nullopt;
}

StringRef granularityName(Granularity G) {
  switch (G) {
  case Granularity::Warp:
    return "warp";
  case Granularity::Block:
    return "block";
  case Granularity::Kernel:
    return "kernel";
  }
  llvm_unreachable("all granularities handled");
}

namespace {

/// One launch the pass rewrites, with everything decided about it.
struct Site {
  const Candidate *C;
  const CUDAKernelCallExpr *Call;
  const FunctionDecl *Parent;
  const FunctionDecl *Child;
  Granularity G;
  std::vector<bool> Scalar;
  ChildKernelInfo Info;
  std::string WhyNotBlock; ///< Set when block granularity was not possible.
  /// Set when the default chose warp granularity for a small parent grid.
  std::string WhySmallGrid;
  /// In a loop: a thread may launch more than once, so block granularity
  /// keeps a list of pending launches per thread.
  bool InLoop = false;
  /// The granularity was asked for (pragma or --aggregate-granularity).
  bool Asked = false;
  /// The parent's launch of itself.
  bool Recursive = false;
  /// Why the launch's stream does not stop it joining the others, if it
  /// names one; and the statements that declare, create and destroy that
  /// stream, which go with the launch.
  std::string StreamNote;
  std::vector<const Stmt *> StreamStatements;
};

/// The uses of a local stream in its kernel: created (cudaStreamCreate*
/// with its address), destroyed, and anything else.
struct StreamUses : RecursiveASTVisitor<StreamUses> {
  explicit StreamUses(const VarDecl *Stream) : Stream(Stream) {}

  bool VisitCallExpr(CallExpr *Call) {
    const FunctionDecl *F = Call->getDirectCallee();
    if (!F || !F->getIdentifier() || Call->getNumArgs() == 0)
      return true;
    const Expr *First = Call->getArg(0)->IgnoreParenImpCasts();
    if (const auto *Addr = dyn_cast<UnaryOperator>(First);
        Addr && Addr->getOpcode() == UO_AddrOf &&
        F->getName().starts_with("cudaStreamCreate") &&
        named(Addr->getSubExpr()))
      Creates.push_back(Call);
    else if (F->getName() == "cudaStreamDestroy" && named(First))
      Known.insert(cast<DeclRefExpr>(First));
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    if (Ref->getDecl() == Stream)
      Refs.push_back(Ref);
    return true;
  }

  bool named(const Expr *E) const {
    const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return Ref && Ref->getDecl() == Stream;
  }

  const VarDecl *Stream;
  std::vector<const CallExpr *> Creates;
  std::vector<const DeclRefExpr *> Refs;
  std::set<const DeclRefExpr *> Known; ///< The destroys' references.
};

/// Facts about a parent kernel's body that decide block granularity.
struct ParentBody : RecursiveASTVisitor<ParentBody> {
  bool HasBarrier = false, HasGoto = false;
  std::vector<const ReturnStmt *> Returns;
  bool VisitCallExpr(CallExpr *Call) {
    if (const FunctionDecl *F = Call->getDirectCallee())
      HasBarrier |= F->getName().starts_with("__syncthreads");
    return true;
  }
  bool VisitReturnStmt(ReturnStmt *Return) {
    Returns.push_back(Return);
    return true;
  }
  bool VisitGotoStmt(GotoStmt *) { return HasGoto = true; }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *) { return HasGoto = true; }
};

/// Whether a body names \p Kernel outside the launches being rewritten (a
/// launch of itself that stays).
struct NamesKernel : RecursiveASTVisitor<NamesKernel> {
  const FunctionDecl *Kernel;
  llvm::SmallPtrSet<const Stmt *, 8> Rewritten;
  bool Found = false;
  explicit NamesKernel(const FunctionDecl *Kernel) : Kernel(Kernel) {}
  bool TraverseCUDAKernelCallExpr(CUDAKernelCallExpr *Call,
                                  DataRecursionQueue *Queue = nullptr) {
    return Rewritten.contains(Call) ||
           RecursiveASTVisitor::TraverseCUDAKernelCallExpr(Call, Queue);
  }
  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    if (Ref->getDecl()->getCanonicalDecl() == Kernel->getCanonicalDecl())
      Found = true;
    return !Found;
  }
};

class AggregateRewriter {
public:
  AggregateRewriter(PassContext &Context, std::optional<Granularity> Override)
      : Context(Context), Ctx(Context.Ctx), SM(Ctx.getSourceManager()),
        Override(Override) {}

  bool run(ArrayRef<const Candidate *> Candidates) {
    for (const Candidate *C : Candidates)
      plan(*C);
    settleNestedSites();
    if (Sites.empty())
      return true;
    return removeOwnStreams() && rewriteWarpSites() && rewriteBlockParents() &&
           boundWarpParents() && emitChildren() && aggregateMallocs() &&
           prepareHostLaunches() &&
           includeRuntimeHeader(Context, "runtime", Candidates.front()->Loc,
                                "aggregate");
  }

private:
  //===--------------------------------------------------------------------===//
  // Deciding
  //===--------------------------------------------------------------------===//

  void refuse(const Candidate &C, const Twine &Reason) {
    Context.Remark.refused(C, AggregatePass::Name, Reason);
  }

  std::string text(SourceRange Range) const { return sourceText(Ctx, Range); }

  unsigned offset(SourceLocation Loc) const {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  }

  /// A block size every launch at this site has: needed when the child
  /// waits at barriers.
  bool isConstantBlock(const Expr *E) const {
    E = E->IgnoreImplicit();
    if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
      E = Temp->getSubExpr()->IgnoreImplicit();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      for (const Expr *Arg : Construct->arguments())
        if (!isa<CXXDefaultArgExpr>(Arg) && !isConstantBlock(Arg))
          return false;
      return true;
    }
    return E->isIntegerConstantExpr(Ctx);
  }

  bool inLoop(const Stmt *S, const FunctionDecl *Parent) const {
    DynTypedNode Node = DynTypedNode::create(*S);
    while (true) {
      DynTypedNodeList Parents = Ctx.getParents(Node);
      if (Parents.empty() || Parents[0].get<FunctionDecl>())
        return false;
      if (Parents[0].get<ForStmt>() || Parents[0].get<WhileStmt>() ||
          Parents[0].get<DoStmt>() || Parents[0].get<CXXForRangeStmt>())
        return true;
      Node = Parents[0];
    }
  }

  /// A host launch of \p Parent whose stream argument has side effects:
  /// prepareHostLaunches() repeats that argument.
  const CUDAKernelCallExpr *
  hostLaunchWithImpureStream(const FunctionDecl *Parent) {
    if (!HostLaunches)
      HostLaunches = findLaunchSites(Ctx);
    for (const LaunchSite &L : *HostLaunches)
      if (!L.FromDevice && L.Callee &&
          L.Callee->getCanonicalDecl() == Parent->getCanonicalDecl())
        if (const Expr *Stream = launchConfigArg(L.Call, 3))
          if (Stream->HasSideEffects(Ctx))
            return L.Call;
    return nullptr;
  }

  /// Where \p Stream, the stream of \p Call in \p Parent, orders the
  /// launch against nothing, why (for the remark); else "". It must be a
  /// local the thread creates (cudaStreamCreate*) in the block that holds
  /// the launch, used by no other launch or call but its destruction: work
  /// in a stream of its own is unordered with every other launch, as the
  /// aggregated launch's children are with each other (cdpSimpleQuicksort
  /// creates one per recursive launch).
  std::string
  whyStreamOrdersNothing(const Expr *Stream, const CUDAKernelCallExpr *Call,
                         const FunctionDecl *Parent,
                         std::vector<const Stmt *> &Statements) const {
    const auto *Ref = dyn_cast<DeclRefExpr>(Stream->IgnoreParenImpCasts());
    const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    if (!Var || !Var->hasLocalStorage() || isa<ParmVarDecl>(Var) ||
        Var->getInit())
      return "";
    StreamUses Uses(Var);
    Uses.TraverseStmt(Parent->getBody());
    if (Uses.Creates.size() != 1)
      return "";
    // Every reference: the creation's, the destructions', this launch's.
    for (const DeclRefExpr *R : Uses.Refs)
      if (R != Ref && !Uses.Known.count(R) &&
          !(isa<UnaryOperator>(parentOf(R)) &&
            parentOf(parentOf(R)) == Uses.Creates.front()))
        return "";
    // Created in the statement list that declares it and holds the launch,
    // so that each launch has a stream of its own even in a loop.
    const Stmt *Declaration = parentOf(Var);
    const auto *Block = dyn_cast_or_null<CompoundStmt>(parentOf(Declaration));
    if (!Block || !holds(Block, Uses.Creates.front()) || !holds(Block, Call))
      return "";
    // The stream goes with the launch: its declaration, creation and
    // destruction are statements of their own (device-side stream calls
    // left in a parent aggregated at block or kernel granularity hung on
    // an H100, difftest aggregate seed 29 p22).
    const auto *Decl = cast<DeclStmt>(Declaration);
    Statements.clear();
    if (Decl->isSingleDecl())
      Statements.push_back(Decl);
    Statements.push_back(Uses.Creates.front());
    for (const DeclRefExpr *Destroyed : Uses.Known)
      Statements.push_back(callAround(Destroyed));
    for (const Stmt *S : Statements)
      if (!S || !isa<CompoundStmt>(parentOf(S)) || S->getBeginLoc().isMacroID())
        return "";
    return "its stream '" + Var->getNameAsString() +
           "' is created for this launch alone (line " +
           std::to_string(
               SM.getExpansionLineNumber(Uses.Creates.front()->getBeginLoc())) +
           ") and orders nothing else, so the launch joins the others";
  }

  /// "file.cuh:12", where \p Loc is written.
  std::string lineOf(SourceLocation Loc) const {
    PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
    if (P.isInvalid())
      return "an unknown place";
    return llvm::sys::path::filename(P.getFilename()).str() + ":" +
           std::to_string(P.getLine());
  }

  /// The call whose argument \p Ref is (through implicit casts).
  const Stmt *callAround(const Expr *Ref) const {
    const Stmt *S = Ref;
    while (S && !isa<CallExpr>(S))
      S = parentOf(S);
    return S;
  }

  /// The direct parent of \p Node in the AST, or null.
  template <typename T> const Stmt *parentOf(const T *Node) const {
    DynTypedNodeList Parents = Ctx.getParents(*Node);
    return Parents.empty() ? nullptr : Parents[0].template get<Stmt>();
  }

  /// Whether \p S is (inside) a statement of \p Block itself.
  bool holds(const CompoundStmt *Block, const Stmt *S) const {
    for (const Stmt *P = S; P; P = parentOf(P))
      if (P == Block)
        return true;
    return false;
  }

  /// Why not every thread of a block reaches \p Return together (it is
  /// not a statement of the body, or of `if`s in it whose conditions are
  /// the same for the whole block, loads from memory the kernel cannot
  /// change included), or "".
  std::string whyReturnIsNotBlockUniform(const ReturnStmt *Return,
                                         const FunctionDecl *Parent) const {
    UniformityAssumptions ReadOnly;
    ReadOnly.ReadOnlyLoads = true;
    for (const Stmt *S = Return, *Up = parentOf(Return); Up;
         S = Up, Up = parentOf(Up)) {
      if (Up == Parent->getBody())
        return "";
      if (isa<CompoundStmt>(Up))
        continue;
      const auto *If = dyn_cast<IfStmt>(Up);
      if (!If || S == If->getCond() || If->getInit() ||
          If->getConditionVariable())
        return "it is not under `if`s alone";
      if (!isUniform(If->getCond(), *Parent, UniformScope::Block, ReadOnly))
        return "the condition at line " +
               std::to_string(SM.getExpansionLineNumber(If->getBeginLoc())) +
               " may differ between the block's threads";
    }
    return "it is not in the kernel's body";
  }

  /// Why block granularity cannot rewrite this launch, or "".
  std::string blockRefusal(const CUDAKernelCallExpr *Call,
                           const FunctionDecl *Parent) const {
    if (!Parent->hasAttr<CUDAGlobalAttr>())
      return "the launch is in a __device__ function, and block "
             "granularity rewrites whole kernels";
    for (const ParmVarDecl *P : Parent->parameters())
      if (P->hasDefaultArg())
        return "the parent kernel has default arguments";
    // __global__ itself is a macro; what matters is that the declaration
    // up to the name maps back to plain text that can be replaced.
    if (Parent->getLocation().isMacroID() ||
        Lexer::makeFileCharRange(
            CharSourceRange::getCharRange(Parent->getBeginLoc(),
                                          Parent->getLocation()),
            SM, Ctx.getLangOpts())
            .isInvalid())
      return "the parent kernel's name or declaration is written with macros";
    ParentBody Body;
    Body.TraverseStmt(Parent->getBody());
    if (Body.HasGoto)
      return "the parent kernel uses goto";
    if (Body.HasBarrier)
      for (const ReturnStmt *Return : Body.Returns)
        if (std::string Why = whyReturnIsNotBlockUniform(Return, Parent);
            !Why.empty())
          return "the parent kernel uses __syncthreads and returns early "
                 "(line " +
                 std::to_string(
                     SM.getExpansionLineNumber(Return->getBeginLoc())) +
                 ") where " + Why +
                 ": a thread that returned would wait at the aggregation "
                 "barrier while others wait at the parent's";
    return "";
  }

  void plan(const Candidate &C) {
    const auto *Call = cast<CUDAKernelCallExpr>(C.Statement);
    const FunctionDecl *Parent = C.Function;
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee)
      return refuse(C, "the launched kernel is not known at compile time");
    const FunctionDecl *Child = Callee->getDefinition();
    if (!Child)
      return refuse(C, "the child kernel '" + Callee->getNameAsString() +
                           "' is defined in another translation unit (this "
                           "file only declares it, at " +
                           lineOf(Callee->getLocation()) +
                           "); aggregation copies the child's body, so it "
                           "must be defined in this file");
    if (!SM.isWrittenInMainFile(Child->getLocation()))
      return refuse(C, "the child kernel '" + Callee->getNameAsString() +
                           "' is defined in an included file (" +
                           lineOf(Child->getLocation()) +
                           "), which is not rewritten yet");
    const bool Recursive =
        Child->getCanonicalDecl() == Parent->getCanonicalDecl();
    if (!Recursive &&
        offset(Child->getEndLoc()) > offset(Parent->getBeginLoc()))
      return refuse(C, "the child kernel '" + Child->getNameAsString() +
                           "' is defined after its parent; define it first");
    if (const CUDAKernelCallExpr *Host = hostLaunchWithImpureStream(Parent))
      return refuse(
          C,
          "the host launch of '" + Parent->getNameAsString() + "' at line " +
              std::to_string(SM.getExpansionLineNumber(Host->getBeginLoc())) +
              " passes a stream expression with side effects, "
              "which the pool reset before it would evaluate "
              "again");
    ChildKernelInfo Info = analyzeChildKernel(*Child);
    if (Info.Refused)
      return refuse(C, Info.Refused->Reason);
    std::string StreamNote;
    std::vector<const Stmt *> StreamStatements;
    if (const Expr *Stream = launchConfigArg(Call, 3))
      if (!Stream->isNullPointerConstant(Ctx,
                                         Expr::NPC_ValueDependentIsNotNull)) {
        StreamNote =
            whyStreamOrdersNothing(Stream, Call, Parent, StreamStatements);
        if (StreamNote.empty())
          return refuse(C, "the launch names a stream that may order it "
                           "after or before other work (only a stream the "
                           "thread creates for this launch alone, next to "
                           "it, and at most destroys, orders nothing)");
      }
    if (Info.HasBarriers && !isConstantBlock(launchConfigArg(Call, 1)))
      return refuse(C, "the child uses __syncthreads and the launch's block "
                       "size is not a compile-time constant: in blocks larger "
                       "than a launch's own, its extra threads would miss the "
                       "barriers");
    // An aggregated block is one-dimensional, of the largest original
    // block's size: it has the original shape only if every launch has the
    // same one-dimensional block.
    if (!Info.HelperReadsBlockShape.empty() &&
        !isConstantInteger(launchConfigArg(Call, 1)))
      return refuse(C, Info.HelperReadsBlockShape +
                           ": that is sound only when the launch's block size "
                           "is one compile-time constant integer");

    Site S{&C,    Call,  Parent, Child, Granularity::Warp,
           {},    Info,  "",     "",    false,
           false, false, "",     {}};
    S.Recursive = Recursive;
    S.StreamNote = std::move(StreamNote);
    S.StreamStatements = std::move(StreamStatements);
    std::optional<Granularity> Asked = Override;
    if (!Asked && C.Annotation)
      if (const PragmaClause *Clause = C.Annotation->clause("granularity"))
        Asked = parseGranularity(Clause->Args[0]);
    // Kernel granularity defers launches exactly as block granularity does
    // (and needs no parent-child synchronisation, which CDP2 cannot
    // express anyway), so the same conditions decide both.
    S.WhyNotBlock = blockRefusal(Call, Parent);
    S.InLoop = inLoop(Call, Parent);
    if (Asked && *Asked != Granularity::Warp && !S.WhyNotBlock.empty())
      return refuse(C,
                    granularityName(*Asked) + " granularity: " + S.WhyNotBlock);
    S.Asked = Asked.has_value();
    if (Asked)
      S.G = *Asked;
    else if (!S.WhyNotBlock.empty())
      S.G = Granularity::Warp;
    else
      S.G = defaultGranularity(S);
    if (Recursive && S.G == Granularity::Warp)
      return refuse(C, "the kernel launches itself, and its launches are "
                       "aggregated only at block or kernel granularity" +
                           (S.WhyNotBlock.empty()
                                ? std::string()
                                : "; not here: " + S.WhyNotBlock));
    Sites.push_back(std::move(S));
  }

  /// Grids of at most this many warps take warp granularity by default.
  static constexpr uint64_t kSmallParentWarps = 8;

  /// The granularity of a launch that asks for none (and can take any).
  /// Kernel granularity measured fastest on every sample (bench/
  /// RESULTS.md): one launch per parent grid, whose blocks fill the GPU; a
  /// recursive kernel's launches from one grid become one grid, so the tree
  /// is walked level by level as a hand-written flat version does. But it
  /// waits for the grid's last block, and gathers through a grid-wide table:
  /// a parent launched only from the host, in grids of at most
  /// kSmallParentWarps warps, makes that few launches at warp granularity,
  /// each as soon as its warp is done (NVIDIA's cdpBezierTessellation, 8
  /// warps: warp 0.43 ms, kernel 0.46 ms on an H100, 0.39 and 0.49 on an
  /// H200; with 32 warps kernel was 10% faster than warp).
  Granularity defaultGranularity(Site &S) {
    if (S.Recursive)
      return Granularity::Kernel;
    if (!HostLaunches)
      HostLaunches = findLaunchSites(Ctx);
    std::optional<uint64_t> GridThreads =
        largestHostGridThreads(Ctx, *HostLaunches, *S.Parent);
    if (!GridThreads || *GridThreads == 0 ||
        *GridThreads > kSmallParentWarps * 32)
      return Granularity::Kernel;
    S.WhySmallGrid = "its grids have at most " +
                     std::to_string((*GridThreads + 31) / 32) +
                     " warps, so each warp launches as soon as it is done";
    return Granularity::Warp;
  }

  /// An integer constant, possibly converted to dim3 (`dim3(n)` or an
  /// implicit conversion): a one-dimensional block of a size known at
  /// compile time.
  bool isConstantInteger(const Expr *E) const {
    if (!E)
      return false;
    E = E->IgnoreImplicit();
    if (const auto *Temp = dyn_cast<MaterializeTemporaryExpr>(E))
      E = Temp->getSubExpr()->IgnoreImplicit();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
      if (Construct->getNumArgs() == 0)
        return false;
      for (unsigned I = 1; I < Construct->getNumArgs(); ++I)
        if (!isa<CXXDefaultArgExpr>(Construct->getArg(I)))
          return false;
      E = Construct->getArg(0)->IgnoreImplicit();
    }
    return E->getType()->isIntegerType() && E->isIntegerConstantExpr(Ctx);
  }

  //===--------------------------------------------------------------------===//
  // Children that are parents too
  //===--------------------------------------------------------------------===//

  /// Parents rewritten at block or kernel granularity: they get a body
  /// function, which their aggregated version calls as well.
  llvm::DenseSet<const FunctionDecl *> blockParents() const {
    llvm::DenseSet<const FunctionDecl *> Parents;
    for (const Site &S : Sites)
      if (S.G != Granularity::Warp)
        Parents.insert(S.Parent->getCanonicalDecl());
    return Parents;
  }

  bool isAggregatedBlockParent(const FunctionDecl *F) const {
    if (!blockParents().count(F->getCanonicalDecl()))
      return false;
    return llvm::any_of(Sites, [&](const Site &S) {
      return S.Child->getCanonicalDecl() == F->getCanonicalDecl();
    });
  }

  /// A child that launches kernels itself is aggregated by calling its body
  /// function, so its own launches must be rewritten at block or kernel
  /// granularity too (recursion is the common case). And a kernel that
  /// runs aggregated sees per-launch values in its built-ins and in the
  /// parameters some launch of it passes per launch, so the scalars of its
  /// own launches are decided with that in mind: to a fixed point, since
  /// those decisions decide which of its parameters are per launch.
  void settleNestedSites() {
    for (bool Changed = true; Changed;) {
      Changed = demoteParentsWithOtherLaunches();
      if (Changed)
        continue;
      llvm::DenseSet<const FunctionDecl *> Parents = blockParents();
      for (size_t I = 0; I < Sites.size(); ++I)
        if (Sites[I].Info.LaunchesKernels &&
            !Parents.count(Sites[I].Child->getCanonicalDecl())) {
          refuse(*Sites[I].C,
                 "the child kernel '" + Sites[I].Child->getNameAsString() +
                     "' launches kernels itself, and those launches are not "
                     "aggregated at block or kernel granularity");
          Sites.erase(Sites.begin() + I);
          Changed = true;
          break;
        }
      if (Changed)
        continue;
      for (Site &S : Sites) {
        UniformityAssumptions Assumptions;
        if (isAggregatedBlockParent(S.Parent)) {
          Assumptions.LaunchShapeVaries = true;
          for (const Site &In : Sites)
            if (In.Child->getCanonicalDecl() == S.Parent->getCanonicalDecl())
              for (unsigned I = 0; I < In.Scalar.size(); ++I)
                if (!In.Scalar[I])
                  Assumptions.VaryingParams.insert(S.Parent->getParamDecl(I));
        }
        UniformScope Scope = S.G == Granularity::Kernel ? UniformScope::Grid
                                                        : UniformScope::Block;
        std::vector<bool> Scalar;
        for (unsigned I = 0; I < S.Child->getNumParams(); ++I)
          Scalar.push_back(
              isUniform(S.Call->getArg(I), *S.Parent, Scope, Assumptions) &&
              (S.Scalar.empty() || S.Scalar[I]));
        Changed |= Scalar != S.Scalar;
        S.Scalar = std::move(Scalar);
      }
    }
  }

  /// A launch in \p Parent that stays a launch (refused, unannotated, or
  /// aggregated per warp, which launches from the threads too) and that
  /// more than one thread of a block may make, or null.
  const CUDAKernelCallExpr *launchLeftInBody(const FunctionDecl *Parent) const {
    llvm::SmallPtrSet<const CUDAKernelCallExpr *, 8> Gathered;
    for (const Site &S : Sites)
      if (S.Parent == Parent && S.G != Granularity::Warp)
        Gathered.insert(S.Call);
    struct Launches : RecursiveASTVisitor<Launches> {
      std::vector<const CUDAKernelCallExpr *> All;
      bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *Call) {
        All.push_back(Call);
        return true;
      }
    } Body;
    Body.TraverseStmt(Parent->getBody());
    for (const CUDAKernelCallExpr *Call : Body.All)
      if (!Gathered.contains(Call) && !launchedByOneThread(Ctx, *Call, *Parent))
        return Call;
    return nullptr;
  }

  /// Block and kernel granularity make the parent's threads wait at a
  /// block-wide barrier before the aggregated launch. With launches left in
  /// the body that many threads make, that wait hung on an H100 (difftest
  /// aggregate seed 2: threads stayed inside their own device-side launches,
  /// test/regress/aggregate/threads-launch-too.cu); the same launches with no
  /// barrier after them, or made by one thread, did not. Such parents take
  /// warp granularity. True if a site changed.
  bool demoteParentsWithOtherLaunches() {
    for (size_t I = 0; I < Sites.size(); ++I) {
      Site &S = Sites[I];
      if (S.G == Granularity::Warp)
        continue;
      const CUDAKernelCallExpr *Left = launchLeftInBody(S.Parent);
      if (!Left)
        continue;
      std::string Why =
          "'" + S.Parent->getNameAsString() +
          "' also launches kernels that stay launches, from more than one "
          "thread (line " +
          std::to_string(SM.getExpansionLineNumber(Left->getBeginLoc())) +
          "): its threads would wait at a block-wide barrier with those "
          "launches in flight, which hung";
      if (S.Asked || S.Recursive) {
        refuse(*S.C, S.Recursive
                         ? "the kernel launches itself, and its launches are "
                           "aggregated only at block or kernel granularity; "
                           "not here: " +
                               Why
                         : granularityName(S.G).str() + " granularity: " + Why);
        Sites.erase(Sites.begin() + I);
      } else {
        S.G = Granularity::Warp;
        S.WhyNotBlock = Why;
      }
      return true;
    }
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Emitting
  //===--------------------------------------------------------------------===//

  AggregatedChild aggregatedChild(const Site &S) const {
    // Versions of one child are numbered in the order the file first needs
    // them (Sites is in source order).
    std::vector<std::vector<bool>> Versions;
    for (const Site &Other : Sites)
      if (Other.Child == S.Child && !llvm::is_contained(Versions, Other.Scalar))
        Versions.push_back(Other.Scalar);
    size_t Version = llvm::find(Versions, S.Scalar) - Versions.begin();
    return AggregatedChild{S.Child, S.Info, S.Scalar,
                           Version ? "_" + std::to_string(Version + 1) : ""};
  }

  /// The largest block \p A's aggregated kernel is launched with
  /// (LaunchTable::configure): the largest block of the launches it serves
  /// where all are constants (pinned into \p Pins), 256 where those are
  /// one-warp launches it packs eight to a block; else 1024.
  unsigned aggregatedBlockBound(const AggregatedChild &A,
                                ConfigPins &Pins) const {
    uint64_t Largest = 0;
    for (const Site &Other : Sites) {
      if (Other.Child != A.Child || Other.Scalar != A.Scalar)
        continue;
      LaunchSite L;
      L.Call = Other.Call;
      L.Callee = Other.Child;
      L.Enclosing = Other.Parent;
      std::optional<uint64_t> Threads = constantBlockThreads(Ctx, L, Pins);
      if (!Threads || *Threads == 0 || *Threads > 1024)
        return 1024;
      Largest = std::max(Largest, *Threads);
    }
    if (A.packable() && Largest <= 32)
      Largest = 32 * 8;
    return unsigned((Largest + 31) / 32 * 32);
  }

  SourceLocation lineStart(SourceLocation Loc) const {
    return cuda_rewrite::lineStart(Ctx, Loc);
  }
  SourceLocation lineAfter(SourceLocation Loc) const {
    return cuda_rewrite::lineAfter(Ctx, Loc);
  }
  bool check(Error E, SourceLocation Loc) {
    return checkEdit(Ctx, std::move(E), Loc, "aggregate");
  }

  /// The argument struct, aggregated kernel and launch helpers, once per
  /// child and scalar set, right after the child's definition. A child that
  /// is a parent too calls its body function and launch helpers, and its
  /// body function takes the argument struct: those go before the child,
  /// and only the aggregated kernel after its wrapper.
  bool emitChildren() {
    for (const Site &S : Sites) {
      AggregatedChild A = aggregatedChild(S);
      auto AsParent = Parents.find(S.Child->getCanonicalDecl());
      const ParentCode *Code =
          AsParent == Parents.end() ? nullptr : &AsParent->second;
      // An aggregated child that gathers launches of its own needs the
      // registers a parent does, and is bounded as tightly as its blocks
      // allow (quadtree's block granularity: 0.70x -> 0.97x of the
      // original on an H100). A leaf keeps the bound of 1024 threads, whose
      // 64-register cap measured faster for the samples' small children
      // (a bound of 64 cost spmv's kernel granularity half its speed).
      if (Code) {
        ConfigPins Unused;
        A.MaxThreads = aggregatedBlockBound(A, Unused);
      }
      SourceLocation After = lineAfter(S.Child->getEndLoc());
      SourceLocation Before = Code ? lineStart(S.Child->getBeginLoc()) : After;
      std::string Key = "aggregate/" + S.Child->getNameAsString() + A.suffix();
      auto Add = [&](StringRef Suffix, std::string Text, SourceLocation At) {
        return check(Context.Edits.addDefinition(Key + Suffix.str(),
                                                 std::move(Text), At),
                     S.C->Loc);
      };
      if (!pinAggregatedBlockBound(A, S))
        return false;
      if (!Add("/1", generateArgsStruct(A), Before) ||
          (Code &&
           !Add("/2", generateAggregatedKernelDeclaration(A, Code), Before)) ||
          !Add(helperKey(S.G), helper(S.G, A), Before) ||
          !Add(Code ? "/6" : "/2", generateAggregatedKernel(A, Code), After))
        return false;
      // A blank line between the definitions and the child's own text.
      if (Code && !check(Context.Edits.addDefinition(
                             "aggregate/" + S.Child->getNameAsString() + "~",
                             "\n", Before),
                         S.C->Loc))
        return false;
    }
    return true;
  }

  /// The static_asserts of the block sizes \p A's register bound comes
  /// from, after the last parent that launches it (its macros are defined
  /// there); once per aggregated kernel.
  bool pinAggregatedBlockBound(const AggregatedChild &A, const Site &S) {
    ConfigPins Pins;
    if (A.MaxThreads == 1024 || (aggregatedBlockBound(A, Pins), Pins.empty()))
      return true;
    SourceLocation Last = pinPlace(S.Parent);
    for (const Site &Other : Sites)
      if (Other.Child == A.Child && Other.Scalar == A.Scalar &&
          SM.isBeforeInTranslationUnit(Last, pinPlace(Other.Parent)))
        Last = pinPlace(Other.Parent);
    return addPins(Pins, Last, S.C->Loc);
  }

  /// Adds the static_asserts of \p Pins at \p Place, once: the same values
  /// pinned for two generated kernels (a recursive parent's block size, for
  /// its bound and its aggregated copy's) at one place are one definition.
  bool addPins(const ConfigPins &Pins, SourceLocation Place,
               SourceLocation Loc) {
    std::string Text = "\n" + pinnedValues(Pins);
    return check(
        Context.Edits.addDefinition(
            "aggregate/pins/" + std::to_string(SM.getFileOffset(Place)) + Text,
            Text, Place),
        Loc);
  }

  static std::string helperKey(Granularity G) {
    return G == Granularity::Warp    ? "/3"
           : G == Granularity::Block ? "/4"
                                     : "/5";
  }
  static std::string helper(Granularity G, const AggregatedChild &A) {
    switch (G) {
    case Granularity::Warp:
      return generateWarpHelper(A);
    case Granularity::Block:
      return generateBlockHelper(A);
    case Granularity::Kernel:
      return generateGridHelper(A);
    }
    llvm_unreachable("all granularities handled");
  }

  /// `child_args{a, b}`: the per-launch arguments of a site.
  std::string argsValue(const Site &S, const AggregatedChild &A) const {
    std::vector<std::string> Values;
    for (unsigned I = 0; I < S.Child->getNumParams(); ++I)
      if (!S.Scalar[I])
        Values.push_back(convertedArg(S.Call->getArg(I),
                                      S.Child->getParamDecl(I)->getType()));
    return A.argsStruct() + "{" + join(Values, ", ") + "}";
  }

  /// An argument as written, converted to its parameter's type where the
  /// call converted it implicitly between arithmetic types: list
  /// initialization of the argument struct forbids narrowing that a call
  /// allows (`unsigned` to `int`, say).
  std::string convertedArg(const Expr *Arg, QualType ParamType) const {
    std::string Text = text(Arg->getSourceRange());
    QualType From = Arg->IgnoreImpCasts()->getType().getCanonicalType();
    QualType To = ParamType.getCanonicalType().getUnqualifiedType();
    if (!From->isArithmeticType() || !To->isArithmeticType() ||
        From.getUnqualifiedType() == To ||
        Arg->IgnoreImpCasts()->isIntegerConstantExpr(Ctx))
      return Text;
    PrintingPolicy Policy = Ctx.getPrintingPolicy();
    return "static_cast<" + ParamType.getUnqualifiedType().getAsString(Policy) +
           ">(" + Text + ")";
  }

  std::vector<std::string> scalarArgs(const Site &S) const {
    std::vector<std::string> Values;
    for (unsigned I = 0; I < S.Child->getNumParams(); ++I)
      if (S.Scalar[I])
        Values.push_back(text(S.Call->getArg(I)->getSourceRange()));
    return Values;
  }

  /// grid, block and dynamic shared memory of a site, as written.
  std::vector<std::string> configValues(const Site &S) const {
    const Expr *Shared = launchConfigArg(S.Call, 2);
    return {text(launchConfigArg(S.Call, 0)->getSourceRange()),
            text(launchConfigArg(S.Call, 1)->getSourceRange()),
            Shared ? text(Shared->getSourceRange()) : "0"};
  }

  std::string describe(const Site &S, const AggregatedChild &A) const {
    std::string Text = "aggregated at " + granularityName(S.G).str() +
                       " granularity into '" + A.kernelName() + "'";
    if (!S.WhyNotBlock.empty())
      Text += " (not kernel or block granularity: " + S.WhyNotBlock + ")";
    else if (!S.WhySmallGrid.empty())
      Text += " (the default for this parent: " + S.WhySmallGrid + ")";
    std::vector<std::string> Scalars, PerLaunch;
    for (const ParmVarDecl *P : A.scalarParams())
      Scalars.push_back(P->getNameAsString());
    for (const ParmVarDecl *P : A.perLaunchParams())
      PerLaunch.push_back(P->getNameAsString());
    Text += "; scalar arguments: " +
            (Scalars.empty() ? std::string("none") : join(Scalars, ", "));
    Text += "; per-launch arguments: " +
            (PerLaunch.empty() ? std::string("none") : join(PerLaunch, ", "));
    if (!S.StreamNote.empty())
      Text += "; " + S.StreamNote;
    return Text;
  }

  CharSourceRange callRange(const Site &S) const {
    return CharSourceRange::getTokenRange(S.Call->getSourceRange());
  }

  /// Removes the streams created for one launch alone with the launch.
  bool removeOwnStreams() {
    for (const Site &S : Sites)
      for (const Stmt *Statement : S.StreamStatements) {
        SourceLocation End = Lexer::findLocationAfterToken(
            Statement->getEndLoc(), tok::semi, SM, Ctx.getLangOpts(), false);
        if (isa<DeclStmt>(Statement))
          End = Lexer::getLocForEndOfToken(Statement->getEndLoc(), 0, SM,
                                           Ctx.getLangOpts());
        if (!check(Context.Edits.removeLines(Statement->getBeginLoc(), End),
                   S.C->Loc))
          return false;
      }
    return true;
  }

  bool rewriteWarpSites() {
    for (const Site &S : Sites) {
      if (S.G != Granularity::Warp)
        continue;
      AggregatedChild A = aggregatedChild(S);
      std::vector<std::string> Args = configValues(S);
      Args.push_back(argsValue(S, A));
      for (std::string &Value : scalarArgs(S))
        Args.push_back(std::move(Value));
      Args.push_back("__LINE__");
      if (!check(Context.Edits.replace(callRange(S),
                                       callText(A.warpHelper(), Args)),
                 S.C->Loc))
        return false;
      RewrittenParents.insert(S.Parent->getCanonicalDecl());
      Context.Remark.applied(S.C->Loc, AggregatePass::Name, describe(S, A));
    }
    return true;
  }

  /// Block granularity: `parent` becomes `parent_body`, a __device__
  /// function that records its launches, and a new `parent` kernel runs it
  /// and then aggregates the block's launches.
  bool rewriteBlockParents() {
    // At most 256 kernel-granularity sites per parent (gridKey's site
    // bits); real kernels have a handful.
    std::map<unsigned, std::vector<const Site *>> ByParent;
    for (const Site &S : Sites)
      if (S.G != Granularity::Warp)
        ByParent[offset(S.Parent->getBeginLoc())].push_back(&S);
    for (auto &[ParentOffset, ParentSites] : ByParent)
      if (!rewriteBlockParent(ParentSites))
        return false;
    return true;
  }

  bool rewriteBlockParent(const std::vector<const Site *> &ParentSites) {
    const FunctionDecl *Parent = ParentSites.front()->Parent;
    std::string Name = Parent->getNameAsString();
    std::string BodyName = Name + "_body";
    const auto *Body = cast<CompoundStmt>(Parent->getBody());

    // Everything before the name (__global__, __launch_bounds__, void) is
    // kept for the new kernel; the body function is a plain __device__ one.
    std::string Prefix = text(SourceRange(
        Parent->getBeginLoc(), Parent->getLocation().getLocWithOffset(-1)));
    Prefix = StringRef(Prefix).rtrim().str();
    SourceRange ParamRange = Parent->getParametersSourceRange();
    std::string ParamText = ParamRange.isValid() ? text(ParamRange) : "";

    // A parent whose launches are aggregated too runs its body for other
    // blocks than its own: the body function takes the built-ins it reads.
    const bool AlsoChild = isAggregatedBlockParent(Parent);
    const ChildKernelInfo Reads = analyzeChildKernel(*Parent);
    ParentCode Code;
    Code.BodyName = BodyName;
    for (const ParmVarDecl *P : Parent->parameters())
      Code.BodyArgs.push_back(P->getNameAsString());
    // The body function's parameters after the parent's: those built-ins,
    // and the launches of each site, pending.
    std::vector<std::string> Extra;
    if (AlsoChild) {
      Extra = builtinParams(Reads);
      for (std::string &Arg : builtinArgs(Reads))
        Code.BodyArgs.push_back(std::move(Arg));
    }
    // The pending launches are parameters of the body function and locals
    // of the new kernel, beside the parent's parameters and what its body
    // names.
    NameAllocator Names;
    Names.reserveIdentifiersOfSource(ParamText, Ctx.getLangOpts());
    Names.reserveIdentifiersOfSource(text(Body->getSourceRange()),
                                     Ctx.getLangOpts());
    for (size_t I = 0; I < ParentSites.size(); ++I) {
      const Site &S = *ParentSites[I];
      AggregatedChild A = aggregatedChild(S);
      std::string Var = Names.name("cr_pending_" + std::to_string(I));
      std::string Type = std::string("cuda_rewrite::") +
                         (S.InLoop ? "PendingLaunchList<" : "PendingLaunch<") +
                         A.argsStruct() + ">";
      Extra.push_back(Type + " &" + Var);
      Code.BodyArgs.push_back(Var);
      std::vector<std::string> FlushArgs = {Var};
      for (std::string &Value : scalarArgs(S))
        FlushArgs.push_back(std::move(Value));
      if (S.G == Granularity::Kernel)
        FlushArgs.push_back(std::to_string(I)); // The site's grid table.
      FlushArgs.push_back("__LINE__");
      Code.Sites.push_back({Type, Var,
                            callText(S.G == Granularity::Block ? A.blockHelper()
                                                               : A.gridHelper(),
                                     FlushArgs)});

      std::vector<std::string> Request = configValues(S);
      Request.push_back(argsValue(S, A));
      if (S.InLoop) { // The list allocates each entry; failures name the site.
        Request.push_back("__FILE__");
        Request.push_back("__LINE__");
      }
      if (!check(Context.Edits.replace(callRange(S),
                                       callText(Var + ".request", Request)),
                 S.C->Loc))
        return false;
      Context.Remark.applied(S.C->Loc, AggregatePass::Name, describe(S, A));
    }

    // A launch of the parent that stays in its body (one refused, say on a
    // named stream) names the new kernel, defined after the body: declare it
    // first (difftest: test/regress/aggregate/refused-self-launch.cu).
    NamesKernel Self(Parent);
    for (const Site *S : ParentSites)
      Self.Rewritten.insert(S->Call);
    Self.TraverseStmt(const_cast<CompoundStmt *>(Body));
    SourceLocation NameLoc = Parent->getLocation();
    bool Ok =
        check(Context.Edits.replace(
                  CharSourceRange::getCharRange(Parent->getBeginLoc(), NameLoc),
                  generateBodyFunctionHead(Name, Prefix, ParamText,
                                           /*DeclareKernel=*/Self.Found)),
              Parent->getLocation()) &&
        check(Context.Edits.replace(CharSourceRange::getTokenRange(NameLoc),
                                    BodyName),
              NameLoc);
    if (!Ok)
      return false;
    SourceLocation RParen = Parent->getFunctionTypeLoc().getRParenLoc();
    if (!check(Context.Edits.insertBefore(RParen,
                                          (Parent->getNumParams() ? ", " : "") +
                                              join(Extra, ", ")),
               RParen))
      return false;

    std::string Kernel = generateParentKernel(
        Name, Prefix + " " + launchBounds(Parent) + Name, ParamText, Code);
    Parents[Parent->getCanonicalDecl()] = std::move(Code);
    if (!check(Context.Edits.insertBefore(
                   Lexer::getLocForEndOfToken(Body->getRBracLoc(), 0, SM,
                                              Ctx.getLangOpts()),
                   afterClosingBrace(Kernel)),
               Body->getRBracLoc()))
      return false;
    RewrittenParents.insert(Parent->getCanonicalDecl());
    return true;
  }

  /// \p Definition (whole lines) as inserted right after a closing brace:
  /// it starts on a line of its own, and leaves its last newline to the
  /// brace's line, which has one already.
  static std::string afterClosingBrace(StringRef Definition) {
    assert(Definition.ends_with("\n") && "a definition of whole lines");
    return "\n" + Definition.drop_back().str();
  }

  /// `__launch_bounds__(N) ` for a rewritten parent kernel, whose aggregation
  /// code needs registers its original did not: N is the largest block its
  /// launches use where all are constant, else 1024, so that it launches
  /// with every block its original launches with (a 1024-thread parent
  /// failed with error 701 otherwise). Empty where the user bounded it. The
  /// constants come pinned (pinLaunchShapes()).
  std::string launchBounds(const FunctionDecl *Parent) {
    if (!Parent->hasAttr<CUDAGlobalAttr>() ||
        Parent->hasAttr<CUDALaunchBoundsAttr>())
      return "";
    if (!HostLaunches)
      HostLaunches = findLaunchSites(Ctx);
    ConfigPins &Pins = ShapePins[Parent->getCanonicalDecl()];
    std::optional<uint64_t> Threads =
        largestBlockThreads(Ctx, *HostLaunches, *Parent, Pins);
    uint64_t Bound = Threads && *Threads > 0 && *Threads <= 1024
                         ? (*Threads + 31) / 32 * 32
                         : 1024;
    if (!Threads)
      Pins = ConfigPins();
    return "__launch_bounds__(" + std::to_string(Bound) + ") ";
  }

  /// Parents rewritten at warp granularity only keep their kernel: bound
  /// its registers before its name (a parent with block or kernel sites was
  /// bounded in its new wrapper), then pin the launch shapes it was bounded
  /// for after it.
  bool boundWarpParents() {
    std::set<const FunctionDecl *> Wrapped, Done;
    for (const Site &S : Sites)
      if (S.G != Granularity::Warp)
        Wrapped.insert(S.Parent->getCanonicalDecl());
    for (const Site &S : Sites) {
      const FunctionDecl *Parent = S.Parent;
      if (S.G != Granularity::Warp ||
          Wrapped.count(Parent->getCanonicalDecl()) ||
          !Done.insert(Parent->getCanonicalDecl()).second)
        continue;
      std::string Bounds = launchBounds(Parent);
      if (!Bounds.empty() &&
          !check(Context.Edits.insertBefore(Parent->getLocation(), Bounds),
                 Parent->getLocation()))
        return false;
    }
    for (const auto &[Parent, Pins] : ShapePins)
      if (!Pins.empty() &&
          !addPins(Pins, pinPlace(Parent), Parent->getLocation()))
        return false;
    return true;
  }

  /// Where the pins of \p Parent's launch shapes go: at file scope after the
  /// parent and after every function that launches it, since the launches'
  /// macros may be defined only there (cdpBezierTessellation defines its
  /// BLOCK_DIM just before main).
  SourceLocation pinPlace(const FunctionDecl *Parent) {
    if (!HostLaunches)
      HostLaunches = findLaunchSites(Ctx);
    return pinPlaceAfterLaunches(Ctx, *HostLaunches, *Parent);
  }

  /// The cudaMalloc calls of each rewritten parent: per block where its
  /// launches are aggregated per block or grid (KLAP aggregates a blocking
  /// cudaMalloc per block at kernel granularity) and it does not also run
  /// as an aggregated child, whose inactive threads skip the body.
  bool aggregateMallocs() {
    llvm::DenseSet<const FunctionDecl *> Done;
    llvm::DenseSet<const FunctionDecl *> Block = blockParents();
    for (const Site &S : Sites) {
      const FunctionDecl *Parent = S.Parent->getCanonicalDecl();
      if (!Done.insert(Parent).second)
        continue;
      MallocScope Scope =
          Block.count(Parent) && !isAggregatedBlockParent(S.Parent)
              ? MallocScope::Block
              : MallocScope::Warp;
      if (!aggregateDeviceMallocs(Context, *S.Parent, Scope))
        return false;
    }
    return true;
  }

  /// Each host launch of a kernel that can run a rewritten parent (the
  /// parent itself, or a kernel whose code launches it or calls a helper
  /// that does) first prepares the pool that holds the launch tables.
  bool prepareHostLaunches() {
    if (!HostLaunches)
      HostLaunches = findLaunchSites(Ctx);
    llvm::DenseSet<const FunctionDecl *> Reaching =
        functionsReaching(Ctx, RewrittenParents);
    for (const LaunchSite &L : *HostLaunches) {
      if (L.FromDevice || !L.Callee ||
          !Reaching.count(L.Callee->getCanonicalDecl()))
        continue;
      const Expr *Stream = launchConfigArg(L.Call, 3);
      std::vector<std::string> PrepareArgs;
      if (Stream)
        PrepareArgs.push_back(text(Stream->getSourceRange()));
      std::string Prepare =
          callText("cuda_rewrite::prepareAggregatedLaunch", PrepareArgs);
      DynTypedNodeList Parents = Ctx.getParents(*L.Call);
      bool IsStatement = !Parents.empty() &&
                         (Parents[0].get<CompoundStmt>() ||
                          (Parents[0].get<ExprWithCleanups>() &&
                           !Ctx.getParents(Parents[0]).empty() &&
                           Ctx.getParents(Parents[0])[0].get<CompoundStmt>()));
      Error E = IsStatement
                    ? Context.Edits.insertBefore(
                          SM.getExpansionLoc(L.Call->getBeginLoc()),
                          Prepare + ";\n" + indentOf(L.Call->getBeginLoc()))
                    : Context.Edits.insertBefore(
                          SM.getExpansionLoc(L.Call->getBeginLoc()),
                          "(" + Prepare + ", ");
      if (!IsStatement && !E)
        E = Context.Edits.insertBefore(
            Lexer::getLocForEndOfToken(SM.getExpansionLoc(L.Call->getEndLoc()),
                                       0, SM, Ctx.getLangOpts()),
            ")");
      if (!check(std::move(E), L.Call->getBeginLoc()))
        return false;
    }
    return true;
  }

  /// The blanks before \p Loc's column. A statement inserted before a
  /// user's launch ends with them: the launch, the user's text and no
  /// generated code, keeps its column.
  std::string indentOf(SourceLocation Loc) const {
    unsigned Column = SM.getExpansionColumnNumber(Loc);
    return std::string(Column ? Column - 1 : 0, ' ');
  }

  PassContext &Context;
  ASTContext &Ctx;
  const SourceManager &SM;
  std::optional<Granularity> Override;
  std::vector<Site> Sites;
  llvm::DenseSet<const FunctionDecl *> RewrittenParents;
  /// What each parent rewritten at block or kernel granularity runs.
  std::map<const FunctionDecl *, ParentCode> Parents;
  std::optional<std::vector<LaunchSite>> HostLaunches; ///< Found once.
  /// Per rewritten parent, the constants of the block sizes its launch
  /// bounds were computed from.
  std::map<const FunctionDecl *, ConfigPins> ShapePins;
};

} // namespace

namespace {
const llvm::StringLiteral Granularities[] = {"warp", "block", "kernel"};
const ClauseSpec AggregateClauses[] = {
    {"granularity", ClauseArgs::OneOf, Granularities}};
} // namespace

const DirectiveSpec AggregatePass::Directive = {
    "aggregate", AggregateClauses, PragmaTarget::KernelOrDeviceLaunches};
const CandidateKind AggregatePass::DeviceLaunch = {"device-launch"};

AggregatePass::AggregatePass(std::optional<Granularity> Override)
    : Pass(Name, "aggregate device-side kernel launches (KLAP)",
           {&DeviceLaunch}, {&Directive}),
      Override(Override) {}

std::string AggregatePass::whyNothingToRewrite(const AttachedPragma &P) const {
  return pragmaTarget(P) + " makes no device-side kernel launch";
}

bool AggregatePass::rewrite(PassContext &Context, const PassWork &Work) const {
  return AggregateRewriter(Context, Override).run(Work.Candidates);
}

} // namespace cuda_rewrite
