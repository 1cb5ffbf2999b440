//===- Uniformity.h - Values the same for every thread ---------*- C++ -*-===//
//
// KLAP passes a launch argument as a scalar instead of an array when it is the
// same for every thread aggregated together (KLAP section II-C,
// docs/references.md). This is a conservative syntactic check: an expression is
// uniform when it is built only from constants, parameters of the enclosing
// kernel that its body never changes, and (within one block) blockIdx,
// blockDim, gridDim, with operators that do not read memory or call functions.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_UNIFORMITY_H
#define CUDA_REWRITE_ANALYSIS_UNIFORMITY_H

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace cuda_rewrite {

enum class UniformScope {
  Block, ///< Same for all threads of a block (warp and block granularity).
  Grid,  ///< Same for all threads of the grid (kernel granularity).
};

/// What may differ between threads beyond the syntactic rules: a kernel that
/// also runs as an aggregated child (KLAP's launches of aggregated
/// kernels) sees per-launch values in some parameters and in its built-ins.
struct UniformityAssumptions {
  /// Parameters of the kernel that may differ between its threads.
  llvm::SmallPtrSet<const clang::ParmVarDecl *, 4> VaryingParams;
  /// blockIdx, blockDim and gridDim may differ between the threads of one
  /// block (several original blocks share an aggregated one).
  bool LaunchShapeVaries = false;
  /// Also take loads at uniform addresses from memory the kernel cannot
  /// write (through a kernel parameter that points to const and is
  /// __restrict__, or through any pointer to const where the kernel stores
  /// through no pointer at all), and locals never changed whose
  /// initialiser is uniform: values that are the same wherever the kernel
  /// reads them (a block-uniform early return's condition), though not a
  /// scalar the launch could pass instead.
  bool ReadOnlyLoads = false;
};

/// Whether \p E has the same value in every thread of \p Scope, when
/// evaluated anywhere in the body of \p Kernel.
bool isUniform(const clang::Expr *E, const clang::FunctionDecl &Kernel,
               UniformScope Scope,
               const UniformityAssumptions &Assumptions = {});

/// Whether \p Kernel's body may change \p Param (assigns it, increments it,
/// takes its address or binds it to a non-const reference).
bool mayModifyParam(const clang::FunctionDecl &Kernel,
                    const clang::ParmVarDecl &Param);

} // namespace cuda_rewrite

#endif
