// Periodic borders: reads that wrap a coordinate around the grid with `%`
// (`(x + 1) % W`, `(W + x - 1) % W`) are offsets within one period. The
// kernel loads the input at wrapped coordinates; the launcher runs the
// original where the period is shorter than the stencil's reach, or where
// the written points may pass the period (no guard bounds them by it).
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: FileCheck --check-prefix=CODE %s < %t.cu
// RUN: %nvcc-compile %t.cu -o %t.o

// A torus, one thread per point numbered linearly, no guard.
// CHECK: periodic.cu:[[@LINE+2]]:17: remark: rewritten: 'torus' runs as torus_systolic ({{.*}}; x and y split from the thread index by Lx; periodic in x (period Lx); periodic in y (period Ly); 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void torus(float *out, const float *in, float d, int Lx, int Ly) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = i % Lx, y = i / Lx;
  out[y * Lx + x] = in[y * Lx + x] +
                    d * (in[y * Lx + (x + 1) % Lx] +
                         in[y * Lx + (Lx + x - 1) % Lx] +
                         in[((y + 1) % Ly) * Lx + x] +
                         in[((Ly + y - 1) % Ly) * Lx + x]);
}
// CODE-LABEL: torus_systolic(
// CODE: const int colIn = col < 0 {{ *}}? col + (Lx)
// CODE-NEXT: : col >= (Lx) ? col - (Lx)
// CODE-NEXT: : col; // The column wrapped into [0, Lx).
// CODE: const int rowIn = row < 0 {{ *}}? row + (Ly)
// CODE: ? in[colIn + Lx * rowIn]
// CODE-LABEL: static void torus_systolic_launch(
// CODE: // - a period shorter than the stencil's reach, or points past it (a
// CODE: if ((long long)(Lx) < 1 || (long long)(Ly) < 1 || extentY > (long long)(Ly) ||

// Two-dimensional threads, the guard bounds the points by the periods:
// the launcher checks only the reach (2 columns).
// CHECK: periodic.cu:[[@LINE+2]]:17: remark: rewritten: 'ring' runs as ring_systolic ({{.*}}; periodic in x (period W); 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void ring(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + (x + 2) % W] + in[y * W + (x + W - 2) % W] +
                   in[(y - 1) * W + x] + in[(y + 1) * W + x];
}
// CODE-LABEL: static void ring_systolic_launch(
// CODE: if ((long long)(W) < 2 || extentX > (1LL << 30) ||

// A read that moves along x without wrapping it, beside reads that wrap.
// CHECK: periodic.cu:[[@LINE+2]]:17: warning: not rewritten: a read moves along x without wrapping it by 'W' as the others do
#pragma cuda_rewrite systolic
__global__ void mixed(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + (x + 1) % W] + in[y * W + x - 1];
}

// `(x - 1) % W` is -1 at x = 0: C's remainder does not wrap it.
// CHECK: periodic.cu:[[@LINE+2]]:17: warning: not rewritten: no stencil shape: '(x - 1) % W' may take the remainder of a negative number, which does not wrap
#pragma cuda_rewrite systolic
__global__ void negative(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + (x - 1) % W] + in[y * W + x];
}

void run(float *a, float *b, int W, int H) {
  torus<<<W * H / 256, 256>>>(b, a, 0.1f, W, H);
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  ring<<<grid, block>>>(a, b, W, H);
  mixed<<<grid, block>>>(a, b, W, H);
  negative<<<grid, block>>>(a, b, W, H);
}
