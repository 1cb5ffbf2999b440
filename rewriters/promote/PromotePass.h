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

#include "analysis/Candidates.h"
#include "llvm/ADT/ArrayRef.h"

namespace cuda_rewrite {

struct PassContext;

/// Rewrites \p Kernels (recursive-kernel candidates the pass manager let
/// through). Returns false if an edit failed (an error was diagnosed).
bool runPromotePass(PassContext &Context,
                    llvm::ArrayRef<const Candidate *> Kernels);

} // namespace cuda_rewrite

#endif
