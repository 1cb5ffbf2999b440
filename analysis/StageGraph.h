//===- StageGraph.h - The stages of a host block and their buffers -*- C++
//-*-===//
//
// The fusion pass (PolyMage-GPU, issue 6) takes a host { } block of kernel
// launches, each an image-processing stage, and needs the graph a chain
// finder cannot give: a stage may read what any earlier stage wrote (Harris
// corner's cross term reads both gradients), so the block is a DAG, not a
// line. This analysis builds it from KernelAccess: one node per launch, an
// edge for every ordering between two launches through a buffer (flow:
// read after write; anti: write after read; output: write after write),
// and each buffer's role in the block and whether it is live after it.
//
// Liveness is conservative, since fusion may keep a buffer on chip only if
// nothing reads it later: a buffer that is not a local variable of the
// enclosing function (a parameter, a struct member, a global) counts as
// live after the block, as does a local one unless the function allocates
// it itself (`cudaMalloc(&p, ..)` and kin, before the block) and names it
// after the block only in `cudaFree(p)` or `cudaFreeAsync(p, ..)`: a local
// pointer may hold memory that other code reads.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_STAGEGRAPH_H
#define CUDA_REWRITE_ANALYSIS_STAGEGRAPH_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The caller's buffers (the variables or members its arguments name) that
/// one launch reads and writes, from KernelAccess.
struct LaunchBuffers {
  std::set<const clang::ValueDecl *> Read, Written;
};

/// The launch a statement consists of (`k<<<g, b>>>(...);`), or null.
const clang::CUDAKernelCallExpr *launchOf(const clang::Stmt *S);

/// The kernel \p Launch launches, by name, or "the kernel" where the launch
/// names none (a dependent launch in a template: `k<T><<<g, b>>>(...)`).
std::string launchedKernelName(const clang::CUDAKernelCallExpr *Launch);

/// What \p Launch reads and writes; nullopt when the kernel's body is not
/// visible.
std::optional<LaunchBuffers>
launchBuffers(const clang::CUDAKernelCallExpr *Launch);

struct StageGraph {
  struct Stage {
    const clang::CUDAKernelCallExpr *Launch = nullptr;
    LaunchBuffers Buffers;
  };

  enum class Order {
    Flow,   ///< The consumer reads what the producer wrote.
    Anti,   ///< The later stage overwrites what the earlier one read.
    Output, ///< Both write the buffer; the later stage's values stay.
  };
  struct Edge {
    unsigned From = 0, To = 0; ///< Stage indices, From < To.
    const clang::ValueDecl *Buffer = nullptr;
    Order Kind = Order::Flow;
  };

  enum class Role {
    Input,        ///< Read by the block, written by none of its stages.
    Intermediate, ///< Written by a stage and read by a later one.
    Output,       ///< Written, and read by no later stage.
  };
  struct Buffer {
    const clang::ValueDecl *Decl = nullptr;
    Role Kind = Role::Input;
    /// May be read after the block (see the file comment); why, if so.
    bool LiveAfter = false;
    std::string WhyLive;
    /// A local pointer the function allocates itself (cudaMalloc and
    /// kin) and names nowhere else before the block: it cannot share
    /// memory with any other buffer.
    bool Fresh = false;
    std::vector<unsigned> Writers, Readers; ///< Stage indices, in order.
  };

  const clang::CompoundStmt *Block = nullptr;
  /// The block's statements the graph covers: its first and last launch.
  const clang::Stmt *First = nullptr, *Last = nullptr;
  /// Host statements between them that touch none of the launches'
  /// memory (HostStatements.h): fusion may run them before the launches.
  std::vector<const clang::Stmt *> MovedStatements;
  std::vector<Stage> Stages;
  std::vector<Edge> Edges;     ///< By consumer, then producer.
  std::vector<Buffer> Buffers; ///< In order of first use.
  /// Why the block is not only straight-line launches of visible kernels,
  /// one sentence each with its location ("line 12: ..."); empty if it is.
  std::vector<std::string> Problems;

  /// Groups of stages connected by edges (ignoring direction): a block of
  /// independent pipelines has several.
  unsigned components() const;
  const Buffer *buffer(const clang::ValueDecl *Decl) const;
};

/// The stage graph of the launches in \p Block, a statement of \p Enclosing
/// (a host function): of all of them, or of those from statement \p First
/// to \p Last. Statements before the first launch and after the last keep
/// their place and are no part of it.
StageGraph buildStageGraph(const clang::CompoundStmt &Block,
                           const clang::FunctionDecl &Enclosing,
                           clang::ASTContext &Ctx,
                           const clang::Stmt *First = nullptr,
                           const clang::Stmt *Last = nullptr);

struct StageRead;

/// The reads the consumer of flow edge \p E makes of its buffer (from
/// StageAccess, through the launch's arguments): the dependence of the
/// consumer's points on the producer's. Nullopt when StageAccess refuses
/// the consumer's kernel.
std::optional<std::vector<StageRead>> readsAlong(const StageGraph &Graph,
                                                 const StageGraph::Edge &E);

/// "7 stages, 9 edges, 1 component; inputs 'in'; intermediates 'a', 'b';
/// outputs 'out' (live after: a parameter)".
std::string describeStageGraph(const StageGraph &Graph);

} // namespace cuda_rewrite

#endif
