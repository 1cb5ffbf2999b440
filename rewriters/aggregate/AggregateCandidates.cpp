//===- AggregateCandidates.cpp - Device-side launches --------------------===//

#include "rewriters/aggregate/AggregatePass.h"
#include "clang/AST/Attr.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

void AggregatePass::findCandidates(CandidateFinder &Find) const {
  for (const LaunchSite &L : Find.launches()) {
    if (!L.FromDevice)
      continue;
    Candidate &C = Find.add(AggregatePass::DeviceLaunch, L.Call->getBeginLoc());
    C.Description =
        "'" + L.CalleeName + "' launched from " +
        (L.Enclosing->hasAttr<CUDAGlobalAttr>() ? "kernel"
                                                : "device function") +
        " '" + L.Enclosing->getNameAsString() + "'";
    if (L.FromHostDevice)
      C.Flags.push_back("in __host__ __device__ function");
    if (L.InBranch)
      C.Flags.push_back("in branch");
    if (L.InLoop)
      C.Flags.push_back("in loop");
    if (L.InMacro)
      C.Flags.push_back("in macro");
    if (L.InTemplate)
      C.Flags.push_back("in template");
    C.InMacro = L.InMacro;
    C.InTemplate = L.InTemplate;
    C.Function = L.Enclosing;
    C.Statement = L.Call;
    C.Annotation =
        Find.annotation(AggregatePass::Directive, L.Enclosing, L.Call);
  }
}

} // namespace cuda_rewrite
