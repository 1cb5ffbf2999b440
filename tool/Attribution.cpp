//===- Attribution.cpp - What a rehearsed rewrite said, per candidate -----===//

#include "tool/Attribution.h"
#include "rewriters/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

unsigned mainFileOffset(const SourceManager &SM, SourceLocation Loc) {
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

std::string fileLineColumn(const SourceManager &SM, SourceLocation Loc) {
  SourceLocation File = SM.getExpansionLoc(Loc);
  if (File.isInvalid() || SM.isWrittenInMainFile(File))
    return lineColumn(SM, Loc);
  return sys::path::filename(SM.getFilename(File)).str() + ":" +
         lineColumn(SM, Loc);
}

namespace {

std::vector<Note> notesOf(const SourceManager &SM, const RewriteReport &R) {
  std::vector<Note> Notes;
  for (const RemarkRecord &Rec : R.Remarks)
    Notes.push_back({mainFileOffset(SM, Rec.Loc), Rec.Loc, Rec.Pass,
                     Rec.CandidateOffset, Rec.Function,
                     Rec.What == RemarkRecord::Kind::AppliedPart ||
                         Rec.What == RemarkRecord::Kind::RefusedPart,
                     Rec.What, Rec.Text});
  for (const RewriteError &E : R.Errors)
    Notes.push_back({mainFileOffset(SM, E.Loc), E.Loc, std::nullopt,
                     std::nullopt, nullptr, false, std::nullopt, E.Message});
  return Notes;
}

/// The main-file offsets of a candidate's code: the notes of its pass
/// inside them are about it (a fused block's stages).
std::pair<unsigned, unsigned> spanOf(const SourceManager &SM,
                                     const Candidate &C) {
  SourceRange R = C.Statement  ? C.Statement->getSourceRange()
                  : C.Function ? C.Function->getSourceRange()
                               : SourceRange(C.Loc);
  unsigned Begin = mainFileOffset(SM, R.getBegin());
  unsigned End = mainFileOffset(SM, SM.getExpansionRange(R.getEnd()).getEnd());
  return {Begin, std::max(Begin, End)};
}

bool sameNote(const Note &A, const Note &B) {
  return A.What == B.What && A.Text == B.Text;
}

} // namespace

Attribution::Attribution(const SourceManager &SM, ArrayRef<Candidate> Cands,
                         ArrayRef<AttachedPragma> Pragmas,
                         const RewriteReport &Report)
    : SM(SM), Cands(Cands), Notes(notesOf(SM, Report)) {
  // A candidate reported once per step of a pass keeps one copy.
  auto Add = [&](std::vector<size_t> &Into, size_t N) {
    if (none_of(Into, [&](size_t K) { return sameNote(Notes[K], Notes[N]); }))
      Into.push_back(N);
  };
  for (size_t N = 0; N != Notes.size(); ++N) {
    if (std::optional<size_t> I = owner(Notes[N], Pragmas))
      Add(Notes[N].Part ? Parts[*I] : Verdicts[*I], N);
    else if (const AttachedPragma *P = pragmaAt(Pragmas, Notes[N].Offset))
      Add(PragmaNotes[P->Directive->Offset], N);
    else
      Unclaimed.push_back(Notes[N]);
  }
}

std::vector<const Note *> Attribution::notesOn(size_t I) const {
  std::vector<const Note *> On;
  for (const auto *Map : {&Verdicts, &Parts})
    if (auto It = Map->find(I); It != Map->end())
      for (size_t N : It->second)
        On.push_back(&Notes[N]);
  return On;
}

std::vector<const Note *> Attribution::notesOnPragma(unsigned Offset) const {
  std::vector<const Note *> On;
  if (auto It = PragmaNotes.find(Offset); It != PragmaNotes.end())
    for (size_t N : It->second)
      On.push_back(&Notes[N]);
  return On;
}

/// The candidate \p N names, else the one of its pass at its location,
/// else the only one annotated by the pragma it is in (a clause), else the
/// innermost one of its pass whose code holds it.
std::optional<size_t>
Attribution::owner(const Note &N, ArrayRef<AttachedPragma> Pragmas) const {
  auto SamePass = [&](const Candidate &C) {
    return !N.Pass || passFor(*C.Kind).name() == *N.Pass;
  };
  unsigned Exact = N.CandidateOffset.value_or(N.Offset);
  for (size_t I = 0; I != Cands.size(); ++I)
    if (Cands[I].Offset == Exact && SamePass(Cands[I]) &&
        (!N.Function || Cands[I].Function == N.Function))
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

/// The candidate \p P annotates, if it annotates one only; a note about a
/// pragma of several candidates stays on the pragma's line.
std::optional<size_t>
Attribution::onlyAnnotatedBy(const AttachedPragma &P) const {
  std::optional<size_t> Found;
  for (size_t I = 0; I != Cands.size(); ++I)
    if (Cands[I].Annotation == P.Directive) {
      if (Found)
        return std::nullopt;
      Found = I;
    }
  return Found;
}

const AttachedPragma *Attribution::pragmaAt(ArrayRef<AttachedPragma> Pragmas,
                                            unsigned Offset) const {
  for (const AttachedPragma &P : Pragmas)
    if (P.Directive->inMainFile(SM) &&
        mainFileOffset(SM, P.Directive->HashLoc) <= Offset &&
        Offset <= mainFileOffset(SM, P.Directive->EndLoc))
      return &P;
  return nullptr;
}

} // namespace cuda_rewrite
