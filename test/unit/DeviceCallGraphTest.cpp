#include "analysis/DeviceCallGraph.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

// `parent` is the rewritten kernel; `spawn` is a helper that launches it,
// `top` a kernel that reaches it only through `spawn`, `grand` one launch
// further out; `other` and `unrelated` never reach it.
const char *Source = R"cu(
__global__ void parent(int *p) { p[threadIdx.x] = 1; }
__device__ void spawn(int *p) { parent<<<1, 32>>>(p); }
__global__ void top(int *p) { spawn(p); }
__global__ void grand(int *p) { top<<<1, 1>>>(p); }
__global__ void other(int *p) { p[0] = 2; }
__global__ void unrelated(int *p) { other<<<1, 1>>>(p); }
void host(int *p) {
  grand<<<1, 1>>>(p);
  unrelated<<<1, 1>>>(p);
}
)cu";

} // namespace

TEST(DeviceCallGraph, FollowsCallsAndLaunchesBackFromTheTargets) {
  auto AST = parseCuda(Source);
  ASSERT_TRUE(AST);
  auto Canonical = [&](const char *Name) {
    const clang::FunctionDecl *F = findFunction(*AST, Name);
    EXPECT_NE(F, nullptr) << Name;
    return F ? F->getCanonicalDecl() : nullptr;
  };
  llvm::DenseSet<const clang::FunctionDecl *> Targets{Canonical("parent")};
  llvm::DenseSet<const clang::FunctionDecl *> Reaching =
      functionsReaching(AST->getASTContext(), Targets);
  for (const char *Name : {"parent", "spawn", "top", "grand", "host"})
    EXPECT_TRUE(Reaching.count(Canonical(Name))) << Name;
  for (const char *Name : {"other", "unrelated"})
    EXPECT_FALSE(Reaching.count(Canonical(Name))) << Name;
}
