// Promote pins the launch values its plan folds where a macro spells them:
// the self-launch's grid and block (the promoted kernel's bound and loop) and
// the thread that launches. Built with another -D, the rewrite must fail to
// compile, never run a chain planned for the old values.
// REQUIRES: nvcc
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// RUN: not %nvcc-compile -rdc=true %t.cu -o %t.o -DCHAIN_BLOCK=64 2>&1 | FileCheck %s --check-prefix=OTHER-BLOCK
// RUN: not %nvcc-compile -rdc=true %t.cu -o %t.o -DLEADER=1 2>&1 | FileCheck %s --check-prefix=OTHER-LEADER

#ifndef CHAIN_BLOCK
#define CHAIN_BLOCK 128
#endif
#ifndef LEADER
#define LEADER 0
#endif

// REMARK: promote.cu:[[@LINE+2]]:17: remark: rewritten: 'walk'
#pragma cuda_rewrite promote
__global__ void walk(int *out, int n, int link) {
  out[link * blockDim.x + threadIdx.x] = link;
  if (threadIdx.x == LEADER && link + 1 < n)
    walk<<<1, CHAIN_BLOCK, 0, cudaStreamTailLaunch>>>(out, n, link + 1);
}

void run(int *out, int n) { walk<<<1, CHAIN_BLOCK>>>(out, n, 0); }

// CHECK: __global__ void __launch_bounds__(128)
// CHECK-NEXT: walk_promoted(
// CHECK-DAG: static_assert((CHAIN_BLOCK) == 128,
// CHECK-DAG: static_assert((LEADER) == 0,

// OTHER-BLOCK: rewritten for CHAIN_BLOCK == 128; rerun cuda-rewrite
// OTHER-LEADER: rewritten for LEADER == 0; rerun cuda-rewrite
