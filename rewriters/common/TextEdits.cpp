//===- TextEdits.cpp - Copies of source text with edits applied -----------===//

#include "rewriters/common/TextEdits.h"
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

} // namespace cuda_rewrite
