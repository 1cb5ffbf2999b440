//===- PromotePass.h - Launch promotion (KLAP P, PA, PO, PAO) ---*- C++ -*-===//
//
// A `#pragma cuda_rewrite promote [aggregate(n)] [overlap]` kernel, a chain
// of single-block links that each launch the next, gets a promoted twin
// (rewriters/promote/PromoteCodeGen.h) and a host launcher; every host
// launch of the kernel in the file calls the launcher. The original kernel
// stays, unchanged. A kernel the pass cannot promote safely is refused with
// the reason (rewriters/promote/PromotePlan.h, docs/promote.md).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PROMOTE_PROMOTEPASS_H
#define CUDA_REWRITE_REWRITERS_PROMOTE_PROMOTEPASS_H

#include "rewriters/common/Pass.h"

namespace cuda_rewrite {

/// Rewrites recursive kernels into promoted chains.
class PromotePass final : public Pass {
public:
  static constexpr llvm::StringLiteral Name = "promote";
  /// `#pragma cuda_rewrite promote [aggregate(N)] [overlap]`.
  static const DirectiveSpec Directive;
  /// `#pragma cuda_rewrite overlap_boundary`: where the prologue ends in a
  /// kernel promoted with `overlap`.
  static const DirectiveSpec OverlapBoundary;
  /// A kernel that launches itself.
  static const CandidateKind RecursiveKernel;
  PromotePass();
  std::string whyNothingToRewrite(const AttachedPragma &P) const override;
  void findCandidates(CandidateFinder &Find) const override;
  bool rewrite(PassContext &Context, const PassWork &Work) const override;
};

} // namespace cuda_rewrite

#endif
