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
bool runPasses(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
               const PassOptions &Opts);

} // namespace cuda_rewrite

#endif
