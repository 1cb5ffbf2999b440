//===- BoundPass.h - The example pass of docs/architecture.md ---*- C++ -*-===//
//
// A pass small enough to read in one sitting, kept in the tests so that the
// walk-through in docs/architecture.md ("Adding a pass") stays true: it
// compiles against the real interface and its test runs it end to end.
//
// `#pragma cuda_rewrite bound [threads(N)]` on a kernel gives it
// `__launch_bounds__(N)`, N the clause's value or, without one, the largest
// constant block its host launches use. A bound below a block some launch
// uses would make that launch fail, so the pass proves every launch fits
// (each block a constant no larger than N) or refuses, and pins the values
// it read from macros or named constants beside the kernel's launches.
//
// It is not registered in rewriters/Passes.cpp: registering it would be
// the one line `Passes.push_back(std::make_unique<BoundPass>());`.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TEST_UNIT_EXAMPLE_BOUNDPASS_H
#define CUDA_REWRITE_TEST_UNIT_EXAMPLE_BOUNDPASS_H

#include "rewriters/common/Pass.h"

namespace cuda_rewrite::example {

class BoundPass final : public Pass {
public:
  static constexpr llvm::StringLiteral Name = "bound";
  /// `#pragma cuda_rewrite bound [threads(N)]`, on a kernel.
  static const DirectiveSpec Directive;
  /// A kernel with a body in the main file and no `__launch_bounds__`.
  static const CandidateKind UnboundedKernel;

  BoundPass()
      : Pass(Name, "bound a kernel's registers by the blocks it runs",
             {&UnboundedKernel}, {&Directive}) {}
  void findCandidates(CandidateFinder &Find) const override;
  bool rewrite(PassContext &Context, const PassWork &Work) const override;
};

} // namespace cuda_rewrite::example

#endif
