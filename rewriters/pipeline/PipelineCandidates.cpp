//===- PipelineCandidates.cpp - Stages and pipeline launches -------------===//

#include "rewriters/pipeline/PipelinePass.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

void PipelinePass::findCandidates(CandidateFinder &Find) const {
  for (const AttachedPragma &P : Find.pragmas()) {
    if (P.Directive->is(PipelinePass::Stage)) {
      const FunctionDecl *F = P.targetFunction();
      Candidate &C = Find.add(PipelinePass::PipelineStage, F->getLocation());
      C.Description = "__device__ stage '" + F->getNameAsString() + "'";
      C.Function = F;
      C.Annotation = P.Directive;
    } else if (P.Directive->is(PipelinePass::Pipeline)) {
      Candidate &C =
          Find.add(PipelinePass::PipelineEntry, P.TargetStmt->getBeginLoc());
      C.Description = "pipeline launched from '" +
                      P.EnclosingFunction->getNameAsString() + "'";
      C.Function = P.EnclosingFunction;
      C.Statement = P.TargetStmt;
      C.Annotation = P.Directive;
    }
  }
}

} // namespace cuda_rewrite
