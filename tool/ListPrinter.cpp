//===- ListPrinter.cpp - --list output ------------------------------------===//

#include "tool/ListPrinter.h"
#include "analysis/StageGraph.h"
#include "rewriters/fuse/FuseClauses.h"
#include "rewriters/fuse/FusePlan.h"

#include "clang/AST/Decl.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

static std::string lineColumn(const SourceManager &SM, SourceLocation Loc) {
  PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
  return std::to_string(P.getLine()) + ":" + std::to_string(P.getColumn());
}

/// "-> aggregate (granularity(block))" or "-> aggregate: <why not>"; for a
/// fuse block the pass would take, which stages it fuses and which not.
static std::string plannedRewrite(ASTContext &Ctx, const Candidate &C,
                                  const PassOptions &Opts, const GpuSpec &Gpu) {
  std::string Text = "-> " + passInfo(passFor(C.Kind)).Name.str();
  if (C.Annotation)
    Text += " [#pragma cuda_rewrite " + C.Annotation->spelling() + "]";
  std::string Skip = reasonToSkip(C, Opts);
  if (!Skip.empty())
    return Text + ": " + Skip;
  const auto *Block = dyn_cast_or_null<CompoundStmt>(C.Statement);
  if (passFor(C.Kind) == PassId::Fuse && Block && C.Function) {
    FuseClauses Clauses = parseFuseClauses(C);
    StageGraph Graph = buildStageGraph(*Block, *C.Function, Ctx);
    std::string Why;
    FusePlan Plan = planFusion(
        Graph, Ctx, Why, fuseGroupCost(Ctx, Gpu, fuseCandidates(Clauses)));
    Text += ": " + (Why.empty() ? describeFusePlan(Graph, Plan) : Why);
  }
  return Text;
}

static std::string describeTarget(const SourceManager &SM,
                                  const AttachedPragma &P) {
  std::string Where = lineColumn(SM, P.targetLoc());
  if (const FunctionDecl *F = P.targetFunction())
    return "function '" + F->getNameAsString() + "' at " + Where;
  if (P.TargetDecl)
    return std::string(P.TargetDecl->getDeclKindName()) + " at " + Where;
  std::string Text = "statement at " + Where;
  if (P.EnclosingFunction)
    Text += " in '" + P.EnclosingFunction->getNameAsString() + "'";
  return Text;
}

std::vector<ListEntry> listEntries(ASTContext &Ctx, ArrayRef<Candidate> Cands,
                                   ArrayRef<AttachedPragma> Pragmas,
                                   const PassOptions &Opts,
                                   const GpuSpec &Gpu) {
  const SourceManager &SM = Ctx.getSourceManager();
  std::vector<ListEntry> Entries;
  for (const Candidate &C : Cands) {
    std::string Text = lineColumn(SM, C.Loc) + ": " +
                       candidateKindName(C.Kind).str() + ": " + C.Description;
    if (!C.Flags.empty())
      Text += " [" + join(C.Flags, ", ") + "]";
    Entries.push_back(
        {C.Offset, Text + " " + plannedRewrite(Ctx, C, Opts, Gpu)});
  }
  for (const AttachedPragma &P : Pragmas)
    Entries.push_back(
        {P.Directive->Offset, lineColumn(SM, P.Directive->HashLoc) +
                                  ": pragma: " + P.Directive->spelling() +
                                  " -> " + describeTarget(SM, P)});
  llvm::stable_sort(Entries, [](const ListEntry &A, const ListEntry &B) {
    return A.Offset < B.Offset;
  });
  return Entries;
}

} // namespace cuda_rewrite
