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

std::vector<std::string>
launchArgumentsText(const clang::ASTContext &Ctx,
                    const clang::CUDAKernelCallExpr *Launch) {
  const auto *Config = clang::cast<clang::CallExpr>(Launch->getConfig());
  std::vector<std::string> Args;
  const char *Defaults[4] = {"1", "1", "0", "0"};
  for (unsigned I = 0; I != 4; ++I) {
    const clang::Expr *A =
        I < Config->getNumArgs() ? Config->getArg(I) : nullptr;
    Args.push_back(!A || clang::isa<clang::CXXDefaultArgExpr>(A)
                       ? Defaults[I]
                       : sourceText(Ctx, A->getSourceRange()));
  }
  for (const clang::Expr *A : Launch->arguments())
    Args.push_back(sourceText(Ctx, A->getSourceRange()));
  return Args;
}

} // namespace cuda_rewrite
