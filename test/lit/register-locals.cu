// nvcc compiles C++17 code with `register` locals (it warns); clang's C++17
// rejected the file. The parse passes -Wno-register, so the stencil is
// rewritten.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -std=c++17 2>&1 | FileCheck %s
// CHECK-NOT: error
// CHECK: remark: rewritten: 'smooth' runs as smooth_systolic

#pragma cuda_rewrite systolic
__global__ void smooth(const float *in, float *out, int W, int H) {
  register int x = blockIdx.x * blockDim.x + threadIdx.x;
  register int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  smooth<<<grid, block>>>(in, out, W, H);
}
