//===- FuseCandidates.cpp - Chains of launches that feed each other ------===//

#include "analysis/StageAccess.h"
#include "analysis/StageChains.h"
#include "analysis/StageGraph.h"
#include "rewriters/fuse/FusePass.h"
#include <set>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

// A block under `#pragma cuda_rewrite fuse` is one candidate, described by
// its stage graph (a DAG: the chains in it are not listed apart); elsewhere,
// each chain of launches that feed each other is one.
void FusePass::findCandidates(CandidateFinder &Find) const {
  std::set<const Stmt *> Annotated;
  for (const AttachedPragma &P : Find.pragmas()) {
    const auto *Block = dyn_cast_or_null<CompoundStmt>(P.TargetStmt);
    if (!P.Directive->is(FusePass::Directive) || !Block || !P.EnclosingFunction)
      continue;
    StageGraph Graph =
        buildStageGraph(*Block, *P.EnclosingFunction, Find.context());
    if (Graph.Stages.empty())
      continue;
    Annotated.insert(Block);
    Candidate &C =
        Find.add(FusePass::Chain, Graph.Stages.front().Launch->getBeginLoc());
    C.Description = describeStageGraph(Graph);
    C.Flags = Graph.Problems;
    // Stages whose reads are not yet in a form fusion can align.
    std::set<const FunctionDecl *> Seen;
    for (const StageGraph::Stage &S : Graph.Stages) {
      const FunctionDecl *K = S.Launch->getDirectCallee();
      if (!K || !K->getDefinition() || !Seen.insert(K).second)
        continue;
      StageAccess Access = analyzeStageAccess(*K->getDefinition());
      if (!Access)
        C.Flags.push_back("stage '" + K->getNameAsString() +
                          "': " + Access.Refusal);
    }
    C.Function = P.EnclosingFunction;
    C.Statement = Block;
    C.Annotation = P.Directive;
  }
  for (const StageChain &Chain : findStageChains(Find.context())) {
    if (Annotated.count(Chain.Block))
      continue;
    Candidate &C =
        Find.add(FusePass::Chain, Chain.Launches.front()->getBeginLoc());
    C.Description = describeStageChain(Chain);
    C.Function = Chain.Enclosing;
    C.Statement = Chain.Block;
    C.FirstStatement = Chain.First;
    C.LastStatement = Chain.Last;
    C.Annotation =
        Find.annotation(FusePass::Directive, nullptr, Chain.Launches.front());
  }
}

} // namespace cuda_rewrite
