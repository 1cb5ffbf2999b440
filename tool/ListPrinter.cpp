//===- ListPrinter.cpp - --list output ------------------------------------===//

#include "tool/ListPrinter.h"
#include "analysis/MainFile.h"
#include "tool/Attribution.h"

#include "clang/AST/Decl.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <optional>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

/// How the list words each kind of remark: what the rewrite would do.
StringRef wording(std::optional<RemarkRecord::Kind> What) {
  if (!What)
    return "would fail: ";
  switch (*What) {
  case RemarkRecord::Kind::Applied:
  case RemarkRecord::Kind::AppliedPart:
    return "would rewrite: ";
  case RemarkRecord::Kind::Refused:
    return "would refuse: ";
  case RemarkRecord::Kind::Skipped:
    return "not rewritten: ";
  case RemarkRecord::Kind::RefusedPart:
    return "would not rewrite: ";
  case RemarkRecord::Kind::BadClause:
    return "would fail: clause cannot apply here: ";
  case RemarkRecord::Kind::UnusedPragma:
    return "would warn: nothing to rewrite: ";
  }
  llvm_unreachable("all kinds handled");
}

/// "would refuse: ...; would not rewrite: ...": \p Notes as the list
/// words them.
std::string worded(ArrayRef<const Note *> Notes) {
  std::vector<std::string> Texts;
  for (const Note *N : Notes)
    Texts.push_back((wording(N->What) + N->Text).str());
  return join(Texts, "; ");
}

/// Whether some candidate is left alone only for want of a pragma: then
/// the list also shows what --auto would do with it.
bool anyWaitsForAuto(ArrayRef<Candidate> Cands, const PassOptions &Opts) {
  return !Opts.Auto && any_of(Cands, [&](const Candidate &C) {
    return !C.Annotation && Opts.Enabled.contains(passFor(*C.Kind).name());
  });
}

/// "-> aggregate [#pragma cuda_rewrite aggregate]: would rewrite: ...".
std::string candidateVerdict(const Candidate &C, size_t I,
                             const Attribution &Rewrite,
                             const Attribution *WithAuto,
                             const PassOptions &Opts) {
  std::string Text = "-> " + passFor(*C.Kind).name().str();
  if (C.Annotation)
    Text += " [#pragma cuda_rewrite " + C.Annotation->spelling() + "]";
  std::string Verdict = worded(Rewrite.notesOn(I));
  if (WithAuto && !C.Annotation &&
      Opts.Enabled.contains(passFor(*C.Kind).name())) {
    std::string Auto = worded(WithAuto->notesOn(I));
    if (!Auto.empty() && Auto != Verdict)
      Verdict += "; under --auto: " + Auto;
  }
  if (Verdict.empty())
    Verdict = "no remark from its pass";
  return Text + ": " + Verdict;
}

std::string describeTarget(const SourceManager &SM, const AttachedPragma &P) {
  std::string Where = fileLineColumn(SM, P.targetLoc());
  if (const FunctionDecl *F = P.targetFunction())
    return "function '" + F->getNameAsString() + "' at " + Where;
  if (P.TargetDecl)
    return std::string(P.TargetDecl->getDeclKindName()) + " at " + Where;
  std::string Text = "statement at " + Where;
  if (P.EnclosingFunction)
    Text += " in '" + P.EnclosingFunction->getNameAsString() + "'";
  return Text;
}

} // namespace

std::vector<ListEntry> listEntries(ASTContext &Ctx, ArrayRef<Candidate> Cands,
                                   ArrayRef<AttachedPragma> Pragmas,
                                   const PassOptions &Opts,
                                   RewriteRehearsal Rehearse) {
  const SourceManager &SM = Ctx.getSourceManager();
  Attribution Rewrite(SM, Cands, Pragmas, Rehearse(Opts));
  std::optional<Attribution> WithAuto;
  if (anyWaitsForAuto(Cands, Opts)) {
    PassOptions AutoOpts = Opts;
    AutoOpts.Auto = true;
    WithAuto.emplace(SM, Cands, Pragmas, Rehearse(AutoOpts));
  }

  std::vector<ListEntry> Entries;
  for (size_t I = 0; I != Cands.size(); ++I) {
    const Candidate &C = Cands[I];
    std::string Text = fileLineColumn(SM, C.Loc) + ": " + C.Kind->Name.str() +
                       ": " + C.Description;
    if (!C.Flags.empty())
      Text += " [" + join(C.Flags, ", ") + "]";
    Text += " " + candidateVerdict(C, I, Rewrite,
                                   WithAuto ? &*WithAuto : nullptr, Opts);
    Entries.push_back({C.Offset, Text});
  }
  for (const AttachedPragma &P : Pragmas) {
    std::string Text = fileLineColumn(SM, P.Directive->HashLoc) +
                       ": pragma: " + P.Directive->spelling() + " -> " +
                       describeTarget(SM, P);
    // Notes sit on a main-file pragma's offsets; an included file's pragma
    // lists at its #include.
    bool InMain = P.Directive->inMainFile(SM);
    if (std::string Verdict =
            InMain ? worded(Rewrite.notesOnPragma(P.Directive->Offset)) : "";
        !Verdict.empty())
      Text += ": " + Verdict;
    Entries.push_back(
        {InMain
             ? P.Directive->Offset
             : mainFileOffset(SM, mainFileLocation(SM, P.Directive->HashLoc)),
         Text, /*IsPragma=*/true});
  }
  // What no candidate or pragma holds, such as a cudaMalloc in a parent
  // kernel whose launches are aggregated: a line of its own.
  for (const Note &N : Rewrite.unclaimed())
    Entries.push_back({N.Offset, lineColumn(SM, N.Loc) + ": " +
                                     (N.Pass ? N.Pass->str() : "rewrite") +
                                     ": " + worded({&N})});
  llvm::stable_sort(Entries, [](const ListEntry &A, const ListEntry &B) {
    return A.Offset < B.Offset;
  });
  return Entries;
}

} // namespace cuda_rewrite
