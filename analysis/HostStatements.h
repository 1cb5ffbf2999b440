//===- HostStatements.h - Host statements between launches ----*- C++ -*-===//
//
// Real programs put host statements between the launches of a stage chain:
// error checks, synchronizations, timers, prints. Fusion runs the chain's
// kernels as one launch where the last of them was, so every statement
// between the first and the last launch then runs before kernels it used to
// follow. That is legal when the statement cannot see or change what those
// kernels do: it touches none of their memory and changes no value their
// launches read. This analysis decides it, conservatively: a statement that
// names a buffer of the launches, reaches memory through a pointer to
// numbers, passes such a pointer to a library function, calls a CUDA API
// outside a list of ones that touch no memory (errors, synchronization,
// events, device queries) or any function of CUDA's libraries (thrust,
// CUB, libcu++, NCCL, NPP), calls a function whose body it cannot see,
// leaves the block (return, goto, throw, a break out of it) or assigns a
// variable a launch reads keeps its place, and the chain stops there.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_HOSTSTATEMENTS_H
#define CUDA_REWRITE_ANALYSIS_HOSTSTATEMENTS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include <set>
#include <string>

namespace cuda_rewrite {

/// What a run of launches uses from the host: the variables and members
/// their arguments name that hold or lead to memory (pointers, arrays,
/// structs), and every variable or member their arguments and
/// configurations read.
struct LaunchUses {
  std::set<const clang::ValueDecl *> Memory;
  std::set<const clang::ValueDecl *> Read;

  void add(const clang::CUDAKernelCallExpr &Launch);
};

/// Why \p S, a host statement among launches that use \p Uses, must keep
/// its place relative to them (one sentence, "names 'd_b', which the
/// launches pass"), or "" when it may run before any of them.
std::string whyStatementKeepsItsPlace(const clang::Stmt &S,
                                      const LaunchUses &Uses,
                                      clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
