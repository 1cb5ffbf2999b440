//===- LineEndings.cpp - Keep a file's line endings in its rewrite --------===//

#include "tool/LineEndings.h"

namespace cuda_rewrite {

bool endsLinesWithCrlf(llvm::StringRef Text) {
  size_t Lines = Text.count('\n');
  return Lines != 0 && Text.count("\r\n") * 2 > Lines;
}

clang::tooling::Replacements
withLineEndingsOf(llvm::StringRef Original,
                  const clang::tooling::Replacements &Edits) {
  if (!endsLinesWithCrlf(Original))
    return Edits;
  clang::tooling::Replacements Result;
  for (const clang::tooling::Replacement &R : Edits) {
    llvm::StringRef Text = R.getReplacementText();
    std::string Crlf;
    Crlf.reserve(Text.size() + Text.count('\n'));
    for (size_t I = 0; I != Text.size(); ++I) {
      if (Text[I] == '\n' && (I == 0 || Text[I - 1] != '\r'))
        Crlf += '\r';
      Crlf += Text[I];
    }
    // Offsets are unchanged and the edits were disjoint: add cannot fail.
    llvm::cantFail(Result.add(clang::tooling::Replacement(
        R.getFilePath(), R.getOffset(), R.getLength(), Crlf)));
  }
  return Result;
}

} // namespace cuda_rewrite
