//===- Remarks.cpp - What each pass did and why ---------------------------===//

#include "rewriters/common/Remarks.h"

using namespace clang;

namespace cuda_rewrite {

bool Remarks::seen(SourceLocation Loc, const llvm::Twine &Text) {
  return !Reported.emplace(Loc.getRawEncoding(), Text.str()).second;
}

bool Remarks::logged(RemarkRecord::Kind What, SourceLocation Loc,
                     llvm::StringRef Pass, const Candidate *C,
                     const llvm::Twine &Text) {
  if (!S.Log)
    return false;
  S.Log->push_back({What, Pass, Loc,
                    C ? std::optional<unsigned>(C->Offset) : std::nullopt,
                    C ? C->Function : nullptr, Text.str()});
  return true;
}

void Remarks::remark(SourceLocation Loc, llvm::StringRef Pass,
                     const llvm::Twine &Text) {
  if (!S.Remarks || seen(Loc, Text))
    return;
  unsigned ID = Diags.getCustomDiagID(DiagnosticsEngine::Remark, "%0 [%1]");
  Diags.Report(Loc, ID) << Text.str() << Pass;
}

void Remarks::warn(SourceLocation Loc, llvm::StringRef Pass,
                   const llvm::Twine &Text) {
  if (seen(Loc, Text))
    return;
  // Reported at its own level rather than through clang's -Werror mapping,
  // which would turn the user's own compiler warnings into errors too.
  DiagnosticsEngine::Level Level = S.WarningsAsErrors
                                       ? DiagnosticsEngine::Error
                                       : DiagnosticsEngine::Warning;
  std::string Flag =
      (S.WarningsAsErrors ? "-Werror,-W" : "-W") + RefusedWarningFlag.str();
  unsigned ID = Diags.getCustomDiagID(Level, "%0 [%1] [%2]");
  Diags.Report(Loc, ID) << Text.str() << Pass << Flag;
}

void Remarks::applied(SourceLocation Loc, llvm::StringRef Pass,
                      const llvm::Twine &Message) {
  ++Counts.Rewritten;
  if (!logged(RemarkRecord::Kind::Applied, Loc, Pass, nullptr, Message))
    remark(Loc, Pass, "rewritten: " + Message);
}

void Remarks::applied(const Candidate &C, llvm::StringRef Pass,
                      const llvm::Twine &Message) {
  ++Counts.Rewritten;
  if (!logged(RemarkRecord::Kind::Applied, C.Loc, Pass, &C, Message))
    remark(C.Loc, Pass, "rewritten: " + Message);
}

void Remarks::appliedPart(SourceLocation Loc, llvm::StringRef Pass,
                          const llvm::Twine &Message) {
  if (!logged(RemarkRecord::Kind::AppliedPart, Loc, Pass, nullptr, Message))
    remark(Loc, Pass, "rewritten: " + Message);
}

void Remarks::refused(const Candidate &C, llvm::StringRef Pass,
                      const llvm::Twine &Reason) {
  if (!C.Annotation && !S.Auto)
    return skipped(C, Pass, Reason);
  ++Counts.Refused;
  if (logged(RemarkRecord::Kind::Refused, C.Loc, Pass, &C, Reason))
    return;
  if (C.Annotation)
    warn(C.Loc, Pass, "not rewritten: " + Reason);
  else
    remark(C.Loc, Pass, "not rewritten: " + Reason);
}

void Remarks::skipped(const Candidate &C, llvm::StringRef Pass,
                      const llvm::Twine &Reason) {
  if (!logged(RemarkRecord::Kind::Skipped, C.Loc, Pass, &C, Reason))
    remark(C.Loc, Pass, "not rewritten: " + Reason);
}

void Remarks::refusedPart(SourceLocation Loc, llvm::StringRef Pass,
                          const llvm::Twine &Reason) {
  if (!logged(RemarkRecord::Kind::RefusedPart, Loc, Pass, nullptr, Reason))
    remark(Loc, Pass, "not rewritten: " + Reason);
}

void Remarks::badClause(SourceLocation ClauseLoc, llvm::StringRef Pass,
                        const llvm::Twine &Why) {
  ++Counts.Refused;
  if (logged(RemarkRecord::Kind::BadClause, ClauseLoc, Pass, nullptr, Why))
    return;
  unsigned ID = Diags.getCustomDiagID(DiagnosticsEngine::Error,
                                      "clause cannot apply here: %0 [%1]");
  Diags.Report(ClauseLoc, ID) << Why.str() << Pass;
}

void Remarks::unusedPragma(SourceLocation Loc, llvm::StringRef Pass,
                           const llvm::Twine &Reason) {
  ++Counts.Refused;
  if (!logged(RemarkRecord::Kind::UnusedPragma, Loc, Pass, nullptr, Reason))
    warn(Loc, Pass, "nothing to rewrite: " + Reason);
}

} // namespace cuda_rewrite
