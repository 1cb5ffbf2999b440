//===- TemplateSpellingTest.cpp - Names of template instantiations --------===//

#include "rewriters/common/TemplateSpelling.h"
#include "test/unit/CudaTestParse.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

/// The instantiations of the function template \p Name in \p AST.
std::vector<const clang::FunctionDecl *> instances(clang::ASTUnit &AST,
                                                   llvm::StringRef Name) {
  const clang::FunctionDecl *Pattern = findFunction(AST, Name);
  std::vector<const clang::FunctionDecl *> Found;
  if (Pattern && Pattern->getDescribedFunctionTemplate())
    for (const clang::FunctionDecl *F :
         Pattern->getDescribedFunctionTemplate()->specializations())
      Found.push_back(F);
  return Found;
}

const char *const Kernels = R"(
template <int R, typename T = float, bool Unused = true>
__global__ void box(const T *in, T *out) { out[threadIdx.x] = in[R]; }
template <typename, int> __global__ void unnamed(float *p) { p[0] = 0; }
template <int... Rs> __global__ void pack(float *p) { p[0] = 0; }
#define RADIUS 2
void run(const float *a, float *b, const double *c, double *d) {
  box<RADIUS><<<1, 32>>>(a, b);
  box<1, double><<<1, 32>>>(c, d);
  unnamed<int, 3><<<1, 1>>>(b);
  pack<1, 2><<<1, 1>>>(b);
}
)";

TEST(TemplateSpelling, ArgumentsOfAnInstantiation) {
  auto AST = parseCuda(Kernels);
  ASSERT_TRUE(AST);
  std::vector<std::string> Names;
  for (const clang::FunctionDecl *F : instances(*AST, "box")) {
    EXPECT_TRUE(isTemplateInstantiation(*F));
    Names.push_back(nameWithTemplateArguments(*F));
  }
  ASSERT_EQ(Names.size(), 2u);
  EXPECT_EQ(Names[0], "box<2, float, true>");
  EXPECT_EQ(Names[1], "box<1, double, true>");
  EXPECT_FALSE(isTemplateInstantiation(*findFunction(*AST, "run")));
  EXPECT_EQ(nameWithTemplateArguments(*findFunction(*AST, "run")), "run");
}

TEST(TemplateSpelling, HeadLeavesDefaultsOutAndNamesUnnamedParameters) {
  auto AST = parseCuda(Kernels);
  ASSERT_TRUE(AST);
  std::string Why;
  std::optional<std::string> Box = templateHeadText(
      *findFunction(*AST, "box")->getDescribedFunctionTemplate(), Why);
  ASSERT_TRUE(Box) << Why;
  EXPECT_EQ(*Box, "template <int R, typename T, bool Unused>");
  std::optional<std::string> Unnamed = templateHeadText(
      *findFunction(*AST, "unnamed")->getDescribedFunctionTemplate(), Why);
  ASSERT_TRUE(Unnamed) << Why;
  EXPECT_EQ(*Unnamed, "template <typename Unnamed0, int Unnamed1>");
  EXPECT_FALSE(templateHeadText(
      *findFunction(*AST, "pack")->getDescribedFunctionTemplate(), Why));
  EXPECT_EQ(Why, "its template parameter 'Rs' is a pack");
}

/// The launches of \p AST, in order.
std::vector<const clang::CUDAKernelCallExpr *> launches(clang::ASTUnit &AST) {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    std::vector<const clang::CUDAKernelCallExpr *> Found;
    bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr *E) {
      Found.push_back(E);
      return true;
    }
  } F;
  F.TraverseAST(AST.getASTContext());
  return F.Found;
}

// A launch keeps the arguments it writes, in their spelling (another
// definition of RADIUS names another instantiation); the deduced and
// default ones follow as the instantiation has them.
TEST(TemplateSpelling, ArgumentsAsTheLaunchWritesThem) {
  auto AST = parseCuda(Kernels);
  ASSERT_TRUE(AST);
  std::vector<const clang::CUDAKernelCallExpr *> Calls = launches(*AST);
  ASSERT_GE(Calls.size(), 2u);
  std::vector<const clang::Expr *> Written;
  EXPECT_EQ(templateArgumentsAsCalled(*Calls[0]->getDirectCallee(),
                                      Calls[0]->getCallee(), Written),
            "<RADIUS, float, true>");
  ASSERT_EQ(Written.size(), 1u);
  Written.clear();
  EXPECT_EQ(templateArgumentsAsCalled(*Calls[1]->getDirectCallee(),
                                      Calls[1]->getCallee(), Written),
            "<1, double, true>");
}

} // namespace
