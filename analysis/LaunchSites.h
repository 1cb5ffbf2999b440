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

#include "analysis/ConfigPins.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include <optional>
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

/// Argument \p I of a launch's `<<<grid, block, shared, stream>>>`, or null
/// where it was not written. Host launches configure through a call with
/// exactly these four arguments (omitted ones are default arguments);
/// device-side ones through cudaLaunchDevice, whose last four they are
/// (omitted ones are synthesized at the `<<<`).
const clang::Expr *launchConfigArg(const clang::CUDAKernelCallExpr *Call,
                                   unsigned I);

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
/// The threads per block of \p Launch (x * y * z) when its block argument
/// is a constant: an integer, a dim3 built from constants, or a local dim3
/// so built and never changed. Constants from macros or named constants are
/// pinned into \p Pins. None when unknown.
std::optional<uint64_t> constantBlockThreads(const clang::ASTContext &Ctx,
                                             const LaunchSite &Launch,
                                             ConfigPins &Pins);

/// The threads of every grid \p Kernel is launched with (grid size times
/// block size), largest first, when every launch of it is made from the host
/// with a constant shape; none otherwise (a launch from the device, or a
/// shape known only at run time). For estimates: nothing is pinned, since
/// no rewrite depends on the value for its correctness.
std::optional<uint64_t>
largestHostGridThreads(const clang::ASTContext &Ctx,
                       llvm::ArrayRef<LaunchSite> Launches,
                       const clang::FunctionDecl &Kernel);

/// The most threads per block any launch of \p Kernel in \p Launches asks
/// for, when every one of them is constant (and there is one); none when
/// one is unknown.
std::optional<uint64_t> largestBlockThreads(const clang::ASTContext &Ctx,
                                            llvm::ArrayRef<LaunchSite> Launches,
                                            const clang::FunctionDecl &Kernel,
                                            ConfigPins &Pins);

bool containsKernelLaunch(const clang::Stmt *S);
unsigned countKernelLaunches(const clang::Stmt *S);

} // namespace cuda_rewrite

#endif
