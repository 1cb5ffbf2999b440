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

#include "rewriters/common/Pass.h"

namespace cuda_rewrite {

/// Fuses blocks of host launches that feed each other.
class FusePass final : public Pass {
public:
  static constexpr llvm::StringLiteral Name = "fuse";
  /// `#pragma cuda_rewrite fuse [tile(...)] [hybrid(...)]`.
  static const DirectiveSpec Directive;
  /// Host launches feeding each other.
  static const CandidateKind Chain;
  FusePass();
  std::string whyNothingToRewrite(const AttachedPragma &P) const override;
  void findCandidates(CandidateFinder &Find) const override;
  bool rewrite(PassContext &Context, const PassWork &Work) const override;
};

} // namespace cuda_rewrite

#endif
