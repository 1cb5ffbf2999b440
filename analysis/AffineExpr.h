//===- AffineExpr.h - Integer polynomials over index symbols ----*- C++ -*-===//
//
// Index expressions of stencil kernels, `(y + dy) * W + x + dx`, are affine in
// the thread coordinates but multiply parameters (`y * W`, `z * H * W`). An
// AffineExpr is therefore a polynomial with integer coefficients over opaque
// symbols; normalising two spellings of one index gives equal AffineExprs.
//
// What a symbol stands for (a coordinate, a parameter, a loop variable) is up
// to the client: symbols are plain numbers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_AFFINEEXPR_H
#define CUDA_REWRITE_ANALYSIS_AFFINEEXPR_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cuda_rewrite {

using SymbolId = unsigned;

/// A product of symbols, sorted, with repetition (`W * W` is {W, W}). The
/// empty monomial is the constant term.
using Monomial = llvm::SmallVector<SymbolId, 2>;

/// A polynomial sum(coefficient * monomial) with 64-bit coefficients. An
/// operation that overflows gives an expression that reports overflowed();
/// clients treat it like an expression they cannot analyse.
class AffineExpr {
public:
  AffineExpr() = default; ///< Zero.
  static AffineExpr constant(int64_t C);
  static AffineExpr symbol(SymbolId S);

  bool overflowed() const { return Overflow; }
  bool isZero() const { return !Overflow && Terms.empty(); }
  /// The value when no symbol occurs.
  std::optional<int64_t> getConstant() const;
  int64_t constantTerm() const { return coefficient({}); }
  int64_t coefficient(const Monomial &M) const;
  bool mentions(SymbolId S) const;
  /// Whether some symbol satisfies \p Pred.
  bool mentionsAny(llvm::function_ref<bool(SymbolId)> Pred) const;

  /// The factor that multiplies \p S: the terms that contain S, with one S
  /// removed. Null when some term contains S more than once (not linear).
  std::optional<AffineExpr> linearCoefficient(SymbolId S) const;
  /// The terms that do not contain \p S.
  AffineExpr withoutSymbol(SymbolId S) const;
  /// Replaces every occurrence of \p S by \p Value.
  AffineExpr substitute(SymbolId S, const AffineExpr &Value) const;
  /// this / Divisor when Divisor is one term (c * m) and divides every term
  /// exactly; null otherwise.
  std::optional<AffineExpr> divideExactly(const AffineExpr &Divisor) const;

  /// The greatest monomial: highest degree first, then by symbol numbers;
  /// the constant monomial for zero.
  const Monomial &leadingMonomial() const;
  const std::map<Monomial, int64_t> &terms() const { return Terms; }

  /// Readable form, e.g. "y*W + x - 1", given each symbol's name.
  std::string toString(llvm::function_ref<std::string(SymbolId)> Name) const;

  friend AffineExpr operator+(const AffineExpr &A, const AffineExpr &B);
  friend AffineExpr operator-(const AffineExpr &A, const AffineExpr &B);
  friend AffineExpr operator*(const AffineExpr &A, const AffineExpr &B);
  friend AffineExpr operator*(const AffineExpr &A, int64_t K);
  friend AffineExpr operator-(const AffineExpr &A);
  friend bool operator==(const AffineExpr &A, const AffineExpr &B) {
    return A.Overflow == B.Overflow && A.Terms == B.Terms;
  }
  friend bool operator!=(const AffineExpr &A, const AffineExpr &B) {
    return !(A == B);
  }

private:
  /// Adds C * M, dropping terms that cancel out.
  void addTerm(const Monomial &M, int64_t C);

  std::map<Monomial, int64_t> Terms; ///< No zero coefficients.
  bool Overflow = false;
};

} // namespace cuda_rewrite

#endif
