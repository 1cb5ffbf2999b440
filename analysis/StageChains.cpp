//===- StageChains.cpp - Host launches that feed each other ---------------===//

#include "analysis/StageChains.h"
#include "analysis/FunctionTrackingVisitor.h"
#include "analysis/HostStatements.h"
#include "analysis/StageGraph.h"

#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <set>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

std::vector<std::string> links(const LaunchBuffers &Producer,
                               const LaunchBuffers &Consumer) {
  std::vector<std::string> Names;
  for (const ValueDecl *Buffer : Producer.Written)
    if (Consumer.Read.count(Buffer))
      Names.push_back(Buffer->getNameAsString());
  llvm::sort(Names);
  return Names;
}

class ChainFinder : public FunctionTrackingVisitor<ChainFinder> {
public:
  explicit ChainFinder(ASTContext &Ctx)
      : Ctx(Ctx), SM(Ctx.getSourceManager()) {}

  bool VisitCompoundStmt(CompoundStmt *Block) {
    const FunctionDecl *Enclosing = currentFunction();
    if (!Enclosing || !isHostCode(Enclosing) ||
        !SM.isWrittenInMainFile(SM.getExpansionLoc(Block->getBeginLoc())))
      return true;
    // A run: launches with the statements between them that may stay in
    // place while the launches move (HostStatements.h); a statement that
    // must keep its place among them, or a launch in a loop or branch,
    // ends it. The chains of a run share it: fusion plans a run at once,
    // so that a stage may join any earlier one of its run.
    Run R;
    for (const Stmt *S : Block->body()) {
      const CUDAKernelCallExpr *Launch = launchOf(S);
      if (!Launch) {
        if (!R.Launches.empty())
          R.Pending.push_back(S);
        continue;
      }
      LaunchUses With = R.Uses;
      With.add(*Launch);
      bool Moves =
          llvm::all_of(
              R.Pending,
              [&](const Stmt *B) {
                return whyStatementKeepsItsPlace(*B, With, Ctx).empty();
              }) &&
          llvm::all_of(R.Between, [&](const Stmt *B) {
            return whyStatementKeepsItsPlace(*B, With, Ctx).empty();
          });
      if (!Moves)
        endRun(R);
      R.Between.insert(R.Between.end(), R.Pending.begin(), R.Pending.end());
      R.Pending.clear();
      R.add(*Block, *Enclosing, S, *Launch);
    }
    endRun(R);
    return true;
  }

  std::vector<StageChain> Chains;

private:
  struct Run {
    std::vector<const Stmt *> Launches; ///< Their statements.
    /// The statements between the launches, and those after the last.
    std::vector<const Stmt *> Between, Pending;
    LaunchUses Uses;
    StageChain Current; ///< The chain of links ending at the last launch.
    std::optional<LaunchBuffers> Previous;
    std::vector<StageChain> Chains;

    void add(const CompoundStmt &Block, const FunctionDecl &Enclosing,
             const Stmt *S, const CUDAKernelCallExpr &Launch) {
      std::optional<LaunchBuffers> Buffers = launchBuffers(&Launch);
      std::vector<std::string> Link;
      if (Previous && Buffers)
        Link = links(*Previous, *Buffers);
      if (Link.empty())
        endChain();
      else
        Current.Links.push_back(Link);
      Current.Block = &Block;
      Current.Enclosing = &Enclosing;
      Current.Launches.push_back(&Launch);
      Previous = Buffers;
      Launches.push_back(S);
      Uses.add(Launch);
    }

    void endChain() {
      if (Current.Launches.size() >= 2)
        Chains.push_back(Current);
      Current = StageChain();
    }
  };

  /// Records \p R's chains, each spanning the whole run, and starts a new
  /// run.
  void endRun(Run &R) {
    R.endChain();
    for (StageChain &C : R.Chains) {
      C.First = R.Launches.front();
      C.Last = R.Launches.back();
      Chains.push_back(C);
    }
    R = Run();
  }

  static bool isHostCode(const FunctionDecl *F) {
    return !F->hasAttr<CUDAGlobalAttr>() &&
           !(F->hasAttr<CUDADeviceAttr>() && !F->hasAttr<CUDAHostAttr>());
  }

  ASTContext &Ctx;
  const SourceManager &SM;
};

} // namespace

std::vector<StageChain> findStageChains(ASTContext &Ctx) {
  ChainFinder Finder(Ctx);
  Finder.TraverseAST(Ctx);
  return std::move(Finder.Chains);
}

std::string describeStageChain(const StageChain &Chain) {
  std::vector<std::string> Kernels, Buffers;
  for (const CUDAKernelCallExpr *Launch : Chain.Launches)
    Kernels.push_back(launchedKernelName(Launch));
  for (const std::vector<std::string> &Link : Chain.Links)
    Buffers.push_back("'" + join(Link, "', '") + "'");
  return std::to_string(Chain.Launches.size()) + " launches " +
         join(Kernels, " -> ") + " via " + join(Buffers, ", ");
}

} // namespace cuda_rewrite
