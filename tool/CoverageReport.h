//===- CoverageReport.h - --coverage: how much of the code is rewritten -*- C++
//-*-===//
//
// A user's first question, "how much of my code can this rewrite?", answered
// for any set of files or compilation database: per kernel and candidate,
// the kind a pass found (or none), what --auto would do with it and why; then
// totals per kind and the refusals grouped by cause. Like --list, the
// verdicts come from the passes themselves, run into edits nobody writes.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_COVERAGEREPORT_H
#define CUDA_REWRITE_TOOL_COVERAGEREPORT_H

#include "analysis/Candidates.h"
#include "analysis/Pragmas.h"
#include "rewriters/PassManager.h"
#include "tool/Attribution.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One row of the report: a candidate, or a kernel no pass found a
/// candidate in (Kind "kernel", Verdict NoCandidate, Reason what the
/// passes' analyses say of it: Pass::whyNotACandidate).
struct CoverageEntry {
  enum class Verdict { Rewritten, Refused, NotRewritten, Failed, NoCandidate };
  unsigned Offset = 0;  ///< In the main file, for merging the two parses.
  std::string Where;    ///< "12:5"
  std::string Function; ///< The kernel, or the host function of a chain.
  std::string Kind;     ///< The candidate kind's name, or "kernel".
  std::string Pass;     ///< Empty for NoCandidate.
  Verdict What = Verdict::NoCandidate;
  std::string Reason; ///< The pass's remark (how, or why not).
  /// For a kernel defined in a project file the main file includes: that
  /// file (Where then names it too).
  std::string IncludedFrom;
};

/// The rows of one parse: every candidate, with what a rewrite under --auto
/// would do, and every kernel defined in the main file, or in a project
/// file it includes (not a system header), that no candidate starts from or
/// launches.
std::vector<CoverageEntry>
coverageEntries(clang::ASTContext &Ctx, llvm::ArrayRef<Candidate> Cands,
                llvm::ArrayRef<AttachedPragma> Pragmas, const PassOptions &Opts,
                RewriteRehearsal Rehearse);

/// \p Into with the rows of the other parse of the same file added: a row
/// both have once, and a kernel's no-candidate row only where neither has a
/// candidate in it.
void mergeCoverage(std::vector<CoverageEntry> &Into,
                   std::vector<CoverageEntry> Other);

/// A refusal's reason with the user's names and numbers taken out, so that
/// refusals for the same cause group together: "a read of 'a' at x + 3"
/// becomes "a read of '_' at x + N".
std::string refusalCause(llvm::StringRef Reason);

/// The files of a run, each with its rows (or, for a file that did not
/// parse, its first error).
struct CoverageFile {
  std::string Path;
  bool Parsed = true;
  std::string FirstError;
  std::vector<CoverageEntry> Entries;
};

/// Prints the report in Markdown: the rows, the totals per kind, the
/// refusals by cause, the kernels with no candidate by what the analyses
/// say of them, and the files that did not parse.
void printCoverageReport(llvm::raw_ostream &OS,
                         llvm::ArrayRef<CoverageFile> Files);

} // namespace cuda_rewrite

#endif
