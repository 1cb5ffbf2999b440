//===- FuseCostInput.h - A fused group as the cost model sees it -*- C++
//-*-===//
//
// FuseCostModel knows nothing of the AST; this file describes a FuseGroup
// in its terms: each stage's region, inlining, tile element size, the
// global buffers it reads with the offsets it reads them at, the bytes it
// stores, and its work per point (operations counted in the kernel body, a
// stand-in for the paper's measured time per iteration).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSECOSTINPUT_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSECOSTINPUT_H

#include "rewriters/fuse/FuseCostModel.h"
#include "rewriters/fuse/FusePlan.h"
#include "clang/AST/ASTContext.h"
#include <vector>

namespace cuda_rewrite {

std::vector<CostStage> costStagesOf(const FuseGroup &G, clang::ASTContext &Ctx);

/// Operations in \p Body: arithmetic, comparisons, calls, loads and
/// stores, each counted once; callees' bodies are counted where they are
/// defined (image::clamp costs its comparisons).
double workOf(const clang::Stmt *Body);

} // namespace cuda_rewrite

#endif
