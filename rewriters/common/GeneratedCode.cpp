//===- GeneratedCode.cpp - What every pass's generated code carries -------===//

#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/SourceManager.h"

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

clang::SourceLocation pinPlaceAfterLaunches(const clang::ASTContext &Ctx,
                                            llvm::ArrayRef<LaunchSite> Launches,
                                            const clang::FunctionDecl &Kernel) {
  const clang::SourceManager &SM = Ctx.getSourceManager();
  const clang::FunctionDecl *Def = Kernel.getDefinition();
  clang::SourceLocation Last =
      SM.getExpansionLoc((Def ? Def : &Kernel)->getEndLoc());
  for (const LaunchSite &L : Launches) {
    if (!L.Callee || !L.Enclosing ||
        L.Callee->getCanonicalDecl() != Kernel.getCanonicalDecl())
      continue;
    clang::SourceLocation End = SM.getExpansionLoc(L.Enclosing->getEndLoc());
    if (SM.isWrittenInMainFile(End) && SM.isBeforeInTranslationUnit(Last, End))
      Last = End;
  }
  return lineAfter(Ctx, Last);
}

} // namespace cuda_rewrite
