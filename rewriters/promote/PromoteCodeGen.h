//===- PromoteCodeGen.h - The promoted kernel and its launcher --*- C++ -*-===//
//
// From a PromotePlan: the struct of postponed arguments, the promoted kernel
// (the original body, with the launch hoisted, the wait for the previous
// link and the hand-over to the next one; see docs/promote.md for what each
// variant generates) and the host launcher that replaces the host launches.
// The runtime side (flags, tickets, the chain's state) is
// runtime/include/cuda_rewrite/promote.cuh.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PROMOTE_PROMOTECODEGEN_H
#define CUDA_REWRITE_REWRITERS_PROMOTE_PROMOTECODEGEN_H

#include "rewriters/promote/PromotePlan.h"
#include <string>

namespace cuda_rewrite {

std::string promotedKernelName(const PromotePlan &Plan);
std::string promotedLauncherName(const PromotePlan &Plan);

/// The definitions that follow the original kernel: struct, kernel,
/// launcher.
std::string generatePromotedCode(const PromotePlan &Plan,
                                 const clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
