//===- SourceLines.cpp - Line positions and edit errors for passes --------===//

#include "rewriters/common/SourceLines.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace cuda_rewrite {

std::string sourceText(const ASTContext &Ctx, SourceRange Range) {
  const SourceManager &SM = Ctx.getSourceManager();
  CharSourceRange Chars = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(Range), SM, Ctx.getLangOpts());
  return Lexer::getSourceText(Chars, SM, Ctx.getLangOpts()).str();
}

SourceLocation lineStart(const ASTContext &Ctx, SourceLocation Loc) {
  const SourceManager &SM = Ctx.getSourceManager();
  Loc = SM.getExpansionLoc(Loc);
  return SM.translateLineCol(SM.getFileID(Loc), SM.getExpansionLineNumber(Loc),
                             1);
}

SourceLocation lineAfter(const ASTContext &Ctx, SourceLocation Loc) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation End = Lexer::getLocForEndOfToken(SM.getExpansionLoc(Loc), 0,
                                                  SM, Ctx.getLangOpts());
  StringRef Buffer = SM.getBufferData(SM.getMainFileID());
  size_t Newline = Buffer.find('\n', SM.getFileOffset(End));
  unsigned Offset = Newline == StringRef::npos ? Buffer.size() : Newline + 1;
  return SM.getLocForStartOfFile(SM.getMainFileID()).getLocWithOffset(Offset);
}

bool checkEdit(ASTContext &Ctx, llvm::Error E, SourceLocation Loc,
               StringRef Pass) {
  if (!E)
    return true;
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  Diags.Report(Loc, Diags.getCustomDiagID(DiagnosticsEngine::Error, "%0: %1"))
      << Pass << toString(std::move(E));
  return false;
}

} // namespace cuda_rewrite
