//===- CudaBuiltins.h - threadIdx, blockIdx, blockDim, gridDim --*- C++ -*-===//
//
// Clang declares CUDA's built-in index variables as structs with
// __declspec(property) members, so `threadIdx.x` is a PseudoObjectExpr over
// an MSPropertyRefExpr. The analyses that read kernel coordinates recognise
// them here.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_CUDABUILTINS_H
#define CUDA_REWRITE_ANALYSIS_CUDABUILTINS_H

#include "clang/AST/Expr.h"
#include <optional>
#include <utility>

namespace cuda_rewrite {

enum class CudaBuiltinVar { ThreadIdx, BlockIdx, BlockDim, GridDim };

/// Which built-in and which dimension (0 x, 1 y, 2 z) \p E reads, if it is
/// one of them (through parentheses and implicit casts).
std::optional<std::pair<CudaBuiltinVar, unsigned>>
cudaBuiltin(const clang::Expr *E);

} // namespace cuda_rewrite

#endif
