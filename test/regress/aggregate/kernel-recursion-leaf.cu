// Found by test/fuzz/difftest (aggregate, seed 1, program p273): a recursive
// kernel whose self-launch stays (its child block is blockDim.x) while its
// leaf launch is aggregated at kernel granularity lost one leaf launch in
// three runs of 500 (outputs left unwritten). The blocks of a grid found
// their shared entry by hashing %gridid with linear probing; an entry freed
// by another grid before this grid's later blocks arrived let them claim a
// second entry, and neither saw all the grid's blocks finish. The hash also
// dropped the grid id (the site was in the low bits). Entries now live in
// the key's home bucket, claimed under the bucket's lock.
// difftest-flags: --aggregate-granularity=kernel
//
// The self-launch that stays is made by one thread (`threadIdx.x == 0`), so
// kernel granularity is kept (see threads-launch-too.cu); the new kernel is
// declared before the body, which still launches it (refused-self-launch.cu).
//
// RUN: %cuda-rewrite --aggregate-granularity=kernel --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s --check-prefix=OUT
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// CHECK: remark: rewritten: aggregated at kernel granularity into 'p273_leaf_aggregated'
// OUT: is defined after its body, which
// OUT-NEXT: // launches it.
// OUT-NEXT: __global__ void p273_tree(int *__restrict__ out, const int *__restrict__ in,
// OUT: __device__ __forceinline__ void
// OUT-NEXT: p273_tree_body(
#include "difftest.cuh"

// ==== difftest program p273 ====
constexpr int p273_kIn = 1021;   // elements of in
constexpr int p273_kAcc = 16;  // atomic counters
constexpr int p273_kBlock = 64;  // threads per node
constexpr int p273_kFan = 2;    // children of a split node
constexpr int p273_kRoots = 2;  // nodes of the first grid
constexpr int p273_kDepth = 3;  // the deepest level
constexpr int p273_kNodes = 30;  // nodes at most
constexpr int p273_kLeaf = 50;  // threads per leaf launch

/// p273's expected outputs, computed on the host.
using p273_Want = difftest::Want;

/// A leaf's extra work: one block per leaf node.
__global__ void p273_leaf(int *__restrict__ out, int node, int seed) {
  out[p273_kNodes * p273_kBlock + node * p273_kLeaf + threadIdx.x] =
      node * 3 + seed - (int)threadIdx.x;
}

static void p273_leaf_ref(p273_Want &w, int node, int seed) {
  for (int tx = 0; tx < p273_kLeaf; ++tx)
    w.store(p273_kNodes * p273_kBlock + node * p273_kLeaf + tx,
        node * 3 + seed - tx);
}

/// Node first + blockIdx.x of level depth: writes its elements, and if it
/// splits launches itself on its children.
#pragma cuda_rewrite aggregate granularity(warp)
__global__ void p273_tree(int *__restrict__ out, const int *__restrict__ in,
                          int first, int depth, int seed) {
  const int node = first + blockIdx.x;
  out[node * p273_kBlock + threadIdx.x] = in[(node * 13 + threadIdx.x + seed) % p273_kIn] + depth * 1000 + (int)gridDim.x * 7;
  const bool split = depth < p273_kDepth && in[(node + seed) % p273_kIn] % 4 != 0;
  if (split && threadIdx.x == 0)
    p273_tree<<<p273_kFan, blockDim.x>>>(out, in,
        p273_kRoots + node * p273_kFan, depth + 1, seed);
  if (!split && threadIdx.x == p273_kBlock - 1)
    p273_leaf<<<1, p273_kLeaf>>>(out, node, seed);
}

static void p273_tree_ref(p273_Want &w, int first, int blocks, int depth,
                          int seed);
static void p273_tree_ref(p273_Want &w, int first, int blocks, int depth,
                          int seed) {
  for (int bx = 0; bx < blocks; ++bx) {
    const int node = first + bx;
    for (int tx = 0; tx < p273_kBlock; ++tx) {
      w.store(node * p273_kBlock + tx,
          w.in[(node * 13 + tx + seed) % p273_kIn] + depth * 1000 + blocks * 7);
    }
    const bool split = depth < p273_kDepth && w.in[(node + seed) % p273_kIn] % 4 != 0;
    if (split)
      p273_tree_ref(w, p273_kRoots + node * p273_kFan, p273_kFan, depth + 1,
          seed);
    if (!split)
      p273_leaf_ref(w, node, seed);
  }
}

static void run_p273(difftest::Rng &rng, difftest::Check &check) {
  const int seed = int(rng.integer(0, 999));
  difftest::Buffer<int> in(p273_kIn),
      out(p273_kNodes * (p273_kBlock + p273_kLeaf)), acc(p273_kAcc);
  rng.fill(in.Host, 0, 999);
  in.upload();
  out.poison();
  acc.Host.assign(acc.size(), 0);
  acc.upload();
  p273_tree<<<p273_kRoots, p273_kBlock>>>(out.data(), in.data(), 0, 0, seed);
  DIFFTEST_CUDA(cudaGetLastError());
  p273_Want w(in.Host, out.size(), acc.size(), 0);
  p273_tree_ref(w, 0, p273_kRoots, 0, seed);
  difftest::expectWant(check, w, out.download());
  difftest::expectExact(check, "acc", acc.download(), w.acc);
}
// ==== end of p273 ====

DIFFTEST_MAIN({"p273", run_p273})
