// Under --auto a stencil launched in a function body that also holds a stage
// chain is the systolic pass's when its launch lies outside the chain's run
// (the fuse pass plans the statements from the chain's first launch to its
// last, not the whole body); a stencil launched inside the run stays for the
// fuse pass (test/regress/fuse/auto-stencil-stage.cu).
// RUN: %cuda-rewrite --auto --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__host__ __device__ inline int clampi(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void smooth(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

__global__ void blurX(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[y * W + clampi(x - 1, 0, W - 1)] + in[y * W + x] +
                    in[y * W + clampi(x + 1, 0, W - 1)]) / 3;
}

__global__ void blurY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[clampi(y - 1, 0, H - 1) * W + x] + in[y * W + x] +
                    in[clampi(y + 1, 0, H - 1) * W + x]) / 3;
}

void run(const float *src, float *dst, float *host, const float *in,
         float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  float *tmp;
  cudaMalloc(&tmp, sizeof(float) * W * H);
  // CHECK-DAG: auto-beside-chain.cu:[[@LINE+1]]:3: remark: rewritten: 2 stages (blurX, blurY)
  blurX<<<grid, block>>>(in, tmp, W, H);
  blurY<<<grid, block>>>(tmp, out, W, H);
  cudaMemcpy(host, out, sizeof(float), cudaMemcpyDeviceToHost);
  smooth<<<grid, block>>>(src, dst, W, H);
  cudaFree(tmp);
}
// CHECK-DAG: auto-beside-chain.cu:13:17: remark: rewritten: 'smooth' runs as smooth_systolic
