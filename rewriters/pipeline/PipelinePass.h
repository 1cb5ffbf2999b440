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

#include "analysis/Candidates.h"
#include "llvm/ADT/ArrayRef.h"

namespace cuda_rewrite {

struct PassContext;

/// Rewrites the pipeline launches in \p Entries; \p Stages are the file's
/// stage functions the pass manager let through (one that is not runs as a
/// plain call). Returns false if an edit failed (an error was diagnosed).
bool runPipelinePass(PassContext &Context,
                     llvm::ArrayRef<const Candidate *> Entries,
                     llvm::ArrayRef<const Candidate *> Stages);

} // namespace cuda_rewrite

#endif
