#include "analysis/StageChains.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const char *Kernels = R"cu(
__global__ void blur(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }
__global__ void fill(float *out) { out[threadIdx.x] = 1.0f; }
__global__ void sum(const float *a, const float *b, float *out) {
  out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}
)cu";

std::vector<StageChain> chainsIn(const std::string &Host) {
  auto AST = parseCuda(std::string(Kernels) + Host);
  if (!AST)
    return {};
  std::vector<StageChain> Chains = findStageChains(AST->getASTContext());
  // Descriptions outlive the AST; tests compare those.
  return Chains;
}

std::vector<std::string> describe(const std::string &Host) {
  auto AST = parseCuda(std::string(Kernels) + Host);
  std::vector<std::string> Result;
  if (!AST)
    return Result;
  for (const StageChain &C : findStageChains(AST->getASTContext()))
    Result.push_back(describeStageChain(C));
  return Result;
}

} // namespace

TEST(StageChains, LinkedLaunchesFormAChain) {
  EXPECT_EQ(
      describe(R"cu(
void run(float *a, float *b, float *c) {
  blur<<<1, 32>>>(a, b);
  cudaGetLastError();
  blur<<<1, 32>>>(b, c);
  blur<<<1, 32>>>(c, a);
})cu"),
      std::vector<std::string>{"3 launches blur -> blur -> blur via 'b', 'c'"});
}

TEST(StageChains, AStatementThatTouchesTheirMemoryBreaksTheChain) {
  EXPECT_EQ(describe(R"cu(
void run(float *a, float *b, float *c, float *h, int n) {
  blur<<<1, 32>>>(a, b);
  blur<<<1, 32>>>(b, c);
  cudaMemcpy(h, c, 4, cudaMemcpyDeviceToHost);
  blur<<<1, 32>>>(c, a);
  blur<<<1, 32>>>(a, b);
  n = 2;
  blur<<<n, 32>>>(b, c);
})cu"),
            (std::vector<std::string>{"2 launches blur -> blur via 'b'",
                                      "2 launches blur -> blur via 'a'"}));
}

TEST(StageChains, UnrelatedLaunchBreaksTheChain) {
  EXPECT_EQ(describe(R"cu(
void run(float *a, float *b, float *c, float *d) {
  blur<<<1, 32>>>(a, b);
  blur<<<1, 32>>>(c, d);
  sum<<<1, 32>>>(c, d, a);
})cu"),
            std::vector<std::string>{"2 launches blur -> sum via 'd'"});
}

TEST(StageChains, WriteOnlyConsumerIsNoLink) {
  EXPECT_TRUE(describe(R"cu(
void run(float *a, float *b) {
  blur<<<1, 32>>>(a, b);
  fill<<<1, 32>>>(b);
})cu")
                  .empty());
}

TEST(StageChains, DeviceCodeIsNotAStageChain) {
  EXPECT_TRUE(chainsIn(R"cu(
__global__ void parent(float *a, float *b) {
  blur<<<1, 32>>>(a, b);
  blur<<<1, 32>>>(b, a);
})cu")
                  .empty());
}
