//===- Pass.h - What a rewriting pass is ------------------------*- C++ -*-===//
//
// A pass is one class in its own folder: its name, the candidates and
// pragma directives it owns, `findCandidates`, which lists the file's
// candidates of its kinds, and `rewrite`, which edits the file through a
// PassContext and says what it did in remarks. rewriters/Passes.cpp lists
// the passes (one line each) and states how they share candidates;
// rewriters/PassManager hands each pass its own.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_PASS_H
#define CUDA_REWRITE_REWRITERS_COMMON_PASS_H

#include "analysis/Candidates.h"
#include "analysis/Pragmas.h"
#include "rewriters/common/EditSet.h"
#include "rewriters/common/Remarks.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

struct GpuSpec;

/// What every pass works with: the parsed file, the target GPU, the edits
/// it adds to and the remarks it reports.
struct PassContext {
  clang::ASTContext &Ctx;
  const GpuSpec &Gpu;
  EditSet &Edits;
  Remarks &Remark;
};

/// The candidates a pass is handed in one run.
struct PassWork {
  /// Its own, in file order: enabled, annotated (or --auto) and of a kind
  /// it can take.
  std::vector<const Candidate *> Candidates;
  /// Candidates of the passes it leaves shared code to (Passes.cpp):
  /// systolic leaves the kernels launched inside a fuse block to fuse.
  std::vector<const Candidate *> LeftToOthers;
};

class Pass {
public:
  /// \p Kinds and \p Directives (and \p Markers) are the pass's own
  /// objects, usually static members of its class, defined in its folder.
  Pass(llvm::StringLiteral Name, llvm::StringLiteral Summary,
       std::vector<const CandidateKind *> Kinds,
       std::vector<const DirectiveSpec *> Directives,
       std::vector<const DirectiveSpec *> Markers = {})
      : Name(Name), Summary(Summary), Kinds(std::move(Kinds)),
        Directives(std::move(Directives)), Markers(std::move(Markers)) {}
  virtual ~Pass() = default;

  /// The name of --only, --disable and remarks ("aggregate").
  llvm::StringRef name() const { return Name; }
  /// One line for --help and the README.
  llvm::StringRef summary() const { return Summary; }
  /// The kinds of candidate it rewrites: each kind has exactly one pass.
  llvm::ArrayRef<const CandidateKind *> candidateKinds() const { return Kinds; }
  /// The directives that annotate its candidates (`#pragma cuda_rewrite
  /// <directive>`), with their clause grammar.
  llvm::ArrayRef<const DirectiveSpec *> directives() const {
    return Directives;
  }
  /// Directives that mark a place inside a candidate rather than annotate
  /// one (promote's overlap_boundary): parsed and checked like the others,
  /// never reported as unused.
  llvm::ArrayRef<const DirectiveSpec *> markers() const { return Markers; }
  bool takes(const CandidateKind &Kind) const;
  bool answers(const DirectiveSpec &Directive) const;

  /// Adds the file's candidates of this pass to \p Find (the kinds
  /// candidateKinds() names), each with the pragma that annotates it.
  virtual void findCandidates(CandidateFinder &Find) const = 0;

  /// Why pragma \p P, which annotates no candidate of this pass, has
  /// nothing to rewrite (the unused-pragma warning's text).
  virtual std::string whyNothingToRewrite(const AttachedPragma &P) const;

  /// Why \p Kernel, which holds no candidate of this pass, is none, as this
  /// pass's analysis says (--coverage shows it for kernels no pass took);
  /// empty where the pass has nothing to say (the default).
  virtual std::string whyNotACandidate(const clang::FunctionDecl &Kernel) const;

  /// Rewrites what it can of \p Work and reports every candidate as
  /// rewritten or refused (with the reason). False only when an edit could
  /// not be made (an error was diagnosed); a refusal is not a failure.
  virtual bool rewrite(PassContext &Context, const PassWork &Work) const = 0;

protected:
  /// "kernel 'name'" or "the statement it precedes", for the texts above.
  static std::string pragmaTarget(const AttachedPragma &P);

private:
  llvm::StringLiteral Name;
  llvm::StringLiteral Summary;
  std::vector<const CandidateKind *> Kinds;
  std::vector<const DirectiveSpec *> Directives, Markers;
};

/// Runs `Rewriter(Context).rewrite(candidate)` over \p Candidates (the
/// rewriter is built once); false as soon as one fails (an edit that could
/// not be made), true otherwise, refusals included.
template <class Rewriter>
bool rewriteEach(PassContext &Context,
                 llvm::ArrayRef<const Candidate *> Candidates) {
  Rewriter R(Context);
  for (const Candidate *C : Candidates)
    if (!R.rewrite(*C))
      return false;
  return true;
}

/// Adds `#include "cuda_rewrite/<Header>.cuh"` on the line of the main
/// file's first declaration (once, whichever passes ask: the edit's key is
/// the header's). Returns false, having diagnosed it at \p Loc for \p Pass,
/// if the edit failed.
bool includeRuntimeHeader(PassContext &Context, llvm::StringRef Header,
                          clang::SourceLocation Loc, llvm::StringRef Pass);

/// The line of the main file's first declaration, where the rewritten-file
/// marker and the runtime includes go; where that declaration lies inside
/// conditional blocks (`#ifdef LARGE ... #else`), the line of the outermost
/// one's `#if`, so that every configuration includes them. Invalid when the
/// file declares nothing.
clang::SourceLocation firstDeclarationLine(const clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
