//===- RemovedApis.h - CUDA runtime functions CUDA 13 removed ---*- C++ -*-===//
//
// CUDA 13 removed runtime functions that older programs still call:
// `cudaThreadSynchronize()` and the rest of the cudaThread* family, the
// launch API of `cudaConfigureCall`. nvcc rejects such a file; so would the
// tool's parse, with clang's "use of undeclared identifier". The parse
// prelude declares them again (parsePreludeText), so that the file parses,
// and this check turns each call into an error that names the replacement,
// with a fix-it where a new name is all it takes. With --fix-removed-apis
// the tool makes those renames itself, as edits of the rewrite.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_REMOVEDAPIS_H
#define CUDA_REWRITE_TOOL_REMOVEDAPIS_H

#include "clang/AST/ASTContext.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

class EditSet;

struct RemovedApi {
  llvm::StringLiteral Name;
  /// What to call instead.
  llvm::StringLiteral Replacement;
  /// The replacement takes the same arguments: renaming the call is all.
  bool Rename;
};

/// The functions CUDA 13 removed that the prelude declares again.
llvm::ArrayRef<RemovedApi> removedApis();

/// The prelude's declarations of removedApis(), for CUDA 13 or later.
std::string removedApiDeclarations();

/// Reports each use of a removed function outside system headers as an
/// error naming its replacement (with a fix-it for a rename); with
/// \p Fix, renames those in the main file through \p Fix instead (a remark
/// with \p Remarks) and reports only the others. Returns whether any error
/// was reported.
bool reportRemovedApis(clang::ASTContext &Ctx, EditSet *Fix, bool Remarks);

} // namespace cuda_rewrite

#endif
