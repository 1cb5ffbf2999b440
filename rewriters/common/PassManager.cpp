//===- PassManager.cpp - Hands candidates to the passes -------------------===//

#include "rewriters/common/PassManager.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/fuse/FusePass.h"
#include "rewriters/pipeline/PipelinePass.h"
#include "rewriters/promote/PromotePass.h"
#include "rewriters/systolic/SystolicPass.h"

namespace cuda_rewrite {

PassId passFor(CandidateKind Kind) {
  switch (Kind) {
  case CandidateKind::DeviceLaunch:
    return PassId::Aggregate;
  case CandidateKind::RecursiveKernel:
    return PassId::Promote;
  case CandidateKind::Stencil:
    return PassId::Systolic;
  case CandidateKind::StageChain:
    return PassId::Fuse;
  case CandidateKind::PipelineStage:
  case CandidateKind::PipelineEntry:
    return PassId::Pipeline;
  }
  llvm_unreachable("all kinds handled");
}

std::string reasonToSkip(const Candidate &C, const PassOptions &Opts) {
  const PassInfo &Pass = passInfo(passFor(C.Kind));
  if (!Opts.Enabled.contains(Pass.Id))
    return "the '" + Pass.Name.str() + "' pass is disabled (--only/--disable)";
  if (!C.Annotation && !Opts.Auto)
    return "not annotated; add '#pragma cuda_rewrite " + Pass.Name.str() +
           "' or pass --auto";
  if (C.InMacro && !Pass.HandlesMacros)
    return "written inside a macro expansion; rewriting it would change the "
           "macro for every use (expand the macro here to rewrite it)";
  if (C.InTemplate && !Pass.HandlesTemplates)
    return "inside a template; the '" + Pass.Name.str() +
           "' pass does not rewrite templates yet";
  if (C.UnderCudaArch && !Pass.HandlesCudaArchRegions)
    return "under a __CUDA_ARCH__ conditional, where host and device "
           "compilations see different code";
  if (!Pass.Implemented)
    return "the '" + Pass.Name.str() +
           "' pass is not implemented in this version of cuda-rewrite";
  return "";
}

namespace {

/// The line of the main file's first declaration, where the marker and the
/// runtime includes go; invalid when the file declares nothing.
clang::SourceLocation firstDeclarationLine(const PassContext &Context) {
  const clang::SourceManager &SM = Context.Ctx.getSourceManager();
  for (const clang::Decl *D : Context.Ctx.getTranslationUnitDecl()->decls()) {
    clang::SourceLocation First = SM.getExpansionLoc(D->getBeginLoc());
    if (!D->isImplicit() && SM.isWrittenInMainFile(First))
      return lineStart(Context.Ctx, First);
  }
  return {};
}

} // namespace

bool runPasses(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
               const PassOptions &Opts) {
  // The tool's own output: its generated code would be generated again
  // (twice-defined kernels), so a second run changes nothing.
  const clang::SourceManager &SM = Context.Ctx.getSourceManager();
  if (std::optional<unsigned> Line =
          findRewrittenFileMarker(SM.getBufferData(SM.getMainFileID()))) {
    for (const Candidate &C : Candidates)
      Context.Remark.skipped(C, passFor(C.Kind),
                             "this file is cuda-rewrite's output (line " +
                                 std::to_string(*Line) +
                                 "); rewrite the original instead");
    return true;
  }
  if (!runEachPass(Context, Candidates, Opts))
    return false;
  if (Context.Remark.counts().Rewritten == 0)
    return true;
  clang::SourceLocation Top = firstDeclarationLine(Context);
  return !Top.isValid() ||
         checkEdit(Context.Ctx,
                   Context.Edits.addDefinition(
                       "0/0-marker", rewrittenFileMarker().str() + "\n", Top),
                   Top, "cuda-rewrite");
}

bool runEachPass(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
                 const PassOptions &Opts) {
  std::vector<const Candidate *> AggregateSites, ChainKernels, StencilKernels,
      FuseBlocks, PipelineEntries, PipelineStages;
  for (const Candidate &C : Candidates) {
    PassId Pass = passFor(C.Kind);
    if (!Opts.Enabled.contains(Pass) || (!C.Annotation && !Opts.Auto)) {
      Context.Remark.skipped(C, Pass, reasonToSkip(C, Opts));
      continue;
    }
    if (std::string Reason = reasonToSkip(C, Opts); !Reason.empty()) {
      Context.Remark.refused(C, Pass, Reason);
      continue;
    }
    // reasonToSkip() lets through only the passes that are implemented.
    if (passFor(C.Kind) == PassId::Aggregate)
      AggregateSites.push_back(&C);
    else if (passFor(C.Kind) == PassId::Promote)
      ChainKernels.push_back(&C);
    else if (passFor(C.Kind) == PassId::Systolic)
      StencilKernels.push_back(&C);
    else if (passFor(C.Kind) == PassId::Fuse)
      FuseBlocks.push_back(&C);
    else if (C.Kind == CandidateKind::PipelineEntry)
      PipelineEntries.push_back(&C);
    else
      PipelineStages.push_back(&C);
  }
  return runAggregatePass(Context, AggregateSites, Opts.AggregateGranularity) &&
         runPromotePass(Context, ChainKernels) &&
         runSystolicPass(Context, StencilKernels, FuseBlocks) &&
         runFusePass(Context, FuseBlocks) &&
         runPipelinePass(Context, PipelineEntries, PipelineStages);
}

namespace {

/// The pass a directive asks for; none for overlap_boundary, which marks a
/// statement inside a promoted kernel.
std::optional<PassId> passForDirective(DirectiveKind Kind) {
  switch (Kind) {
  case DirectiveKind::Aggregate:
    return PassId::Aggregate;
  case DirectiveKind::Promote:
    return PassId::Promote;
  case DirectiveKind::Systolic:
    return PassId::Systolic;
  case DirectiveKind::Fuse:
    return PassId::Fuse;
  case DirectiveKind::Stage:
  case DirectiveKind::Pipeline:
    return PassId::Pipeline;
  case DirectiveKind::OverlapBoundary:
    return std::nullopt;
  }
  llvm_unreachable("all directives handled");
}

/// Why a pragma that annotates no candidate has nothing to rewrite.
std::string whyNothingToRewrite(const AttachedPragma &P) {
  std::string Target =
      P.targetFunction()
          ? "kernel '" + P.targetFunction()->getNameAsString() + "'"
          : std::string("the statement it precedes");
  switch (P.Directive->Kind) {
  case DirectiveKind::Aggregate:
    return Target + " makes no device-side kernel launch";
  case DirectiveKind::Promote:
    return Target + " does not launch itself (promotion rewrites recursive "
                    "kernels)";
  case DirectiveKind::Fuse:
    return "the block launches no chain of kernels that feed each other";
  default:
    return Target + " holds no candidate of this directive";
  }
}

/// Whether \p P's target reaches into a __CUDA_ARCH__ block: the other
/// side's parse finds its candidates there.
bool targetsArchRegion(const AttachedPragma &P, const clang::ASTContext &Ctx,
                       const CudaArchRegions &Regions) {
  if (Regions.empty())
    return false;
  const clang::SourceManager &SM = Ctx.getSourceManager();
  clang::SourceRange Range = P.TargetStmt ? P.TargetStmt->getSourceRange()
                                          : P.TargetDecl->getSourceRange();
  unsigned Begin = SM.getFileOffset(SM.getExpansionLoc(Range.getBegin()));
  unsigned End = SM.getFileOffset(SM.getExpansionLoc(Range.getEnd()));
  for (unsigned Offset = Begin; Offset <= End; ++Offset)
    if (Regions.contains(Offset))
      return true;
  return false;
}

} // namespace

void reportUnusedPragmas(PassContext &Context,
                         llvm::ArrayRef<AttachedPragma> Pragmas,
                         llvm::ArrayRef<Candidate> Candidates,
                         const PassOptions &Opts,
                         const CudaArchRegions &Regions) {
  for (const AttachedPragma &P : Pragmas) {
    std::optional<PassId> Pass = passForDirective(P.Directive->Kind);
    if (!Pass || !Opts.Enabled.contains(*Pass) ||
        llvm::any_of(
            Candidates,
            [&](const Candidate &C) { return C.Annotation == P.Directive; }) ||
        targetsArchRegion(P, Context.Ctx, Regions))
      continue;
    Context.Remark.unusedPragma(P.Directive->HashLoc, *Pass,
                                whyNothingToRewrite(P));
  }
}

bool includeRuntimeHeader(PassContext &Context, llvm::StringRef Header,
                          clang::SourceLocation Loc, llvm::StringRef Pass) {
  clang::SourceLocation Top = firstDeclarationLine(Context);
  return !Top.isValid() ||
         checkEdit(
             Context.Ctx,
             Context.Edits.addDefinition(
                 ("0/include-" + Header).str(),
                 ("#include \"cuda_rewrite/" + Header + ".cuh\"\n\n").str(),
                 Top),
             Loc, Pass);
}

} // namespace cuda_rewrite
