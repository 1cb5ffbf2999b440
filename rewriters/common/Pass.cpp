//===- Pass.cpp - What a rewriting pass is --------------------------------===//

#include "rewriters/common/Pass.h"
#include "rewriters/common/SourceLines.h"
#include "llvm/ADT/STLExtras.h"

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

clang::SourceLocation firstDeclarationLine(const clang::ASTContext &Ctx) {
  const clang::SourceManager &SM = Ctx.getSourceManager();
  for (const clang::Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    clang::SourceLocation First = SM.getExpansionLoc(D->getBeginLoc());
    if (!D->isImplicit() && SM.isWrittenInMainFile(First))
      return lineStart(Ctx, First);
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
