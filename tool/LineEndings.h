//===- LineEndings.h - A file's line endings in its rewrite --*- C++ -*-===//
//
// Generated code is written with '\n'. A file written with "\r\n" (CRLF, as
// Windows editors save it) would come back with mixed line endings, which
// shows as a change on every generated line in a diff and confuses tools
// that expect one style. The edits of such a file take its line ending.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_LINEENDINGS_H
#define CUDA_REWRITE_TOOL_LINEENDINGS_H

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringRef.h"

namespace cuda_rewrite {

/// Whether most of \p Text's lines end with "\r\n".
bool endsLinesWithCrlf(llvm::StringRef Text);

/// \p Edits of \p Original with every '\n' of their new text that lacks a
/// '\r' before it written "\r\n" where \p Original ends its lines so;
/// \p Edits as they are otherwise.
clang::tooling::Replacements
withLineEndingsOf(llvm::StringRef Original,
                  const clang::tooling::Replacements &Edits);

} // namespace cuda_rewrite

#endif
