//===- GeneratedCode.cpp - What every pass's generated code carries -------===//

#include "rewriters/common/GeneratedCode.h"

namespace cuda_rewrite {

llvm::StringRef rewrittenFileMarker() {
  return "// Rewritten by cuda-rewrite: running it again on this file changes "
         "nothing.";
}

std::optional<unsigned> findRewrittenFileMarker(llvm::StringRef FileText) {
  unsigned Line = 1;
  for (llvm::StringRef Rest = FileText; !Rest.empty(); ++Line) {
    auto [Text, Next] = Rest.split('\n');
    if (Text.rtrim("\r").trim() == rewrittenFileMarker())
      return Line;
    Rest = Next;
  }
  return std::nullopt;
}

std::string pinnedValues(const ConfigPins &Pins) {
  if (Pins.empty())
    return "";
  return "// The values this code was generated for: a build that defines "
         "them\n// otherwise must rerun cuda-rewrite.\n" +
         Pins.staticAsserts() + "\n";
}

} // namespace cuda_rewrite
