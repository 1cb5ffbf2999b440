// Constant tables (StagedTables.h): 'curve' is looked up at an index that
// depends on the pixel, which the constant cache would serve one distinct
// index at a time, so the fused kernel copies it to shared memory once per
// block and the stages read the copy; 'gain' is indexed by the channel
// (blockIdx.z), the same for the whole block, and stays in constant memory.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o

__constant__ float curve[256];
__constant__ float gain[3];

__device__ int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void scale(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  out[(c * H + y) * W + x] = gain[c] * in[(c * H + y) * W + x];
}

__global__ void tone(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = (c * H + y) * W + x;
  out[i] = curve[clampTo(int(in[i]), 0, 255)] + gain[c];
}

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8, 3);
  float *s;
  cudaMalloc(&s, sizeof(float) * W * H * 3);
#pragma cuda_rewrite fuse tile(1, 8)
  {
    // REMARK: tables.cu:[[@LINE+1]]:5: remark: rewritten: 2 stages (scale, tone) run as fused_scale_to_tone::kernel: warp tile 32 x 8, 4 warps per block, 1024 bytes of shared memory per block; on chip: inlined where read: 's', constant table 'curve' (read at indices that differ within a warp); {{.*}} [fuse]
    scale<<<grid, block>>>(in, s, W, H);
    tone<<<grid, block>>>(s, out, W, H);
  }
  cudaFree(s);
}

// The extent is spelled from the array, not folded: it may be a macro.
// CHECK:      __shared__ float curve_staged[(sizeof(curve) / sizeof(curve[0]))];
// CHECK-NOT:  gain_staged
// CHECK:      return gain[c] * in[(c * H + y) * W + x];
// CHECK:      out[i] = curve_staged[clampTo(int(in_at(Interior, x, y)), 0, 255)] + gain[c];
// Every thread copies its share before any warp reads the table, from the
// table's device address (global loads: coalesced, where the constant
// cache would serve the lanes' distinct addresses one at a time).
// CHECK:      __global__ void __launch_bounds__(128)
// CHECK:        const float *__restrict__ curve_source, int extentX, int extentY) {
// CHECK:        for (int i = threadIdx.x; i < (sizeof(curve) / sizeof(curve[0]));
// CHECK-NEXT:        i += blockDim.x)
// CHECK-NEXT:     curve_staged[i] = curve_source[i];
// CHECK-NEXT:   __syncthreads();
// CHECK-NEXT:   const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
// The launcher looks the address up at each launch (it is the current
// device's) and runs the original launches if it cannot.
// CHECK:        const float *curve_source = nullptr;
// CHECK-NEXT:   if (cudaGetSymbolAddress((void **)&curve_source, curve) != cudaSuccess)
// CHECK-NEXT:     return false;
// CHECK-NEXT:   kernel<<<fusedGrid, 128, 0, stream>>>(in, s, W, H, out, curve_source,
