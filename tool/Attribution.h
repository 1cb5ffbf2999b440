//===- Attribution.h - What a rehearsed rewrite said, per candidate -*- C++
//-*-===//
//
// --list and --coverage run the rewrite into edits nobody writes and show
// what its passes said against the candidates and pragmas it is about. This
// file sorts the remarks of one such rehearsal: by the candidate they name,
// the pragma they are in, or neither.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_ATTRIBUTION_H
#define CUDA_REWRITE_TOOL_ATTRIBUTION_H

#include "analysis/Candidates.h"
#include "analysis/Pragmas.h"
#include "rewriters/PassManager.h"
#include "rewriters/common/Remarks.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// An error a pass diagnosed (an edit it could not make).
struct RewriteError {
  clang::SourceLocation Loc;
  std::string Message;
};

/// What a rewrite's passes said about one parse, recorded, not printed.
struct RewriteReport {
  std::vector<RemarkRecord> Remarks;
  std::vector<RewriteError> Errors;
};

/// Runs the rewrite of the parse with the given options into edits that
/// are thrown away, and returns what its passes said.
using RewriteRehearsal = llvm::function_ref<RewriteReport(const PassOptions &)>;

/// The main-file offset of \p Loc (of its expansion, for macro code); 0 for
/// a location elsewhere, which a listing would name wrongly.
unsigned mainFileOffset(const clang::SourceManager &SM,
                        clang::SourceLocation Loc);

/// "12:5", the presumed line and column of \p Loc's expansion.
std::string lineColumn(const clang::SourceManager &SM,
                       clang::SourceLocation Loc);
/// lineColumn(), after the file's name where \p Loc is not in the main
/// file ("kernels.cuh:2:17").
std::string fileLineColumn(const clang::SourceManager &SM,
                           clang::SourceLocation Loc);

/// One thing the rehearsed rewrite said.
struct Note {
  unsigned Offset;
  clang::SourceLocation Loc;
  /// None for an error, which clang's diagnostics do not tie to a pass.
  std::optional<llvm::StringRef> Pass;
  /// The candidate a refusal or a skip names, and its function.
  std::optional<unsigned> CandidateOffset;
  const clang::FunctionDecl *Function = nullptr;
  /// About part of a candidate: a stage of a fused block, a cudaMalloc.
  bool Part = false;
  /// What the remark was; none for an error.
  std::optional<RemarkRecord::Kind> What;
  /// The remark's text, or the error's message.
  std::string Text;
};

/// The notes of one rehearsal, sorted by what they are about: a candidate
/// (by index), a pragma (by offset), or neither.
class Attribution {
public:
  Attribution(const clang::SourceManager &SM, llvm::ArrayRef<Candidate> Cands,
              llvm::ArrayRef<AttachedPragma> Pragmas,
              const RewriteReport &Report);

  /// The notes on candidate \p I, then those on its parts, each once.
  std::vector<const Note *> notesOn(size_t I) const;
  /// The notes on the pragma at \p Offset.
  std::vector<const Note *> notesOnPragma(unsigned Offset) const;
  /// What no candidate or pragma holds.
  llvm::ArrayRef<Note> unclaimed() const { return Unclaimed; }

private:
  std::optional<size_t> owner(const Note &N,
                              llvm::ArrayRef<AttachedPragma> Pragmas) const;
  std::optional<size_t> onlyAnnotatedBy(const AttachedPragma &P) const;
  const AttachedPragma *pragmaAt(llvm::ArrayRef<AttachedPragma> Pragmas,
                                 unsigned Offset) const;

  const clang::SourceManager &SM;
  llvm::ArrayRef<Candidate> Cands;
  std::vector<Note> Notes;
  std::map<size_t, std::vector<size_t>> Verdicts, Parts;
  std::map<unsigned, std::vector<size_t>> PragmaNotes;
  std::vector<Note> Unclaimed;
};

} // namespace cuda_rewrite

#endif
