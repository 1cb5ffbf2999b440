//===- TextEdits.cpp - Copies of source text with edits applied -----------===//

#include "rewriters/common/TextEdits.h"
#include "clang/Format/Format.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/STLExtras.h"

namespace cuda_rewrite {

std::string applyTextEdits(llvm::StringRef Buffer, unsigned Begin, unsigned End,
                           std::vector<TextEdit> Edits) {
  llvm::sort(Edits, [](const TextEdit &A, const TextEdit &B) {
    return A.Begin < B.Begin || (A.Begin == B.Begin && A.End > B.End);
  });
  std::string Out;
  unsigned At = Begin;
  for (const TextEdit &E : Edits) {
    if (E.Begin < At || E.End > End)
      continue;
    Out += Buffer.slice(At, E.Begin).str() + E.Text;
    At = E.End;
  }
  return Out + Buffer.slice(At, End).str();
}

std::string formatLLVMStyle(const std::string &Code, unsigned ColumnLimit) {
  clang::format::FormatStyle Style = clang::format::getLLVMStyle();
  Style.Language = clang::format::FormatStyle::LK_Cpp;
  Style.ColumnLimit = ColumnLimit;
  clang::tooling::Replacements Changes = clang::format::reformat(
      Style, Code, {clang::tooling::Range(0, unsigned(Code.size()))},
      "generated.cu");
  llvm::Expected<std::string> Result =
      clang::tooling::applyAllReplacements(Code, Changes);
  if (!Result) {
    llvm::consumeError(Result.takeError());
    return Code; // Unformatted, but the same code.
  }
  return *Result;
}

} // namespace cuda_rewrite
