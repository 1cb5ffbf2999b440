//===- TemplateSpelling.cpp - Names of template instantiations ------------===//

#include "rewriters/common/TemplateSpelling.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/TemplateBase.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <vector>

using namespace clang;

namespace cuda_rewrite {

bool isTemplateInstantiation(const FunctionDecl &F) {
  return F.getPrimaryTemplate() &&
         clang::isTemplateInstantiation(F.getTemplateSpecializationKind());
}

std::string templateArgumentsText(const FunctionDecl &F) {
  const TemplateArgumentList *Args = F.getTemplateSpecializationArgs();
  if (!Args)
    return "";
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printTemplateArgumentList(OS, Args->asArray(),
                            F.getASTContext().getPrintingPolicy());
  return Text;
}

std::string templateArgumentsAsCalled(const FunctionDecl &F, const Expr *Callee,
                                      std::vector<const Expr *> &Written) {
  const TemplateArgumentList *Args = F.getTemplateSpecializationArgs();
  if (!Args)
    return "";
  const ASTContext &Ctx = F.getASTContext();
  const auto *Ref = dyn_cast<DeclRefExpr>(Callee->IgnoreParenImpCasts());
  std::vector<std::string> Texts;
  if (Ref)
    for (const TemplateArgumentLoc &Arg : Ref->template_arguments()) {
      Texts.push_back(Lexer::getSourceText(
                          CharSourceRange::getTokenRange(Arg.getSourceRange()),
                          Ctx.getSourceManager(), Ctx.getLangOpts())
                          .str());
      if (Arg.getArgument().getKind() == TemplateArgument::Expression)
        Written.push_back(Arg.getSourceExpression());
    }
  PrintingPolicy Policy = Ctx.getPrintingPolicy();
  for (unsigned I = Texts.size(); I < Args->size(); ++I) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    Args->get(I).print(Policy, OS, /*IncludeType=*/true);
    Texts.push_back(Text);
  }
  return "<" + llvm::join(Texts, ", ") + ">";
}

std::string nameWithTemplateArguments(const FunctionDecl &F) {
  return F.getNameAsString() +
         (isTemplateInstantiation(F) ? templateArgumentsText(F) : "");
}

std::optional<std::string>
templateHeadText(const FunctionTemplateDecl &Template, std::string &Why) {
  PrintingPolicy Policy = Template.getASTContext().getPrintingPolicy();
  std::vector<std::string> Params;
  for (const NamedDecl *P : *Template.getTemplateParameters()) {
    if (P->isParameterPack()) {
      Why = "its template parameter '" + P->getNameAsString() + "' is a pack";
      return std::nullopt;
    }
    // An unnamed parameter is used nowhere: any name serves.
    std::string Name = P->getName().empty()
                           ? "Unnamed" + std::to_string(Params.size())
                           : P->getNameAsString();
    if (const auto *Type = dyn_cast<TemplateTypeParmDecl>(P)) {
      Params.push_back(
          (Type->wasDeclaredWithTypename() ? "typename " : "class ") + Name);
    } else if (const auto *Value = dyn_cast<NonTypeTemplateParmDecl>(P)) {
      std::string Text;
      llvm::raw_string_ostream OS(Text);
      Value->getType().print(OS, Policy, Name);
      Params.push_back(Text);
    } else {
      Why =
          "its template parameter '" + P->getNameAsString() + "' is a template";
      return std::nullopt;
    }
  }
  return "template <" + llvm::join(Params, ", ") + ">";
}

} // namespace cuda_rewrite
