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

#include "analysis/Candidates.h"
#include "llvm/ADT/ArrayRef.h"

namespace cuda_rewrite {

struct PassContext;

/// Rewrites \p Kernels (stencil candidates the pass manager let through),
/// leaving their launches inside \p FuseBlocks to the fuse pass. Returns
/// false if an edit failed (an error was diagnosed).
bool runSystolicPass(PassContext &Context,
                     llvm::ArrayRef<const Candidate *> Kernels,
                     llvm::ArrayRef<const Candidate *> FuseBlocks);

} // namespace cuda_rewrite

#endif
