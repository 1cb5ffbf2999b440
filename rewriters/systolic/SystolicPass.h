//===- SystolicPass.h - Stencils as software systolic arrays ----*- C++ -*-===//
//
// A one-thread-per-point stencil or convolution kernel becomes an SSAM kernel
// (docs/references.md; rewriters/systolic/SystolicCodeGen.h) plus a host
// launcher, and every host launch of the kernel in the file calls the launcher
// with the launch's own configuration. The original kernel stays, unchanged,
// for any other use. A kernel is refused, with the reason, when the SSAM form
// would not compute exactly what it does.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICPASS_H
#define CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICPASS_H

#include "rewriters/common/Pass.h"

namespace cuda_rewrite {

/// Rewrites stencil kernels, leaving their launches inside the fuse
/// pass's blocks (the work's LeftToOthers) to that pass.
class SystolicPass final : public Pass {
public:
  static constexpr llvm::StringLiteral Name = "systolic";
  /// `#pragma cuda_rewrite systolic [p(N)] [block(N)] [vector(N)]
  /// [z(stream|shared)]`.
  static const DirectiveSpec Directive;
  /// A kernel reading at constant offsets.
  static const CandidateKind Stencil;
  SystolicPass();
  void findCandidates(CandidateFinder &Find) const override;
  /// What the stencil analysis could not read in the kernel.
  std::string
  whyNotACandidate(const clang::FunctionDecl &Kernel) const override;
  bool rewrite(PassContext &Context, const PassWork &Work) const override;
};

} // namespace cuda_rewrite

#endif
