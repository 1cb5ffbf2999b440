//===- HostExpr.cpp - Integers the fused launcher computes ----------------===//

#include "rewriters/fuse/HostExpr.h"
#include "clang/Basic/CharInfo.h"

namespace cuda_rewrite {

HostExpr HostExpr::constant(int64_t Value) {
  HostExpr E;
  E.Value = Value;
  return E;
}

HostExpr HostExpr::argument(std::string Text) {
  HostExpr E;
  E.K = Kind::Argument;
  E.Argument = std::move(Text);
  return E;
}

HostExpr HostExpr::binary(HostExpr Left, llvm::StringRef Op, HostExpr Right) {
  HostExpr E;
  E.K = Kind::Binary;
  E.Op = Op.str();
  E.Operands = {std::move(Left), std::move(Right)};
  return E;
}

HostExpr HostExpr::parens(HostExpr Inner) {
  if (Inner.K == Kind::Argument)
    return Inner;
  HostExpr E;
  E.K = Kind::Parens;
  E.Operands = {std::move(Inner)};
  return E;
}

HostExpr HostExpr::plus(HostExpr E, int64_t K) {
  if (E.K == Kind::Constant)
    return constant(E.Value + K);
  if (K == 0)
    return E;
  return binary(std::move(E), K > 0 ? "+" : "-", constant(K > 0 ? K : -K));
}

std::string HostExpr::print(ArgumentNamer Name) const {
  switch (K) {
  case Kind::Constant:
    return std::to_string(Value);
  case Kind::Argument:
    return Name(Argument);
  case Kind::Binary:
    return Operands[0].print(Name) + " " + Op + " " + Operands[1].print(Name);
  case Kind::Parens:
    return "(" + Operands[0].print(Name) + ")";
  }
  return "";
}

std::string HostExpr::describe() const {
  return print([](const std::string &Text) {
    return clang::isValidAsciiIdentifier(Text) ? Text : "(" + Text + ")";
  });
}

bool operator==(const HostExpr &A, const HostExpr &B) {
  return A.K == B.K && A.Value == B.Value && A.Argument == B.Argument &&
         A.Op == B.Op && A.Operands == B.Operands;
}

std::string RelationCheck::print(HostExpr::ArgumentNamer Name) const {
  return Left.print(Name) + " " + Op + " " + Right.print(Name);
}

std::string RelationCheck::describe() const {
  return Left.describe() + " " + Op + " " + Right.describe();
}

bool operator==(const RelationCheck &A, const RelationCheck &B) {
  return A.Left == B.Left && A.Op == B.Op && A.Right == B.Right;
}

} // namespace cuda_rewrite
