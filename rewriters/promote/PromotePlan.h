//===- PromotePlan.h - Whether and how to promote a chain -----*- C++ -*-===//
//
// Launch promotion (KLAP section III, docs/references.md) applies to a kernel
// that runs as one block and launches itself, from one thread, to walk a serial
// chain of links. planPromotion() finds the pieces the generated code needs
// (the self-launch, its guard and condition, which arguments change from link
// to link and how, the prologue, the buffers) and checks that running the links
// concurrently, ordered only through the flags, computes what the chain of tail
// launches computes. Anything it cannot show is a refusal with the reason;
// docs/promote.md lists them.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PROMOTE_PROMOTEPLAN_H
#define CUDA_REWRITE_REWRITERS_PROMOTE_PROMOTEPLAN_H

#include "analysis/ConfigPins.h"
#include "analysis/LaunchSites.h"
#include "analysis/Refusal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The variant asked for: P, PA (Pool > 0), PO (Overlap), PAO.
struct PromoteVariant {
  unsigned Pool = 0; ///< aggregate(n): blocks per pool; 0 for none.
  bool Overlap = false;
  std::string name() const;
};

/// How one launch argument goes from a link to the next.
enum class ArgKind {
  Uniform,  ///< The parameter itself, unchanged: forwarded.
  Stepped,  ///< `p + c` / `p - c` with c constant: link t's is p0 + t*step.
  Early,    ///< Computable at the kernel's start from unchanged values.
  Postponed ///< Computed in the body: travels through the slot.
};

struct PromoteArg {
  const clang::ParmVarDecl *Param = nullptr;
  ArgKind Kind = ArgKind::Uniform;
  const clang::Expr *Value = nullptr; ///< The launch argument.
  /// Stepped: '+' or '-', and the constant.
  char StepSign = '+';
  const clang::Expr *Step = nullptr;
};

/// Where a buffer parameter puts the chain in terms of ordering.
struct PromoteBuffer {
  const clang::ParmVarDecl *Param = nullptr;
  bool Read = false, Written = false;
};

struct PromotePlan {
  const clang::FunctionDecl *Kernel = nullptr;
  /// Constants the plan tested (the thread-0 guard, the self-launch's grid,
  /// block and shared memory) that come from macros or named constants:
  /// the generated code pins them (analysis/ConfigPins.h).
  ConfigPins Pins;
  const clang::CompoundStmt *Body = nullptr;
  PromoteVariant Variant;
  /// The self-launch, the top-level `if` that guards it (thread 0), the
  /// innermost `if` around it (LaunchIf itself unless `if`s are nested)
  /// and the statement of that `if` that launches.
  const clang::CUDAKernelCallExpr *SelfLaunch = nullptr;
  const clang::IfStmt *LaunchIf = nullptr;
  const clang::IfStmt *LaunchParent = nullptr;
  const clang::Stmt *LaunchStmt = nullptr;
  /// The conjuncts of the launch condition but the thread-0 test (none:
  /// the chain always continues), and whether they can be evaluated at the
  /// start (else the launch is speculative and the link publishes whether it
  /// continued).
  std::vector<const clang::Expr *> Conditions;
  bool EarlyCondition = true;
  const clang::Expr *Block = nullptr; ///< The launch's block size.
  /// The threads of every link's block where the launches fix it at compile
  /// time (the self-launch's constant, or with `blockDim.x` the host
  /// launches' largest constant): the promoted kernel's launch bound.
  std::optional<uint64_t> BlockThreads;
  std::vector<PromoteArg> Args; ///< One per parameter, in order.
  /// Top-level statements [0, PrefixEnd) are declarations computable at the
  /// start: the hoisted code goes after them.
  unsigned PrefixEnd = 0;
  /// The top-level statement that follows `overlap_boundary` (an index
  /// into Body), if any, and the pragma line's offsets.
  std::optional<unsigned> Boundary;
  unsigned BoundaryPragmaBegin = 0, BoundaryPragmaEnd = 0;
  std::vector<PromoteBuffer> Buffers;
  /// Some buffer is written by the links: the link publishes at its end,
  /// after a barrier, not where it launched (docs/promote.md).
  bool PublishAtEnd = false;
  std::vector<const clang::CUDAKernelCallExpr *> HostLaunches;

  bool hasPostponed() const;
};

using PromotePlanResult = PlanOrRefusal<PromotePlan>;

// The plan's expressions as the generated code and the messages print them:
// from the source, with the user's own spelling.

/// The launch condition: its conjuncts joined with " && ", or "true" where
/// there are none, since it goes where a bool does.
std::string conditionText(const PromotePlan &Plan,
                          const clang::ASTContext &Ctx);
/// The self-launch's block size.
std::string blockText(const PromotePlan &Plan, const clang::ASTContext &Ctx);
/// The launch argument for \p Arg's parameter.
std::string argText(const PromoteArg &Arg, const clang::ASTContext &Ctx);
/// A stepped argument's constant, parenthesized unless one token, so that
/// it can follow `cr_rank * `.
std::string stepAmountText(const PromoteArg &Arg, const clang::ASTContext &Ctx);

/// Plans the promotion of \p Kernel as \p Variant; \p Launches are the
/// file's launch sites.
PromotePlanResult planPromotion(const clang::FunctionDecl &Kernel,
                                PromoteVariant Variant,
                                llvm::ArrayRef<LaunchSite> Launches,
                                clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
