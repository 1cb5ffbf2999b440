//===- BoundPass.cpp - The example pass of docs/architecture.md -----------===//

#include "test/unit/example/BoundPass.h"
#include "analysis/ConfigPins.h"
#include "analysis/LaunchSites.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"

#include "clang/AST/Attr.h"

namespace cuda_rewrite::example {

namespace {

std::string threadsPerBlock(llvm::ArrayRef<unsigned> V) {
  return V[0] % 32 == 0 && V[0] <= 1024
             ? ""
             : "takes a multiple of 32 between 32 and 1024 threads per block";
}

const ClauseSpec BoundClauses[] = {
    {"threads", ClauseArgs::PositiveInt, {}, threadsPerBlock}};

} // namespace

const DirectiveSpec BoundPass::Directive = {"bound", BoundClauses,
                                            PragmaTarget::Kernel};
const CandidateKind BoundPass::UnboundedKernel = {"unbounded-kernel"};

void BoundPass::findCandidates(CandidateFinder &Find) const {
  for (const clang::FunctionDecl *Kernel : Find.mainFileKernels()) {
    if (Kernel->hasAttr<clang::CUDALaunchBoundsAttr>())
      continue;
    Candidate &C = Find.add(UnboundedKernel, Kernel->getLocation());
    C.Description = "kernel '" + Kernel->getNameAsString() + "'";
    C.Function = Kernel;
    C.Annotation = Find.annotation(Directive, Kernel);
  }
}

bool BoundPass::rewrite(PassContext &Context, const PassWork &Work) const {
  std::vector<LaunchSite> Launches = findLaunchSites(Context.Ctx);
  for (const Candidate *C : Work.Candidates) {
    const clang::FunctionDecl &Kernel = *C->Function;
    // Plan: the largest block of the kernel's launches, all constant.
    ConfigPins Pins;
    std::optional<uint64_t> Largest =
        largestBlockThreads(Context.Ctx, Launches, Kernel, Pins);
    if (!Largest) {
      Context.Remark.refused(*C, Name,
                             "a launch of it has a block size that is not a "
                             "constant (or it has no launch)");
      continue;
    }
    uint64_t Bound = *Largest;
    if (const PragmaClause *Threads =
            C->Annotation ? C->Annotation->clause("threads") : nullptr) {
      Bound = std::stoull(Threads->Args[0]);
      if (*Largest > Bound) {
        Context.Remark.refused(*C, Name,
                               "a launch of it uses " +
                                   std::to_string(*Largest) +
                                   " threads per block, more than threads(" +
                                   Threads->Args[0] + ")");
        continue;
      }
    }
    // Generate: the attribute before the kernel's name, the pins after
    // the last function that launches it.
    std::string Attribute = "__launch_bounds__(" + std::to_string(Bound) + ") ";
    if (!checkEdit(Context.Ctx,
                   Context.Edits.insertBefore(Kernel.getLocation(), Attribute),
                   C->Loc, Name))
      return false;
    if (!Pins.empty()) {
      clang::SourceLocation At =
          pinPlaceAfterLaunches(Context.Ctx, Launches, Kernel);
      if (!checkEdit(
              Context.Ctx,
              Context.Edits.addDefinition("bound/" + Kernel.getNameAsString(),
                                          pinnedValues(Pins), At),
              C->Loc, Name))
        return false;
    }
    Context.Remark.applied(C->Loc, Name,
                           "__launch_bounds__(" + std::to_string(Bound) +
                               ") on kernel '" + Kernel.getNameAsString() +
                               "'");
  }
  return true;
}

} // namespace cuda_rewrite::example
