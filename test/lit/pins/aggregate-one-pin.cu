// A value that two generated kernels are bounded by (a recursive parent's
// block size: the parent's launch bounds, from its host launch, and its
// aggregated copy's, from its self-launch) is pinned once where both pins
// would go, not twice.
// RUN: %cuda-rewrite %s -o %t.cu --
// RUN: grep -c '^static_assert((THREADS) == 64,' %t.cu | FileCheck %s --check-prefix=ONCE
// ONCE: {{^}}1{{$}}
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
// RUN: not %nvcc-compile -rdc=true -DOTHER %t.cu -o %t.other.o 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: rewritten for THREADS == 64; rerun cuda-rewrite
#ifdef OTHER
#define THREADS 128
#else
#define THREADS 64
#endif

#pragma cuda_rewrite aggregate granularity(kernel)
__global__ void tree(int *p, int depth) {
  p[threadIdx.x] += depth;
  if (depth > 0 && threadIdx.x == 0)
    tree<<<2, THREADS>>>(p, depth - 1);
}

void run(int *p) { tree<<<1, THREADS>>>(p, 3); }
