// Kernels the systolic form cannot reproduce exactly are left alone, with a
// remark giving the reason: the output is the input without its pragmas.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: grep -v '^#pragma cuda_rewrite' %s | diff - %t.cu
// RUN: grep -v '^//' %t.cu | not grep _systolic
// The same reasons with --auto and no pragmas, for all but gridStride: with
// no stencil shape, it is no candidate unless annotated.
// RUN: grep -v '^#pragma cuda_rewrite' %s > %t.plain.cu
// RUN: %cuda-rewrite --remarks --auto %t.plain.cu -o %t.plain.out.cu -- 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: diff %t.plain.cu %t.plain.out.cu

// AUTO-NOT: not annotated
// AUTO: remark: not rewritten: the stored value adds '1.0f', which reads no input
// AUTO-COUNT-15: remark: not rewritten: {{[a-z]}}
// AUTO-NOT: remark:

// Most kernels below start the same way: their point, and the interior
// guard (a macro in the body is fine; only the kernel must be written out).
#define INTERIOR_2D                                                            \
  int x = blockIdx.x * blockDim.x + threadIdx.x;                               \
  int y = blockIdx.y * blockDim.y + threadIdx.y;                               \
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)                              \
    return;

// A term that reads no input is no partial sum.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the stored value adds '1.0f', which reads no input; only weighted sums of reads become partial sums [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void bias(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  INTERIOR_2D
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1] + 1.0f;
}

// A bias through an accumulator's initial value.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the stored value adds 'b', which reads no input; only weighted sums of reads become partial sums [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void biasParam(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H, float b) {
  INTERIOR_2D
  float s = b;
  s += in[y * W + x - 1];
  s += in[(y + 1) * W + x];
  out[y * W + x] = s;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: reads 2 inputs at offsets; the systolic kernel caches one [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void twoInputs(const float *__restrict__ a,
                          const float *__restrict__ b, float *__restrict__ out,
                          int W, int H) {
  INTERIOR_2D
  out[y * W + x] = a[y * W + x - 1] + b[(y + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the store's guard 'flag && x > 0 && x < W - 1 && y > 0 && y < H - 1' is not only bounds on the coordinates [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void flagGuard(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H, bool flag) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (flag && x > 0 && x < W - 1 && y > 0 && y < H - 1)
    out[y * W + x] = in[y * W + x - 1] + in[(y - 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the guard bounds x with 'x != 0', not an inequality [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void notEqual(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x != 0 && x < W - 1 && y > 0 && y < H - 1)
    out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: a 1-D stencil; the systolic kernel needs rows (y) to cache in registers and columns (x) across lanes [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void oneD(const float *__restrict__ in, float *__restrict__ out,
                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = 0.5f * in[i - 1] + 0.5f * in[i + 1];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the output index does not use both x and y [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void xz(const float *__restrict__ in, float *__restrict__ out,
                   int W, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || x >= W - 1 || z < 1 || z >= D - 1)
    return;
  out[z * W + x] = in[z * W + x - 1] + in[(z + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the element type 'int' is neither float nor double [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void ints(const int *__restrict__ in, int *__restrict__ out, int W,
                     int H) {
  INTERIOR_2D
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the input's element type differs from the output's [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void mixed(const double *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  INTERIOR_2D
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}

// Weights must be constants, parameters or filter elements.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the read at offset (0,0) has weight '?', not a constant, parameter or filter element [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void product(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H) {
  INTERIOR_2D
  out[y * W + x] = in[y * W + x] * in[y * W + x - 1] + in[(y + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the read at offset (-1,0) happens only under a condition inside the kernel [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void condRead(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  INTERIOR_2D
  out[y * W + x] = (x > 5 ? in[y * W + x - 1] : 2.0f) + in[(y + 1) * W + x];
}

// The coordinate must be blockIdx * (blockDim or a constant) + threadIdx.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: coordinate x steps by '2*blockDim.x' per block, neither blockDim.x nor a constant [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void twoPerThread(const float *__restrict__ in,
                             float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * 2 * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: no stencil shape: the store to 'out' is inside a loop [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void gridStride(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < W - 1;
       x += gridDim.x * blockDim.x)
    if (x > 0 && y > 0 && y < H - 1)
      out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}

// A bound that depends on the launch cannot be evaluated by a kernel with
// another block size.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the guard compares x with '-blockDim.x + W', which depends on the launch [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void launchBound(const float *__restrict__ in,
                            float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - blockDim.x || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: input 'in' is read with two different layouts [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void twoLayouts(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H, int P) {
  INTERIOR_2D
  out[y * W + x] = in[y * W + x - 1] + in[y * P + x];
}

// Lanes must hold consecutive elements.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: x is not the unit-stride coordinate of 'out'; a warp's 32 lanes would not load one row segment [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void transposed(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  INTERIOR_2D
  out[x * H + y] = in[(x - 1) * H + y] + in[x * H + y + 1];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: the stencil spans 41 columns; a warp has 32 lanes [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void wide(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 20 || x >= W - 20 || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 20] + in[y * W + x + 20] + in[(y + 1) * W + x];
}
// CHECK-NOT: remark: rewritten

void run(const float *in, float *out, const int *ii, int *io, const double *d,
         int W, int H, bool f) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  bias<<<grid, block>>>(in, out, W, H);
  biasParam<<<grid, block>>>(in, out, W, H, 1.0f);
  twoInputs<<<grid, block>>>(in, in, out, W, H);
  flagGuard<<<grid, block>>>(in, out, W, H, f);
  notEqual<<<grid, block>>>(in, out, W, H);
  oneD<<<W / 256, 256>>>(in, out, W);
  xz<<<grid, dim3(32, 1, 8)>>>(in, out, W, H);
  ints<<<grid, block>>>(ii, io, W, H);
  mixed<<<grid, block>>>(d, out, W, H);
  product<<<grid, block>>>(in, out, W, H);
  condRead<<<grid, block>>>(in, out, W, H);
  twoPerThread<<<grid, block>>>(in, out, W, H);
  gridStride<<<grid, block>>>(in, out, W, H);
  launchBound<<<grid, block>>>(in, out, W, H);
  twoLayouts<<<grid, block>>>(in, out, W, H, W);
  transposed<<<grid, block>>>(in, out, W, H);
  wide<<<grid, block>>>(in, out, W, H);
}
