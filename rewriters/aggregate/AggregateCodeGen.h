//===- AggregateCodeGen.h - Text of the aggregate pass's code ---*- C++ -*-===//
//
// The CUDA the aggregate pass writes, as a good CUDA engineer would write it
// by hand: one argument struct, one aggregated child and one launch helper
// per child kernel and granularity, each with a comment saying what it came
// from. The heavy lifting is in runtime/include/cuda_rewrite/aggregate.cuh.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_AGGREGATE_AGGREGATECODEGEN_H
#define CUDA_REWRITE_REWRITERS_AGGREGATE_AGGREGATECODEGEN_H

#include "rewriters/aggregate/ChildKernel.h"
#include "clang/AST/Decl.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One child kernel as one group of sites aggregates it: which of its
/// parameters are passed once as scalars (uniform at every such site).
struct AggregatedChild {
  const clang::FunctionDecl *Child = nullptr;
  ChildKernelInfo Info;
  std::vector<bool> Scalar; ///< Per parameter of Child.
  /// Distinguishes the versions of one child with different scalar sets:
  /// empty for the first in the file, then "_2", "_3", ...
  std::string Suffix;
  /// The bound of the aggregated kernel's registers: the largest block it is
  /// launched with, or 1024.
  unsigned MaxThreads = 1024;

  const std::string &suffix() const { return Suffix; }
  /// Whether several one-warp launches may share an aggregated block
  /// (LaunchTable::packing).
  bool packable() const;
  std::string argsStruct() const;  ///< child_args
  std::string kernelName() const;  ///< child_aggregated
  std::string warpHelper() const;  ///< child_launch_warp
  std::string blockHelper() const; ///< child_launch_block
  std::string gridHelper() const;  ///< child_launch_kernel
  std::vector<const clang::ParmVarDecl *> perLaunchParams() const;
  std::vector<const clang::ParmVarDecl *> scalarParams() const;
};

/// What a parent rewritten at block or kernel granularity runs: its pending
/// launches, the call of its body function, and the flushes after it. An
/// aggregated child that is itself such a parent runs the same.
struct ParentCode {
  std::string Decls; ///< `  cuda_rewrite::PendingLaunch<...> cr_pending_0;`
  std::string BodyName;
  std::vector<std::string> BodyArgs;
  std::string Flushes; ///< `  child_launch_block(cr_pending_0, ...);`

  std::string indentedBodyCall(unsigned Indent) const;
};

/// `const uint3 blockIdx`, ...: the built-ins \p Info says the body reads,
/// as parameters of a body function that an aggregated child also calls.
std::vector<std::string> builtinParams(const ChildKernelInfo &Info);
/// `blockIdx`, ...: the same, as arguments.
std::vector<std::string> builtinArgs(const ChildKernelInfo &Info);

/// `struct child_args { ... };`
std::string generateArgsStruct(const AggregatedChild &A);
/// `__global__ void child_aggregated(...) { ... original body ... }`; or,
/// when the child is itself a parent rewritten at block or kernel
/// granularity (\p AsParent), one that calls its body function and then
/// aggregates its launches.
std::string generateAggregatedKernel(const AggregatedChild &A,
                                     const ParentCode *AsParent);
/// `__global__ void child_aggregated(...);`, for children whose aggregated
/// kernel is defined after the helpers that launch it.
std::string generateAggregatedKernelDeclaration(const AggregatedChild &A);
/// `__device__ void child_launch_warp(...)`
std::string generateWarpHelper(const AggregatedChild &A);
/// `__device__ void child_launch_block(...)`
std::string generateBlockHelper(const AggregatedChild &A);
/// `__device__ void child_launch_kernel(...)`
std::string generateGridHelper(const AggregatedChild &A);

/// `T name` for a parameter, as it is declared.
std::string declareParam(const clang::ParmVarDecl &P);

} // namespace cuda_rewrite

#endif
