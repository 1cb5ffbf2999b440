// A kernel declared at file scope and defined after the code that launches
// it (a prototype above main, the kernel below): its launcher is declared
// after that declaration, so the launches before the definition are
// rewritten too.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: FileCheck --check-prefix=CODE %s < %t.cu
// RUN: %nvcc-compile %t.cu -o %t.o

__global__ void smooth(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H);
// CODE: int W, int H);
// CODE-EMPTY:
// CODE-NEXT: /// Defined with smooth_systolic below.
// CODE-NEXT: static void smooth_systolic_launch(dim3 grid, dim3 block,
// CODE-SAME: size_t sharedBytes,

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  // CODE: smooth_systolic_launch(grid, block, 0, 0, in, out, W, H);
  smooth<<<grid, block>>>(in, out, W, H);
}

// CHECK: declared-before.cu:[[@LINE+2]]:17: remark: rewritten: 'smooth' runs as smooth_systolic{{.*}} (2D star radius 1: {{.*}}; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void smooth(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = 0.2f * (in[y * W + x] + in[y * W + x - 1] +
                           in[y * W + x + 1] + in[(y - 1) * W + x] +
                           in[(y + 1) * W + x]);
}
// CODE: static void smooth_systolic_launch(dim3 grid, dim3 block,
// CODE-SAME: size_t sharedBytes,
// CODE-NOT: ;
// CODE: {
