//===- Pass.cpp - What a rewriting pass is --------------------------------===//

#include "rewriters/common/Pass.h"
#include "rewriters/common/SourceLines.h"
#include "llvm/ADT/STLExtras.h"
#include <vector>

namespace cuda_rewrite {

bool Pass::takes(const CandidateKind &Kind) const {
  return llvm::is_contained(Kinds, &Kind);
}

bool Pass::answers(const DirectiveSpec &Directive) const {
  return llvm::is_contained(Directives, &Directive);
}

std::string Pass::pragmaTarget(const AttachedPragma &P) {
  return P.targetFunction()
             ? "kernel '" + P.targetFunction()->getNameAsString() + "'"
             : std::string("the statement it precedes");
}

std::string Pass::whyNothingToRewrite(const AttachedPragma &P) const {
  return pragmaTarget(P) + " holds no candidate of this directive";
}

std::string Pass::whyNotACandidate(const clang::FunctionDecl &) const {
  return "";
}

/// \p Offset, or the start of the outermost `#if`, `#ifdef` or `#ifndef`
/// line of \p Text still open there: code put at the result is compiled in
/// every configuration that compiles what lies at \p Offset.
static size_t outsideConditionals(llvm::StringRef Text, size_t Offset) {
  std::vector<size_t> Open;
  for (size_t Line = 0; Line < Offset;) {
    size_t End = Text.find('\n', Line);
    End = End == llvm::StringRef::npos ? Text.size() : End;
    llvm::StringRef Directive = Text.slice(Line, End).ltrim();
    if (Directive.consume_front("#")) {
      Directive = Directive.ltrim();
      if (Directive.starts_with("if"))
        Open.push_back(Line);
      else if (Directive.starts_with("endif") && !Open.empty())
        Open.pop_back();
    }
    Line = End + 1;
  }
  return Open.empty() ? Offset : Open.front();
}

clang::SourceLocation firstDeclarationLine(const clang::ASTContext &Ctx) {
  const clang::SourceManager &SM = Ctx.getSourceManager();
  for (const clang::Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    clang::SourceLocation First = SM.getExpansionLoc(D->getBeginLoc());
    if (D->isImplicit() || !SM.isWrittenInMainFile(First))
      continue;
    clang::SourceLocation Line = lineStart(Ctx, First);
    clang::FileID File = SM.getMainFileID();
    size_t Offset = SM.getFileOffset(Line);
    return SM.getLocForStartOfFile(File).getLocWithOffset(
        outsideConditionals(SM.getBufferData(File), Offset));
  }
  return {};
}

bool includeRuntimeHeader(PassContext &Context, llvm::StringRef Header,
                          clang::SourceLocation Loc, llvm::StringRef Pass) {
  clang::SourceLocation Top = firstDeclarationLine(Context.Ctx);
  return !Top.isValid() ||
         checkEdit(
             Context.Ctx,
             Context.Edits.addDefinition(
                 ("0/include-" + Header).str(),
                 ("#include \"cuda_rewrite/" + Header + ".cuh\"\n\n").str(),
                 Top),
             Loc, Pass);
}

} // namespace cuda_rewrite
