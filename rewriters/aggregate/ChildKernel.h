//===- ChildKernel.h - Can a child kernel be aggregated? --------*- C++ -*-===//
//
// The aggregated child runs the child's body verbatim, with locals named
// blockIdx, blockDim, gridDim and threadIdx shadowing the built-ins, so
// that macros in the body keep working. That is sound only if nothing
// reaches the real built-ins behind the body's back: helper functions that
// read them, inline assembly, cooperative groups. Barriers are sound only if
// every block of the aggregated grid has exactly its original size.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_AGGREGATE_CHILDKERNEL_H
#define CUDA_REWRITE_REWRITERS_AGGREGATE_CHILDKERNEL_H

#include "clang/AST/Decl.h"
#include <string>

namespace cuda_rewrite {

struct ChildKernelInfo {
  /// Why the child cannot be aggregated; empty if it can.
  std::string Refusal;
  /// The body (or a function it calls) waits at a block barrier.
  bool HasBarriers = false;
  /// The body (or a function it calls) declares __shared__ memory.
  bool UsesSharedMemory = false;
  bool UsesBlockIdx = false, UsesBlockDim = false, UsesGridDim = false,
       UsesThreadIdx = false;
};

ChildKernelInfo analyzeChildKernel(const clang::FunctionDecl &Child);

} // namespace cuda_rewrite

#endif
