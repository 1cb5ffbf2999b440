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

namespace {

/// Whether the condition of each `if` in `kernel` (in order) is uniform in
/// a block with loads of read-only memory allowed: "u" or "-".
std::string readOnlyConditions(const std::string &Kernel) {
  auto AST = parseCuda("struct Node { int count; int first; };\n" + Kernel);
  if (!AST)
    return "parse error";
  const FunctionDecl *F = findFunction(*AST, "kernel");
  struct Ifs : RecursiveASTVisitor<Ifs> {
    std::vector<const IfStmt *> All;
    bool VisitIfStmt(IfStmt *If) {
      All.push_back(If);
      return true;
    }
  } Finder;
  Finder.TraverseStmt(F->getBody());
  UniformityAssumptions ReadOnly;
  ReadOnly.ReadOnlyLoads = true;
  std::string Result;
  for (const IfStmt *If : Finder.All)
    Result +=
        isUniform(If->getCond(), *F, UniformScope::Block, ReadOnly) ? "u" : "-";
  return Result;
}

} // namespace

TEST(Uniformity, LoadsOfReadOnlyMemoryAtUniformAddresses) {
  // Restricted pointers to const, read at block-uniform addresses, through
  // locals that never change: uniform; per-thread addresses, a changed
  // local or a pointer the kernel may write are not.
  EXPECT_EQ(readOnlyConditions(R"cu(
__global__ void kernel(const Node *__restrict__ nodes,
                       const int *__restrict__ sizes, int *out, int leaf) {
  const Node &node = nodes[blockIdx.x];
  int first = node.first;
  int mine = sizes[threadIdx.x];
  int moved = sizes[blockIdx.x];
  moved += threadIdx.x;
  if (node.count <= leaf) return;
  if (sizes[blockIdx.x + 1] - first > 4) return;
  if (nodes[blockIdx.x].count == *sizes) return;
  if (mine > 0) return;
  if (moved > 0) return;
  if (out[blockIdx.x] > 0) return;
  out[threadIdx.x] = first;
})cu"),
            "uuu---");
}

TEST(Uniformity, ConstPointersWithoutRestrictNeedAKernelThatStoresNothing) {
  EXPECT_EQ(readOnlyConditions(R"cu(
__global__ void kernel(const Node *nodes, int *out) {
  if (nodes[blockIdx.x].count > 0) return;
  out[threadIdx.x] = 1;
})cu"),
            "-");
  EXPECT_EQ(readOnlyConditions(R"cu(
__global__ void kernel(const Node *nodes, int leaf) {
  __shared__ int tile[32];
  tile[threadIdx.x % 32] = leaf;
  if (nodes[blockIdx.x].count > tile[0]) return;
  if (nodes[blockIdx.x].count > leaf) return;
})cu"),
            "-u");
}
