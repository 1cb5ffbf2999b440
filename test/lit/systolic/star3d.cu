// A 3D 7-point stencil in the streaming form (the default; z(stream) says
// so, star3d-shared.cu has the paper's form, z(shared)): the kernel
// takes extentZ too, keeps a window of Shape::Window planes of cached rows,
// and streams along z, rotating the window and loading only its new last
// plane for each output plane, one step ahead.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s

// REMARK: star3d.cu:[[@LINE+2]]:17: remark: rewritten: 'heat3d' runs as heat3d_systolic (3D star radius 1: 7 points (0,0,0) (-1,0,0) (1,0,0) (0,-1,0) (0,1,0) (0,0,-1) (0,0,1) into out from in; 1 launch rewritten): P = 4 rows per thread, the fewest whose halo is at most half of the loads (a 3D window keeps 3 planes of rows in registers, ~{{[0-9]+}} registers); each thread caches 6 rows in each of 3 planes, so 38% of what a warp loads is halo (section 5.3); 128 threads per block (the paper's B = 128); each warp streams 32 planes along z [systolic]
#pragma cuda_rewrite systolic z(stream)
__global__ void heat3d(const double *__restrict__ in, double *__restrict__ out,
                       int NX, int NY, int NZ, double a, double b) {
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
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Rows = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Cached = 6;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Halo = 2;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Columns = 32 - Halo;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Warps = 4;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int MinBlocks = {{[0-9]+}};
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Window = 3;
// CHECK-NEXT: //
// CHECK-NEXT:   static constexpr int Planes = 32;
// CHECK-NEXT: };
// CHECK:      heat3d_systolic(const double *__restrict__ in, double *__restrict__ out, int NX,
// CHECK-NEXT:     int NY, int NZ, double a, double b, long long extentX,
// CHECK-NEXT:     long long extentY, long long extentZ) {
// CHECK:        const int zBegin = 1, zEnd = (int)::min(extentZ, (long long)(NZ - 1));
// The rows each plane needs, once per tile: the centre planes read three
// rows of the centre column and one of the side columns, the others one.
// Flags, not bits of a mask (test/regress/systolic/rowmask-3d.cu).
// CHECK:          bool readsRow0[Shape::Cached], readsRow1[Shape::Cached];
// CHECK:            readsRow0[c] = (readsColumn0 && row >= yBegin && row < yEnd);
// CHECK-NEXT:       readsRow1[c] = (readsColumn0 && row >= yBegin - 1 && row < yEnd - 1) ||
// CHECK-NEXT:           (readsColumn2 && row >= yBegin && row < yEnd) ||
// CHECK-NEXT:           (readsColumn0 && row >= yBegin + 1 && row < yEnd + 1);
// Each block's warps take a chunk of Shape::Planes planes.
// CHECK:          for (int tileZ = (int)blockIdx.z * Shape::Planes; tileZ < zEnd;
// CHECK-NEXT:          tileZ += (int)gridDim.z * Shape::Planes) {
// The window starts with the planes before the first output plane...
// CHECK:            double window[Shape::Window][Shape::Cached], next[Shape::Cached];
// CHECK:            for (int w = 1; w < Shape::Window; ++w) {
// CHECK-NEXT:         const int plane = tileZ + w - 1 - 1;
// CHECK-NEXT:         // Which ranges of z offsets read this plane.
// CHECK-NEXT:         const bool inPlanes0 = plane >= zBegin - 1 && plane < zEnd - 1,
// CHECK-NEXT:             inPlanes1 = plane >= zBegin && plane < zEnd,
// CHECK-NEXT:             inPlanes2 = plane >= zBegin + 1 && plane < zEnd + 1;
// CHECK:                const bool reads ={{[[:space:]]+}}(inPlanes0 && readsRow0[c]) ||
// CHECK-NEXT:               (inPlanes1 && readsRow1[c]) ||
// CHECK-NEXT:               (inPlanes2 && readsRow0[c]);
// CHECK-NEXT:           window[w][c] ={{[[:space:]]+}}reads ? in[col + NX * row + (NY * NX) * plane] : double(0);
// The plane after the window is loaded before the loop, then a step ahead.
// CHECK:              const int plane = tileZ + 1;
// CHECK:                next[c] ={{[[:space:]]+}}reads ? in[col + NX * row + (NY * NX) * plane] : double(0);
// CHECK:            for (int z = tileZ; z < tileZ + Shape::Planes && z < zEnd; ++z) {
// CHECK-NEXT:         // Rotate the window, take in the next plane and start loading the one{{([[:space:]]+//)?}} after.
// CHECK-NEXT:         #pragma unroll
// CHECK-NEXT:         for (int w = 0; w < Shape::Window; ++w)
// CHECK-NEXT:           #pragma unroll
// CHECK-NEXT:           for (int c = 0; c < Shape::Cached; ++c)
// CHECK-NEXT:             window[w][c] = w + 1 < Shape::Window ? window[w + 1][c] : next[c];
// CHECK-NEXT:         {
// CHECK-NEXT:           const int plane = z + 1 + 1;
// CHECK:                  next[c] ={{[[:space:]]+}}reads ? in[col + NX * row + (NY * NX) * plane] : double(0);
// CHECK:              // Column x.
// CHECK:                sum[i] = fma(b, window[0][i + 1], sum[i]);
// CHECK:                sum[i] = fma(b, window[1][i], sum[i]);
// CHECK:                sum[i] = fma(a, window[1][i + 1], sum[i]);
// CHECK:                sum[i] = fma(b, window[1][i + 2], sum[i]);
// CHECK:                sum[i] = fma(b, window[2][i + 1], sum[i]);
// CHECK:              if (lane >= Shape::Halo && outX >= xBegin && outX < xEnd &&{{[[:space:]]+}}z >= zBegin) {
// CHECK:                    out[outX + NX * outY + (NY * NX) * z] = sum[i];
// The launcher covers z with chunks of Shape::Planes.
// CHECK:        const long long extentZ = (long long)grid.z * block.z;
// CHECK:        const dim3 systolicGrid({{[[:space:]]*}}(unsigned)((extentX + perBlock - 1) / perBlock),
// CHECK-NEXT:       (unsigned)((extentY + Shape::Rows - 1) / Shape::Rows < 65535{{[[:space:]]+}}? (extentY + Shape::Rows - 1) / Shape::Rows{{[[:space:]]+}}: 65535),
// CHECK-NEXT:       (unsigned)((extentZ + Shape::Planes - 1) / Shape::Planes < 65535{{[[:space:]]+}}? (extentZ + Shape::Planes - 1) / Shape::Planes{{[[:space:]]+}}: 65535));
// CHECK-NEXT:   heat3d_systolic<<<systolicGrid, Shape::Warps * 32, 0, stream>>>({{[[:space:]]*}}in, out, NX, NY, NZ, a, b, extentX, extentY, extentZ);

void run(const double *in, double *out, int NX, int NY, int NZ) {
  dim3 block(32, 4, 2);
  dim3 grid((NX + 31) / 32, (NY + 3) / 4, (NZ + 1) / 2);
  // CHECK: heat3d_systolic_launch(grid, block, 0, 0, in, out, NX, NY, NZ, 0.4, 0.1);
  heat3d<<<grid, block>>>(in, out, NX, NY, NZ, 0.4, 0.1);
}
