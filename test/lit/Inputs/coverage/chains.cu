// Two chains in one function body, a host statement between them: each is a
// candidate of its own, planned on its own, with its own verdict.
__global__ void twice(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2.f * in[i];
}

void run(const float *a, float *t, float *b, const float *c, float *u,
         float *d, int n) {
  twice<<<(n + 255) / 256, 256>>>(a, t, n);
  twice<<<(n + 255) / 256, 256>>>(t, b, n);
  cudaDeviceSynchronize();
  twice<<<(n + 255) / 256, 256>>>(c, u, n);
  twice<<<(n + 255) / 256, 256>>>(u, d, n);
}
