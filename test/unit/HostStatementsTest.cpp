#include "analysis/HostStatements.h"
#include "analysis/StageGraph.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const char *Prelude = R"cu(
#include <cstdio>
#include <cstdlib>
#include <cstring>
__global__ void blur(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
float *Global;
void hidden();
void inspect(const float *p) { printf("%f\n", p[0]); }
void note(int n) { printf("%d\n", n); }
void outer(int n) { note(n); }
)cu";

/// What the analysis says of each statement of `run`'s body that is not a
/// launch, with the uses of all of the body's launches.
std::vector<std::string> verdicts(const std::string &Run) {
  auto AST = parseCuda(std::string(Prelude) + Run);
  std::vector<std::string> Result;
  if (!AST)
    return Result;
  const FunctionDecl *F = findFunction(*AST, "run");
  const auto *Body = F ? dyn_cast<CompoundStmt>(F->getBody()) : nullptr;
  if (!Body) {
    ADD_FAILURE() << "no function 'run'";
    return Result;
  }
  LaunchUses Uses;
  for (const Stmt *S : Body->body())
    if (const CUDAKernelCallExpr *Launch = launchOf(S))
      Uses.add(*Launch);
  for (const Stmt *S : Body->body())
    if (!launchOf(S))
      Result.push_back(
          whyStatementKeepsItsPlace(*S, Uses, AST->getASTContext()));
  return Result;
}

using Strings = std::vector<std::string>;

} // namespace

TEST(HostStatements, ChecksSynchronizationsTimersAndPrintsMayMove) {
  EXPECT_EQ(verdicts(R"cu(
void run(float *a, float *t, float *b, int n) {
  cudaEvent_t start, stop;
  blur<<<1, 32>>>(a, t, n);
  if (cudaError_t e = cudaGetLastError()) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); exit(1); }
  cudaDeviceSynchronize();
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  printf("%d %f\n", n, ms);
  for (int i = 0; i < 3; ++i) { if (i == 2) break; note(i); }
  outer(n);
  blur<<<1, 32>>>(t, b, n);
})cu"),
            Strings(8, ""));
}

TEST(HostStatements, WhatTouchesTheLaunchesMemoryKeepsItsPlace) {
  EXPECT_EQ(verdicts(R"cu(
void run(float *a, float *t, float *b, float *h, float *other, int n) {
  blur<<<1, 32>>>(a, t, n);
  float *alias = t;
  cudaMemcpy(h, other, 4, cudaMemcpyDeviceToHost);
  h[0] = 1;
  *h = 2;
  memcpy(h, h + 1, 4);
  inspect(h);
  Global[0] = 0;
  blur<<<1, 32>>>(t, b, n);
})cu"),
            (Strings{"names 't', which the launches pass to their kernels",
                     "calls 'cudaMemcpy', which may touch the launches' memory",
                     "reads or writes memory through a pointer",
                     "reads or writes memory through a pointer",
                     "passes a pointer to 'memcpy', which may touch the "
                     "launches' memory",
                     "reads or writes memory through a pointer",
                     "reads or writes memory through a pointer"}));
}

TEST(HostStatements, WhatChangesALaunchOrLeavesKeepsItsPlace) {
  EXPECT_EQ(
      verdicts(R"cu(
void run(float *a, float *t, float *b, int n) {
  blur<<<1, 32>>>(a, t, n);
  n = n / 2;
  ++n;
  if (n > 3) return;
  hidden();
  blur<<<1, 32>>>(t, b, n);
})cu"),
      (Strings{"changes 'n', which a launch reads",
               "changes 'n', which a launch reads", "returns from the function",
               "calls 'hidden', whose body is not visible"}));
}

TEST(HostStatements, LaunchesAndDeclarationsOfWhatALaunchReadsKeepTheirPlace) {
  EXPECT_EQ(
      verdicts(R"cu(
void run(float *a, float *t, float *b, int n) {
  blur<<<1, 32>>>(a, t, n);
  int m = n / 2;
  for (int i = 0; i < 2; ++i) blur<<<1, 32>>>(b, b, n);
  blur<<<1, 32>>>(t, b, m);
})cu"),
      (Strings{"declares 'm', which a launch reads", "launches a kernel"}));
}

TEST(HostStatements, CudaLibrariesMayTouchTheLaunchesMemory) {
  // thrust::fill writes the device memory behind `p` through an iterator,
  // an object, not a pointer the launches pass.
  std::vector<std::string> Why = verdicts(R"cu(
#include <thrust/device_vector.h>
#include <thrust/fill.h>
void run(float *a, float *p, float *b, thrust::device_vector<float> &v, int n) {
  blur<<<1, 32>>>(a, p, n);
  thrust::fill(v.begin(), v.end(), 0.f);
  blur<<<1, 32>>>(p, b, n);
})cu");
  ASSERT_EQ(Why.size(), 1u);
  EXPECT_EQ(Why[0].substr(0, 20), "calls 'thrust::fill'");
}
