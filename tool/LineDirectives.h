//===- LineDirectives.h - #line directives in rewritten files ---*- C++ -*-===//
//
// --line-directives: the rewritten file says, with #line directives, which
// line of the user's file each of its lines comes from, so that nvcc's
// errors, warnings and profilers (lineinfo) point at the original source and
// not at the rewritten copy.
//
// Edits are grouped by the original lines they touch (an edit that starts or
// ends mid-line touches the whole line); after each group whose rewritten
// text has another number of lines than the original, the next untouched
// line gets `#line <its original number> "<file>"`, and the file starts with
// `#line 1 "<file>"`. Code that an edit generated is thus attributed to the
// lines at or right after the construct it came from. A directive is only
// put at the start of a line outside comments, string literals, raw strings,
// parentheses (macro arguments) and lines continued with a backslash; where
// the next line is no such place, the directive goes to the first later line
// that is, before the next group.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_LINEDIRECTIVES_H
#define CUDA_REWRITE_TOOL_LINEDIRECTIVES_H

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace cuda_rewrite {

/// `#line <Line> "<FileName>"` and a newline, the name's backslashes,
/// quotes and newlines escaped.
std::string lineDirective(unsigned Line, llvm::StringRef FileName);

/// \p Original with \p Edits applied (their offsets index \p Original) and
/// #line directives naming \p FileName, as described at the top of this
/// file. Without edits, \p Original unchanged. Fails only where the edits do
/// not fit \p Original.
llvm::Expected<std::string>
applyWithLineDirectives(llvm::StringRef Original,
                        const clang::tooling::Replacements &Edits,
                        llvm::StringRef FileName);

} // namespace cuda_rewrite

#endif
