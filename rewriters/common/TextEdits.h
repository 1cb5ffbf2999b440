//===- TextEdits.h - Copies of source text with edits applied ---*- C++ -*-===//
//
// Generated code often starts from a copy of the user's code (a stage's body,
// a kernel's) with a few expressions replaced. The copy is built from the
// file's text and edits in file offsets, so that everything else stays as
// the user wrote it.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_TEXTEDITS_H
#define CUDA_REWRITE_REWRITERS_COMMON_TEXTEDITS_H

#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// Replaces [Begin, End) of a file's text with Text.
struct TextEdit {
  unsigned Begin, End;
  std::string Text;
};

/// The text of [Begin, End) of \p Buffer with \p Edits applied: those inside
/// it; of two nested edits the outer one wins (the inner one is dropped).
std::string applyTextEdits(llvm::StringRef Buffer, unsigned Begin, unsigned End,
                           std::vector<TextEdit> Edits);

} // namespace cuda_rewrite

#endif
