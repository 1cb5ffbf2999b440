//===- Remarks.h - What each pass did and why -------------------*- C++ -*-===//
//
// Remarks use clang's diagnostic format, `file:line:col: remark: ...
// [pass]`, so that editors and CI logs pick them up like any diagnostic.
// They are printed with --remarks. A candidate the user annotated and a
// pass refused is a warning whatever --remarks says, `warning: ...
// [-Wcuda-rewrite-refused]` (an error with --warnings-as-errors), so that a
// build does not ship the code unrewritten without a word.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_REMARKS_H
#define CUDA_REWRITE_REWRITERS_COMMON_REMARKS_H

#include "analysis/Candidates.h"
#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/Twine.h"
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The flag of the refused-annotation warning, as clang names its own.
inline constexpr llvm::StringLiteral RefusedWarningFlag =
    "cuda-rewrite-refused";

/// How many candidates a file's passes rewrote and refused.
struct RewriteCounts {
  unsigned Rewritten = 0;
  /// Candidates the passes were asked to rewrite (annotated, or any under
  /// --auto) and left unchanged.
  unsigned Refused = 0;
};

/// One remark as data rather than as a diagnostic: --list shows, per
/// candidate, what a rewrite's passes say about it.
struct RemarkRecord {
  /// The Remarks member that made it.
  enum class Kind {
    Applied,
    AppliedPart,
    Refused,
    Skipped,
    RefusedPart,
    BadClause,
    UnusedPragma
  };
  Kind What;
  /// The pass's name (Pass::name(), a literal that outlives the record).
  llvm::StringRef Pass;
  clang::SourceLocation Loc;
  /// The candidate's offset, for the kinds given one (refused, skipped,
  /// and applied where the pass names its candidate).
  std::optional<unsigned> CandidateOffset;
  /// The candidate's function: it tells candidates at one offset apart (the
  /// instantiations of a template kernel, the kernels of one header).
  const clang::FunctionDecl *Function = nullptr;
  /// The message or reason, without the "rewritten: " that remarks add.
  std::string Text;
};

class Remarks {
public:
  struct Settings {
    bool Remarks = false;          ///< --remarks
    bool Auto = false;             ///< --auto: unannotated candidates count
    bool WarningsAsErrors = false; ///< --warnings-as-errors
    /// Where set, every remark, warning and clause error goes here and
    /// nothing is printed (--list).
    std::vector<RemarkRecord> *Log = nullptr;
  };

  Remarks(clang::DiagnosticsEngine &Diags, Settings S) : Diags(Diags), S(S) {}

  /// A candidate that was rewritten: what, with which parameters and why.
  void applied(clang::SourceLocation Loc, llvm::StringRef Pass,
               const llvm::Twine &Message);
  /// The same, naming the candidate (one of several at its location).
  void applied(const Candidate &C, llvm::StringRef Pass,
               const llvm::Twine &Message);
  /// Part of a rewritten candidate rewritten too (a cudaMalloc inside an
  /// aggregated parent): a remark, not counted as a candidate.
  void appliedPart(clang::SourceLocation Loc, llvm::StringRef Pass,
                   const llvm::Twine &Message);
  /// Candidate \p C left unchanged by \p Pass, and the reason: a warning
  /// where the user annotated it, else a remark.
  void refused(const Candidate &C, llvm::StringRef Pass,
               const llvm::Twine &Reason);
  /// Like refused(), for a candidate its pass never saw (disabled by
  /// --only/--disable, or not annotated without --auto): a remark only.
  void skipped(const Candidate &C, llvm::StringRef Pass,
               const llvm::Twine &Reason);
  /// Part of a candidate left unchanged (a stage of a fused block, a
  /// cudaMalloc): a remark.
  void refusedPart(clang::SourceLocation Loc, llvm::StringRef Pass,
                   const llvm::Twine &Reason);
  /// A clause its candidate cannot take (`z(shared)` on a 2D stencil): an
  /// error at the clause, since the annotation asks for the impossible.
  void badClause(clang::SourceLocation ClauseLoc, llvm::StringRef Pass,
                 const llvm::Twine &Why);
  /// A pragma whose target holds nothing its pass rewrites: a warning.
  void unusedPragma(clang::SourceLocation Loc, llvm::StringRef Pass,
                    const llvm::Twine &Reason);

  const RewriteCounts &counts() const { return Counts; }

private:
  void remark(clang::SourceLocation Loc, llvm::StringRef Pass,
              const llvm::Twine &Text);
  void warn(clang::SourceLocation Loc, llvm::StringRef Pass,
            const llvm::Twine &Text);
  /// Records the call in the settings' log, if any; true if it did, and
  /// then nothing is printed.
  bool logged(RemarkRecord::Kind What, clang::SourceLocation Loc,
              llvm::StringRef Pass, const Candidate *C,
              const llvm::Twine &Text);

  /// Whether \p Text at \p Loc was reported already (a candidate several
  /// steps of a pass refuse is reported once).
  bool seen(clang::SourceLocation Loc, const llvm::Twine &Text);

  clang::DiagnosticsEngine &Diags;
  Settings S;
  RewriteCounts Counts;
  std::set<std::pair<unsigned, std::string>> Reported;
};

} // namespace cuda_rewrite

#endif
