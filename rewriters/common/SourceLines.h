//===- SourceLines.h - Line positions and edit errors for passes -*- C++
//-*-===//
//
// Generated definitions go on lines of their own, before or after the code
// they come from; every pass needs the same few positions, and reports a
// failed edit the same way.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_SOURCELINES_H
#define CUDA_REWRITE_REWRITERS_COMMON_SOURCELINES_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The start of the line \p Loc is on (its expansion, for a macro).
clang::SourceLocation lineStart(const clang::ASTContext &Ctx,
                                clang::SourceLocation Loc);

/// The start of the line after the token at \p Loc.
clang::SourceLocation lineAfter(const clang::ASTContext &Ctx,
                                clang::SourceLocation Loc);

/// The text of the tokens \p Range covers, as written in the file (for a
/// range in a macro expansion, the expansion's).
std::string sourceText(const clang::ASTContext &Ctx, clang::SourceRange Range);

/// The text of a kernel launch's configuration, `grid, block, shared bytes,
/// stream` (1, 1, 0, 0 where the launch leaves them out), followed by its
/// arguments: what a launcher function that replaces the launch takes.
std::vector<std::string>
launchArgumentsText(const clang::ASTContext &Ctx,
                    const clang::CUDAKernelCallExpr *Launch);

/// Reports \p E, if it is an error, as "<pass>: <message>" at \p Loc;
/// returns whether there was none.
bool checkEdit(clang::ASTContext &Ctx, llvm::Error E, clang::SourceLocation Loc,
               llvm::StringRef Pass);

} // namespace cuda_rewrite

#endif
