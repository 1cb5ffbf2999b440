// Found by test/fuzz/difftest (fuse, seed 1, program p54, variant auto): a
// stencil stage (p54_s1) launched in a { } block of stages. Under --auto the
// systolic pass rewrote its launch and the fuse pass rewrote the block, the
// two edits clashed and the tool exited 1 (28 of 300 programs alone). A
// launch inside a block the fuse pass takes is now left to it.
// difftest-flags: --auto
//
// RUN: %cuda-rewrite --auto --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -I %difftest %t.cu -o %t.o
// CHECK: remark: not rewritten: its launches are in blocks the fuse pass rewrites [systolic]
// CHECK: remark: rewritten: 6 stages (p54_s1,
#include "difftest.cuh"

// ==== difftest program p54 ====
__host__ __device__ inline int p54_clamp(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void p54_s1(const float *__restrict__ a, float *__restrict__ out,
    int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W - 2 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = 0.125f * a[y * W + x] + 0.875f * a[(y - 1) * W + x + 1]
      - 0.84375f * a[y * W + x + 1] + 0.078125f * a[(y + 1) * W + x + 1]
      + 0.75f * a[y * W + x + 2];
}

__constant__ float p54_s2_w[2];
__global__ void p54_s2(const float *__restrict__ a, float *__restrict__ out,
    int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W - 2 && y >= 1 && y < H - 2) {
    out[y * W + x] = p54_s2_w[0] * a[y * W + p54_clamp(x + 1, 0, W - 3)]
        + p54_s2_w[1] * a[(y + 1) * W + p54_clamp(x + 1, 0, W - 3)];
  }
}

__constant__ float p54_s3_w[5];
__global__ void p54_s3(const float *__restrict__ a, float *__restrict__ out,
    int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W - 2 || y < 2 || y >= H - 3)
    return;
  out[y * W + x] = p54_s3_w[0] * a[y * W + p54_clamp(x - 1, 0, W - 3)]
      + p54_s3_w[1] * a[(y - 1) * W + p54_clamp(x, 0, W - 3)]
      + p54_s3_w[2] * a[y * W + p54_clamp(x, 0, W - 3)]
      + p54_s3_w[3] * a[(y + 1) * W + p54_clamp(x, 0, W - 3)]
      + p54_s3_w[4] * a[y * W + p54_clamp(x + 1, 0, W - 3)];
}

__global__ void p54_s4(const float *__restrict__ a, float *__restrict__ out,
    int W, int H, int inW) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = 0.75f * a[y * inW + p54_clamp(2 * x - 2, 0, inW - 1)]
      + 0.0625f * a[y * inW + p54_clamp(2 * x - 1, 0, inW - 1)]
      - 0.875f * a[y * inW + p54_clamp(2 * x, 0, inW - 1)]
      - 0.984375f * a[y * inW + p54_clamp(2 * x + 2, 0, inW - 1)];
}

__global__ void p54_s5(const float *__restrict__ a, float *__restrict__ out,
    int W, int H, int inW) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H) {
    out[y * W + x] = 0.984375f * a[y * inW + p54_clamp((x + 1) / 2 - 1, 0, inW - 1)]
        - 0.015625f * a[y * inW + p54_clamp(x / 2, 0, inW - 1)]
        - 0.078125f * a[y * inW + p54_clamp((x + 1) / 2, 0, inW - 1)]
        - 0.03125f * a[y * inW + p54_clamp(x / 2 + 1, 0, inW - 1)];
  }
}

__global__ void p54_s6(const float *__restrict__ a, const float *__restrict__ b,
    float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W - 2 || y < 2 || y >= H - 3)
    return;
  out[y * W + x] = -0.515625f * a[y * W + x] * b[y * W + x];
}

/// The stages, one launch each; t2, out read by the host after.
static void p54_stages(const float *in0, float *t2, float *out, int W, int H) {
  const int C = 1;
  const int W0 = W, W1 = (W0 + 1) / 2, H0 = H;
  const dim3 block(16, 16);
  const dim3 grid00((W0 + 15) / 16, (H0 + 15) / 16, C);
  const dim3 grid10((W1 + 15) / 16, (H0 + 15) / 16, C);
  float *t1 = nullptr, *t3 = nullptr, *t4 = nullptr, *t5 = nullptr;
  DIFFTEST_CUDA(cudaMalloc(&t1, sizeof(float) * W0 * H0));
  DIFFTEST_CUDA(cudaMalloc(&t3, sizeof(float) * W0 * H0));
  DIFFTEST_CUDA(cudaMalloc(&t4, sizeof(float) * W1 * H0));
  DIFFTEST_CUDA(cudaMalloc(&t5, sizeof(float) * W0 * H0));
  {
    p54_s1<<<grid00, block>>>(in0, t1, W0, H0);
    p54_s4<<<grid10, block>>>(in0, t4, W1, H0, W0);
    p54_s5<<<grid00, block>>>(t4, t5, W0, H0, W1);
    p54_s2<<<grid00, block>>>(t1, t2, W0, H0);
    p54_s3<<<grid00, block>>>(t2, t3, W0, H0);
    p54_s6<<<grid00, block>>>(t5, t3, out, W0, H0);
  }
  DIFFTEST_CUDA(cudaFree(t1));
  DIFFTEST_CUDA(cudaFree(t3));
  DIFFTEST_CUDA(cudaFree(t4));
  DIFFTEST_CUDA(cudaFree(t5));
}

static void run_p54(difftest::Rng &rng, difftest::Check &check) {
  const int C = 1, W = 312, H = 48;
  const int W0 = W, W1 = (W0 + 1) / 2, W2 = (W1 + 1) / 2;
  const int H0 = H, H1 = (H0 + 1) / 2, H2 = (H1 + 1) / 2;
  (void)C, (void)W2, (void)H2, (void)W1, (void)H1;
  difftest::Buffer<float> in0(W0 * H0);
  rng.fill(in0.Host, -1.0, 1.0);
  in0.upload();
  difftest::Buffer<float> t2(W0 * H0);
  t2.poison();
  difftest::Buffer<float> out(W0 * H0);
  out.poison();
  const float p54_s2_w_host[2] = {-0.40625f, -0.21875f};
  DIFFTEST_CUDA(cudaMemcpyToSymbol(p54_s2_w, p54_s2_w_host, sizeof(p54_s2_w_host)));
  const float p54_s3_w_host[5] = {0.484375f, 0.234375f, 0.890625f, 0.109375f, 0.46875f};
  DIFFTEST_CUDA(cudaMemcpyToSymbol(p54_s3_w, p54_s3_w_host, sizeof(p54_s3_w_host)));
  p54_stages(in0.data(), t2.data(), out.data(), W, H);
  DIFFTEST_CUDA(cudaGetLastError());
  // The reference, stage by stage in launch order.
  std::vector<difftest::Approx> r_in0(in0.Host.begin(), in0.Host.end());
  std::vector<difftest::Approx> r_t1(W0 * H0);
  std::vector<bool> w_t1(W0 * H0);
  std::vector<difftest::Approx> r_t2(W0 * H0);
  std::vector<bool> w_t2(W0 * H0);
  std::vector<difftest::Approx> r_t3(W0 * H0);
  std::vector<bool> w_t3(W0 * H0);
  std::vector<difftest::Approx> r_t4(W1 * H0);
  std::vector<bool> w_t4(W1 * H0);
  std::vector<difftest::Approx> r_t5(W0 * H0);
  std::vector<bool> w_t5(W0 * H0);
  std::vector<difftest::Approx> r_out(W0 * H0);
  std::vector<bool> w_out(W0 * H0);
  { // p54_s1
    const int W = W0, H = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W - 2 || y < 1 || y >= H - 1)
            continue;
          r_t1[y * W + x] = difftest::Approx(0.125) * r_in0[y * W + x]
              + difftest::Approx(0.875) * r_in0[(y - 1) * W + x + 1]
              - difftest::Approx(0.84375) * r_in0[y * W + x + 1]
              + difftest::Approx(0.078125) * r_in0[(y + 1) * W + x + 1]
              + difftest::Approx(0.75) * r_in0[y * W + x + 2];
          w_t1[y * W + x] = true;
        }
  }
  { // p54_s2
    const int W = W0, H = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W - 2 || y < 1 || y >= H - 2)
            continue;
          r_t2[y * W + x] = difftest::Approx(p54_s2_w_host[0]) * r_t1[y * W + p54_clamp(x + 1, 0, W - 3)]
              + difftest::Approx(p54_s2_w_host[1]) * r_t1[(y + 1) * W + p54_clamp(x + 1, 0, W - 3)];
          w_t2[y * W + x] = true;
        }
  }
  { // p54_s3
    const int W = W0, H = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x < 2 || x >= W - 2 || y < 2 || y >= H - 3)
            continue;
          r_t3[y * W + x] = difftest::Approx(p54_s3_w_host[0]) * r_t2[y * W + p54_clamp(x - 1, 0, W - 3)]
              + difftest::Approx(p54_s3_w_host[1]) * r_t2[(y - 1) * W + p54_clamp(x, 0, W - 3)]
              + difftest::Approx(p54_s3_w_host[2]) * r_t2[y * W + p54_clamp(x, 0, W - 3)]
              + difftest::Approx(p54_s3_w_host[3]) * r_t2[(y + 1) * W + p54_clamp(x, 0, W - 3)]
              + difftest::Approx(p54_s3_w_host[4]) * r_t2[y * W + p54_clamp(x + 1, 0, W - 3)];
          w_t3[y * W + x] = true;
        }
  }
  { // p54_s4
    const int W = W1, H = H0, inW = W0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W || y >= H)
            continue;
          r_t4[y * W + x] = difftest::Approx(0.75) * r_in0[y * inW + p54_clamp(2 * x - 2, 0, inW - 1)]
              + difftest::Approx(0.0625) * r_in0[y * inW + p54_clamp(2 * x - 1, 0, inW - 1)]
              - difftest::Approx(0.875) * r_in0[y * inW + p54_clamp(2 * x, 0, inW - 1)]
              - difftest::Approx(0.984375) * r_in0[y * inW + p54_clamp(2 * x + 2, 0, inW - 1)];
          w_t4[y * W + x] = true;
        }
  }
  { // p54_s5
    const int W = W0, H = H0, inW = W1;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W || y >= H)
            continue;
          r_t5[y * W + x] = difftest::Approx(0.984375) * r_t4[y * inW + p54_clamp((x + 1) / 2 - 1, 0, inW - 1)]
              - difftest::Approx(0.015625) * r_t4[y * inW + p54_clamp(x / 2, 0, inW - 1)]
              - difftest::Approx(0.078125) * r_t4[y * inW + p54_clamp((x + 1) / 2, 0, inW - 1)]
              - difftest::Approx(0.03125) * r_t4[y * inW + p54_clamp(x / 2 + 1, 0, inW - 1)];
          w_t5[y * W + x] = true;
        }
  }
  { // p54_s6
    const int W = W0, H = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x < 2 || x >= W - 2 || y < 2 || y >= H - 3)
            continue;
          r_out[y * W + x] = difftest::Approx(0.0)
              - difftest::Approx(0.515625) * r_t5[y * W + x] * r_t3[y * W + x];
          w_out[y * W + x] = true;
        }
  }
  const std::vector<float> &got_t2 = t2.download();
  difftest::expectNear(check, "t2", got_t2, r_t2, w_t2);
  const std::vector<float> &got_out = out.download();
  difftest::expectNear(check, "out", got_out, r_out, w_out);
}
// ==== end of p54 ====

DIFFTEST_MAIN({"p54", run_p54})
