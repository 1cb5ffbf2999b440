// A 3D 7-point stencil in the paper's form (SSAM section 4.9), asked
// for with z(shared) (the model streams along z, which measured faster): a
// block of Warps warps shares one column tile, warp w caches the rows of plane
// tileZ + w - 1, sums its taps one z offset at a time with shifted partial
// sums, leaves them in shared memory, and after a barrier warp o adds the
// three sums of output plane tileZ + o and stores; a second barrier guards
// the next tile. The launcher gives each block one column tile and Planes
// (Warps - 2) output planes.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: rm -f %t.bad.cu
// RUN: not %cuda-rewrite %s -o %t.bad.cu -- -DBAD_CLAUSES 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad.cu

// REMARK-DAG: star3d-shared.cu:[[@LINE+2]]:17: remark: rewritten: 'heat3d' runs as heat3d_systolic ({{.*}}): z(shared), the paper's 3D form (section 4.9): a block of 8 warps holds 8 planes, one per warp, of 10 rows per lane (P = 8), and writes 6 (the other 2 are halo); the partial sums of each z offset go through shared memory (24576 bytes); 25% of a plane's loads are halo (section 5.3) [systolic]
#pragma cuda_rewrite systolic z(shared)
__global__ void heat3d(const float *__restrict__ in, float *__restrict__ out,
                       int NX, int NY, int NZ, float a, float b) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= NX - 1 || y >= NY - 1 || z >= NZ - 1)
    return;
  int i = (z * NY + y) * NX + x;
  out[i] = a * in[i] + b * (in[i - 1] + in[i + 1] + in[i - NX] + in[i + NX] +
                            in[i - NX * NY] + in[i + NX * NY]);
}
// CHECK:      struct heat3d_systolic_shape {
// CHECK:        static constexpr int Warps = 8;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int MinBlocks = 1;
// CHECK:        static constexpr int Window = 3;
// CHECK-NEXT: // output planes per block (Warps - Window + 1)
// CHECK-NEXT:   static constexpr int Planes = 6;
// CHECK:        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
// CHECK-NEXT:   const int tileX = (int)blockIdx.x * Shape::Columns;
// CHECK:          return; // The whole block is outside.
// CHECK:        __shared__ float exchange[Shape::Window][Shape::Warps][Shape::Rows][32];
// CHECK:            const int plane = tileZ + warp - 1;
// The z offset -1 has one tap, in column x: no shift before it, one after
// it (for column x + 1, which has no tap at this offset).
// CHECK:          { // The taps at z offset -1.
// CHECK-NEXT:       float sum[Shape::Rows] = {};
// CHECK-NEXT:       // Column x.
// CHECK:              sum[i] = fma(b, cache[i + 1], sum[i]);
// CHECK-NEXT:       // Pass the partial sums one lane up.
// CHECK:              sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
// CHECK:              exchange[0][warp][i][lane] = sum[i];
// CHECK:          { // The taps at z offset 0.
// CHECK:              exchange[1][warp][i][lane] = sum[i];
// CHECK:          { // The taps at z offset +1.
// CHECK:              exchange[2][warp][i][lane] = sum[i];
// CHECK:          __syncthreads();
// CHECK-NEXT:     const int z = tileZ + warp;
// CHECK-NEXT:     if (warp < Shape::Planes && z < zEnd) {
// CHECK:              sum[i] = exchange[0][warp + 0][i][lane] +
// CHECK-NEXT:             exchange[1][warp + 1][i][lane] +
// CHECK-NEXT:             exchange[2][warp + 2][i][lane];
// CHECK:                out[outX + NX * outY + (NY * NX) * z] = sum[i];
// CHECK:          __syncthreads(); // Before the next tile overwrites the sums.
// CHECK:      static void heat3d_systolic_launch(
// CHECK:        const long long perBlock = Shape::Columns;
// CHECK:                     (unsigned)((extentZ + Shape::Planes - 1) / Shape::Planes < 65535{{[[:space:]]+}}? (extentZ + Shape::Planes - 1) / Shape::Planes{{[[:space:]]+}}: 65535));

// z(shared) with a filter loop over the whole box, or on a 2D stencil, is
// an error at the clause; nothing is written.
#ifdef BAD_CLAUSES
// BAD-DAG: star3d-shared.cu:[[@LINE+1]]:31: error: clause cannot apply here: z(shared) applies to 3D stencils, and 'flat' is 2D [systolic]
#pragma cuda_rewrite systolic z(shared)
__global__ void flat(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}

__constant__ float weights[27];
// BAD-DAG: star3d-shared.cu:[[@LINE+1]]:31: error: clause cannot apply here: z(shared) sums each z offset's taps apart, which a filter loop over the whole box does not spell out [systolic]
#pragma cuda_rewrite systolic z(shared)
__global__ void box3d(const float *__restrict__ in, float *__restrict__ out,
                      int N) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= N - 1 || y >= N - 1 || z >= N - 1)
    return;
  float s = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        s += weights[(dz + 1) * 9 + (dy + 1) * 3 + dx + 1] *
             in[((z + dz) * N + y + dy) * N + x + dx];
  out[(z * N + y) * N + x] = s;
}
#endif

void run(const float *in, float *out, int N) {
  dim3 block(32, 4, 2), grid((N + 31) / 32, (N + 3) / 4, (N + 1) / 2);
  heat3d<<<grid, block>>>(in, out, N, N, N, 0.4f, 0.1f);
#ifdef BAD_CLAUSES
  flat<<<dim3(grid.x, grid.y), dim3(32, 8)>>>(in, out, N, N);
  box3d<<<grid, block>>>(in, out, N);
#endif
}
