//===- AffineExpr.cpp - Integer polynomials over index symbols ------------===//

#include "analysis/AffineExpr.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include <algorithm>

namespace cuda_rewrite {

AffineExpr AffineExpr::constant(int64_t C) {
  AffineExpr E;
  E.addTerm({}, C);
  return E;
}

AffineExpr AffineExpr::symbol(SymbolId S) {
  AffineExpr E;
  E.addTerm({S}, 1);
  return E;
}

void AffineExpr::addTerm(const Monomial &M, int64_t C) {
  if (C == 0)
    return;
  auto It = Terms.find(M);
  if (It == Terms.end()) {
    Terms.emplace(M, C);
    return;
  }
  std::optional<int64_t> Sum = llvm::checkedAdd(It->second, C);
  if (!Sum) {
    Overflow = true;
    return;
  }
  if (*Sum == 0)
    Terms.erase(It);
  else
    It->second = *Sum;
}

std::optional<int64_t> AffineExpr::getConstant() const {
  if (Overflow)
    return std::nullopt;
  if (Terms.empty())
    return 0;
  if (Terms.size() == 1 && Terms.begin()->first.empty())
    return Terms.begin()->second;
  return std::nullopt;
}

int64_t AffineExpr::coefficient(const Monomial &M) const {
  auto It = Terms.find(M);
  return It == Terms.end() ? 0 : It->second;
}

bool AffineExpr::mentions(SymbolId S) const {
  return mentionsAny([S](SymbolId T) { return T == S; });
}

bool AffineExpr::mentionsAny(llvm::function_ref<bool(SymbolId)> Pred) const {
  for (const auto &[M, C] : Terms)
    if (llvm::any_of(M, Pred))
      return true;
  return false;
}

std::optional<AffineExpr> AffineExpr::linearCoefficient(SymbolId S) const {
  AffineExpr Result;
  Result.Overflow = Overflow;
  for (const auto &[M, C] : Terms) {
    auto Count = llvm::count(M, S);
    if (Count == 0)
      continue;
    if (Count > 1)
      return std::nullopt;
    Monomial Rest;
    for (SymbolId T : M)
      if (T != S)
        Rest.push_back(T);
    Result.addTerm(Rest, C);
  }
  return Result;
}

AffineExpr AffineExpr::withoutSymbol(SymbolId S) const {
  AffineExpr Result;
  Result.Overflow = Overflow;
  for (const auto &[M, C] : Terms)
    if (!llvm::is_contained(M, S))
      Result.addTerm(M, C);
  return Result;
}

AffineExpr AffineExpr::substitute(SymbolId S, const AffineExpr &Value) const {
  AffineExpr Result;
  Result.Overflow = Overflow || Value.Overflow;
  for (const auto &[M, C] : Terms) {
    AffineExpr Term = constant(C);
    for (SymbolId T : M)
      Term = Term * (T == S ? Value : symbol(T));
    Result = Result + Term;
  }
  return Result;
}

std::optional<AffineExpr>
AffineExpr::divideExactly(const AffineExpr &Divisor) const {
  if (Overflow || Divisor.Overflow || Divisor.Terms.size() != 1)
    return std::nullopt;
  const auto &[DM, DC] = *Divisor.Terms.begin();
  AffineExpr Result;
  for (const auto &[M, C] : Terms) {
    if (C % DC != 0)
      return std::nullopt;
    // Remove DM from M as a multiset; both are sorted.
    Monomial Rest;
    size_t J = 0;
    for (SymbolId T : M) {
      if (J < DM.size() && DM[J] == T)
        ++J;
      else
        Rest.push_back(T);
    }
    if (J != DM.size())
      return std::nullopt;
    Result.addTerm(Rest, C / DC);
  }
  return Result;
}

const Monomial &AffineExpr::leadingMonomial() const {
  static const Monomial ConstantTerm;
  if (Terms.empty())
    return ConstantTerm; // Zero (or overflowed); callers check first.
  const Monomial *Best = nullptr;
  for (const auto &[M, C] : Terms)
    if (!Best || M.size() > Best->size() ||
        (M.size() == Best->size() && *Best < M))
      Best = &M;
  return *Best;
}

std::string
AffineExpr::toString(llvm::function_ref<std::string(SymbolId)> Name) const {
  if (Overflow)
    return "<overflow>";
  if (Terms.empty())
    return "0";
  // Higher degrees first, the constant last: "z*H*W + y*W + x - 1".
  std::vector<std::pair<const Monomial *, int64_t>> Order;
  for (const auto &[M, C] : Terms)
    Order.push_back({&M, C});
  std::stable_sort(Order.begin(), Order.end(), [](auto &A, auto &B) {
    return A.first->size() > B.first->size();
  });
  std::string Out;
  for (const auto &[M, C] : Order) {
    bool First = Out.empty();
    uint64_t Magnitude = C < 0 ? 0 - static_cast<uint64_t>(C) : C;
    if (First)
      Out += C < 0 ? "-" : "";
    else
      Out += C < 0 ? " - " : " + ";
    std::string Factors;
    for (SymbolId S : *M)
      Factors += (Factors.empty() ? "" : "*") + Name(S);
    if (Factors.empty())
      Out += std::to_string(Magnitude);
    else if (Magnitude == 1)
      Out += Factors;
    else
      Out += std::to_string(Magnitude) + "*" + Factors;
  }
  return Out;
}

AffineExpr operator+(const AffineExpr &A, const AffineExpr &B) {
  AffineExpr R = A;
  R.Overflow |= B.Overflow;
  for (const auto &[M, C] : B.Terms)
    R.addTerm(M, C);
  return R;
}

AffineExpr operator-(const AffineExpr &A) { return A * int64_t(-1); }

AffineExpr operator-(const AffineExpr &A, const AffineExpr &B) {
  return A + (-B);
}

AffineExpr operator*(const AffineExpr &A, int64_t K) {
  AffineExpr R;
  R.Overflow = A.Overflow;
  for (const auto &[M, C] : A.Terms) {
    std::optional<int64_t> P = llvm::checkedMul(C, K);
    if (!P)
      R.Overflow = true;
    else
      R.addTerm(M, *P);
  }
  return R;
}

AffineExpr operator*(const AffineExpr &A, const AffineExpr &B) {
  AffineExpr R;
  R.Overflow = A.Overflow || B.Overflow;
  for (const auto &[MA, CA] : A.Terms) {
    for (const auto &[MB, CB] : B.Terms) {
      std::optional<int64_t> P = llvm::checkedMul(CA, CB);
      if (!P) {
        R.Overflow = true;
        continue;
      }
      Monomial M(MA.begin(), MA.end());
      M.append(MB.begin(), MB.end());
      llvm::sort(M);
      R.addTerm(M, *P);
    }
  }
  return R;
}

} // namespace cuda_rewrite
