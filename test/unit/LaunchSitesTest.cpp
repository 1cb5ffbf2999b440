#include "analysis/LaunchSites.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const char *Source = R"cu(
__global__ void child(int *p, int n) { p[threadIdx.x] = n; }
#define LAUNCH(p) child<<<1, 32>>>(p, 0)
__global__ void parent(int *p, int n) {
  child<<<1, 32>>>(p, 1);
  if (threadIdx.x < n)
    child<<<1, 32>>>(p, 2);
  for (int i = 0; i < n; ++i)
    LAUNCH(p);
  n > 0 && (child<<<1, 1>>>(p, 3), true);
}
template <int N> __global__ void tparent(int *p) { child<<<N, 32>>>(p, N); }
template __global__ void tparent<4>(int *);
__host__ __device__ void both(int *p) {
#ifdef __CUDA_ARCH__
#else
  child<<<1, 1>>>(p, 4);
#endif
}
void host(int *p) { parent<<<2, 2>>>(p, 5); }
)cu";

} // namespace

TEST(LaunchSites, ClassifiesEachLaunch) {
  auto AST = parseCuda(Source);
  ASSERT_TRUE(AST);
  std::vector<LaunchSite> Sites = findLaunchSites(AST->getASTContext());
  ASSERT_EQ(Sites.size(), 7u);

  // Plain device-side launch.
  EXPECT_EQ(Sites[0].CalleeName, "child");
  EXPECT_EQ(Sites[0].Enclosing->getName(), "parent");
  EXPECT_TRUE(Sites[0].FromDevice);
  EXPECT_FALSE(Sites[0].InBranch || Sites[0].InLoop || Sites[0].InMacro ||
               Sites[0].InTemplate);
  // Under if.
  EXPECT_TRUE(Sites[1].InBranch);
  EXPECT_FALSE(Sites[1].InLoop);
  // In a loop, through a macro.
  EXPECT_TRUE(Sites[2].InLoop);
  EXPECT_TRUE(Sites[2].InMacro);
  EXPECT_FALSE(Sites[2].InBranch);
  // Right-hand side of &&: conditional.
  EXPECT_TRUE(Sites[3].InBranch);
  // In a template: reported once, at the pattern.
  EXPECT_TRUE(Sites[4].InTemplate);
  EXPECT_EQ(Sites[4].Enclosing->getName(), "tparent");
  // __host__ __device__.
  EXPECT_TRUE(Sites[5].FromDevice);
  EXPECT_TRUE(Sites[5].FromHostDevice);
  // Host launch.
  EXPECT_FALSE(Sites[6].FromDevice);
  EXPECT_EQ(Sites[6].CalleeName, "parent");
}

TEST(LaunchSites, CountsLaunchesInAStatement) {
  auto AST = parseCuda(Source);
  ASSERT_TRUE(AST);
  const clang::FunctionDecl *Parent = findFunction(*AST, "parent");
  ASSERT_TRUE(Parent);
  EXPECT_EQ(countKernelLaunches(Parent->getBody()), 4u);
  const clang::FunctionDecl *Child = findFunction(*AST, "child");
  EXPECT_FALSE(containsKernelLaunch(Child->getBody()));
}

TEST(LaunchSites, LaunchedByOneThread) {
  auto AST = parseCuda(R"cu(
__global__ void child(int *p) { p[threadIdx.x] = 1; }
__global__ void one(int *p, bool go) {
  if (go && threadIdx.x == 0)
    child<<<1, 32>>>(p);
  if (threadIdx.x == 0) {
    if (go)
      child<<<1, 32>>>(p);
  } else {
    child<<<1, 32>>>(p);
  }
  if (threadIdx.x < 4)
    child<<<1, 32>>>(p);
  if (go || threadIdx.x == 0)
    child<<<1, 32>>>(p);
}
__global__ void rows(int *p) {
  if (threadIdx.x == 0)
    child<<<1, 32>>>(p + threadIdx.y);
}
)cu");
  ASSERT_TRUE(AST);
  std::vector<LaunchSite> Sites = findLaunchSites(AST->getASTContext());
  ASSERT_EQ(Sites.size(), 6u);
  auto OneThread = [&](size_t I) {
    return launchedByOneThread(AST->getASTContext(), *Sites[I].Call,
                               *Sites[I].Enclosing);
  };
  EXPECT_TRUE(OneThread(0));  // a conjunct of the condition
  EXPECT_TRUE(OneThread(1));  // an outer if's then-branch
  EXPECT_FALSE(OneThread(2)); // its else-branch: every other thread
  EXPECT_FALSE(OneThread(3)); // four threads
  EXPECT_FALSE(OneThread(4)); // a disjunct proves nothing
  EXPECT_FALSE(OneThread(5)); // a 2-D block: one thread per row
}
