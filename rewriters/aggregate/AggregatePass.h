//===- AggregatePass.h - Kernel launch aggregation (KLAP) ------*- C++ -*-===//
//
// Device-side launches made by many threads become one launch of an
// aggregated child (KLAP section II, docs/references.md):
//  - warp granularity: the lanes that reach a launch together (the active
//    mask) aggregate at the launch itself;
//  - block granularity: the parent's body runs as a __device__ function
//    that records each thread's launch; the kernel around it aggregates the
//    block's launches once every thread has finished the body, so divergent
//    launches and early returns need no control-flow-to-data-flow
//    conversion. Moving a launch to the end of its parent thread is sound in
//    CDP2: the child could not be waited for, and it sees at least the
//    writes it saw before;
//  - kernel granularity: likewise, but each block appends its launches to a
//    table for the whole grid (found through %gridid, so concurrent parent
//    grids are kept apart) and the last block to finish launches for all.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_AGGREGATE_AGGREGATEPASS_H
#define CUDA_REWRITE_REWRITERS_AGGREGATE_AGGREGATEPASS_H

#include "rewriters/common/Pass.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace cuda_rewrite {

enum class Granularity { Warp, Block, Kernel };

std::optional<Granularity> parseGranularity(llvm::StringRef Name);
llvm::StringRef granularityName(Granularity G);

/// Rewrites device-side launches. Its override (--aggregate-granularity),
/// if set, replaces every pragma's granularity.
class AggregatePass final : public Pass {
public:
  static constexpr llvm::StringLiteral Name = "aggregate";
  /// `#pragma cuda_rewrite aggregate [granularity(warp|block|kernel)]`.
  static const DirectiveSpec Directive;
  /// A device-side launch.
  static const CandidateKind DeviceLaunch;
  explicit AggregatePass(std::optional<Granularity> Override = std::nullopt);
  std::string whyNothingToRewrite(const AttachedPragma &P) const override;
  void findCandidates(CandidateFinder &Find) const override;
  bool rewrite(PassContext &Context, const PassWork &Work) const override;

private:
  std::optional<Granularity> Override;
};

} // namespace cuda_rewrite

#endif
