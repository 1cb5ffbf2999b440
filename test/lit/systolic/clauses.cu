// p(..) and block(..) override the model's shape. The pragma parser rejects
// what is not a positive integer (an error, exit 1); the pass refuses
// values it cannot use (P beyond 64, a block that is not whole warps or is
// larger than 1024 threads, a number beyond 32 bits), with a remark, and
// leaves the kernel alone.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
//
// RUN: printf '#pragma cuda_rewrite systolic p(0)\n__global__ void k(float *p) {}\n' > %t.p0.cu
// RUN: not %cuda-rewrite %t.p0.cu -o %t.p0.out.cu -- 2>&1 | FileCheck %s --check-prefix=P0
// RUN: not test -e %t.p0.out.cu
// P0: p0.cu:1:31: error: clause 'p' takes a positive integer
// RUN: printf '#pragma cuda_rewrite systolic block(0)\n__global__ void k(float *p) {}\n' > %t.b0.cu
// RUN: not %cuda-rewrite %t.b0.cu -- 2>&1 | FileCheck %s --check-prefix=B0
// B0: b0.cu:1:31: error: clause 'block' takes a positive integer
// RUN: printf '#pragma cuda_rewrite systolic p(4) block(64, 2)\n__global__ void k(float *p) {}\n' > %t.b2.cu
// RUN: not %cuda-rewrite %t.b2.cu -- 2>&1 | FileCheck %s --check-prefix=B2
// B2: b2.cu:1:36: error: clause 'block' takes a positive integer

#define STENCIL_BODY                                                           \
  int x = blockIdx.x * blockDim.x + threadIdx.x;                               \
  int y = blockIdx.y * blockDim.y + threadIdx.y;                               \
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)                              \
    return;                                                                    \
  out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +            \
                            in[(y - 1) * W + x] + in[(y + 1) * W + x]);

// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: rewritten: 'given' runs as given_systolic_aligned ({{.*}}): aligned rows: {{.*}}; overlapped form: p(4) as given; each thread caches 6 rows, so 38% of what a warp loads is halo (section 5.3); 256 threads per block as given [systolic]
#pragma cuda_rewrite systolic p(4) block(256)
__global__ void given(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  STENCIL_BODY
}
// CHECK:      struct given_systolic_shape {
// CHECK-NEXT:   static constexpr int Rows = 4;
// CHECK-NEXT:   static constexpr int Cached = 6;
// CHECK-NEXT:   static constexpr int Halo = 2;
// CHECK-NEXT:   static constexpr int Columns = 32 - Halo;
// CHECK-NEXT:   static constexpr int Warps = 8;
// CHECK-NEXT:   static constexpr int MinBlocks = 4;
// CHECK-NEXT: };
// The generated launch uses the shape's block, not the original's.
// CHECK:        given_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>(in, out, W, H, extentX, extentY);

// p(..) alone: the model's block of 128 threads, P as given (not a power
// of two, and beyond the model's 16).
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: rewritten: 'rowsOnly' runs as rowsOnly_systolic_aligned ({{.*}}): aligned rows: {{.*}}; overlapped form: p(24) as given; each thread caches 26 rows, {{.*}}; 128 threads per block (the paper's B = 128) [systolic]
#pragma cuda_rewrite systolic p(24)
__global__ void rowsOnly(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  STENCIL_BODY
}
// CHECK:      struct rowsOnly_systolic_shape {
// CHECK-NEXT:   static constexpr int Rows = 24;
// CHECK:        static constexpr int Warps = 4;

// block(..) alone keeps the model's P.
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: rewritten: 'blockOnly' runs as blockOnly_systolic_aligned ({{.*}}): aligned rows: {{.*}}; overlapped form: P = 16 rows per thread, {{.*}}; 1024 threads per block as given [systolic]
#pragma cuda_rewrite systolic block(1024)
__global__ void blockOnly(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H) {
  STENCIL_BODY
}
// CHECK:      struct blockOnly_systolic_shape {
// CHECK-NEXT:   static constexpr int Rows = 16;
// CHECK:        static constexpr int Warps = 32;
// CHECK-NEXT:   static constexpr int MinBlocks = 1;

// Values the parser accepts and the pass refuses.
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: not rewritten: block(100) is not a multiple of 32 between 32 and 1024 [systolic]
#pragma cuda_rewrite systolic block(100)
__global__ void oddBlock(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  STENCIL_BODY
}
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: not rewritten: block(16) is not a multiple of 32 between 32 and 1024 [systolic]
#pragma cuda_rewrite systolic block(16)
__global__ void smallBlock(const float *__restrict__ in, float *__restrict__ out,
                           int W, int H) {
  STENCIL_BODY
}
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: not rewritten: block(2048) is not a multiple of 32 between 32 and 1024 [systolic]
#pragma cuda_rewrite systolic p(4) block(2048)
__global__ void bigBlock(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  STENCIL_BODY
}
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: not rewritten: p(65) is outside 1..64 [systolic]
#pragma cuda_rewrite systolic p(65) block(128)
__global__ void manyRows(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  STENCIL_BODY
}
// A number the parser takes but that does not fit 32 bits.
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: not rewritten: p(99999999999) is not a number the pass can use [systolic]
#pragma cuda_rewrite systolic p(99999999999)
__global__ void hugeRows(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  STENCIL_BODY
}
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: not rewritten: block(4294967328) is not a number the pass can use [systolic]
#pragma cuda_rewrite systolic block(4294967328)
__global__ void hugeBlock(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H) {
  STENCIL_BODY
}
// CHECK-NOT: oddBlock_systolic
// CHECK-NOT: smallBlock_systolic
// CHECK-NOT: bigBlock_systolic
// CHECK-NOT: manyRows_systolic
// CHECK-NOT: hugeRows_systolic
// CHECK-NOT: hugeBlock_systolic

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-LABEL: void run(
  // CHECK-NEXT:   dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-NEXT:   given_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:   rowsOnly_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:   blockOnly_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:   oddBlock<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT:   smallBlock<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT:   bigBlock<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT:   manyRows<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT:   hugeRows<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT:   hugeBlock<<<grid, block>>>(in, out, W, H);
  // CHECK-NEXT: }
  given<<<grid, block>>>(in, out, W, H);
  rowsOnly<<<grid, block>>>(in, out, W, H);
  blockOnly<<<grid, block>>>(in, out, W, H);
  oddBlock<<<grid, block>>>(in, out, W, H);
  smallBlock<<<grid, block>>>(in, out, W, H);
  bigBlock<<<grid, block>>>(in, out, W, H);
  manyRows<<<grid, block>>>(in, out, W, H);
  hugeRows<<<grid, block>>>(in, out, W, H);
  hugeBlock<<<grid, block>>>(in, out, W, H);
}
