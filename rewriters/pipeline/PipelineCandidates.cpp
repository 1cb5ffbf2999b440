//===- PipelineCandidates.cpp - Stages and pipeline launches -------------===//

#include "rewriters/pipeline/PipelinePass.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

void PipelinePass::findCandidates(CandidateFinder &Find) const {
  for (const AttachedPragma &P : Find.pragmas()) {
    if (P.Directive->Kind == DirectiveKind::Stage) {
      const FunctionDecl *F = P.targetFunction();
      Candidate &C = Find.add(CandidateKind::PipelineStage, F->getLocation());
      C.Description = "__device__ stage '" + F->getNameAsString() + "'";
      C.Function = F;
      C.Annotation = P.Directive;
    } else if (P.Directive->Kind == DirectiveKind::Pipeline) {
      Candidate &C =
          Find.add(CandidateKind::PipelineEntry, P.TargetStmt->getBeginLoc());
      C.Description = "pipeline launched from '" +
                      P.EnclosingFunction->getNameAsString() + "'";
      C.Function = P.EnclosingFunction;
      C.Statement = P.TargetStmt;
      C.Annotation = P.Directive;
    }
  }
}

} // namespace cuda_rewrite
