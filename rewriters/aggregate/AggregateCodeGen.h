//===- AggregateCodeGen.h - Text of the aggregate pass's code ---*- C++ -*-===//
//
// The CUDA the aggregate pass writes, as a good CUDA engineer would write it
// by hand: one argument struct, one aggregated child and one launch helper
// per child kernel and granularity, and for a parent rewritten at block or
// kernel granularity its new kernel and the head of its body function, each
// with a comment saying what it came from. Every part is written through a
// CodeWriter, its generated locals named by a NameAllocator. The heavy
// lifting is in runtime/include/cuda_rewrite/aggregate.cuh.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_AGGREGATE_AGGREGATECODEGEN_H
#define CUDA_REWRITE_REWRITERS_AGGREGATE_AGGREGATECODEGEN_H

#include "rewriters/aggregate/ChildKernel.h"
#include "rewriters/common/CodeWriter.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/LangOptions.h"
#include "llvm/ADT/StringRef.h"
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

/// One launch site of a parent rewritten at block or kernel granularity.
struct PendingSite {
  /// `cuda_rewrite::PendingLaunch<child_args>` (a PendingLaunchList in a
  /// loop).
  std::string Type;
  std::string Var; ///< `cr_pending_0`: the launches the site asked for.
  /// `child_launch_block(cr_pending_0, ..., __LINE__)`: makes them.
  std::string Flush;
};

/// What a parent rewritten at block or kernel granularity runs: its pending
/// launches, the call of its body function, and the flushes after it. An
/// aggregated child that is itself such a parent runs the same.
struct ParentCode {
  std::vector<PendingSite> Sites;
  std::string BodyName;
  std::vector<std::string> BodyArgs;

  /// `cuda_rewrite::PendingLaunch<child_args> cr_pending_0;`, ...
  void writePendingLaunches(CodeWriter &W) const;
  /// `parent_body(a, b, cr_pending_0);`
  void writeBodyCall(CodeWriter &W) const;
  /// `child_launch_block(cr_pending_0, ...);`, ...
  void writeFlushes(CodeWriter &W) const;
  /// Marks every name the code above uses as taken in \p Names.
  void reserveNames(NameAllocator &Names) const;
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
/// kernel is defined after the helpers that launch it (\p AsParent as for
/// generateAggregatedKernel()).
std::string generateAggregatedKernelDeclaration(const AggregatedChild &A,
                                                const ParentCode *AsParent);
/// `__device__ void child_launch_warp(...)`
std::string generateWarpHelper(const AggregatedChild &A);
/// `__device__ void child_launch_block(...)`
std::string generateBlockHelper(const AggregatedChild &A);
/// `__device__ void child_launch_kernel(...)`
std::string generateGridHelper(const AggregatedChild &A);

/// What replaces a parent rewritten at block or kernel granularity from its
/// first token up to its name: a comment and `__device__ __forceinline__
/// void `, the head of its body function without the name, preceded by a
/// declaration of the new kernel `Prefix Name(ParamText);` where
/// \p DeclareKernel (the body launches the kernel by name). \p Prefix is
/// the parent's text before its name, \p ParamText its parameters'.
std::string generateBodyFunctionHead(llvm::StringRef Name,
                                     llvm::StringRef Prefix,
                                     llvm::StringRef ParamText,
                                     bool DeclareKernel);
/// The kernel that replaces a parent rewritten at block or kernel
/// granularity, named \p Name as the parent was: it runs \p Code, the body
/// function and the launches it recorded. \p Head is everything before its
/// parameters (`__global__ void __launch_bounds__(256) parent`), and
/// \p ParamText the parent's parameters as written.
std::string generateParentKernel(llvm::StringRef Name, llvm::StringRef Head,
                                 llvm::StringRef ParamText,
                                 const ParentCode &Code);

/// `T name` for a parameter, as it is declared.
std::string declareParam(const clang::ParmVarDecl &P);

} // namespace cuda_rewrite

#endif
