//===- TemplateSpelling.h - Names of template instantiations ----*- C++ -*-===//
//
// A pass that rewrites an instantiation of a template kernel writes its code
// as explicit specializations of templates of its own, which take the
// kernel template's parameters: `template <int R, typename T> __global__
// void blur_systolic(...);` then `template <> __global__ void
// blur_systolic<1, float>(...) {...}`. These spell the pieces.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_TEMPLATESPELLING_H
#define CUDA_REWRITE_REWRITERS_COMMON_TEMPLATESPELLING_H

#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// Whether \p F was instantiated from a function template (not a function
/// or an explicit specialization the user wrote).
bool isTemplateInstantiation(const clang::FunctionDecl &F);

/// `<1, float>`: the template arguments of the instantiation \p F.
std::string templateArgumentsText(const clang::FunctionDecl &F);

/// `blur<1, float>` for an instantiation, the plain name otherwise.
std::string nameWithTemplateArguments(const clang::FunctionDecl &F);

/// The template arguments a call of the instantiation \p F names it with,
/// `<RADIUS, float, true>`: those the call writes (\p Callee's explicit
/// arguments, `box<RADIUS>`) in their own spelling, so that another build
/// that defines RADIUS otherwise names another instantiation, then the
/// deduced and default ones as \p F has them. \p Written gets the
/// expressions among the written ones.
std::string
templateArgumentsAsCalled(const clang::FunctionDecl &F,
                          const clang::Expr *Callee,
                          std::vector<const clang::Expr *> &Written);

/// `template <int R, typename T>`: the parameter list of \p Template for a
/// new template that takes the same arguments (default arguments left out,
/// unnamed parameters named). None, with \p Why, for parameter kinds a new
/// template cannot simply repeat (template template parameters, packs).
std::optional<std::string>
templateHeadText(const clang::FunctionTemplateDecl &Template, std::string &Why);

} // namespace cuda_rewrite

#endif
