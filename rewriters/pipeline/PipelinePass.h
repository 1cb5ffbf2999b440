//===- PipelinePass.h - Pipelines run from queues (VersaPipe) ---*- C++ -*-===//
//
// A `#pragma cuda_rewrite pipeline` launch of an entry kernel whose stages
// (`#pragma cuda_rewrite stage` functions) call each other becomes a call of
// a generated host function that seeds one queue per stage and runs the
// stages under the execution model chosen at run time
// (rewriters/pipeline/PipelineCodeGen.h, docs/pipeline.md). The stages and
// the entry stay, unchanged: the rtc model runs them as written.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PIPELINE_PIPELINEPASS_H
#define CUDA_REWRITE_REWRITERS_PIPELINE_PIPELINEPASS_H

#include "rewriters/common/Pass.h"

namespace cuda_rewrite {

/// Rewrites the pipeline launches among its candidates; their stage
/// functions are candidates too (one the pass manager does not let through
/// runs as a plain call).
class PipelinePass final : public Pass {
public:
  static constexpr llvm::StringLiteral Name = "pipeline";
  /// `#pragma cuda_rewrite stage [threads(N)]` on a __device__ function.
  static const DirectiveSpec Stage;
  /// `#pragma cuda_rewrite pipeline [model(...)] [config(file)]` on the
  /// host launch of the entry kernel.
  static const DirectiveSpec Pipeline;
  /// A `stage` __device__ function.
  static const CandidateKind PipelineStage;
  /// The host launch marked `pipeline`.
  static const CandidateKind PipelineEntry;
  PipelinePass();
  void findCandidates(CandidateFinder &Find) const override;
  bool rewrite(PassContext &Context, const PassWork &Work) const override;
};

} // namespace cuda_rewrite

#endif
