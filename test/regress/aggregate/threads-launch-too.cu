// Found by test/fuzz/difftest (aggregate, seed 2, programs p118, p169, p393):
// at block and kernel granularity the rewritten program never ended. Every
// thread also makes a launch that stays (p118_mix1 or p118_fill1b) after the
// aggregated loop. A probe on the H100 showed 138 of the 256 threads still
// inside the body, in their own device-side launches, while the others
// waited at the block-wide barrier before the aggregated launch; with those
// launches removed it ran, and at warp granularity (no block-wide wait) it
// ran. The pass now keeps such parents at warp granularity, and refuses a
// block or kernel granularity asked for. (Warp is also the default for this
// parent's one 256-thread block.)
// difftest-flags: --aggregate-granularity=block
//
// RUN: %cuda-rewrite --aggregate-granularity=block --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// BLOCK: warning: not rewritten: block granularity: 'p118_parent' also launches kernels that stay launches, from more than one thread (line {{[0-9]+}})
// CHECK: remark: rewritten: aggregated at warp granularity into 'p118_mix0_aggregated'
#include "difftest.cuh"

// ==== difftest program p118 ====
constexpr int p118_kIn = 1021;   // elements of in
constexpr int p118_kAcc = 16;  // atomic counters
constexpr int p118_kSlot = 256;  // outputs per launch: launch s writes from out[s * kSlot]
constexpr int p118_mix0_kBlock = 32;

/// p118's expected outputs, computed on the host.
using p118_Want = difftest::Want;

/// Mixes two values (host and device).
__host__ __device__ inline int p118_mix0_hash(int a, int b) {
  return (a * 31 + b * 7) % 1009;
}

/// The calling thread's lane.
__device__ int p118_mix0_lane() { return threadIdx.x % 32; }

/// Child: calls helper functions.
__global__ void p118_mix0(int *__restrict__ dst, const int *__restrict__ in,
                          int n, int value) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    dst[j] = p118_mix0_hash(in[j % p118_kIn], value + j) + p118_mix0_lane();
}

static void p118_mix0_ref(p118_Want &w, dim3 grid, dim3 block, int base, int n,
                          int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      if (j < n)
        w.store(base + j, p118_mix0_hash(w.in[j % p118_kIn],
            value + j) + int(tx % 32));
    }
}

/// Mixes two values (host and device).
__host__ __device__ inline int p118_mix1_hash(int a, int b) {
  return (a * 31 + b * 7) % 1009;
}

/// Child: calls helper functions.
__global__ void p118_mix1(int *__restrict__ out, const int *__restrict__ in,
                          int base, int n, int value) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    out[base + j] = p118_mix1_hash(in[j % p118_kIn], value + j);
}

static void p118_mix1_ref(p118_Want &w, dim3 grid, dim3 block, int base, int n,
                          int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      if (j < n)
        w.store(base + j, p118_mix1_hash(w.in[j % p118_kIn], value + j));
    }
}

/// Child: one thread per element of its range.
__global__ void p118_fill1b(int *__restrict__ out, const int *__restrict__ in,
                            int base, int n, int value) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    out[base + j] = (in[j % p118_kIn] ^ value) + j;
}

static void p118_fill1b_ref(p118_Want &w, dim3 grid, dim3 block, int base,
                            int n, int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      if (j < n)
        w.store(base + j, (w.in[j % p118_kIn] ^ value) + j);
    }
}

/// Parent (one thread per item): threads launch children.
__global__ void p118_parent(int *__restrict__ out, const int *__restrict__ in,
                            const int *__restrict__ cnt, int n, int seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const int c = cnt[i];
#pragma cuda_rewrite aggregate
  if (threadIdx.x % 32 < 16) {
    for (int k = 0; k < c - 1; ++k) {
      const int len = 256;
      p118_mix0<<<(len + p118_mix0_kBlock - 1) / p118_mix0_kBlock,
          p118_mix0_kBlock>>>(out + (i * 4 + k) * p118_kSlot, in, len, 40);
    }
  }
  if (c > 0) {
    const int len = 1 + (in[(i + 5) % p118_kIn] + seed) % 256;
    const int base = (712 + i) * p118_kSlot;
    p118_mix1<<<(len + 96 - 1) / 96, 96>>>(out, in, base, len, seed);
  } else {
    const int len = 256;
    const int base = (712 + i) * p118_kSlot;
    p118_fill1b<<<(len + 48 - 1) / 48, 48>>>(out, in, base, len,
        in[i % p118_kIn]);
  }
}

/// p118_parent on the host: its threads one after the other.
static void p118_parent_ref(p118_Want &w, const int *cnt, int n, int seed) {
  const int *in = w.in;
  for (int b = 0; b * 256 < n; ++b)
    for (int t = 0; t < 256; ++t) {
      const int i = b * 256 + t;
      if (i >= n)
        continue;
      const int c = cnt[i];
      if (t % 32 < 16) {
        for (int k = 0; k < c - 1; ++k) {
          const int len = 256;
          p118_mix0_ref(w,
              dim3((len + p118_mix0_kBlock - 1) / p118_mix0_kBlock),
              dim3(p118_mix0_kBlock), (i * 4 + k) * p118_kSlot, len, 40);
        }
      }
      if (c > 0) {
        const int len = 1 + (in[(i + 5) % p118_kIn] + seed) % 256;
        const int base = (712 + i) * p118_kSlot;
        p118_mix1_ref(w, dim3((len + 96 - 1) / 96), dim3(96), base, len, seed);
      } else {
        const int len = 256;
        const int base = (712 + i) * p118_kSlot;
        p118_fill1b_ref(w, dim3((len + 48 - 1) / 48), dim3(48), base, len,
            in[i % p118_kIn]);
      }
    }
}

static void run_p118(difftest::Rng &rng, difftest::Check &check) {
  const int n = 178;
  const int seed = int(rng.integer(0, 999));
  difftest::Buffer<int> in(p118_kIn), cnt(n), out(890 * p118_kSlot),
      acc(p118_kAcc), pout(n);
  rng.fill(in.Host, 0, 999);
  rng.fill(cnt.Host, 0, 4);
  in.upload();
  cnt.upload();
  out.poison();
  pout.poison();
  acc.Host.assign(acc.size(), 0);
  acc.upload();
  cudaStream_t stream;
  DIFFTEST_CUDA(cudaStreamCreate(&stream));
  p118_parent<<<(n + 255) / 256, 256, 0, stream>>>(out.data(), in.data(),
      cnt.data(), n, seed);
  DIFFTEST_CUDA(cudaGetLastError());
  DIFFTEST_CUDA(cudaStreamSynchronize(stream));
  DIFFTEST_CUDA(cudaStreamDestroy(stream));
  p118_Want w(in.Host, out.size(), acc.size(), 0);
  p118_parent_ref(w, cnt.Host.data(), n, seed);
  difftest::expectWant(check, w, out.download());
  difftest::expectExact(check, "acc", acc.download(), w.acc);
}
// ==== end of p118 ====

DIFFTEST_MAIN({"p118", run_p118})
