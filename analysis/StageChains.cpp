//===- StageChains.cpp - Host launches that feed each other ---------------===//

#include "analysis/StageChains.h"
#include "analysis/FunctionTrackingVisitor.h"
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
  explicit ChainFinder(ASTContext &Ctx) : SM(Ctx.getSourceManager()) {}

  bool VisitCompoundStmt(CompoundStmt *Block) {
    const FunctionDecl *Enclosing = currentFunction();
    if (!Enclosing || !isHostCode(Enclosing) ||
        !SM.isWrittenInMainFile(SM.getExpansionLoc(Block->getBeginLoc())))
      return true;
    StageChain Current;
    std::optional<LaunchBuffers> Previous;
    auto Flush = [&] {
      if (Current.Launches.size() >= 2)
        Chains.push_back(Current);
      Current = StageChain();
    };
    for (const Stmt *S : Block->body()) {
      const CUDAKernelCallExpr *Launch = launchOf(S);
      if (!Launch)
        continue; // Statements between launches do not break a chain.
      std::optional<LaunchBuffers> Buffers = launchBuffers(Launch);
      std::vector<std::string> Link;
      if (Previous && Buffers)
        Link = links(*Previous, *Buffers);
      if (Link.empty())
        Flush();
      else
        Current.Links.push_back(Link);
      Current.Block = Block;
      Current.Enclosing = Enclosing;
      Current.Launches.push_back(Launch);
      Previous = Buffers;
    }
    Flush();
    return true;
  }

  std::vector<StageChain> Chains;

private:
  static bool isHostCode(const FunctionDecl *F) {
    return !F->hasAttr<CUDAGlobalAttr>() &&
           !(F->hasAttr<CUDADeviceAttr>() && !F->hasAttr<CUDAHostAttr>());
  }

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
