// Found by test/fuzz/difftest (aggregate, seed 1, program p109): a chain
// top -> mid -> leaf at warp granularity. Only mid's launches are
// aggregated (top's launch of mid is refused: mid launches at warp
// granularity), so the host launch of top was not seen as launching
// rewritten code, did not prepare the launch-table pool, and mid's
// aggregation failed (cudaErrorLaunchFailure). Every host launch of a
// kernel that reaches a rewritten parent now prepares it.
// difftest-flags: --aggregate-granularity=warp
//
// RUN: %cuda-rewrite --aggregate-granularity=warp --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// REMARK: warning: not rewritten: the child kernel 'p109_mid' launches kernels itself
// REMARK: remark: rewritten: aggregated at warp granularity into 'p109_leaf_aggregated'
// CHECK: static void run_p109(
// CHECK: cuda_rewrite::prepareAggregatedLaunch();
// CHECK-NEXT: p109_top<<<
#include "difftest.cuh"

// ==== difftest program p109 ====
constexpr int p109_kIn = 1000;   // elements of in
constexpr int p109_kMid = 6;   // threads of a mid launch
constexpr int p109_kLeaf = 32;  // threads of a leaf launch

/// p109's expected outputs, computed on the host.
using p109_Want = difftest::Want;

/// The last level: one element per thread.
__global__ void p109_leaf(int *__restrict__ out, int base, int value) {
  out[base + threadIdx.x] = value * 3 + (int)threadIdx.x;
}

/// The middle level: each thread launches leaves.
#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void p109_mid(int *__restrict__ out, const int *__restrict__ in,
                         int base,
                         int value) {
  const int t = threadIdx.x;
  if ((in[(value + t) % p109_kIn] + t) % 3 != 0)
    p109_leaf<<<1, p109_kLeaf>>>(out, base + t * p109_kLeaf, value + t);
}

/// The top level: one thread per item.
#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void p109_top(int *__restrict__ out, const int *__restrict__ in,
                         int n,
                         int seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[(i + seed) % p109_kIn] % 4 != 0)
    p109_mid<<<1, p109_kMid>>>(out, in, i * 192, in[i % p109_kIn] + seed);
}

static void p109_top_ref(p109_Want &w, int n, int seed) {
  for (int i = 0; i < n; ++i) {
    if (w.in[(i + seed) % p109_kIn] % 4 == 0)
      continue;
    const int base = i * 192, value = w.in[i % p109_kIn] + seed;
    for (int t = 0; t < p109_kMid; ++t)
      if ((w.in[(value + t) % p109_kIn] + t) % 3 != 0)
        for (int tx = 0; tx < p109_kLeaf; ++tx)
          w.store(base + t * p109_kLeaf + tx, (value + t) * 3 + tx);
  }
}

static void run_p109(difftest::Rng &rng, difftest::Check &check) {
  const int n = 109;
  const int seed = int(rng.integer(0, 999));
  difftest::Buffer<int> in(p109_kIn), out(n * 192);
  rng.fill(in.Host, 0, 999);
  in.upload();
  out.poison();
  p109_top<<<(n + 127) / 128, 128>>>(out.data(), in.data(), n, seed);
  DIFFTEST_CUDA(cudaGetLastError());
  p109_Want w(in.Host, out.size(), 0, 0);
  p109_top_ref(w, n, seed);
  difftest::expectWant(check, w, out.download());
}
// ==== end of p109 ====

DIFFTEST_MAIN({"p109", run_p109})
