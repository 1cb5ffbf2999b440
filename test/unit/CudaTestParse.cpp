//===- CudaTestParse.cpp - Parse CUDA snippets in unit tests --------------===//

#include "test/unit/CudaTestParse.h"
#include "rewriters/PassManager.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace cuda_rewrite::test {

std::string appliedEdits(llvm::StringRef Source,
                         llvm::Expected<clang::tooling::Replacements> Edits) {
  EXPECT_TRUE(bool(Edits));
  if (!Edits) {
    llvm::consumeError(Edits.takeError());
    return "";
  }
  llvm::Expected<std::string> Result =
      clang::tooling::applyAllReplacements(Source, *Edits);
  EXPECT_TRUE(bool(Result));
  if (!Result) {
    llvm::consumeError(Result.takeError());
    return "";
  }
  return *Result;
}

std::unique_ptr<ASTUnit> parseCuda(llvm::StringRef Code, CudaSide Side) {
  llvm::Expected<CudaToolchain> TC = findCudaToolchain("", "sm_90");
  if (!TC) {
    ADD_FAILURE() << llvm::toString(TC.takeError());
    return nullptr;
  }
  std::unique_ptr<ASTUnit> AST = tooling::buildASTFromCodeWithArgs(
      Code, cudaParseArgs(*TC, Side), "input.cu", "cuda-rewrite-unittest");
  if (!AST || AST->getDiagnostics().hasErrorOccurred()) {
    ADD_FAILURE() << "the test's CUDA source did not parse";
    return nullptr;
  }
  return AST;
}

const FunctionDecl *findFunction(ASTUnit &AST, llvm::StringRef Name) {
  auto Matches =
      match(functionDecl(hasName(Name), isDefinition(), isExpansionInMainFile())
                .bind("f"),
            AST.getASTContext());
  if (Matches.empty())
    return nullptr;
  return Matches.front().getNodeAs<FunctionDecl>("f");
}

namespace {

class PragmaAction : public ASTFrontendAction {
public:
  PragmaAction(llvm::ArrayRef<const DirectiveSpec *> Table, PragmaFn Fn)
      : Table(Table), Fn(std::move(Fn)) {}
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().AddPragmaHandler(
        new CudaRewritePragmaHandler(Table, Directives));
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    struct Consumer : ASTConsumer {
      PragmaAction &A;
      explicit Consumer(PragmaAction &A) : A(A) {}
      void HandleTranslationUnit(ASTContext &Ctx) override {
        A.Fn(Ctx, attachPragmas(Ctx, A.Directives));
      }
    };
    return std::make_unique<Consumer>(*this);
  }

private:
  llvm::ArrayRef<const DirectiveSpec *> Table;
  PragmaFn Fn;
  std::vector<PragmaDirective> Directives;
};

} // namespace

void parseCudaWithPragmas(llvm::StringRef Code, PragmaFn Fn) {
  parseCudaWithPragmas(Code, registeredDirectives(), std::move(Fn));
}

void parseCudaWithPragmas(llvm::StringRef Code,
                          llvm::ArrayRef<const DirectiveSpec *> Table,
                          PragmaFn Fn) {
  llvm::Expected<CudaToolchain> TC = findCudaToolchain("", "sm_90");
  if (!TC) {
    ADD_FAILURE() << llvm::toString(TC.takeError());
    return;
  }
  tooling::runToolOnCodeWithArgs(
      std::make_unique<PragmaAction>(Table, std::move(Fn)), Code,
      cudaParseArgs(*TC, CudaSide::Host), "input.cu", "cuda-rewrite-unittest");
}

} // namespace cuda_rewrite::test
