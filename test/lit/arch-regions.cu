// Code under #ifdef __CUDA_ARCH__ is hidden from the host-side parse; the
// tool parses the device side too and finds the launch there, flagged.
// RUN: %cuda-rewrite --list %s -- | FileCheck %s
// RUN: %cuda-rewrite %s -- | FileCheck %s --check-prefix=OUT

__global__ void child(int *p) { p[threadIdx.x] = 1; }

__global__ void parent(int *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 350
  // CHECK: arch-regions.cu:[[@LINE+2]]:1: pragma: aggregate -> statement at [[@LINE+4]]:3 in 'parent'
  // OUT-NOT: {{^}}#pragma cuda_rewrite
#pragma cuda_rewrite aggregate
  // CHECK: arch-regions.cu:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'parent' [under __CUDA_ARCH__ conditional] -> aggregate [#pragma cuda_rewrite aggregate]: would refuse: under a __CUDA_ARCH__ conditional, where host and device compilations see different code{{$}}
  child<<<1, 32>>>(p);
#else
  p[0] = 0;
#endif
}
// OUT: child<<<1, 32>>>(p);
