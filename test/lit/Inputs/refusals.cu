// Annotations the passes cannot honour: a stencil they refuse, and pragmas
// whose targets hold nothing to rewrite.
__global__ void child(int *p) { p[threadIdx.x] = 1; }

#pragma cuda_rewrite systolic
__global__ void smooth(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3;
}

#pragma cuda_rewrite promote
__global__ void notRecursive(int *p) {
  if (threadIdx.x == 0)
    child<<<1, 32>>>(p);
}

#pragma cuda_rewrite aggregate
__global__ void noLaunch(int *p) { p[threadIdx.x] = 2; }
