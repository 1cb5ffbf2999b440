//===- PassManager.cpp - Hands candidates to the passes -------------------===//

#include "rewriters/PassManager.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>

using namespace llvm;

namespace cuda_rewrite {

ArrayRef<std::unique_ptr<Pass>> registeredPasses() {
  // Every member spelled: PassOptions' default set is PassSet::all(),
  // which asks this function for the passes.
  static const std::vector<std::unique_ptr<Pass>> Passes =
      createPasses(PassOptions{PassSet::none(), false, std::nullopt});
  return Passes;
}

PassSet PassSet::all() {
  PassSet All;
  for (const std::unique_ptr<Pass> &P : registeredPasses())
    All.insert(P->name());
  return All;
}

bool PassSet::operator==(const PassSet &O) const {
  return Names.size() == O.Names.size() &&
         all_of(Names, [&](const auto &N) { return O.contains(N.getKey()); });
}

static std::string validPassNames() {
  return join(
      map_range(registeredPasses(),
                [](const std::unique_ptr<Pass> &P) { return P->name(); }),
      ", ");
}

Expected<PassSet> parsePassList(StringRef List) {
  PassSet Result = PassSet::none();
  SmallVector<StringRef, 8> Names;
  List.split(Names, ',');
  for (StringRef Name : Names) {
    Name = Name.trim();
    if (!PassSet::all().contains(Name))
      return createStringError(inconvertibleErrorCode(),
                               "unknown pass '%s'; valid passes: %s",
                               Name.str().c_str(), validPassNames().c_str());
    Result.insert(Name);
  }
  return Result;
}

Expected<PassSet> enabledPasses(StringRef Only, StringRef Disable) {
  PassSet Enabled = PassSet::all();
  if (!Only.empty()) {
    Expected<PassSet> OnlySet = parsePassList(Only);
    if (!OnlySet)
      return OnlySet.takeError();
    Enabled = *OnlySet;
  }
  if (!Disable.empty()) {
    Expected<PassSet> Disabled = parsePassList(Disable);
    if (!Disabled)
      return Disabled.takeError();
    for (const std::unique_ptr<Pass> &P : registeredPasses())
      if (Disabled->contains(P->name()))
        Enabled.erase(P->name());
  }
  return Enabled;
}

ArrayRef<const DirectiveSpec *> registeredDirectives() {
  static const std::vector<const DirectiveSpec *> Directives = [] {
    std::vector<const DirectiveSpec *> All;
    for (const std::unique_ptr<Pass> &P : registeredPasses()) {
      append_range(All, P->directives());
      append_range(All, P->markers());
    }
    return All;
  }();
  return Directives;
}

const Pass &passFor(const CandidateKind &Kind) {
  for (const std::unique_ptr<Pass> &P : registeredPasses())
    if (P->takes(Kind))
      return *P;
  llvm_unreachable("every candidate kind has a pass");
}

const Pass *passForDirective(const DirectiveSpec &Directive) {
  for (const std::unique_ptr<Pass> &P : registeredPasses())
    if (P->answers(Directive))
      return P.get();
  return nullptr;
}

std::vector<Candidate> collectCandidates(clang::ASTContext &Ctx,
                                         ArrayRef<AttachedPragma> Pragmas,
                                         const CudaArchRegions &ArchRegions) {
  CandidateFinder Find(Ctx, Pragmas, ArchRegions);
  for (const std::unique_ptr<Pass> &P : registeredPasses())
    P->findCandidates(Find);
  return Find.take();
}

std::string reasonToSkip(const Candidate &C, const PassOptions &Opts) {
  std::string Name = passFor(*C.Kind).name().str();
  if (!Opts.Enabled.contains(Name))
    return "the '" + Name + "' pass is disabled (--only/--disable)";
  if (!C.Annotation && !Opts.Auto)
    return "not annotated; add '#pragma cuda_rewrite " + Name +
           "' or pass --auto";
  // No pass rewrites these yet: the rewrite would have to hold for every
  // expansion, instantiation or compilation side.
  if (C.InMacro)
    return "written inside a macro expansion; rewriting it would change the "
           "macro for every use (expand the macro here to rewrite it)";
  if (C.InTemplate)
    return "inside a template; the '" + Name +
           "' pass does not rewrite templates yet";
  if (C.UnderCudaArch)
    return "under a __CUDA_ARCH__ conditional, where host and device "
           "compilations see different code";
  return "";
}

bool runPasses(PassContext &Context, ArrayRef<Candidate> Candidates,
               const PassOptions &Opts) {
  // The tool's own output: its generated code would be generated again
  // (twice-defined kernels), so a second run changes nothing.
  const clang::SourceManager &SM = Context.Ctx.getSourceManager();
  if (std::optional<unsigned> Line =
          findRewrittenFileMarker(SM.getBufferData(SM.getMainFileID()))) {
    for (const Candidate &C : Candidates)
      Context.Remark.skipped(C, passFor(*C.Kind).name(),
                             "this file is cuda-rewrite's output (line " +
                                 std::to_string(*Line) +
                                 "); rewrite the original instead");
    return true;
  }
  if (!runEachPass(Context, Candidates, Opts))
    return false;
  if (Context.Remark.counts().Rewritten == 0)
    return true;
  clang::SourceLocation Top = firstDeclarationLine(Context.Ctx);
  return !Top.isValid() ||
         checkEdit(Context.Ctx,
                   Context.Edits.addDefinition(
                       "0/0-marker", rewrittenFileMarker().str() + "\n", Top),
                   Top, "cuda-rewrite");
}

bool runEachPass(PassContext &Context, ArrayRef<Candidate> Candidates,
                 const PassOptions &Opts) {
  // Each pass's candidates, skipped ones reported (and not handed on).
  std::map<StringRef, std::vector<const Candidate *>> Accepted;
  for (const Candidate &C : Candidates) {
    StringRef Pass = passFor(*C.Kind).name();
    if (!Opts.Enabled.contains(Pass) || (!C.Annotation && !Opts.Auto)) {
      Context.Remark.skipped(C, Pass, reasonToSkip(C, Opts));
      continue;
    }
    if (std::string Reason = reasonToSkip(C, Opts); !Reason.empty()) {
      Context.Remark.refused(C, Pass, Reason);
      continue;
    }
    Accepted[Pass].push_back(&C);
  }
  for (const std::unique_ptr<Pass> &P : createPasses(Opts)) {
    PassWork Work;
    Work.Candidates = Accepted[P->name()];
    if (Work.Candidates.empty())
      continue;
    for (const PassSharing &Share : passSharing())
      if (Share.Leaves == P->name())
        append_range(Work.LeftToOthers, Accepted[Share.To]);
    if (!P->rewrite(Context, Work))
      return false;
  }
  return true;
}

namespace {

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

void reportUnusedPragmas(PassContext &Context, ArrayRef<AttachedPragma> Pragmas,
                         ArrayRef<Candidate> Candidates,
                         const PassOptions &Opts,
                         const CudaArchRegions &Regions) {
  for (const AttachedPragma &P : Pragmas) {
    const Pass *Pass = passForDirective(*P.Directive->Spec);
    if (!Pass || !Opts.Enabled.contains(Pass->name()) ||
        any_of(
            Candidates,
            [&](const Candidate &C) { return C.Annotation == P.Directive; }) ||
        targetsArchRegion(P, Context.Ctx, Regions))
      continue;
    Context.Remark.unusedPragma(P.Directive->HashLoc, Pass->name(),
                                Pass->whyNothingToRewrite(P));
  }
}

} // namespace cuda_rewrite
