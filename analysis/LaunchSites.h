//===- LaunchSites.h - Kernel launches and where they sit -------*- C++ -*-===//
//
// Every `kernel<<<...>>>(...)` of the main file, classified the way the
// aggregation and promotion passes need: launched from device or host code,
// from which function, under a branch or loop, written in a macro, inside a
// template.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_LAUNCHSITES_H
#define CUDA_REWRITE_ANALYSIS_LAUNCHSITES_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

struct LaunchSite {
  const clang::CUDAKernelCallExpr *Call = nullptr;
  /// The kernel launched, or null when the callee is dependent or indirect.
  const clang::FunctionDecl *Callee = nullptr;
  std::string CalleeName;
  /// The function whose body holds the launch (null at file scope).
  const clang::FunctionDecl *Enclosing = nullptr;
  /// Launched from a __global__ or __device__ function (dynamic parallelism).
  bool FromDevice = false;
  /// The enclosing function is __host__ __device__.
  bool FromHostDevice = false;
  /// Not every thread that runs the enclosing function reaches the launch:
  /// it sits under if/switch/?:/&&/||.
  bool InBranch = false;
  bool InLoop = false;
  /// The launch's `<<<` is written inside a macro expansion.
  bool InMacro = false;
  /// The launch is in a template (or a member of a class template).
  bool InTemplate = false;
};

/// The launches of the main file in source order. Template instantiations
/// are not visited: a launch in a template is reported once, at its pattern.
std::vector<LaunchSite> findLaunchSites(clang::ASTContext &Ctx);

/// Whether at most one thread of a one-dimensional block makes \p Launch:
/// an enclosing `if` (the launch in its then-branch) tests `threadIdx.x ==
/// <constant>` among the conjuncts of its condition, and \p Function never
/// reads threadIdx.y or threadIdx.z (a two-dimensional block would have a
/// thread per row pass the test).
bool launchedByOneThread(clang::ASTContext &Ctx,
                         const clang::CUDAKernelCallExpr &Launch,
                         const clang::FunctionDecl &Function);

/// Whether \p S contains a kernel launch, and how many.
bool containsKernelLaunch(const clang::Stmt *S);
unsigned countKernelLaunches(const clang::Stmt *S);

} // namespace cuda_rewrite

#endif
