// p(..) and block(..) override the model's shape. The pragma parser rejects
// what is not a positive integer and values no kernel can take (P beyond 64,
// a block that is not whole warps or is larger than 1024 threads, a number
// beyond 32 bits): an error at the clause, exit 1, nothing written.
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
//
// RUN: printf '#pragma cuda_rewrite systolic block(100)\n__global__ void k(float *p) {}\n' > %t.b100.cu
// RUN: not %cuda-rewrite %t.b100.cu -o %t.b100.out.cu -- 2>&1 | FileCheck %s --check-prefix=B100
// RUN: not test -e %t.b100.out.cu
// B100: b100.cu:1:31: error: clause 'block(100)' is out of range: 'block' takes a multiple of 32 between 32 and 1024 threads per block
// RUN: printf '#pragma cuda_rewrite systolic block(16)\n__global__ void k(float *p) {}\n' > %t.b16.cu
// RUN: not %cuda-rewrite %t.b16.cu -- 2>&1 | FileCheck %s --check-prefix=B16
// B16: b16.cu:1:31: error: clause 'block(16)' is out of range
// RUN: printf '#pragma cuda_rewrite systolic p(4) block(2048)\n__global__ void k(float *p) {}\n' > %t.b2048.cu
// RUN: not %cuda-rewrite %t.b2048.cu -- 2>&1 | FileCheck %s --check-prefix=B2048
// B2048: b2048.cu:1:36: error: clause 'block(2048)' is out of range
// RUN: printf '#pragma cuda_rewrite systolic p(65) block(128)\n__global__ void k(float *p) {}\n' > %t.p65.cu
// RUN: not %cuda-rewrite %t.p65.cu -- 2>&1 | FileCheck %s --check-prefix=P65
// P65: p65.cu:1:31: error: clause 'p(65)' is out of range: 'p' takes 1..64 rows per thread
// RUN: printf '#pragma cuda_rewrite systolic p(1000000)\n__global__ void k(float *p) {}\n' > %t.pm.cu
// RUN: not %cuda-rewrite %t.pm.cu -- 2>&1 | FileCheck %s --check-prefix=PM
// PM: pm.cu:1:31: error: clause 'p(1000000)' is out of range
// A number that does not fit 32 bits.
// RUN: printf '#pragma cuda_rewrite systolic block(4294967328)\n__global__ void k(float *p) {}\n' > %t.bh.cu
// RUN: not %cuda-rewrite %t.bh.cu -- 2>&1 | FileCheck %s --check-prefix=BH
// BH: bh.cu:1:31: error: clause 'block(4294967328)' is out of range

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
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 6;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Halo = 2;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Columns = 32 - Halo;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Warps = 8;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int MinBlocks = 4;
// CHECK-NEXT: };
// The generated launch uses the shape's block, not the original's.
// CHECK:        given_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, W, H, extentX, extentY);

// p(..) alone: the model's block of 128 threads, P as given (not a power
// of two, and beyond the model's 16).
// REMARK-DAG: clauses.cu:[[@LINE+2]]:17: remark: rewritten: 'rowsOnly' runs as rowsOnly_systolic_aligned ({{.*}}): aligned rows: {{.*}}; overlapped form: p(24) as given; each thread caches 26 rows, {{.*}}; 128 threads per block (the paper's B = 128) [systolic]
#pragma cuda_rewrite systolic p(24)
__global__ void rowsOnly(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  STENCIL_BODY
}
// CHECK:      struct rowsOnly_systolic_shape {
// CHECK-NEXT: //
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
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 16;
// CHECK:        static constexpr int Warps = 32;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int MinBlocks = 1;

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-LABEL: void run(
  // CHECK-NEXT:   dim3 block(32, 8), grid(W / 32, H / 8);
  // CHECK-NEXT:   given_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:   rowsOnly_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT:   blockOnly_systolic_launch(grid, block, 0, 0, in, out, W, H);
  // CHECK-NEXT: }
  given<<<grid, block>>>(in, out, W, H);
  rowsOnly<<<grid, block>>>(in, out, W, H);
  blockOnly<<<grid, block>>>(in, out, W, H);
}
