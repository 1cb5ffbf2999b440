//===- CudaTestParse.h - Parse CUDA snippets in unit tests ------*- C++ -*-===//
//
// Unit tests of analyses parse small CUDA sources with exactly the arguments
// the tool uses, so that a test sees the AST the tool sees; tests of edits
// apply them to their source.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TEST_UNIT_CUDATESTPARSE_H
#define CUDA_REWRITE_TEST_UNIT_CUDATESTPARSE_H

#include "analysis/Pragmas.h"
#include "tool/CompilerArgs.h"
#include "clang/AST/Decl.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <memory>
#include <vector>

namespace cuda_rewrite::test {

/// Parses \p Code as the CUDA file "input.cu"; fails the current test (and
/// returns null) on any parse error.
std::unique_ptr<clang::ASTUnit> parseCuda(llvm::StringRef Code,
                                          CudaSide Side = CudaSide::Host);

/// \p Source with \p Edits applied; "" (and a failure of the current test)
/// when making the edits or applying them failed.
std::string appliedEdits(llvm::StringRef Source,
                         llvm::Expected<clang::tooling::Replacements> Edits);

/// The function named \p Name in \p AST's main file, or null.
const clang::FunctionDecl *findFunction(clang::ASTUnit &AST,
                                        llvm::StringRef Name);

/// Called with the parsed file and its pragmas attached to their targets.
using PragmaFn = std::function<void(clang::ASTContext &,
                                    const std::vector<AttachedPragma> &)>;

/// Parses \p Code as the tool does (host side, the pragma handler
/// installed), attaches its pragmas and calls \p Fn while the AST is alive.
/// Errors, of the parse or of a pragma, are in the context's diagnostics.
void parseCudaWithPragmas(llvm::StringRef Code, PragmaFn Fn);
/// The same with the directives of \p Table (which must outlive the call)
/// instead of the registered passes' (a pass kept in the tests).
void parseCudaWithPragmas(llvm::StringRef Code,
                          llvm::ArrayRef<const DirectiveSpec *> Table,
                          PragmaFn Fn);

} // namespace cuda_rewrite::test

#endif
