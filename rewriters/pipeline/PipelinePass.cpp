//===- PipelinePass.cpp - Pipelines run from queues (VersaPipe) -----------===//

#include "rewriters/pipeline/PipelinePass.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/pipeline/PipelineCodeGen.h"
#include "rewriters/pipeline/PipelinePlan.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include <map>

using namespace clang;

namespace cuda_rewrite {

namespace {

class PipelineRewriter {
public:
  PipelineRewriter(PassContext &Context, ArrayRef<const Candidate *> Stages)
      : Context(Context), Ctx(Context.Ctx), SM(Ctx.getSourceManager()) {
    for (const Candidate *C : Stages) {
      unsigned Threads = 1;
      if (const PragmaClause *T = C->Annotation->clause("threads"))
        llvm::StringRef(T->Args.front()).getAsInteger(10, Threads);
      GroupSizes[C->Function->getCanonicalDecl()] = Threads;
    }
  }

  bool rewrite(const Candidate &C) {
    PipelinePlanResult Planned = planPipeline(C, GroupSizes, Ctx);
    if (!Planned.Plan) {
      Context.Remark.refused(C, PipelinePass::Name,
                             "cannot run the pipeline from queues: " +
                                 Planned.Refused.Reason);
      return true;
    }
    const PipelinePlan &Plan = *Planned.Plan;
    if (!includeRuntimeHeader(Context, "pipeline", C.Loc, "pipeline") ||
        !check(Context.Edits.addDefinition(
                   "pipeline/" + Plan.name(),
                   "\n" + pinnedValues(Plan.Pins) +
                       generatePipelineCode(Plan, Ctx),
                   lineAfter(Ctx, lastDefinitionEnd(Plan))),
               C.Loc) ||
        !rewriteLaunch(Plan))
      return false;
    for (unsigned I = 0; I != Plan.Stages.size(); ++I)
      StageUse[Plan.Stages[I].Function->getCanonicalDecl()].push_back(
          "stage " + std::to_string(I) + " of pipeline '" + Plan.name() + "'");
    Context.Remark.applied(C.Loc, PipelinePass::Name, summary(Plan));
    return true;
  }

  /// A remark for each stage: which pipelines run it, or why none does.
  void reportStages(ArrayRef<const Candidate *> Stages) {
    for (const Candidate *C : Stages) {
      auto It = StageUse.find(C->Function->getCanonicalDecl());
      if (It == StageUse.end())
        Context.Remark.refused(*C, PipelinePass::Name,
                               "stage '" + C->Function->getNameAsString() +
                                   "' is in no pipeline that was rewritten "
                                   "(none reaches it, or its pipeline was "
                                   "refused)");
      else
        Context.Remark.applied(C->Loc, PipelinePass::Name,
                               "'" + C->Function->getNameAsString() +
                                   "' runs from a queue as " +
                                   llvm::join(It->second, " and as "));
    }
  }

private:
  bool check(llvm::Error E, SourceLocation Loc) {
    return checkEdit(Ctx, std::move(E), Loc, "pipeline");
  }

  static std::string summary(const PipelinePlan &Plan) {
    std::vector<std::string> Stages;
    for (const PipelineStage &S : Plan.Stages)
      Stages.push_back(S.GroupSize > 1 ? S.name() + " (threads(" +
                                             std::to_string(S.GroupSize) + "))"
                                       : S.name());
    std::string Model = Plan.Model == "auto"
                            ? "megakernel (model(auto) without a configuration)"
                            : Plan.Model;
    std::string Text = "pipeline '" + Plan.name() + "' runs its " +
                       std::to_string(Plan.Stages.size()) +
                       " stages from queues: " + llvm::join(Stages, ", ");
    if (Plan.hasCycles())
      Text += " (with recursion or loops between stages)";
    Text += "; model " + Model;
    if (!Plan.ConfigFile.empty())
      Text += ", or the one in '" + Plan.ConfigFile + "' where it exists";
    return Text + "; CUDA_REWRITE_PIPELINE_MODEL or "
                  "CUDA_REWRITE_PIPELINE_CONFIG choose another at run time";
  }

  SourceLocation lastDefinitionEnd(const PipelinePlan &Plan) const {
    SourceLocation Last = Plan.Entry->getEndLoc();
    for (const PipelineStage &S : Plan.Stages)
      if (SM.isBeforeInTranslationUnit(
              SM.getExpansionLoc(Last),
              SM.getExpansionLoc(S.Function->getEndLoc())))
        Last = S.Function->getEndLoc();
    return Last;
  }

  /// `entry<<<g, b, s, t>>>(args)` becomes
  /// `CUDA_REWRITE_CHECK(entry_runPipeline(g, b, s, t, args))`.
  bool rewriteLaunch(const PipelinePlan &Plan) {
    std::vector<std::string> Args = launchArgumentsText(Ctx, Plan.Launch);
    return check(
        Context.Edits.replace(
            CharSourceRange::getTokenRange(Plan.Launch->getSourceRange()),
            "CUDA_REWRITE_CHECK(" + pipelineLauncherName(Plan) + "(" +
                llvm::join(Args, ", ") + "))"),
        Plan.Launch->getBeginLoc());
  }

  PassContext &Context;
  ASTContext &Ctx;
  const SourceManager &SM;
  StageGroupSizes GroupSizes;
  std::map<const FunctionDecl *, std::vector<std::string>> StageUse;
};

} // namespace

namespace {
std::string groupSize(llvm::ArrayRef<unsigned> V) {
  return llvm::isPowerOf2_32(V[0]) && V[0] <= 256
             ? ""
             : "takes a power of two up to 256 threads";
}
const ClauseSpec StageClauses[] = {
    {"threads", ClauseArgs::PositiveInt, {}, groupSize}};
const llvm::StringLiteral Models[] = {"auto",   "rtc",  "kbk",   "megakernel",
                                      "coarse", "fine", "hybrid"};
const ClauseSpec PipelineClauses[] = {{"model", ClauseArgs::OneOf, Models},
                                      {"config", ClauseArgs::Text}};
} // namespace

const DirectiveSpec PipelinePass::Stage = {"stage", StageClauses,
                                           PragmaTarget::DeviceVoidFunction};
const DirectiveSpec PipelinePass::Pipeline = {"pipeline", PipelineClauses,
                                              PragmaTarget::HostLaunch};
const CandidateKind PipelinePass::PipelineStage = {"pipeline-stage"};
const CandidateKind PipelinePass::PipelineEntry = {"pipeline-entry"};

PipelinePass::PipelinePass()
    : Pass(Name, "run stage pipelines under an execution model (VersaPipe)",
           {&PipelineStage, &PipelineEntry}, {&Stage, &Pipeline}) {}

bool PipelinePass::rewrite(PassContext &Context, const PassWork &Work) const {
  std::vector<const Candidate *> Entries, Stages;
  for (const Candidate *C : Work.Candidates)
    (C->Kind == &PipelineEntry ? Entries : Stages).push_back(C);
  PipelineRewriter R(Context, Stages);
  for (const Candidate *C : Entries)
    if (!R.rewrite(*C))
      return false;
  R.reportStages(Stages);
  return true;
}

} // namespace cuda_rewrite
