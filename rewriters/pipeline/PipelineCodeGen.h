//===- PipelineCodeGen.h - The code of a queued pipeline --------*- C++ -*-===//
//
// Writes, for a PipelinePlan, what runs the pipeline from queues
// (runtime/include/cuda_rewrite/pipeline.cuh):
//
//  * `<entry>_Pipeline`, the queues of the stages (passed by value);
//  * `<stage>_inPipeline`, a copy of each stage whose calls of stages push
//    the item instead, and `<entry>_seedPipeline`, such a copy of the entry;
//  * `<entry>_runPipelineBatch<First, Last>`, which runs a batch of items of
//    one of the stages First..Last, one per group of threads(n) threads;
//  * `<entry>_pipelineWorker<First, Last>`, the persistent kernel of the
//    megakernel, coarse, fine and hybrid models, and
//    `<entry>_pipelineStage<S>`, the kernel-by-kernel one;
//  * `<entry>_runPipeline(grid, block, shared, stream, args...)`, the host
//    function that seeds the queues and runs the configured model.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PIPELINE_PIPELINECODEGEN_H
#define CUDA_REWRITE_REWRITERS_PIPELINE_PIPELINECODEGEN_H

#include "rewriters/pipeline/PipelinePlan.h"
#include <string>

namespace cuda_rewrite {

/// Threads per block of every generated kernel.
/// (A block holds the widest group, threads(kMaxGroupSize).)
constexpr unsigned kPipelineBlockThreads = kMaxGroupSize;

/// The generated definitions, in the order they must appear.
std::string generatePipelineCode(const PipelinePlan &Plan,
                                 clang::ASTContext &Ctx);

/// The name of the host function that replaces the pipeline's launch.
std::string pipelineLauncherName(const PipelinePlan &Plan);

} // namespace cuda_rewrite

#endif
