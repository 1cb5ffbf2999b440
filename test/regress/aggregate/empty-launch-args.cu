// Found by test/fuzz/difftest (aggregate, seed 1, program p108): a child
// whose arguments are all uniform gets an empty per-launch struct (one
// byte); its launch table's block map followed the arguments unaligned, and
// the aggregated child died with cudaErrorMisalignedAddress at every
// granularity when a block made an odd number of launches. The map is now
// aligned.
// difftest-flags: --aggregate-granularity=block
//
// RUN: %cuda-rewrite --aggregate-granularity=block %s -o %t.cu -- -I %difftest
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// CHECK: struct p108_hist1_args {};
// CHECK: cr_pending_1.request({{.*}}p108_hist1_args{}
#include "difftest.cuh"

// ==== difftest program p108 ====
constexpr int p108_kIn = 257;   // elements of in
constexpr int p108_kAcc = 37;  // atomic counters
constexpr int p108_kSlot = 256;  // outputs per launch: launch s writes from out[s * kSlot]

/// p108's expected outputs, computed on the host.
using p108_Want = difftest::Want;

/// Child: each block loads its part into shared memory and writes it
/// reversed.
__global__ void p108_reverse0(int *__restrict__ dst,
                              const int *__restrict__ in, int n, int value) {
  __shared__ int s[32];
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = j < n ? in[(j + value) % p108_kIn] : -value;
  __syncthreads();
  if (j < n)
    dst[j] = 2 * s[blockDim.x - 1 - threadIdx.x] + blockIdx.x;
}

static void p108_reverse0_ref(p108_Want &w, dim3 grid, dim3 block, int base,
                              int n, int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      const int r = bx * block.x + (block.x - 1 - tx);
      const int s = r < n ? w.in[(r + value) % p108_kIn] : -value;
      if (j < n)
        w.store(base + j, 2 * s + bx);
    }
}

/// Child: adds to counters picked by the input.
__global__ void p108_hist1(int *__restrict__ acc, const int *__restrict__ in,
                           int n, int value) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    atomicAdd(&acc[(in[(j + value) % p108_kIn] + value) % p108_kAcc],
        1 + j % 3);
}

static void p108_hist1_ref(p108_Want &w, dim3 grid, dim3 block, int n,
                           int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      if (j < n)
        w.add((w.in[(j + value) % p108_kIn] + value) % p108_kAcc, 1 + j % 3);
    }
}

/// Parent (one thread per item): threads launch children.
#pragma cuda_rewrite aggregate
__global__ void p108_parent(int *__restrict__ out, int *__restrict__ acc,
                            const int *__restrict__ in,
                            const int *__restrict__ cnt, int n, int seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int c = cnt[i];
    for (int k = 0; k < c; k += 2) {
      const int base = (i * 4 + k) * p108_kSlot;
      p108_reverse0<<<(256 + 32 - 1) / 32, 32>>>(out + base, in, 256, seed + k);
    }
    for (int k = 0; k < c; k += 2)
      p108_hist1<<<(79 + 32 - 1) / 32, 32>>>(acc, in, 79, seed);
  }
}

/// p108_parent on the host: its threads one after the other.
static void p108_parent_ref(p108_Want &w, const int *cnt, int n, int seed) {
  for (int b = 0; b * 96 < n; ++b)
    for (int t = 0; t < 96; ++t) {
      const int i = b * 96 + t;
      if (i >= n)
        continue;
      const int c = cnt[i];
      for (int k = 0; k < c; k += 2) {
        const int base = (i * 4 + k) * p108_kSlot;
        p108_reverse0_ref(w, dim3((256 + 32 - 1) / 32), dim3(32), base, 256,
            seed + k);
      }
      for (int k = 0; k < c; k += 2)
        p108_hist1_ref(w, dim3((79 + 32 - 1) / 32), dim3(32), 79, seed);
    }
}

static void run_p108(difftest::Rng &rng, difftest::Check &check) {
  const int n = 102;
  const int seed = int(rng.integer(0, 999));
  difftest::Buffer<int> in(p108_kIn), cnt(n), out(816 * p108_kSlot),
      acc(p108_kAcc), pout(n);
  rng.fill(in.Host, 0, 999);
  rng.fill(cnt.Host, 0, 4);
  in.upload();
  cnt.upload();
  out.poison();
  pout.poison();
  acc.Host.assign(acc.size(), 0);
  acc.upload();
  p108_parent<<<(n + 95) / 96, 96>>>(out.data(), acc.data(), in.data(),
      cnt.data(), n, seed);
  DIFFTEST_CUDA(cudaGetLastError());
  p108_Want w(in.Host, out.size(), acc.size(), 0);
  p108_parent_ref(w, cnt.Host.data(), n, seed);
  difftest::expectWant(check, w, out.download());
  difftest::expectExact(check, "acc", acc.download(), w.acc);
}
// ==== end of p108 ====

DIFFTEST_MAIN({"p108", run_p108})
