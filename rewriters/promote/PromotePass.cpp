//===- PromotePass.cpp - Launch promotion (KLAP P, PA, PO, PAO) -----------===//

#include "rewriters/promote/PromotePass.h"
#include "analysis/LaunchSites.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/promote/PromoteCodeGen.h"
#include "rewriters/promote/PromotePlan.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

class PromoteRewriter {
public:
  explicit PromoteRewriter(PassContext &Context)
      : Context(Context), Ctx(Context.Ctx), Launches(findLaunchSites(Ctx)) {}

  bool rewrite(const Candidate &C) {
    PromoteVariant Variant;
    if (C.Annotation) {
      // The pragma's grammar checked that it is a pool size in 1..65535.
      if (const PragmaClause *Pool = C.Annotation->clause("aggregate"))
        (void)llvm::StringRef(Pool->Args[0]).getAsInteger(10, Variant.Pool);
      Variant.Overlap = C.Annotation->clause("overlap") != nullptr;
    }
    PromotePlanResult Planned =
        planPromotion(*C.Function, Variant, Launches, Ctx);
    if (!Planned.Plan)
      return refuse(C, "cannot promote '" + C.Function->getNameAsString() +
                           "' (" + Variant.name() +
                           "): " + Planned.Refused.Reason);
    const PromotePlan &Plan = *Planned.Plan;
    std::string Code = generatePromotedCode(Plan, Ctx);
    const FunctionDecl *Def = C.Function->getDefinition();
    // The pins go where the host launches' macros are defined too.
    if (!includeRuntimeHeader(Context, "runtime", C.Loc, "promote") ||
        !check(Context.Edits.addDefinition("promote/" + Def->getNameAsString(),
                                           "\n" + Code,
                                           lineAfter(Ctx, Def->getEndLoc())),
               C.Loc) ||
        (!Plan.Pins.empty() &&
         !check(Context.Edits.addDefinition(
                    "promote/pins/" + Def->getNameAsString(),
                    "\n" + pinnedValues(Plan.Pins),
                    pinPlaceAfterLaunches(Ctx, Launches, *Def)),
                C.Loc)))
      return false;
    for (const CUDAKernelCallExpr *Call : Plan.HostLaunches)
      if (!rewriteHostLaunch(Call, Plan))
        return false;
    Context.Remark.applied(C.Loc, PromotePass::Name, summary(Plan));
    return true;
  }

private:
  bool refuse(const Candidate &C, const std::string &Why) {
    Context.Remark.refused(C, PromotePass::Name, Why);
    return true;
  }

  bool check(llvm::Error E, SourceLocation Loc) {
    return checkEdit(Ctx, std::move(E), Loc, "promote");
  }

  /// "'k' runs as k_promoted (PA, pools of 128): ...".
  std::string summary(const PromotePlan &Plan) const {
    std::vector<std::string> Postponed, Stepped, Early, Shared;
    for (const PromoteArg &A : Plan.Args) {
      std::string Name = A.Param->getNameAsString();
      if (A.Kind == ArgKind::Postponed)
        Postponed.push_back(Name);
      else if (A.Kind == ArgKind::Stepped)
        Stepped.push_back(Name);
      else if (A.Kind == ArgKind::Early)
        Early.push_back(Name);
    }
    for (const PromoteBuffer &B : Plan.Buffers)
      if (B.Written)
        Shared.push_back(B.Param->getNameAsString());
    auto List = [](const std::vector<std::string> &Names) {
      return Names.empty() ? std::string("none") : llvm::join(Names, ", ");
    };
    std::string S = llvm::formatv(
        "'{0}' runs as {1} (variant {2}{3}); postponed through the slots: "
        "{4}; per-link arguments computed at the start: {5}; launch "
        "condition '{6}' {7}; ",
        Plan.Kernel->getNameAsString(), promotedKernelName(Plan),
        Plan.Variant.name(),
        Plan.Variant.Pool
            ? ", pools of " + std::to_string(Plan.Variant.Pool) + " blocks"
            : "",
        List(Postponed), List(Stepped.empty() ? Early : Stepped),
        conditionText(Plan, Ctx),
        Plan.EarlyCondition ? "known at the start"
                            : "known only in the body (speculative launch)");
    S += Shared.empty()
             ? "links publish where the original launched"
             : "links write " + List(Shared) + ", so each publishes at its end";
    if (!Plan.Variant.Pool)
      S += "; each link stays pending until the next one ends, so a chain "
           "of more than about 2000 links exceeds CDP's pending-launch pool "
           "(error 69, recorded) unless the program raises "
           "cudaLimitDevRuntimePendingLaunchCount; aggregate(n) has no such "
           "limit";
    S += llvm::formatv("; {0} host launch{1} rewritten",
                       Plan.HostLaunches.size(),
                       Plan.HostLaunches.size() == 1 ? "" : "es");
    return S;
  }

  /// `k<<<1, b, s, t>>>(args)` becomes `k_promoted_launch(1, b, s, t, args)`.
  bool rewriteHostLaunch(const CUDAKernelCallExpr *Call,
                         const PromotePlan &Plan) {
    std::vector<std::string> Args = launchArgumentsText(Ctx, Call);
    return check(
        Context.Edits.replace(
            CharSourceRange::getTokenRange(Call->getSourceRange()),
            promotedLauncherName(Plan) + "(" + llvm::join(Args, ", ") + ")"),
        Call->getBeginLoc());
  }

  PassContext &Context;
  ASTContext &Ctx;
  std::vector<LaunchSite> Launches;
};

} // namespace

namespace {
std::string blocksPerPool(llvm::ArrayRef<unsigned> V) {
  return V[0] <= 65535 ? "" : "takes 1..65535 blocks per pool";
}
const ClauseSpec PromoteClauses[] = {
    {"aggregate", ClauseArgs::PositiveInt, {}, blocksPerPool},
    {"overlap", ClauseArgs::None}};
} // namespace

const DirectiveSpec PromotePass::Directive = {"promote", PromoteClauses,
                                              PragmaTarget::Kernel};
const DirectiveSpec PromotePass::OverlapBoundary = {
    "overlap_boundary", {}, PragmaTarget::StatementInKernel};
const CandidateKind PromotePass::RecursiveKernel = {"recursive-kernel"};

PromotePass::PromotePass()
    : Pass(Name, "promote recursive device-side launches (KLAP)",
           {&RecursiveKernel}, {&Directive}, {&OverlapBoundary}) {}

std::string PromotePass::whyNothingToRewrite(const AttachedPragma &P) const {
  return pragmaTarget(P) +
         " does not launch itself (promotion rewrites recursive kernels)";
}

bool PromotePass::rewrite(PassContext &Context, const PassWork &Work) const {
  return rewriteEach<PromoteRewriter>(Context, Work.Candidates);
}

} // namespace cuda_rewrite
