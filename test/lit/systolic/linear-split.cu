// Kernels that number their threads along x and split the number into the
// coordinates (`x = id % W`, `y = id / W`), and zero borders: taps written
// `(x < W - 1) ? in[..] : 0` read 0 beyond the grid. The launcher takes the
// extents from the launch's threads and the guard on `id`, and runs the
// original where those points are no whole rows; loads stop at the zero
// borders, and the vector forms (whole-vector loads) are not used.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: FileCheck --check-prefix=CODE %s < %t.cu
// RUN: %nvcc-compile %t.cu -o %t.o
// A vector form would load whole vectors across the zero borders: asking
// for one is an error at the clause, and nothing is written.
// RUN: sed 's/^#pragma cuda_rewrite systolic$/#pragma cuda_rewrite systolic vector(2)/' %s > %t.vector.cu
// RUN: not %cuda-rewrite %t.vector.cu -o %t.vector.out.cu -- 2>&1 | FileCheck %s --check-prefix=VECTOR
// RUN: not test -e %t.vector.out.cu
// VECTOR: vector.cu:[[@LINE+3]]:31: error: clause cannot apply here: vector(2) asks for a vector form, whose whole-vector loads would read across the stencil's zero or periodic borders; vector(1) is the overlapped form, which keeps them

// CHECK: linear-split.cu:[[@LINE+2]]:17: remark: rewritten: 'heat' runs as heat_systolic ({{.*}} into next from u; x and y split from the thread index by n; zero borders: reads outside x < n, x >= 0, y < n, y >= 0 give 0; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void heat(const unsigned int n, const double r, const double r2,
                     const double *__restrict__ u, double *__restrict__ next) {
  int id = blockDim.x * blockIdx.x + threadIdx.x;
  if (id < n * n) {
    int col = id % n;
    int row = id / n;
    next[col + row * n] = r2 * u[col + row * n] +
                          r * ((col < n - 1) ? u[col + 1 + row * n] : 0.0) +
                          r * ((col > 0) ? u[col - 1 + row * n] : 0.0) +
                          r * ((row < n - 1) ? u[col + (row + 1) * n] : 0.0) +
                          r * ((row > 0) ? u[col + (row - 1) * n] : 0.0);
  }
}
// CODE-LABEL: heat_systolic(
// CODE: const bool readsColumn0 =
// CODE-NEXT: (col >= xBegin && col < xEnd && col < (long long)(n) && col >= 0);
// CODE-NOT: {{heat_systolic_(aligned|wide)[(<]}}
// CODE-LABEL: static void heat_systolic_launch(
// CODE: long long points = (long long)grid.x * block.x;
// CODE-NEXT: if ((long long)(n * n) < points)
// CODE-NEXT: points = (long long)(n * n);
// CODE-NEXT: const long long extentX = (long long)(n);
// CODE-NEXT: const long long extentY = extentX > 0 ? points / extentX : 0;
// CODE: // - points that are no whole rows of n.
// CODE-NEXT: if (extentX <= 0 || points <= 0 || points % extentX != 0) {
// CODE-NEXT: heat<<<grid, block, sharedBytes, stream>>>(n, r, r2, u, next);

#define WIDTH 512
// The row length a macro, margins as a guard on the split coordinates, and
// a block factor that is a number: other block widths run the original.
// CHECK: linear-split.cu:[[@LINE+2]]:17: remark: rewritten: 'blur' runs as blur_systolic_aligned ({{.*}}; x and y split from the thread index by 512; 1 launch rewritten)
#pragma cuda_rewrite systolic
__global__ void blur(const float *__restrict__ in, float *__restrict__ out,
                     int rows) {
  int id = blockIdx.x * 256 + threadIdx.x;
  int x = id % WIDTH, y = id / WIDTH;
  if (id >= WIDTH * rows || x < 1 || x >= WIDTH - 1 || y < 1 || y >= rows - 1)
    return;
  out[y * WIDTH + x] = 0.5f * in[y * WIDTH + x] +
                       0.125f * (in[y * WIDTH + x - 1] + in[y * WIDTH + x + 1] +
                                 in[(y - 1) * WIDTH + x] +
                                 in[(y + 1) * WIDTH + x]);
}
// CODE: static_assert((WIDTH) == 512,
// CODE-LABEL: static void blur_systolic_launch(
// CODE: if ((long long)(512 * rows) < points)
// CODE: if (block.x != 256 || extentX <= 0 || points <= 0 ||

// A mask that stops short of the grid's edge is no zero border.
// CHECK: linear-split.cu:[[@LINE+2]]:17: warning: not rewritten: the read at offset (1,0) is 0 where 'x < n - 2' fails, which is not where the written points end
#pragma cuda_rewrite systolic
__global__ void short_mask(int n, const float *__restrict__ in,
                           float *__restrict__ out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id < n * n) {
    int x = id % n, y = id / n;
    out[x + y * n] = in[x + y * n] + ((x < n - 2) ? in[x + 1 + y * n] : 0.0f);
  }
}

// A tap that reaches past a zero border unmasked would read what the
// border's zeros stand for.
// CHECK: linear-split.cu:[[@LINE+2]]:17: warning: not rewritten: the read at offset (2,0) reaches past the zero border at x < n with no mask
#pragma cuda_rewrite systolic
__global__ void half_masked(int n, const float *__restrict__ in,
                            float *__restrict__ out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id < n * n) {
    int x = id % n, y = id / n;
    if (x < n - 2)
      out[x + y * n] = in[x + 2 + y * n] + ((x < n - 1) ? in[x + 1 + y * n] : 0.0f);
  }
}

// With no guard on the thread index, the rows end where the launch does:
// a zero border at y < H is no edge of the written points.
// CHECK: linear-split.cu:[[@LINE+2]]:17: warning: not rewritten: the read at offset (0,1) is 0 where 'y < H - 1' fails, which is not where the written points end
#pragma cuda_rewrite systolic
__global__ void no_guard(int W, int H, const float *__restrict__ in,
                         float *__restrict__ out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int x = id % W, y = id / W;
  out[x + y * W] = in[x + y * W] + ((y < H - 1) ? in[x + (y + 1) * W] : 0.0f);
}

// One split per kernel, by a value fixed for the launch.
// CHECK: linear-split.cu:[[@LINE+2]]:17: warning: not rewritten: no stencil shape: the thread index is split two ways: by 'W' and by 'H'
#pragma cuda_rewrite systolic
__global__ void two_ways(int W, int H, const float *__restrict__ in,
                         float *__restrict__ out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  out[id % W + (id / H) * W] = in[id % W + (id / H) * W + 1];
}
// CHECK: linear-split.cu:[[@LINE+2]]:17: warning: not rewritten: no stencil shape: the thread index is split by 'blockDim.x', which is not fixed for the launch
#pragma cuda_rewrite systolic
__global__ void by_block(const float *__restrict__ in,
                         float *__restrict__ out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int x = id % blockDim.x, y = id / blockDim.x;
  out[x + y * 64] = in[x + y * 64 + 1];
}

// The 3D kernels do not take zero borders yet.
// CHECK: linear-split.cu:[[@LINE+2]]:17: warning: not rewritten: zero borders in a 3D stencil: the plane-by-plane kernel is not generated for them yet
#pragma cuda_rewrite systolic
__global__ void planes(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= W || y >= H || z >= D)
    return;
  out[(z * H + y) * W + x] =
      in[(z * H + y) * W + x] +
      ((z < D - 1) ? in[((z + 1) * H + y) * W + x] : 0.0f) +
      ((y < H - 1) ? in[(z * H + y + 1) * W + x] : 0.0f);
}

void run(unsigned n, int rows, double *u, double *v, float *a, float *b) {
  heat<<<(n * n + 255) / 256, 256>>>(n, 0.1, 0.6, u, v);
  blur<<<(WIDTH * rows + 255) / 256, 256>>>(a, b, rows);
  short_mask<<<n, n>>>(n, a, b);
  half_masked<<<n, n>>>(n, a, b);
  no_guard<<<n, n>>>(n, n, a, b);
  two_ways<<<n, n>>>(n, n, a, b);
  by_block<<<n, 64>>>(a, b);
  planes<<<dim3(n / 32, n / 4, n / 2), dim3(32, 4, 2)>>>(a, b, n, n, n);
}
