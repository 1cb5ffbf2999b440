//===- CudaTestParse.h - Parse CUDA snippets in unit tests ------*- C++ -*-===//
//
// Unit tests of analyses parse small CUDA sources with exactly the arguments
// the tool uses, so that a test sees the AST the tool sees.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TEST_UNIT_CUDATESTPARSE_H
#define CUDA_REWRITE_TEST_UNIT_CUDATESTPARSE_H

#include "tool/CompilerArgs.h"
#include "clang/AST/Decl.h"
#include "clang/Frontend/ASTUnit.h"
#include <memory>

namespace cuda_rewrite::test {

/// Parses \p Code as the CUDA file "input.cu"; fails the current test (and
/// returns null) on any parse error.
std::unique_ptr<clang::ASTUnit> parseCuda(llvm::StringRef Code,
                                          CudaSide Side = CudaSide::Host);

/// The function named \p Name in \p AST's main file, or null.
const clang::FunctionDecl *findFunction(clang::ASTUnit &AST,
                                        llvm::StringRef Name);

} // namespace cuda_rewrite::test

#endif
