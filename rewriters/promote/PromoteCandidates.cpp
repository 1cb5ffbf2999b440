//===- PromoteCandidates.cpp - Kernels that launch themselves ------------===//

#include "rewriters/promote/PromotePass.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

void PromotePass::findCandidates(CandidateFinder &Find) const {
  SmallPtrSet<const FunctionDecl *, 8> Seen;
  for (const LaunchSite &L : Find.launches()) {
    if (!L.FromDevice || !L.Callee || !L.Enclosing ||
        L.Callee->getCanonicalDecl() != L.Enclosing->getCanonicalDecl() ||
        !Seen.insert(L.Enclosing).second)
      continue;
    Candidate &C =
        Find.add(PromotePass::RecursiveKernel, L.Enclosing->getLocation());
    C.Description =
        "kernel '" + L.Enclosing->getNameAsString() + "' launches itself";
    C.Function = L.Enclosing;
    C.Annotation = Find.annotation(PromotePass::Directive, L.Enclosing);
  }
}

} // namespace cuda_rewrite
