//===- ChildKernel.h - Can a child kernel be aggregated? --------*- C++ -*-===//
//
// The aggregated child runs the child's body verbatim, with locals named
// blockIdx, blockDim, gridDim and threadIdx shadowing the built-ins, so
// that macros in the body keep working. That is sound only if nothing
// reaches the real built-ins behind the body's back: helper functions that
// read blockIdx or gridDim, inline assembly, cooperative groups. Barriers,
// and helpers that read threadIdx or blockDim, are sound only if every block
// of the aggregated grid has exactly its original shape.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_AGGREGATE_CHILDKERNEL_H
#define CUDA_REWRITE_REWRITERS_AGGREGATE_CHILDKERNEL_H

#include "analysis/Refusal.h"
#include "clang/AST/Decl.h"
#include <optional>
#include <string>

namespace cuda_rewrite {

struct ChildKernelInfo {
  /// Why the child cannot be aggregated; none if it can.
  std::optional<Refusal> Refused;
  /// The body (or a function it calls) waits at a block barrier.
  bool HasBarriers = false;
  /// The body (or a function it calls) declares __shared__ memory.
  bool UsesSharedMemory = false;
  /// The body launches kernels (itself, for a recursive kernel).
  bool LaunchesKernels = false;
  /// Non-empty when a function the body calls reads threadIdx or blockDim
  /// (says which): sound only if every aggregated block has the shape of
  /// the original launches' blocks, all the same.
  std::string HelperReadsBlockShape;
  bool UsesBlockIdx = false, UsesBlockDim = false, UsesGridDim = false,
       UsesThreadIdx = false;
};

ChildKernelInfo analyzeChildKernel(const clang::FunctionDecl &Child);

} // namespace cuda_rewrite

#endif
