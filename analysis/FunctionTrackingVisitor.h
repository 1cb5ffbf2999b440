//===- FunctionTrackingVisitor.h - Visitors that know their function -*- C++
//-*-===//
//
// Most analyses need, at each statement, the function whose body holds it
// (a launch from a __global__ function is device-side; a { } block in a host
// function may be a stage chain). This base keeps that function as the
// visitor descends, for functions, methods, constructors and lambdas' call
// operators alike.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_FUNCTIONTRACKINGVISITOR_H
#define CUDA_REWRITE_ANALYSIS_FUNCTIONTRACKINGVISITOR_H

#include "clang/AST/RecursiveASTVisitor.h"

namespace cuda_rewrite {

template <typename Derived>
class FunctionTrackingVisitor : public clang::RecursiveASTVisitor<Derived> {
  using Base = clang::RecursiveASTVisitor<Derived>;

public:
  bool TraverseDecl(clang::Decl *D) {
    auto *F = llvm::dyn_cast_or_null<clang::FunctionDecl>(D);
    if (!F)
      return Base::TraverseDecl(D);
    const clang::FunctionDecl *Saved = Current;
    Current = F;
    bool Result = Base::TraverseDecl(D);
    Current = Saved;
    return Result;
  }

protected:
  /// The innermost function being traversed, or null at file scope.
  const clang::FunctionDecl *currentFunction() const { return Current; }

private:
  const clang::FunctionDecl *Current = nullptr;
};

} // namespace cuda_rewrite

#endif
