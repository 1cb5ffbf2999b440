// The promoted kernel's launch bound is the block every link runs: the
// self-launch's constant, or with a self-launch of blockDim.x the host
// launches' largest constant, pinned where a macro spells it. The pins go
// after the host launch, since its macro may be defined only there. A host
// block known only at run time leaves the kernel unbounded, as its original.
// RUN: %cuda-rewrite %s -o %t.cu -- -DHOST_BLOCK=HALF
// RUN: sed '/^\/\/ [A-Z-]*:/d' %t.cu | FileCheck %s --check-prefix=CONST
// RUN: %cuda-rewrite %s -o %t.runtime.cu -- -DHOST_BLOCK=threads
// RUN: sed '/^\/\/ [A-Z-]*:/d' %t.runtime.cu | FileCheck %s --check-prefix=RUNTIME

#pragma cuda_rewrite promote
__global__ void walk(int *out, int n, int link) {
  out[link * blockDim.x + threadIdx.x] = link;
  if (threadIdx.x == 0 && link + 1 < n)
    walk<<<1, blockDim.x, 0, cudaStreamTailLaunch>>>(out, n, link + 1);
}

#define HALF 96

void run(int *out, int n, int threads) {
  walk<<<1, 64>>>(out, n, 0);
  walk<<<1, HOST_BLOCK>>>(out, n, 0);
}

// CONST: __global__ void __launch_bounds__(96){{$}}
// CONST-NEXT: {{^}}walk_promoted(
// CONST: #define HALF 96
// CONST: void run(
// CONST: static_assert((HOST_BLOCK) == 96,
// RUNTIME-NOT: static_assert
// RUNTIME-NOT: __launch_bounds__
// RUNTIME: __global__ void{{[[:space:]]+}}walk_promoted(
