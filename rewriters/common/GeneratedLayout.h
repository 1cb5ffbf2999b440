//===- GeneratedLayout.h - One layout for all generated code ---*- C++ -*-===//
//
// Passes write generated code without caring for line lengths or alignment;
// the file's edits then go through clang-format once, restricted to the text
// they insert, so that every pass's code has the same layout and the user's
// own lines stay as they are (a pure deletion formats nothing). The style is
// the one clang-format itself would use for the file: the nearest
// .clang-format above it, else LLVM's; a style with DisableFormat keeps the
// generated text as the passes wrote it.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_GENERATEDLAYOUT_H
#define CUDA_REWRITE_REWRITERS_COMMON_GENERATEDLAYOUT_H

#include "clang/Format/Format.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace cuda_rewrite {

/// The style for generated code in the file at \p FilePath holding \p Code:
/// the nearest .clang-format (or _clang-format) above it, else LLVM's. An
/// unreadable style file is an error.
llvm::Expected<clang::format::FormatStyle>
generatedCodeStyle(llvm::StringRef FilePath, llvm::StringRef Code);

/// \p Edits (offsets into \p Original) with the text they insert laid out in
/// \p Style: the lines that hold inserted text, and no others, are formatted.
/// The result's offsets index \p Original, as \p Edits' do.
llvm::Expected<clang::tooling::Replacements> layOutGeneratedCode(
    llvm::StringRef Original, const clang::tooling::Replacements &Edits,
    const clang::format::FormatStyle &Style, llvm::StringRef FileName);

/// `Callee(a, b, c)` on one line, however long: passes write generated code
/// without line breaks and leave them to the layout.
std::string callText(llvm::StringRef Callee, llvm::ArrayRef<std::string> Args);

} // namespace cuda_rewrite

#endif
