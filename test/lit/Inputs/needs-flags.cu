#include "needs-flags.cuh"
#ifndef FROM_BUILD
#error "FROM_BUILD comes from the compilation database"
#endif
__global__ void child(int *p) { p[threadIdx.x] = VALUE; }
__global__ void parent(int *p) {
  child<<<1, 32>>>(p);
}
