//===- StageGraph.cpp - The stages of a host block and their buffers ------===//

#include "analysis/StageGraph.h"
#include "analysis/HostStatements.h"
#include "analysis/KernelAccess.h"
#include "analysis/StageAccess.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <set>

using namespace clang;

namespace cuda_rewrite {

const CUDAKernelCallExpr *launchOf(const Stmt *S) {
  if (const auto *E = dyn_cast<Expr>(S))
    return dyn_cast<CUDAKernelCallExpr>(E->IgnoreImplicit());
  return nullptr;
}

namespace {

/// A name for the buffer an argument passes: the variable or member it
/// refers to (through casts), or null.
const ValueDecl *bufferOf(const Expr *Arg) {
  Arg = Arg->IgnoreParenImpCasts();
  if (const auto *Cast = dyn_cast<ExplicitCastExpr>(Arg))
    Arg = Cast->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *Ref = dyn_cast<DeclRefExpr>(Arg))
    return Ref->getDecl();
  if (const auto *Member = dyn_cast<MemberExpr>(Arg))
    return Member->getMemberDecl();
  return nullptr;
}

/// Whether \p S contains a kernel launch.
bool containsLaunch(const Stmt *S) {
  if (!S)
    return false;
  if (isa<CUDAKernelCallExpr>(S))
    return true;
  return llvm::any_of(S->children(), containsLaunch);
}

/// The uses of a local pointer in its function that do not make it live
/// after a block: `cudaMalloc(&p, ..)`-style allocations (cudaMalloc,
/// cudaMallocAsync, cudaMallocManaged, through casts) before the block,
/// and `cudaFree(p)` or `cudaFreeAsync(p, ..)` after it. Every other use
/// outside the block is a reason to keep it.
class LocalUses : public RecursiveASTVisitor<LocalUses> {
public:
  LocalUses(const VarDecl *Var, SourceRange Stages, const SourceManager &SM)
      : Var(Var), Stages(Stages), SM(SM) {}

  bool VisitCallExpr(CallExpr *Call) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee || !Callee->getIdentifier() || Call->getNumArgs() == 0)
      return true;
    llvm::StringRef Name = Callee->getName();
    const Expr *Arg = Call->getArg(0)->IgnoreParenImpCasts();
    if (Name == "cudaMalloc" || Name == "cudaMallocAsync" ||
        Name == "cudaMallocManaged") {
      if (const auto *Cast = dyn_cast<ExplicitCastExpr>(Arg))
        Arg = Cast->getSubExpr()->IgnoreParenImpCasts();
      const auto *Addr = dyn_cast<UnaryOperator>(Arg);
      if (Addr && Addr->getOpcode() == UO_AddrOf)
        if (const auto *Ref = refToVar(Addr->getSubExpr()))
          if (before(Ref->getBeginLoc(), Stages.getBegin())) {
            Allocations.insert(Ref);
            Allocated = true;
          }
    } else if (Name == "cudaFree" || Name == "cudaFreeAsync") {
      if (const auto *Ref = refToVar(Arg))
        if (before(Stages.getEnd(), Ref->getBeginLoc()))
          Frees.insert(Ref);
    }
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    if (Ref->getDecl() != Var || Allocations.count(Ref) || Frees.count(Ref))
      return true;
    SourceLocation Loc = Ref->getBeginLoc();
    if (before(Stages.getEnd(), Loc)) {
      if (LaterUse.isInvalid())
        LaterUse = Loc;
    } else if (before(Loc, Stages.getBegin())) {
      OtherEarlierUse = true;
    }
    return true;
  }

  /// Calls are visited before the references in their arguments (pre-order
  /// traversal), so the sets are complete when a reference is reached.
  SourceLocation LaterUse;
  bool OtherEarlierUse = false;
  bool Allocated = false;

private:
  const DeclRefExpr *refToVar(const Expr *E) const {
    const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return Ref && Ref->getDecl() == Var ? Ref : nullptr;
  }
  bool before(SourceLocation A, SourceLocation B) const {
    return SM.isBeforeInTranslationUnit(SM.getExpansionLoc(A),
                                        SM.getExpansionLoc(B));
  }

  const VarDecl *Var;
  SourceRange Stages;
  const SourceManager &SM;
  std::set<const DeclRefExpr *> Allocations, Frees;
};

/// Why \p Decl may be read after the launches in \p Stages, or "" (see the file
/// comment); \p Fresh tells whether it holds memory the function allocated
/// itself.
std::string whyLive(const ValueDecl *Decl, SourceRange Stages,
                    const FunctionDecl &Enclosing, const SourceManager &SM,
                    bool &Fresh) {
  Fresh = false;
  if (isa<ParmVarDecl>(Decl))
    return "a parameter: the caller may read it";
  if (isa<FieldDecl>(Decl))
    return "a member: other code may read it";
  const auto *Var = dyn_cast<VarDecl>(Decl);
  if (!Var || !Var->hasLocalStorage())
    return "not a local variable: other code may read it";
  LocalUses Uses(Var, Stages, SM);
  Uses.TraverseStmt(Enclosing.getBody());
  if (Uses.LaterUse.isValid())
    return "named after the launches, at line " +
           std::to_string(SM.getExpansionLineNumber(Uses.LaterUse));
  const Expr *Init = Var->getInit();
  bool NullInit =
      !Init || Init->isNullPointerConstant(Var->getASTContext(),
                                           Expr::NPC_ValueDependentIsNull);
  Fresh = Uses.Allocated && !Uses.OtherEarlierUse && NullInit &&
          Var->getType()->isPointerType();
  if (!Fresh)
    return "a local that may point to memory other code reads (only one "
           "the function allocates itself, with cudaMalloc or "
           "cudaMallocAsync, and frees or drops is known dead)";
  return "";
}

std::string lineOf(const Stmt *S, const SourceManager &SM) {
  return "line " + std::to_string(SM.getExpansionLineNumber(S->getBeginLoc()));
}

} // namespace

std::string launchedKernelName(const CUDAKernelCallExpr *Launch) {
  if (const FunctionDecl *Kernel = Launch->getDirectCallee())
    return Kernel->getNameAsString();
  return "the kernel";
}

std::optional<LaunchBuffers> launchBuffers(const CUDAKernelCallExpr *Launch) {
  const FunctionDecl *Kernel = Launch->getDirectCallee();
  if (!Kernel || !Kernel->hasBody())
    return std::nullopt;
  Kernel = Kernel->getDefinition();
  LaunchBuffers Buffers;
  for (const ParamAccess &Access : analyzeKernelParamAccess(*Kernel)) {
    unsigned Index = Access.Param->getFunctionScopeIndex();
    if (Index >= Launch->getNumArgs())
      continue;
    const ValueDecl *Buffer = bufferOf(Launch->getArg(Index));
    if (!Buffer)
      continue;
    if (Access.Read || Access.Escapes)
      Buffers.Read.insert(Buffer);
    if (Access.Written || Access.Escapes)
      Buffers.Written.insert(Buffer);
  }
  return Buffers;
}

StageGraph buildStageGraph(const CompoundStmt &Block,
                           const FunctionDecl &Enclosing, ASTContext &Ctx,
                           const Stmt *First, const Stmt *Last) {
  const SourceManager &SM = Ctx.getSourceManager();
  StageGraph G;
  G.Block = &Block;
  // The statements from the first launch (or \p First) to the last (or
  // \p Last): what comes before or after them keeps its place.
  std::vector<const Stmt *> Run;
  for (const Stmt *S : Block.body()) {
    if (S == First)
      Run.clear();
    if (First || Run.size() || launchOf(S))
      Run.push_back(S);
    if (S == Last)
      break;
  }
  while (!Run.empty() && !launchOf(Run.back()))
    Run.pop_back();
  if (Run.empty())
    return G;
  G.First = Run.front();
  G.Last = Run.back();

  LaunchUses Uses;
  for (const Stmt *S : Run)
    if (const CUDAKernelCallExpr *Launch = launchOf(S))
      Uses.add(*Launch);
  for (const Stmt *S : Run) {
    const CUDAKernelCallExpr *Launch = launchOf(S);
    if (!Launch) {
      if (containsLaunch(S))
        G.Problems.push_back(lineOf(S, SM) +
                             ": a launch inside a compound statement (a "
                             "loop or a branch), not a straight-line stage");
      else if (std::string Why = whyStatementKeepsItsPlace(*S, Uses, Ctx);
               !Why.empty())
        G.Problems.push_back(lineOf(S, SM) +
                             ": a host statement between the launches " + Why);
      else
        G.MovedStatements.push_back(S);
      continue;
    }
    std::optional<LaunchBuffers> Buffers = launchBuffers(Launch);
    if (!Buffers) {
      // Unknown body: every buffer it is passed may be read and written.
      G.Problems.push_back(
          lineOf(S, SM) +
          (Launch->getDirectCallee()
               ? ": the body of '" + launchedKernelName(Launch) +
                     "' is not visible"
               : std::string(": a launch in a template, whose kernel "
                             "depends on the template's arguments")));
      Buffers.emplace();
      for (const Expr *Arg : Launch->arguments())
        if (const ValueDecl *B = bufferOf(Arg)) {
          Buffers->Read.insert(B);
          Buffers->Written.insert(B);
        }
    }
    G.Stages.push_back({Launch, *Buffers});
  }

  // Buffers in order of first use, with their writers and readers.
  std::map<const ValueDecl *, size_t> Index;
  auto Entry = [&](const ValueDecl *D) -> StageGraph::Buffer & {
    auto [It, New] = Index.try_emplace(D, G.Buffers.size());
    if (New) {
      G.Buffers.emplace_back();
      G.Buffers.back().Decl = D;
    }
    return G.Buffers[It->second];
  };
  for (unsigned I = 0; I != G.Stages.size(); ++I) {
    // Declaration order of the sets is pointer order; sort by name so that
    // first use is deterministic within a stage.
    std::vector<const ValueDecl *> Used;
    for (const auto *Set :
         {&G.Stages[I].Buffers.Read, &G.Stages[I].Buffers.Written})
      Used.insert(Used.end(), Set->begin(), Set->end());
    llvm::sort(Used, [](const ValueDecl *A, const ValueDecl *B) {
      return A->getName() < B->getName();
    });
    for (const ValueDecl *D : Used) {
      StageGraph::Buffer &B = Entry(D);
      if (G.Stages[I].Buffers.Read.count(D) &&
          (B.Readers.empty() || B.Readers.back() != I))
        B.Readers.push_back(I);
      if (G.Stages[I].Buffers.Written.count(D) &&
          (B.Writers.empty() || B.Writers.back() != I))
        B.Writers.push_back(I);
    }
  }

  // Edges: for each stage, the latest earlier writer of what it reads
  // (flow) and writes (output), and the earlier readers since that writer
  // of what it writes (anti).
  for (unsigned To = 0; To != G.Stages.size(); ++To) {
    for (StageGraph::Buffer &B : G.Buffers) {
      bool Reads = G.Stages[To].Buffers.Read.count(B.Decl);
      bool Writes = G.Stages[To].Buffers.Written.count(B.Decl);
      if (!Reads && !Writes)
        continue;
      std::optional<unsigned> LastWriter;
      for (unsigned W : B.Writers)
        if (W < To)
          LastWriter = W;
      if (LastWriter && Reads)
        G.Edges.push_back({*LastWriter, To, B.Decl, StageGraph::Order::Flow});
      if (LastWriter && Writes)
        G.Edges.push_back({*LastWriter, To, B.Decl, StageGraph::Order::Output});
      if (Writes)
        for (unsigned R : B.Readers)
          if (R < To && (!LastWriter || R > *LastWriter))
            G.Edges.push_back({R, To, B.Decl, StageGraph::Order::Anti});
    }
  }
  llvm::sort(G.Edges, [](const StageGraph::Edge &A, const StageGraph::Edge &B) {
    return std::tie(A.To, A.From, A.Kind) < std::tie(B.To, B.From, B.Kind);
  });

  for (StageGraph::Buffer &B : G.Buffers) {
    bool ReadAfterWrite = llvm::any_of(B.Readers, [&](unsigned R) {
      return !B.Writers.empty() && R > B.Writers.front();
    });
    B.Kind = B.Writers.empty() ? StageGraph::Role::Input
             : ReadAfterWrite  ? StageGraph::Role::Intermediate
                               : StageGraph::Role::Output;
    B.WhyLive = whyLive(
        B.Decl, SourceRange(G.First->getBeginLoc(), G.Last->getEndLoc()),
        Enclosing, SM, B.Fresh);
    B.LiveAfter = !B.WhyLive.empty();
  }
  return G;
}

unsigned StageGraph::components() const {
  std::vector<unsigned> Parent(Stages.size());
  for (unsigned I = 0; I != Parent.size(); ++I)
    Parent[I] = I;
  auto Root = [&](unsigned I) {
    while (Parent[I] != I)
      I = Parent[I] = Parent[Parent[I]];
    return I;
  };
  unsigned Count = Stages.size();
  for (const Edge &E : Edges) {
    unsigned A = Root(E.From), B = Root(E.To);
    if (A != B) {
      Parent[A] = B;
      --Count;
    }
  }
  return Count;
}

const StageGraph::Buffer *StageGraph::buffer(const ValueDecl *Decl) const {
  for (const Buffer &B : Buffers)
    if (B.Decl == Decl)
      return &B;
  return nullptr;
}

std::optional<std::vector<StageRead>> readsAlong(const StageGraph &Graph,
                                                 const StageGraph::Edge &E) {
  const CUDAKernelCallExpr *Launch = Graph.Stages[E.To].Launch;
  const FunctionDecl *Kernel = Launch->getDirectCallee();
  if (!Kernel || !Kernel->getDefinition())
    return std::nullopt;
  StageAccess Access = analyzeStageAccess(*Kernel->getDefinition());
  if (!Access)
    return std::nullopt;
  std::vector<StageRead> Reads;
  for (StageRead &R : Access.Reads) {
    unsigned Index = R.Buffer->getFunctionScopeIndex();
    if (Index < Launch->getNumArgs() &&
        bufferOf(Launch->getArg(Index)) == E.Buffer)
      Reads.push_back(std::move(R));
  }
  return Reads;
}

std::string describeStageGraph(const StageGraph &Graph) {
  auto Names = [&](StageGraph::Role Kind) {
    std::vector<std::string> N;
    for (const StageGraph::Buffer &B : Graph.Buffers)
      if (B.Kind == Kind)
        N.push_back("'" + B.Decl->getNameAsString() + "'" +
                    (B.LiveAfter && Kind != StageGraph::Role::Input
                         ? " (live after)"
                         : ""));
    return N.empty() ? std::string("none") : llvm::join(N, ", ");
  };
  unsigned Components = Graph.components();
  return std::to_string(Graph.Stages.size()) + " stages, " +
         std::to_string(Graph.Edges.size()) + " edge" +
         (Graph.Edges.size() == 1 ? ", " : "s, ") + std::to_string(Components) +
         " component" + (Components == 1 ? "" : "s") + "; inputs " +
         Names(StageGraph::Role::Input) + "; intermediates " +
         Names(StageGraph::Role::Intermediate) + "; outputs " +
         Names(StageGraph::Role::Output);
}

} // namespace cuda_rewrite
