//===- PipelinePlan.h - A pipeline's stages and their legality --*- C++ -*-===//
//
// From a `#pragma cuda_rewrite pipeline` launch and the file's `stage`
// functions: which stages the entry kernel reaches, in which order, how each
// hands items on, and whether running them from queues keeps the program's
// results (docs/pipeline.md, "What the input looks like"). What cannot be
// proven is refused with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PIPELINE_PIPELINEPLAN_H
#define CUDA_REWRITE_REWRITERS_PIPELINE_PIPELINEPLAN_H

#include "analysis/Candidates.h"
#include "analysis/ConfigPins.h"
#include "analysis/Refusal.h"
#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/DenseMap.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The widest threads(n): a group must fit in a block of the generated
/// kernels (PipelineCodeGen's kPipelineBlockThreads).
constexpr unsigned kMaxGroupSize = 256;

/// A `stage` function of a pipeline.
struct PipelineStage {
  const clang::FunctionDecl *Function;
  unsigned GroupSize = 1; ///< threads(n)
  const clang::ParmVarDecl *Item = nullptr;
  const clang::ParmVarDecl *Rank = nullptr; ///< GroupSize > 1 only.
  std::string ItemType;                     ///< Fully qualified.
  /// It or a function it calls uses __shfl_sync and the like.
  bool UsesWarpIntrinsics = false;
  std::string name() const { return Function->getNameAsString(); }
};

/// A call that hands an item to a stage.
struct StageCall {
  const clang::CallExpr *Call;
  unsigned Callee; ///< Index into PipelinePlan::Stages.
  int Caller;      ///< Index into PipelinePlan::Stages; -1: the entry.
  /// A threads(1) caller running the callee's ranks one after another,
  /// `for (int r = 0; r < n; ++r) stage(item, r);`: the item is pushed
  /// once, where the rank is 0.
  bool SerialRanks = false;
};

struct PipelinePlan {
  const clang::FunctionDecl *Entry = nullptr; ///< The entry kernel.
  /// Constants the plan matched (a rank loop's bounds against threads(n))
  /// that come from macros or named constants: the generated code pins them.
  ConfigPins Pins;
  const clang::CUDAKernelCallExpr *Launch = nullptr;
  const clang::FunctionDecl *HostFunction = nullptr; ///< Holds the launch.
  /// Reached from the entry, breadth first (pipeline order).
  std::vector<PipelineStage> Stages;
  std::vector<StageCall> Calls;
  std::string Model = "auto"; ///< model(...)
  std::string ConfigFile;     ///< config(...), empty if none.

  std::string name() const { return Entry->getNameAsString(); }
  /// Whether the stages' calls form a cycle (recursion or a loop).
  bool hasCycles() const;
};

using PipelinePlanResult = PlanOrRefusal<PipelinePlan>;

/// Stage functions of the file and their threads(n).
using StageGroupSizes = llvm::DenseMap<const clang::FunctionDecl *, unsigned>;

/// The plan of the pipeline whose entry candidate is \p Entry.
PipelinePlanResult planPipeline(const Candidate &Entry,
                                const StageGroupSizes &Stages,
                                clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
