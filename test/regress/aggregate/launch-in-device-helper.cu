// Found by test/fuzz/difftest (aggregate, seed 1, program p0): launches
// inside a __device__ helper are aggregated at warp granularity, which makes
// the helper, not the kernel calling it, the rewritten parent; the host
// launch of the kernel did not prepare the launch-table pool
// (cudaErrorLaunchFailure). Calls are now followed too.
// difftest-flags: --aggregate-granularity=warp
//
// RUN: %cuda-rewrite --aggregate-granularity=warp --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// REMARK: remark: rewritten: aggregated at warp granularity into {{.*}}the launch is in a __device__ function
// CHECK: static void run_p0(
// CHECK: cuda_rewrite::prepareAggregatedLaunch();
// CHECK-NEXT: p0_parent<<<
#include "difftest.cuh"

// ==== difftest program p0 ====
constexpr int p0_kIn = 1021;   // elements of in
constexpr int p0_kAcc = 16;  // atomic counters
constexpr int p0_kSlot = 128;  // outputs per launch: launch s writes from out[s * kSlot]

/// p0's expected outputs, computed on the host.
using p0_Want = difftest::Want;

/// Child: one thread per element of its range.
__global__ void p0_fill0(int *__restrict__ out, const int *__restrict__ in,
                         int base, int n, int value) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    out[base + j] = in[(j + value) % p0_kIn] + (int)(blockIdx.x * 10 + threadIdx.x);
}

static void p0_fill0_ref(p0_Want &w, dim3 grid, dim3 block, int base, int n,
                         int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      if (j < n)
        w.store(base + j, w.in[(j + value) % p0_kIn] + (int)(bx * 10 + tx));
    }
}

/// Child: one thread per element of its range.
__global__ void p0_fill1(int *dst, const int *in, int n, int value) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n)
    dst[j] = in[(j + value) % p0_kIn] + (int)(blockIdx.x * 10 + threadIdx.x);
}

static void p0_fill1_ref(p0_Want &w, dim3 grid, dim3 block, int base, int n,
                         int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx) {
      const int j = bx * block.x + tx;
      if (j < n)
        w.store(base + j, w.in[(j + value) % p0_kIn] + (int)(bx * 10 + tx));
    }
}

/// Child: a grid-stride loop over its range.
__global__ void p0_stride2(int *__restrict__ dst, const int *__restrict__ in,
                           int n, int value) {
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n;
       j += gridDim.x * blockDim.x)
    dst[j] = in[(j + value) % p0_kIn] + 3 * j - value - (int)(gridDim.x * blockDim.x);
}

static void p0_stride2_ref(p0_Want &w, dim3 grid, dim3 block, int base, int n,
                           int value) {
  for (unsigned bx = 0; bx < grid.x; ++bx)
    for (unsigned tx = 0; tx < block.x; ++tx)
      for (int j = bx * block.x + tx; j < n; j += grid.x * block.x)
        w.store(base + j,
            w.in[(j + value) % p0_kIn] + 3 * j - value - (int)(grid.x * block.x));
}

/// Launches a thread's children (from a device function: warp granularity
/// only).
__device__ void p0_spawn(int *out, const int *in, int i, int c, int seed) {
#pragma cuda_rewrite aggregate
  if (c > 0)
    p0_fill0<<<(50 + 256 - 1) / 256, 256>>>(out, in, i * p0_kSlot, 50,
        in[i % p0_kIn]);
  for (int k = 0; k < c; ++k) {
    const int bs = 1 + (i + k) % 128;
    const int base = (62 + i * 6 + k) * p0_kSlot;
    p0_fill1<<<(128 + bs - 1) / bs, bs>>>(out + base, in, 128, seed);
  }
  {
    int k = 0;
    while (k < c && in[(i + k) % p0_kIn] % 7 != 0) {
      const int len = 1 + (i * 7) % 128;
      p0_stride2<<<2, 64>>>(out + (434 + i * 6 + k) * p0_kSlot, in, len,
          3 * k + c);
      ++k;
    }
  }
}

/// Parent (one thread per item): threads launch children.
__global__ void p0_parent(int *__restrict__ out, const int *__restrict__ in,
                          const int *__restrict__ cnt, int n, int seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int c = cnt[i];
    p0_spawn(out, in, i, c, seed);
  }
}

/// p0_parent on the host: its threads one after the other.
static void p0_parent_ref(p0_Want &w, const int *cnt, int n, int seed) {
  const int *in = w.in;
  for (int b = 0; b * 50 < n; ++b)
    for (int t = 0; t < 50; ++t) {
      const int i = b * 50 + t;
      if (i >= n)
        continue;
      const int c = cnt[i];
      if (c > 0)
        p0_fill0_ref(w, dim3((50 + 256 - 1) / 256), dim3(256), i * p0_kSlot,
            50, in[i % p0_kIn]);
      for (int k = 0; k < c; ++k) {
        const int bs = 1 + (i + k) % 128;
        const int base = (62 + i * 6 + k) * p0_kSlot;
        p0_fill1_ref(w, dim3((128 + bs - 1) / bs), dim3(bs), base, 128, seed);
      }
      {
        int k = 0;
        while (k < c && in[(i + k) % p0_kIn] % 7 != 0) {
          const int len = 1 + (i * 7) % 128;
          p0_stride2_ref(w, dim3(2), dim3(64), (434 + i * 6 + k) * p0_kSlot,
              len, 3 * k + c);
          ++k;
        }
      }
    }
}

static void run_p0(difftest::Rng &rng, difftest::Check &check) {
  const int n = 62;
  const int seed = int(rng.integer(0, 999));
  difftest::Buffer<int> in(p0_kIn), cnt(n), out(806 * p0_kSlot), acc(p0_kAcc),
      pout(n);
  rng.fill(in.Host, 0, 999);
  rng.fill(cnt.Host, 0, 6);
  in.upload();
  cnt.upload();
  out.poison();
  pout.poison();
  acc.Host.assign(acc.size(), 0);
  acc.upload();
  p0_parent<<<(n + 49) / 50, 50>>>(out.data(), in.data(), cnt.data(), n, seed);
  DIFFTEST_CUDA(cudaGetLastError());
  p0_Want w(in.Host, out.size(), acc.size(), 0);
  p0_parent_ref(w, cnt.Host.data(), n, seed);
  difftest::expectWant(check, w, out.download());
  difftest::expectExact(check, "acc", acc.download(), w.acc);
}
// ==== end of p0 ====

DIFFTEST_MAIN({"p0", run_p0})
