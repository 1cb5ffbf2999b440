#include "analysis/Uniformity.h"
#include "test/unit/CudaTestParse.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const CUDAKernelCallExpr *firstLaunchIn(const FunctionDecl &F) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const CUDAKernelCallExpr *Call = nullptr;
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
      Call = E;
      return false;
    }
  } Finder;
  Finder.TraverseStmt(F.getBody());
  return Finder.Call;
}

/// The arguments of the only device-side launch in `parent`, checked for
/// uniformity in \p Scope: "u" for uniform, "-" for not.
std::string uniformity(const std::string &Body, UniformScope Scope,
                       bool RunsAggregated = false) {
  std::string Code = "constexpr int K = 4;\n"
                     "__device__ int table[8];\n"
                     "__device__ int id() { return threadIdx.x; }\n"
                     "__global__ void child(int a, int b, int c, int d) {}\n"
                     "__global__ void parent(int n, int *p, int m) {\n" +
                     Body + "\n}\n";
  auto AST = parseCuda(Code);
  if (!AST)
    return "parse error";
  const FunctionDecl *Parent = findFunction(*AST, "parent");
  const CUDAKernelCallExpr *Call = firstLaunchIn(*Parent);
  if (!Call)
    return "no launch";
  // Aggregated, `parent` gets `p` per launch and its built-ins vary.
  UniformityAssumptions Assumptions;
  if (RunsAggregated) {
    Assumptions.LaunchShapeVaries = true;
    Assumptions.VaryingParams.insert(Parent->getParamDecl(1));
  }
  std::string Result;
  for (const Expr *Arg : Call->arguments())
    Result += isUniform(Arg, *Parent, Scope, Assumptions) ? "u" : "-";
  return Result;
}

} // namespace

TEST(Uniformity, ConstantsAndUnchangedParameters) {
  EXPECT_EQ(uniformity("child<<<1, 1>>>(n, K, 3 * n + 1, sizeof(int));",
                       UniformScope::Grid),
            "uuuu");
}

TEST(Uniformity, ThreadDependentValuesAreNot) {
  EXPECT_EQ(uniformity("int i = threadIdx.x;\n"
                       "child<<<1, 1>>>(threadIdx.x, i, id(), p[0]);",
                       UniformScope::Block),
            "----");
}

TEST(Uniformity, BlockIndexIsUniformInABlockOnly) {
  EXPECT_EQ(uniformity("child<<<1, 1>>>(blockIdx.x, blockDim.x * n, "
                       "gridDim.y, blockIdx.y + K);",
                       UniformScope::Block),
            "uuuu");
  EXPECT_EQ(uniformity("child<<<1, 1>>>(blockIdx.x, blockDim.x * n, "
                       "gridDim.y, blockIdx.y + K);",
                       UniformScope::Grid),
            "-uu-");
}

TEST(Uniformity, ModifiedParametersAreNot) {
  EXPECT_EQ(uniformity("if (threadIdx.x == 0) n = 5;\n"
                       "int &alias = m;\n"
                       "child<<<1, 1>>>(n, m, K, 0);",
                       UniformScope::Block),
            "--uu");
}

TEST(Uniformity, LoadsAndCallsAreNot) {
  EXPECT_EQ(uniformity("child<<<1, 1>>>(table[0], *p, id(), n ? 1 : 2);",
                       UniformScope::Block),
            "---u");
}

TEST(Uniformity, DeviceFunctionParametersMayDiffer) {
  auto AST = parseCuda("__global__ void child(int a) {}\n"
                       "__device__ void helper(int n) { child<<<1, 1>>>(n); }");
  ASSERT_TRUE(AST);
  const FunctionDecl *Helper = findFunction(*AST, "helper");
  const CUDAKernelCallExpr *Call = firstLaunchIn(*Helper);
  ASSERT_TRUE(Call);
  EXPECT_FALSE(isUniform(Call->getArg(0), *Helper, UniformScope::Block));
}

TEST(Uniformity, AggregatedKernelsSeePerLaunchValues) {
  const char *Body = "child<<<1, 1>>>(n + m, gridDim.x, (int)(long)p, "
                     "blockIdx.x);";
  EXPECT_EQ(uniformity(Body, UniformScope::Block), "uuuu");
  EXPECT_EQ(uniformity(Body, UniformScope::Block, /*RunsAggregated=*/true),
            "u---");
}
