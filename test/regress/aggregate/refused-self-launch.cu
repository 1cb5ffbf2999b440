// Found by test/fuzz/difftest (aggregate, seed 1, program p19): a recursive
// kernel whose self-launch (block size blockDim.x) is refused while its
// launch of a leaf kernel is aggregated. At block or kernel granularity the
// kernel became a body function plus a new `p19_tree` defined after it, but
// the body still launches `p19_tree`, so the rewritten file did not compile
// ("identifier p19_tree is undefined"); the new kernel is now declared before
// the body when the body still names it (kernel-recursion-leaf.cu checks
// that). Since aggregate seed 2 (threads-launch-too.cu), a parent whose
// launches that stay are made by more than one thread (here up to four
// self-launches) is not aggregated at block or kernel granularity: the leaf
// launch is aggregated per warp.
//
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// REMARK: warning: not rewritten: {{.*}}[aggregate] [-Wcuda-rewrite-refused]
// REMARK: remark: rewritten: aggregated at warp granularity into 'p19_leaf_aggregated' (not kernel or block granularity: 'p19_tree' also launches kernels that stay launches, from more than one thread (line {{[0-9]+}})
// CHECK-NOT: _body(
// CHECK: p19_leaf_launch_warp(1, p19_kLeaf, 0
#include "difftest.cuh"

// ==== difftest program p19 ====
constexpr int p19_kIn = 1021;   // elements of in
constexpr int p19_kAcc = 101;  // atomic counters
constexpr int p19_kBlock = 96;  // threads per node
constexpr int p19_kFan = 4;    // children of a split node
constexpr int p19_kRoots = 1;  // nodes of the first grid
constexpr int p19_kDepth = 3;  // the deepest level
constexpr int p19_kNodes = 85;  // nodes at most
constexpr int p19_kLeaf = 32;  // threads per leaf launch

/// p19's expected outputs, computed on the host.
using p19_Want = difftest::Want;

/// A leaf's extra work: one block per leaf node.
__global__ void p19_leaf(int *__restrict__ out, int node, int seed) {
  out[p19_kNodes * p19_kBlock + node * p19_kLeaf + threadIdx.x] =
      node * 3 + seed - (int)threadIdx.x;
}

static void p19_leaf_ref(p19_Want &w, int node, int seed) {
  for (int tx = 0; tx < p19_kLeaf; ++tx)
    w.store(p19_kNodes * p19_kBlock + node * p19_kLeaf + tx,
        node * 3 + seed - tx);
}

/// Node first + blockIdx.x of level depth: writes its elements, and if it
/// splits launches itself on its children.
#pragma cuda_rewrite aggregate
__global__ void p19_tree(int *__restrict__ out, int *__restrict__ acc,
                         const int *__restrict__ in, int first, int depth,
                         int seed) {
  const int node = first + blockIdx.x;
  out[node * p19_kBlock + threadIdx.x] = in[(node * 13 + threadIdx.x + seed) % p19_kIn] + depth * 1000 + (int)gridDim.x * 7;
  atomicAdd(&acc[(node + threadIdx.x) % p19_kAcc], depth + 1);
  const bool split = depth < p19_kDepth && in[(node + seed) % p19_kIn] % 3 != 0;
  if (split && threadIdx.x < p19_kFan)
    p19_tree<<<1, blockDim.x>>>(out, acc, in,
        p19_kRoots + node * p19_kFan + threadIdx.x, depth + 1, seed);
  if (!split && threadIdx.x == 0)
    p19_leaf<<<1, p19_kLeaf>>>(out, node, seed);
}

static void p19_tree_ref(p19_Want &w, int first, int blocks, int depth,
                         int seed);
static void p19_tree_ref(p19_Want &w, int first, int blocks, int depth,
                         int seed) {
  for (int bx = 0; bx < blocks; ++bx) {
    const int node = first + bx;
    for (int tx = 0; tx < p19_kBlock; ++tx) {
      w.store(node * p19_kBlock + tx,
          w.in[(node * 13 + tx + seed) % p19_kIn] + depth * 1000 + blocks * 7);
    }
    for (int tx = 0; tx < p19_kBlock; ++tx)
      w.add((node + tx) % p19_kAcc, depth + 1);
    const bool split = depth < p19_kDepth && w.in[(node + seed) % p19_kIn] % 3 != 0;
    if (split)
      for (int tx = 0; tx < p19_kFan; ++tx)
        p19_tree_ref(w, p19_kRoots + node * p19_kFan + tx, 1, depth + 1, seed);
    if (!split)
      p19_leaf_ref(w, node, seed);
  }
}

static void run_p19(difftest::Rng &rng, difftest::Check &check) {
  const int seed = int(rng.integer(0, 999));
  difftest::Buffer<int> in(p19_kIn),
      out(p19_kNodes * (p19_kBlock + p19_kLeaf)), acc(p19_kAcc);
  rng.fill(in.Host, 0, 999);
  in.upload();
  out.poison();
  acc.Host.assign(acc.size(), 0);
  acc.upload();
  p19_tree<<<p19_kRoots, p19_kBlock>>>(out.data(), acc.data(), in.data(), 0, 0,
      seed);
  DIFFTEST_CUDA(cudaGetLastError());
  p19_Want w(in.Host, out.size(), acc.size(), 0);
  p19_tree_ref(w, 0, p19_kRoots, 0, seed);
  difftest::expectWant(check, w, out.download());
  difftest::expectExact(check, "acc", acc.download(), w.acc);
}
// ==== end of p19 ====

DIFFTEST_MAIN({"p19", run_p19})
