// Found by test/fuzz/difftest (fuse, seed 1, program p7, variant auto): under
// --auto a { } block holding two chains was a candidate once per chain, each
// planned over the whole block, and the second rewrite clashed with the first
// ("fuse: conflicting edits"): the tool exited 1 on every file of the
// campaign. Each block is now rewritten once.
// difftest-flags: --auto
//
// RUN: %cuda-rewrite --auto --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -I %difftest %t.cu -o %t.o
// CHECK-NOT: conflicting edits
// CHECK: remark: rewritten: {{[0-9]+}} stages
// CHECK-NOT: conflicting edits
#include "difftest.cuh"

// ==== difftest program p7 ====
__host__ __device__ inline int p7_clamp(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static dim3 p7_grid(dim3 block, int w, int h, int planes) {
  return dim3((w + block.x - 1) / block.x, (h + block.y - 1) / block.y, planes);
}

__global__ void p7_s1(const unsigned *__restrict__ a,
    unsigned *__restrict__ out, int W, int H, int inH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = 5u * a[p7_clamp(2 * y - 1, 0, inH - 1) * W + x]
      + 2u * a[p7_clamp(2 * y, 0, inH - 1) * W + x]
      + 1u * a[p7_clamp(2 * y + 1, 0, inH - 1) * W + x]
      + 7u * a[p7_clamp(2 * y + 2, 0, inH - 1) * W + x];
}

__global__ void p7_s2(const unsigned *__restrict__ a,
    unsigned *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H - 2)
    return;
  out[y * W + x] = 7u * a[y * W + p7_clamp(x, 0, W - 1)]
      + 5u * a[y * W + p7_clamp(x + 1, 0, W - 1)]
      + 0xFFFFFFFFu * a[y * W + p7_clamp(x + 2, 0, W - 1)];
}

__global__ void p7_s3(const unsigned *__restrict__ a,
    const unsigned *__restrict__ b, unsigned *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W || y >= H - 2)
    return;
  const int i = y * W + x;
  out[y * W + x] = 5u * a[i] + 7u * b[i];
}

__global__ void p7_s4(const unsigned *__restrict__ a,
    unsigned *__restrict__ out, int W, int H, int inH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = 0xFFFFFFFFu * a[p7_clamp((y + 1) / 2, 0, inH - 1) * W + x]
      + 5u * a[p7_clamp(y / 2 + 1, 0, inH - 1) * W + x];
}

__global__ void p7_s5(const unsigned *__restrict__ a,
    unsigned *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W - 2 && y >= 1 && y < H - 1) {
    out[y * W + x] = 3u * a[(y - 1) * W + x] + 3u * a[y * W + x]
        + 1u * a[(y + 1) * W + x] + 1u * a[(y - 1) * W + x + 1]
        + 3u * a[y * W + x + 1] + 3u * a[(y + 1) * W + x + 1]
        + 5u * a[(y - 1) * W + x + 2] + 7u * a[y * W + x + 2]
        + 2u * a[(y + 1) * W + x + 2];
  }
}

__global__ void p7_s6(const unsigned *__restrict__ a,
    unsigned *__restrict__ out, int W, int H, int inH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < W && y < H) {
    out[y * W + x] = 7u * a[p7_clamp(2 * y - 2, 0, inH - 1) * W + x]
        + 5u * a[p7_clamp(2 * y - 1, 0, inH - 1) * W + x]
        + 1u * a[p7_clamp(2 * y + 1, 0, inH - 1) * W + x]
        + 1u * a[p7_clamp(2 * y + 2, 0, inH - 1) * W + x];
  }
}

/// The stages, one launch each; t1, t3, t5, out read by the host after.
static void p7_stages(const unsigned *in0, const unsigned *in1, unsigned *t1, unsigned *t3, unsigned *t5, unsigned *out, int W, int H) {
  const int C = 1;
  const int W0 = W, H0 = H, H1 = (H0 + 1) / 2;
  const dim3 block(32, 16);
  unsigned *t2 = nullptr, *t4 = nullptr;
  DIFFTEST_CUDA(cudaMalloc(&t2, sizeof(unsigned) * W0 * H1));
  DIFFTEST_CUDA(cudaMalloc(&t4, sizeof(unsigned) * W0 * H0));
  {
    p7_s1<<<p7_grid(block, W0, H1, C), block>>>(in1, t1, W0, H1, H0);
    p7_s2<<<p7_grid(block, W0, H1, C), block>>>(t1, t2, W0, H1);
    p7_s3<<<p7_grid(block, W0, H1, C), block>>>(t2, t1, t3, W0, H1);
    p7_s4<<<p7_grid(block, W0, H0, C), block>>>(t1, t4, W0, H0, H1);
    p7_s5<<<p7_grid(block, W0, H0, C), block>>>(t4, t5, W0, H0);
    p7_s6<<<p7_grid(block, W0, H1, C), block>>>(t4, out, W0, H1, H0);
  }
  DIFFTEST_CUDA(cudaFree(t2));
  DIFFTEST_CUDA(cudaFree(t4));
}

static void run_p7(difftest::Rng &rng, difftest::Check &check) {
  const int C = 1, W = 81, H = 84;
  const int W0 = W, W1 = (W0 + 1) / 2, W2 = (W1 + 1) / 2;
  const int H0 = H, H1 = (H0 + 1) / 2, H2 = (H1 + 1) / 2;
  (void)C, (void)W2, (void)H2, (void)W1, (void)H1;
  difftest::Buffer<unsigned> in0(W0 * H0);
  rng.fill(in0.Host, 0, 4294967295.0);
  in0.upload();
  difftest::Buffer<unsigned> in1(W0 * H0);
  rng.fill(in1.Host, 0, 4294967295.0);
  in1.upload();
  difftest::Buffer<unsigned> t1(W0 * H1);
  t1.poison();
  difftest::Buffer<unsigned> t3(W0 * H1);
  t3.poison();
  difftest::Buffer<unsigned> t5(W0 * H0);
  t5.poison();
  difftest::Buffer<unsigned> out(W0 * H1);
  out.poison();
  p7_stages(in0.data(), in1.data(), t1.data(), t3.data(), t5.data(), out.data(), W, H);
  DIFFTEST_CUDA(cudaGetLastError());
  // The reference, stage by stage in launch order.
  std::vector<unsigned> r_in0(in0.Host.begin(), in0.Host.end());
  std::vector<unsigned> r_in1(in1.Host.begin(), in1.Host.end());
  std::vector<unsigned> r_t1(W0 * H1);
  std::vector<bool> w_t1(W0 * H1);
  std::vector<unsigned> r_t2(W0 * H1);
  std::vector<bool> w_t2(W0 * H1);
  std::vector<unsigned> r_t3(W0 * H1);
  std::vector<bool> w_t3(W0 * H1);
  std::vector<unsigned> r_t4(W0 * H0);
  std::vector<bool> w_t4(W0 * H0);
  std::vector<unsigned> r_t5(W0 * H0);
  std::vector<bool> w_t5(W0 * H0);
  std::vector<unsigned> r_out(W0 * H1);
  std::vector<bool> w_out(W0 * H1);
  { // p7_s1
    const int W = W0, H = H1, inH = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W || y >= H)
            continue;
          r_t1[y * W + x] = 5u * r_in1[p7_clamp(2 * y - 1, 0, inH - 1) * W + x]
              + 2u * r_in1[p7_clamp(2 * y, 0, inH - 1) * W + x]
              + 1u * r_in1[p7_clamp(2 * y + 1, 0, inH - 1) * W + x]
              + 7u * r_in1[p7_clamp(2 * y + 2, 0, inH - 1) * W + x];
          w_t1[y * W + x] = true;
        }
  }
  { // p7_s2
    const int W = W0, H = H1;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W || y >= H - 2)
            continue;
          r_t2[y * W + x] = 7u * r_t1[y * W + p7_clamp(x, 0, W - 1)]
              + 5u * r_t1[y * W + p7_clamp(x + 1, 0, W - 1)]
              + 0xFFFFFFFFu * r_t1[y * W + p7_clamp(x + 2, 0, W - 1)];
          w_t2[y * W + x] = true;
        }
  }
  { // p7_s3
    const int W = W0, H = H1;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x < 2 || x >= W || y >= H - 2)
            continue;
          const int i = y * W + x;
          r_t3[y * W + x] = 5u * r_t2[i] + 7u * r_t1[i];
          w_t3[y * W + x] = true;
        }
  }
  { // p7_s4
    const int W = W0, H = H0, inH = H1;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W || y >= H)
            continue;
          r_t4[y * W + x] = 0xFFFFFFFFu * r_t1[p7_clamp((y + 1) / 2, 0, inH - 1) * W + x]
              + 5u * r_t1[p7_clamp(y / 2 + 1, 0, inH - 1) * W + x];
          w_t4[y * W + x] = true;
        }
  }
  { // p7_s5
    const int W = W0, H = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W - 2 || y < 1 || y >= H - 1)
            continue;
          r_t5[y * W + x] = 3u * r_t4[(y - 1) * W + x] + 3u * r_t4[y * W + x]
              + 1u * r_t4[(y + 1) * W + x] + 1u * r_t4[(y - 1) * W + x + 1]
              + 3u * r_t4[y * W + x + 1] + 3u * r_t4[(y + 1) * W + x + 1]
              + 5u * r_t4[(y - 1) * W + x + 2] + 7u * r_t4[y * W + x + 2]
              + 2u * r_t4[(y + 1) * W + x + 2];
          w_t5[y * W + x] = true;
        }
  }
  { // p7_s6
    const int W = W0, H = H1, inH = H0;
    for (int c = 0; c < 1; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          if (x >= W || y >= H)
            continue;
          r_out[y * W + x] = 7u * r_t4[p7_clamp(2 * y - 2, 0, inH - 1) * W + x]
              + 5u * r_t4[p7_clamp(2 * y - 1, 0, inH - 1) * W + x]
              + 1u * r_t4[p7_clamp(2 * y + 1, 0, inH - 1) * W + x]
              + 1u * r_t4[p7_clamp(2 * y + 2, 0, inH - 1) * W + x];
          w_out[y * W + x] = true;
        }
  }
  const std::vector<unsigned> &got_t1 = t1.download();
  difftest::expectExact(check, "t1", got_t1, r_t1, w_t1);
  const std::vector<unsigned> &got_t3 = t3.download();
  difftest::expectExact(check, "t3", got_t3, r_t3, w_t3);
  const std::vector<unsigned> &got_t5 = t5.download();
  difftest::expectExact(check, "t5", got_t5, r_t5, w_t5);
  const std::vector<unsigned> &got_out = out.download();
  difftest::expectExact(check, "out", got_out, r_out, w_out);
}
// ==== end of p7 ====

DIFFTEST_MAIN({"p7", run_p7})
