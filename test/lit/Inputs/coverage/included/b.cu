#include <cstdio>
#include "kernels.cuh"

__global__ void own(float *out) { out[threadIdx.x] = 1; }
