// Experiment behind the wide-lane form (now generated: K_systolic_wide;
// bench/RESULTS.md, 2026-11-21 14:20 entry): wide lanes for wide filters. The
// generated 2d121pt kernel (11x11 box, float, filter from a pointer) is
// FMA-bound: each warp computes 32 columns to finish 32 - 10, so 31% of its
// FMAs are halo work, and it shuffles every partial sum once per filter column.
// Here each lane keeps V consecutive columns: a one-column shift moves V - 1
// sums between registers and shuffles one, and a warp finishes 32V - 10
// (rounded down to V) columns.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o x
//   bench/experiments/systolic_wide_lanes.cu
//   ./x            # 8192 x 8192 float, median of 30 runs each
#include "experiment.cuh"

#include <cmath>

constexpr int R = 5, Side = 2 * R + 1;

__global__ void plain(const float *__restrict__ in, float *__restrict__ out,
                      const float *__restrict__ filter, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R)
    return;
  int i = y * W + x;
  float sum = 0;
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx)
      sum += filter[(dy + R) * Side + dx + R] * in[i + dy * W + dx];
  out[i] = sum;
}

// V columns per lane, P rows per thread. V = 1 is the generated kernel's
// scheme. Filter columns are taken left to right; after the sweep the slot
// at window column j holds the output centred on window column j - R.
template <int V, int P, int MinBlocks, bool Transposed>
__global__ void __launch_bounds__(128, MinBlocks)
    wide(const float *__restrict__ in, float *__restrict__ out,
         const float *__restrict__ filter, int W, int H) {
  constexpr int Warps = 4, N = Side, M = Side, Halo = M - 1;
  constexpr int LeftPad = (R + V - 1) / V * V; // window starts on a vector
  constexpr int Columns = (32 * V - LeftPad - R) / V * V;
  __shared__ __align__(16) float f[Transposed ? M * 12 : N * M];
  for (int k = threadIdx.x; k < N * M; k += blockDim.x) {
    if (Transposed)
      f[(k % M) * 12 + k / M] = filter[k]; // f[m * 12 + n]
    else
      f[k] = filter[k];
  }
  __syncthreads();
  const int xBegin = R, xEnd = W - R, yBegin = R, yEnd = H - R;
  const int lane = threadIdx.x % 32;
  const int tileX = (blockIdx.x * Warps + threadIdx.x / 32) * Columns;
  if (tileX >= xEnd)
    return;
  const int windowX = tileX - LeftPad;
  const int col0 = windowX + lane * V;
  const int tileY = blockIdx.y * P;
  float cache[P + N - 1][V];
#pragma unroll
  for (int c = 0; c < P + N - 1; ++c) {
    const int row = tileY + c - R;
    const bool rowIn = row >= 0 && row < H;
    if (V == 4 && rowIn && col0 >= 0 && col0 + 4 <= W) {
      const float4 q = *reinterpret_cast<const float4 *>(in + col0 + W * row);
      cache[c][0] = q.x;
      cache[c][1 % V] = q.y;
      cache[c][2 % V] = q.z;
      cache[c][3 % V] = q.w;
    } else if (V == 2 && rowIn && col0 >= 0 && col0 + 2 <= W) {
      const float2 q = *reinterpret_cast<const float2 *>(in + col0 + W * row);
      cache[c][0] = q.x;
      cache[c][1 % V] = q.y;
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v)
        cache[c][v] = rowIn && col0 + v >= 0 && col0 + v < W
                          ? in[col0 + v + W * row]
                          : 0.f;
    }
  }
  float sum[P][V] = {};
#pragma unroll
  for (int m = 0; m < M; ++m) {
    if (m > 0) {
#pragma unroll
      for (int i = 0; i < P; ++i) {
        const float up = __shfl_up_sync(0xffffffffu, sum[i][V - 1], 1);
#pragma unroll
        for (int v = V - 1; v > 0; --v)
          sum[i][v] = sum[i][v - 1];
        sum[i][0] = up;
      }
    }
#pragma unroll
    for (int n = 0; n < N; ++n) {
      const float w = Transposed ? f[m * 12 + n] : f[n * M + m];
#pragma unroll
      for (int i = 0; i < P; ++i)
#pragma unroll
        for (int v = 0; v < V; ++v)
          sum[i][v] = fmaf(w, cache[i + n][v], sum[i][v]);
    }
  }
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int j = lane * V + v;
    const int outX = windowX + j - R;
    if (j < Halo || outX < tileX || outX >= tileX + Columns || outX < xBegin ||
        outX >= xEnd)
      continue;
#pragma unroll
    for (int i = 0; i < P; ++i) {
      const int outY = tileY + i;
      if (outY >= yBegin && outY < yEnd)
        out[outX + W * outY] = sum[i][v];
    }
  }
}

int main(int argc, char **argv) {
  const int W = argc > 1 ? std::atoi(argv[1]) : 8192;
  const int H = argc > 2 ? std::atoi(argv[2]) : W;
  const long long N = (long long)W * H;
  const double Cells = (double)(W - 2 * R) * (H - 2 * R);
  const DeviceBuffers D(N);
  std::vector<float> HF(Side * Side);
  for (int K = 0; K < Side * Side; ++K)
    HF[K] = 0.01f * ((K * 37) % 17) - 0.08f;
  float *F;
  CHECK(cudaMalloc(&F, sizeof(float) * Side * Side));
  CHECK(cudaMemcpy(F, HF.data(), sizeof(float) * Side * Side,
                   cudaMemcpyHostToDevice));
  std::vector<float> HRef(N), HOut(N);
  Timer T;
  const dim3 PB(32, 8), PG((W + 31) / 32, (H + 7) / 8);
  CHECK(cudaMemset(D.Out, 0, N * sizeof(float)));
  float PlainMs = T.median([&] { plain<<<PG, PB>>>(D.In, D.Out, F, W, H); });
  CHECK(cudaMemcpy(HRef.data(), D.Out, N * sizeof(float),
                   cudaMemcpyDeviceToHost));
  std::printf("%-34s %9s %8s %s\n", "variant", "ms", "GCell/s", "max|diff|");
  std::printf("%-34s %9.4f %8.1f -\n", "plain", PlainMs, Cells / PlainMs / 1e6);
  auto Run = [&](const char *Name, auto Kernel, int V, int P) {
    const int LeftPad = (R + V - 1) / V * V;
    const int Columns = (32 * V - LeftPad - R) / V * V;
    const dim3 G((W + 4 * Columns - 1) / (4 * Columns), (H + P - 1) / P);
    CHECK(cudaMemset(D.Out, 0, N * sizeof(float)));
    float Ms = T.median([&] { Kernel<<<G, 128>>>(D.In, D.Out, F, W, H); });
    CHECK(cudaMemcpy(HOut.data(), D.Out, N * sizeof(float),
                     cudaMemcpyDeviceToHost));
    double Diff = 0;
    for (long long K = 0; K < N; ++K)
      Diff = std::max(Diff, (double)std::fabs(HOut[K] - HRef[K]));
    int Regs = 0;
    cudaFuncAttributes A;
    if (cudaFuncGetAttributes(&A, Kernel) == cudaSuccess)
      Regs = A.numRegs;
    std::printf("%-34s %9.4f %8.1f %.2g (%d regs)\n", Name, Ms,
                Cells / Ms / 1e6, Diff, Regs);
  };
  Run("V1 P16 (generated scheme)", wide<1, 16, 3, false>, 1, 16);
  Run("V1 P16 transposed filter", wide<1, 16, 3, true>, 1, 16);
  Run("V2 P8", wide<2, 8, 3, false>, 2, 8);
  Run("V2 P8 transposed", wide<2, 8, 3, true>, 2, 8);
  Run("V2 P16", wide<2, 16, 2, false>, 2, 16);
  Run("V2 P16 transposed", wide<2, 16, 2, true>, 2, 16);
  Run("V4 P4", wide<4, 4, 3, false>, 4, 4);
  Run("V4 P4 transposed", wide<4, 4, 3, true>, 4, 4);
  Run("V4 P8", wide<4, 8, 2, false>, 4, 8);
  Run("V4 P8 transposed", wide<4, 8, 2, true>, 4, 8);
  Run("V4 P8 minblocks 1", wide<4, 8, 1, true>, 4, 8);
  return 0;
}
