//===- DeviceCallGraph.h - What device code can reach ------------*- C++
//-*-===//
//
// Which functions can end up running a given set of device functions, through
// calls and device-side launches. A host launch of a kernel that is not
// rewritten itself can still reach a rewritten one (a parent launched from a
// launched kernel, or from a __device__ helper), and that launch must prepare
// what the rewritten code needs (the aggregation pass's launch-table pool).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_DEVICECALLGRAPH_H
#define CUDA_REWRITE_ANALYSIS_DEVICECALLGRAPH_H

#include "clang/AST/ASTContext.h"
#include "llvm/ADT/DenseSet.h"

namespace cuda_rewrite {

/// The canonical declarations of every function of the translation unit
/// whose body reaches one of \p Targets (canonical declarations) through
/// direct calls and kernel launches, the targets themselves included. Calls
/// through pointers are not followed.
llvm::DenseSet<const clang::FunctionDecl *>
functionsReaching(clang::ASTContext &Ctx,
                  const llvm::DenseSet<const clang::FunctionDecl *> &Targets);

} // namespace cuda_rewrite

#endif
