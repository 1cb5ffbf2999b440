//===- HostExpr.h - Integers the fused launcher computes --------*- C++ -*-===//
//
// What the launcher of a fused group checks before the fused launch is
// written over the launches' host arguments: the relations between the
// levels' sizes that scaled reads rely on, a stride the consumer derives
// from its parameters against the producer's (FusePlan.h). The plan keeps
// those expressions as trees whose leaves are constants and host arguments,
// so that the launcher names each argument by the parameter that passes it
// and the plan describes it by its source text: no text is searched for an
// argument's spelling and replaced.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_HOSTEXPR_H
#define CUDA_REWRITE_REWRITERS_FUSE_HOSTEXPR_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// An integer expression over the launches' host arguments, printed as it
/// was built: each Parens node is a pair of parentheses, binary operators
/// add none of their own.
struct HostExpr {
  enum class Kind { Constant, Argument, Binary, Parens };
  Kind K = Kind::Constant;
  int64_t Value = 0;    ///< Constant.
  std::string Argument; ///< Argument: the host argument's source text.
  std::string Op;       ///< Binary: the operator's spelling.
  std::vector<HostExpr> Operands; ///< Binary: two; Parens: one.

  static HostExpr constant(int64_t Value);
  static HostExpr argument(std::string Text);
  static HostExpr binary(HostExpr Left, llvm::StringRef Op, HostExpr Right);
  /// \p E in parentheses; an argument needs none where it is printed, so
  /// it is printed as it is (its name, or its text in parentheses).
  static HostExpr parens(HostExpr E);
  /// `E + K` or `E - |K|`; \p E for K = 0 and a constant folded.
  static HostExpr plus(HostExpr E, int64_t K);

  /// The C++ text naming each host argument (by its source text) as
  /// \p Name says.
  using ArgumentNamer =
      llvm::function_ref<std::string(const std::string &Text)>;
  std::string print(ArgumentNamer Name) const;
  /// The text the plan describes it by: each argument as written, in
  /// parentheses unless it is a name.
  std::string describe() const;

  friend bool operator==(const HostExpr &A, const HostExpr &B);
};

/// A condition the launcher checks: `Left Op Right` with Op one of `<`,
/// `<=`, `==`.
struct RelationCheck {
  HostExpr Left;
  std::string Op;
  HostExpr Right;

  std::string print(HostExpr::ArgumentNamer Name) const;
  std::string describe() const;
  friend bool operator==(const RelationCheck &A, const RelationCheck &B);
};

} // namespace cuda_rewrite

#endif
