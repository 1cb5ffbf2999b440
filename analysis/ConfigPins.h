//===- ConfigPins.h - Values a rewrite was made for -------------*- C++ -*-===//
//
// Analyses fold constants: a row stride `N`, a weight `C0`, a loop bound
// `R`, a `constexpr` size. Another build of the same source may define them
// otherwise (`-DN=2048`, a header's `#ifdef LARGE_DATASET`), and code
// generated from the folded value would then be silently wrong. Every
// folded value that does not come from literals written in place is
// therefore pinned: recorded with the source's own spelling and emitted
// beside the generated code as
//
//   static_assert((N) == 1024, "cuda-rewrite: rewritten for N == 1024; ...");
//
// so that any build where it differs fails to compile instead of computing
// something else (docs/design.md section 4). A part that cannot be spelled
// at file scope (a macro expanding to a local's name) makes pin() fail, and
// the analysis refuses.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_CONFIGPINS_H
#define CUDA_REWRITE_ANALYSIS_CONFIGPINS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include <set>
#include <string>

namespace cuda_rewrite {

/// One value the generated code assumes: `Spelling` is valid C++ at file
/// scope (a macro name, a qualified constant, `sizeof(T)`), `Value` a
/// literal of its type with the exact value (hexadecimal for floating
/// point).
struct ConfigPin {
  std::string Spelling;
  std::string Value;
  bool operator<(const ConfigPin &O) const {
    return std::tie(Spelling, Value) < std::tie(O.Spelling, O.Value);
  }
  bool operator==(const ConfigPin &O) const {
    return Spelling == O.Spelling && Value == O.Value;
  }
};

class ConfigPins {
public:
  /// Records what the value of the constant expression \p E depends on that
  /// another build could define otherwise: object-like macros, named
  /// constants outside the function (through locals' initialisers),
  /// enumerators, sizeof. Literals written in place need nothing. Returns
  /// false, with why(), if such a part cannot be spelled at file scope.
  bool pin(const clang::Expr *E, const clang::ASTContext &Ctx);

  /// Pins the size of the type spelled \p Type (a typedef or macro such as
  /// `real`, which another build may make double) to \p Bytes.
  void pinSize(llvm::StringRef Type, uint64_t Bytes);

  void merge(const ConfigPins &Other);
  bool empty() const { return Pins.empty(); }
  const std::set<ConfigPin> &pins() const { return Pins; }
  /// Why the last pin() failed.
  const std::string &why() const { return Why; }

  /// The static_asserts, one a line, each line starting with \p Indent;
  /// empty when nothing is pinned. Deterministic (sorted by spelling).
  std::string staticAsserts(llvm::StringRef Indent = "") const;

private:
  bool visit(const clang::Expr *E, const clang::ASTContext &Ctx,
             unsigned Depth);
  /// Refuses \p E, part of a macro that no text at file scope spells.
  bool refuseMacroPart(const clang::Expr *E, const clang::SourceManager &SM);
  bool add(std::string Spelling, const clang::Expr *ValueOf,
           const clang::ASTContext &Ctx);

  std::set<ConfigPin> Pins;
  std::string Why;
};

/// \p Value printed as a C++ literal that denotes it exactly: decimal
/// integers, hexadecimal floating point with the type's suffix. Empty when
/// it is neither.
std::string exactLiteral(const clang::APValue &Value, clang::QualType Type);

} // namespace cuda_rewrite

#endif
