//===- CudaTestParse.cpp - Parse CUDA snippets in unit tests --------------===//

#include "test/unit/CudaTestParse.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Tooling/Tooling.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace cuda_rewrite::test {

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

} // namespace cuda_rewrite::test
