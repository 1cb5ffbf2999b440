//===- StageChains.h - Host launches that feed each other -------*- C++ -*-===//
//
// A stage chain is a run of kernel launches in one host { } block where each
// launch reads a buffer the previous one wrote: the shape the fusion pass
// (PolyMage-GPU) turns into one kernel. Which buffers a kernel reads and
// writes comes from KernelAccess. A chain lies in a run of launches: host
// statements between them that touch none of their memory (error checks,
// synchronizations, timers, prints: HostStatements.h) are part of the run;
// any other ends it. Fusion plans a run at once (its stage graph may join
// a stage to any earlier one), so every chain of a run spans all of it.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_STAGECHAINS_H
#define CUDA_REWRITE_ANALYSIS_STAGECHAINS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

struct StageChain {
  const clang::CompoundStmt *Block = nullptr;
  const clang::FunctionDecl *Enclosing = nullptr;
  /// The statements of the block that hold the first and last launch of
  /// the chain's run.
  const clang::Stmt *First = nullptr, *Last = nullptr;
  std::vector<const clang::CUDAKernelCallExpr *> Launches;
  /// Links[i]: the buffers launch i writes and launch i+1 reads.
  std::vector<std::vector<std::string>> Links;
};

/// The chains of two or more launches in the main file's host code.
std::vector<StageChain> findStageChains(clang::ASTContext &Ctx);

/// "3 launches blur_x -> blur_y -> sharpen via 'tmp1', 'tmp2'".
std::string describeStageChain(const StageChain &Chain);

} // namespace cuda_rewrite

#endif
