//===- BoundPass.cpp - The example pass of docs/architecture.md -----------===//

#include "test/unit/example/BoundPass.h"
#include "analysis/ConfigPins.h"
#include "analysis/LaunchSites.h"
#include "analysis/Refusal.h"
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

namespace {

/// What the rewrite of one kernel needs: its bound, and the values the
/// bound was read from that another build could define otherwise.
struct BoundPlan {
  uint64_t Threads = 0;
  ConfigPins Pins;
};

/// Legality: every launch of the kernel has a constant block, none larger
/// than the bound (the clause's, else the largest of them).
PlanOrRefusal<BoundPlan> planBound(const Candidate &C,
                                   llvm::ArrayRef<LaunchSite> Launches,
                                   const clang::ASTContext &Ctx) {
  BoundPlan Plan;
  std::optional<uint64_t> Largest =
      largestBlockThreads(Ctx, Launches, *C.Function, Plan.Pins);
  if (!Largest)
    return PlanOrRefusal<BoundPlan>::refuse(
        "a launch of it has a block size that is not a constant (or it has "
        "no launch)");
  Plan.Threads = *Largest;
  if (const PragmaClause *Threads =
          C.Annotation ? C.Annotation->clause("threads") : nullptr) {
    Plan.Threads = std::stoull(Threads->Args[0]);
    if (*Largest > Plan.Threads)
      return PlanOrRefusal<BoundPlan>::refuse(
          "a launch of it uses " + std::to_string(*Largest) +
              " threads per block, more than threads(" + Threads->Args[0] + ")",
          Threads->Loc);
  }
  return PlanOrRefusal<BoundPlan>::accept(std::move(Plan));
}

} // namespace

bool BoundPass::rewrite(PassContext &Context, const PassWork &Work) const {
  std::vector<LaunchSite> Launches = findLaunchSites(Context.Ctx);
  for (const Candidate *C : Work.Candidates) {
    const clang::FunctionDecl &Kernel = *C->Function;
    PlanOrRefusal<BoundPlan> Planned = planBound(*C, Launches, Context.Ctx);
    if (!Planned) {
      Context.Remark.refused(*C, Name, Planned.Refused.Reason);
      continue;
    }
    uint64_t Bound = Planned.Plan->Threads;
    const ConfigPins &Pins = Planned.Plan->Pins;
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
