//===- ListPrinter.cpp - --list output ------------------------------------===//

#include "tool/ListPrinter.h"

#include "clang/AST/Decl.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <optional>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

/// The main-file offset of \p Loc (of its expansion, for macro code); 0 for
/// a location elsewhere, which the list would name wrongly.
unsigned offsetOf(const SourceManager &SM, SourceLocation Loc) {
  SourceLocation File = SM.getExpansionLoc(Loc);
  return File.isValid() && SM.isWrittenInMainFile(File) ? SM.getFileOffset(File)
                                                        : 0;
}

std::string lineColumn(const SourceManager &SM, SourceLocation Loc) {
  PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
  if (P.isInvalid())
    return "1:1";
  return std::to_string(P.getLine()) + ":" + std::to_string(P.getColumn());
}

/// One thing the rehearsed rewrite said, worded for the list.
struct Note {
  unsigned Offset;
  SourceLocation Loc;
  /// None for an error, which clang's diagnostics do not tie to a pass.
  std::optional<StringRef> Pass;
  /// The candidate a refusal or a skip names.
  std::optional<unsigned> CandidateOffset;
  /// About part of a candidate: a stage of a fused block, a cudaMalloc.
  bool Part = false;
  std::string Text;
};

/// How the list words each kind of remark: what the rewrite would do.
StringRef wording(RemarkRecord::Kind What) {
  switch (What) {
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

std::vector<Note> notesOf(const SourceManager &SM, const RewriteReport &R) {
  std::vector<Note> Notes;
  for (const RemarkRecord &Rec : R.Remarks)
    Notes.push_back({offsetOf(SM, Rec.Loc), Rec.Loc, Rec.Pass,
                     Rec.CandidateOffset,
                     Rec.What == RemarkRecord::Kind::AppliedPart ||
                         Rec.What == RemarkRecord::Kind::RefusedPart,
                     (wording(Rec.What) + Rec.Text).str()});
  for (const RewriteError &E : R.Errors)
    Notes.push_back({offsetOf(SM, E.Loc), E.Loc, std::nullopt, std::nullopt,
                     false, "would fail: " + E.Message});
  return Notes;
}

/// The main-file offsets of a candidate's code: the notes of its pass
/// inside them are about it (a fused block's stages).
std::pair<unsigned, unsigned> spanOf(const SourceManager &SM,
                                     const Candidate &C) {
  SourceRange R = C.Statement  ? C.Statement->getSourceRange()
                  : C.Function ? C.Function->getSourceRange()
                               : SourceRange(C.Loc);
  unsigned Begin = offsetOf(SM, R.getBegin());
  unsigned End = offsetOf(SM, SM.getExpansionRange(R.getEnd()).getEnd());
  return {Begin, std::max(Begin, End)};
}

/// The notes of one rehearsal, sorted by what they are about: a candidate
/// (by index), a pragma (by offset), or neither.
class Attribution {
public:
  Attribution(const SourceManager &SM, ArrayRef<Candidate> Cands,
              ArrayRef<AttachedPragma> Pragmas, const RewriteReport &Report)
      : SM(SM), Cands(Cands) {
    for (Note &N : notesOf(SM, Report)) {
      if (std::optional<size_t> I = owner(N, Pragmas))
        add(N.Part ? Parts[*I] : Verdicts[*I], N.Text);
      else if (const AttachedPragma *P = pragmaAt(Pragmas, N.Offset))
        add(PragmaNotes[P->Directive->Offset], N.Text);
      else
        Unclaimed.push_back(std::move(N));
    }
  }

  /// "would refuse: ...; would not rewrite: ..." for candidate \p I: the
  /// verdicts on it, then on its parts.
  std::string verdict(size_t I) const {
    std::vector<std::string> All = lookup(Verdicts, I);
    append_range(All, lookup(Parts, I));
    return join(All, "; ");
  }

  std::string pragmaVerdict(unsigned Offset) const {
    return join(lookup(PragmaNotes, Offset), "; ");
  }

  ArrayRef<Note> unclaimed() const { return Unclaimed; }

private:
  template <class Key>
  static std::vector<std::string>
  lookup(const std::map<Key, std::vector<std::string>> &Map, Key K) {
    auto It = Map.find(K);
    return It == Map.end() ? std::vector<std::string>() : It->second;
  }

  /// A candidate reported once per step of a pass keeps one copy.
  static void add(std::vector<std::string> &Into, const std::string &Text) {
    if (!is_contained(Into, Text))
      Into.push_back(Text);
  }

  /// The candidate \p N names, else the one of its pass at its location,
  /// else the only one annotated by the pragma it is in (a clause), else
  /// the innermost one of its pass whose code holds it.
  std::optional<size_t> owner(const Note &N,
                              ArrayRef<AttachedPragma> Pragmas) const {
    auto SamePass = [&](const Candidate &C) {
      return !N.Pass || passFor(*C.Kind).name() == *N.Pass;
    };
    unsigned Exact = N.CandidateOffset.value_or(N.Offset);
    for (size_t I = 0; I != Cands.size(); ++I)
      if (Cands[I].Offset == Exact && SamePass(Cands[I]))
        return I;
    if (N.CandidateOffset)
      return std::nullopt;
    if (const AttachedPragma *P = pragmaAt(Pragmas, N.Offset))
      return onlyAnnotatedBy(*P);
    std::optional<size_t> Best;
    unsigned BestSize = ~0u;
    for (size_t I = 0; I != Cands.size(); ++I) {
      auto [Begin, End] = spanOf(SM, Cands[I]);
      if (SamePass(Cands[I]) && Begin <= N.Offset && N.Offset <= End &&
          End - Begin < BestSize) {
        Best = I;
        BestSize = End - Begin;
      }
    }
    return Best;
  }

  /// The candidate \p P annotates, if it annotates one only; a note about
  /// a pragma of several candidates stays on the pragma's line.
  std::optional<size_t> onlyAnnotatedBy(const AttachedPragma &P) const {
    std::optional<size_t> Found;
    for (size_t I = 0; I != Cands.size(); ++I)
      if (Cands[I].Annotation == P.Directive) {
        if (Found)
          return std::nullopt;
        Found = I;
      }
    return Found;
  }

  const AttachedPragma *pragmaAt(ArrayRef<AttachedPragma> Pragmas,
                                 unsigned Offset) const {
    for (const AttachedPragma &P : Pragmas)
      if (offsetOf(SM, P.Directive->HashLoc) <= Offset &&
          Offset <= offsetOf(SM, P.Directive->EndLoc))
        return &P;
    return nullptr;
  }

  const SourceManager &SM;
  ArrayRef<Candidate> Cands;
  std::map<size_t, std::vector<std::string>> Verdicts, Parts;
  std::map<unsigned, std::vector<std::string>> PragmaNotes;
  std::vector<Note> Unclaimed;
};

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
  std::string Verdict = Rewrite.verdict(I);
  if (WithAuto && !C.Annotation &&
      Opts.Enabled.contains(passFor(*C.Kind).name())) {
    std::string Auto = WithAuto->verdict(I);
    if (!Auto.empty() && Auto != Verdict)
      Verdict += "; under --auto: " + Auto;
  }
  if (Verdict.empty())
    Verdict = "no remark from its pass";
  return Text + ": " + Verdict;
}

std::string describeTarget(const SourceManager &SM, const AttachedPragma &P) {
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
    std::string Text = lineColumn(SM, C.Loc) + ": " + C.Kind->Name.str() +
                       ": " + C.Description;
    if (!C.Flags.empty())
      Text += " [" + join(C.Flags, ", ") + "]";
    Text += " " + candidateVerdict(C, I, Rewrite,
                                   WithAuto ? &*WithAuto : nullptr, Opts);
    Entries.push_back({C.Offset, Text});
  }
  for (const AttachedPragma &P : Pragmas) {
    std::string Text = lineColumn(SM, P.Directive->HashLoc) +
                       ": pragma: " + P.Directive->spelling() + " -> " +
                       describeTarget(SM, P);
    if (std::string Verdict = Rewrite.pragmaVerdict(P.Directive->Offset);
        !Verdict.empty())
      Text += ": " + Verdict;
    Entries.push_back({P.Directive->Offset, Text, /*IsPragma=*/true});
  }
  // What no candidate or pragma holds, such as a cudaMalloc in a parent
  // kernel whose launches are aggregated: a line of its own.
  for (const Note &N : Rewrite.unclaimed())
    Entries.push_back({N.Offset, lineColumn(SM, N.Loc) + ": " +
                                     (N.Pass ? N.Pass->str() : "rewrite") +
                                     ": " + N.Text});
  llvm::stable_sort(Entries, [](const ListEntry &A, const ListEntry &B) {
    return A.Offset < B.Offset;
  });
  return Entries;
}

} // namespace cuda_rewrite
