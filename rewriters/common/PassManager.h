//===- PassManager.h - Hands candidates to the passes -----------*- C++ -*-===//
//
// Decides, per candidate, whether its pass runs (enabled by --only/
// --disable, annotated or --auto) and records why not in a remark.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_PASSMANAGER_H
#define CUDA_REWRITE_REWRITERS_COMMON_PASSMANAGER_H

#include "analysis/Candidates.h"
#include "rewriters/aggregate/AggregatePass.h"
#include "rewriters/common/EditSet.h"
#include "rewriters/common/PassRegistry.h"
#include "rewriters/common/Remarks.h"

namespace cuda_rewrite {

struct GpuSpec;

/// The pass that rewrites each kind of candidate.
PassId passFor(CandidateKind Kind);

struct PassOptions {
  PassSet Enabled = PassSet::all();
  bool Auto = false;
  /// --aggregate-granularity: replaces every pragma's granularity.
  std::optional<Granularity> AggregateGranularity;
};

struct PassContext {
  clang::ASTContext &Ctx;
  const GpuSpec &Gpu;
  EditSet &Edits;
  Remarks &Remark;
};

/// Why \p C is not handed to its pass, or an empty string if it is.
std::string reasonToSkip(const Candidate &C, const PassOptions &Opts);

/// Runs the passes over \p Candidates. Returns false if a rewrite failed
/// (and diagnosed an error).
/// Runs `Rewriter(Context).rewrite(candidate)` over \p Candidates (the
/// rewriter is built once, only when there are any); false as soon as one
/// fails (an edit that could not be made), true otherwise, refusals included.
template <class Rewriter>
bool rewriteEach(PassContext &Context,
                 llvm::ArrayRef<const Candidate *> Candidates) {
  if (Candidates.empty())
    return true;
  Rewriter R(Context);
  for (const Candidate *C : Candidates)
    if (!R.rewrite(*C))
      return false;
  return true;
}

/// Runs the passes (runEachPass) unless the file is the tool's own output
/// (its marker line), and marks a file they rewrote.
bool runPasses(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
               const PassOptions &Opts);
bool runEachPass(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
                 const PassOptions &Opts);

/// Warns (-Wcuda-rewrite-refused) at each pragma of an enabled pass that
/// annotates no candidate: `promote` on a kernel that does not launch
/// itself, `aggregate` on code without device-side launches. Pragmas whose
/// target reaches into \p Regions are left to the other side's parse.
void reportUnusedPragmas(PassContext &Context,
                         llvm::ArrayRef<AttachedPragma> Pragmas,
                         llvm::ArrayRef<Candidate> Candidates,
                         const PassOptions &Opts,
                         const CudaArchRegions &Regions);

/// Adds `#include "cuda_rewrite/<Header>.cuh"` on the line of the main
/// file's first declaration (once, whichever passes ask: the edit's key is
/// the header's). Returns false, having diagnosed it at \p Loc for \p Pass,
/// if the edit failed.
bool includeRuntimeHeader(PassContext &Context, llvm::StringRef Header,
                          clang::SourceLocation Loc, llvm::StringRef Pass);

} // namespace cuda_rewrite

#endif
