// A child kernel of a project header (refusals.cu includes it).
__global__ void headerChild(int *p) { p[threadIdx.x] = 2; }
