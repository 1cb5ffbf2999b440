//===- FusePass.h - Stage chains as fused overlapped tiles ------*- C++ -*-===//
//
// A host block of image-stage launches (`#pragma cuda_rewrite fuse`)
// becomes launches of fused kernels (FuseCodeGen), one per group of stages
// the plan (FusePlan) proves can run together; each group's original
// launches stay as the fallback its launcher takes when a run-time check
// fails. Stages that cannot be fused stay as they are, with the reason in
// a remark.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSEPASS_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSEPASS_H

#include "analysis/Candidates.h"
#include "llvm/ADT/ArrayRef.h"

namespace cuda_rewrite {

struct PassContext;

/// Rewrites \p Blocks (stage-chain candidates the pass manager let
/// through). Returns false if an edit failed (an error was diagnosed).
bool runFusePass(PassContext &Context,
                 llvm::ArrayRef<const Candidate *> Blocks);

} // namespace cuda_rewrite

#endif
