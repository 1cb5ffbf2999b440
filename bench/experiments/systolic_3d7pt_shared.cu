// Experiment: SSAM's own 3D form (SSAM section 4.9, docs/references.md) for
// 3d7pt float, to weigh it against the generated kernel, which streams each
// warp along z with the z window in registers (docs/systolic.md). Here a block
// of Wz warps takes a sub-grid: warp w caches C = P + 2 rows of plane z0 - 1 +
// w in registers and computes the in-plane partial sums with shuffles, as in
// 2D; the partial sums of the planes above and below (the z taps) go through
// shared memory, and warps 1 .. Wz - 2 add them up and write: Wz - 2 output
// planes per block, the first and last plane being each block's halo.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o x
//   bench/experiments/systolic_3d7pt_shared.cu
//   ./x            # 512^3 float, median of 30 runs each
#include "experiment.cuh"

using real = float;
constexpr real CC = 0.4f, CW = 0.1f, CE = 0.11f, CS = 0.09f, CN = 0.1f,
               CB = 0.1f, CA = 0.1f;

__global__ void plain(const real *__restrict__ in, real *__restrict__ out,
                      int N) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= N - 1 || y >= N - 1 || z >= N - 1)
    return;
  int i = (z * N + y) * N + x;
  out[i] = CC * in[i] + CW * in[i - 1] + CE * in[i + 1] + CS * in[i - N] +
           CN * in[i + N] + CB * in[i - N * N] + CA * in[i + N * N];
}

// Wz warps per block, P rows per thread.
template <int Wz, int P>
__global__ void __launch_bounds__(Wz * 32)
    paperForm(const real *__restrict__ in, real *__restrict__ out, int N) {
  constexpr int C = P + 2, Halo = 2, Columns = 32 - Halo;
  // Partial sums each warp hands to the planes below (0) and above (1).
  __shared__ real exchange[2][Wz][P][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int tileX = blockIdx.x * Columns, tileY = blockIdx.y * P;
  const int z0 = blockIdx.z * (Wz - 2) + 1; // First output plane.
  const int plane = z0 - 1 + warp;          // This warp's plane.
  const int col = tileX + lane - 1;
  const bool planeIn = plane < N;
  const bool colIn = col >= 0 && col < N;
  real cache[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int row = tileY + c - 1;
    cache[c] = planeIn && colIn && row >= 0 && row < N
                   ? in[(plane * N + row) * N + col]
                   : real(0);
  }
  // In-plane taps: west, then the column (south, centre, north), then east.
  real sum[P];
#pragma unroll
  for (int i = 0; i < P; ++i)
    sum[i] = CW * cache[i + 1];
#pragma unroll
  for (int i = 0; i < P; ++i)
    sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    sum[i] = fma(CS, cache[i], sum[i]);
    sum[i] = fma(CC, cache[i + 1], sum[i]);
    sum[i] = fma(CN, cache[i + 2], sum[i]);
  }
#pragma unroll
  for (int i = 0; i < P; ++i)
    sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
#pragma unroll
  for (int i = 0; i < P; ++i)
    sum[i] = fma(CE, cache[i + 1], sum[i]);
    // The z taps: this plane's centre values, weighted for the plane below
    // (it is that plane's 'above') and the plane above, to shared memory. The
    // centre of output lane l is column tileX + l - 2, which lane l - 1 holds.
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const real centre = __shfl_up_sync(0xffffffffu, cache[i + 1], 1);
    exchange[0][warp][i][lane] = CA * centre;
    exchange[1][warp][i][lane] = CB * centre;
  }
  __syncthreads();
  if (warp == 0 || warp == Wz - 1 || plane >= N - 1)
    return;
  const int outX = tileX + lane - Halo;
  if (lane < Halo || outX < 1 || outX >= N - 1)
    return;
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int outY = tileY + i;
    if (outY >= 1 && outY < N - 1)
      out[(plane * N + outY) * N + outX] = sum[i] +
                                           exchange[0][warp + 1][i][lane] +
                                           exchange[1][warp - 1][i][lane];
  }
}

int main(int argc, char **argv) {
  const int N = argc > 1 ? std::atoi(argv[1]) : 512;
  const long long Cells = (long long)N * N * N;
  const DeviceBuffers D(Cells);
  real *In = D.In, *Out = D.Out;
  std::vector<real> HRef(Cells), HOut(Cells);
  Timer T;
  const double Bytes = 2.0 * Cells * sizeof(real);
  const double Written = (double)(N - 2) * (N - 2) * (N - 2);
  std::printf("%-24s %9s %8s %8s %s\n", "variant", "ms", "GB/s", "GCell/s",
              "check");
  auto Row = [&](const char *Name, float Ms, bool Check) {
    const char *Verdict = "-";
    if (Check) {
      CHECK(cudaMemcpy(HOut.data(), Out, Cells * sizeof(real),
                       cudaMemcpyDeviceToHost));
      double Diff = 0;
      for (long long I = 0; I < Cells; ++I)
        Diff = std::max(Diff, (double)std::abs(HOut[I] - HRef[I]));
      Verdict = Diff < 1e-5 ? "ok" : "WRONG";
    }
    std::printf("%-24s %9.4f %8.0f %8.1f %s\n", Name, Ms, Bytes / Ms / 1e6,
                Written / Ms / 1e6, Verdict);
  };
  Row("copy float4", T.median([&] {
    copyKernel4<<<(Cells / 4 + 255) / 256, 256>>>((const float4 *)In,
                                                  (float4 *)Out, Cells / 4);
  }),
      false);
  CHECK(cudaMemset(Out, 0, Cells * sizeof(real)));
  const dim3 PB(32, 4, 2), PG((N + 31) / 32, (N + 3) / 4, (N + 1) / 2);
  Row("plain 32x4x2", T.median([&] { plain<<<PG, PB>>>(In, Out, N); }), false);
  CHECK(cudaMemcpy(HRef.data(), Out, Cells * sizeof(real),
                   cudaMemcpyDeviceToHost));
#define PAPER(Wz, P)                                                           \
  do {                                                                         \
    CHECK(cudaMemset(Out, 0, Cells * sizeof(real)));                           \
    const dim3 G((N + 29) / 30, (N + P - 1) / P, (N - 2 + Wz - 3) / (Wz - 2)); \
    Row("paper Wz" #Wz " P" #P,                                                \
        T.median([&] { paperForm<Wz, P><<<G, Wz * 32>>>(In, Out, N); }),       \
        true);                                                                 \
  } while (0)
  PAPER(8, 4);
  PAPER(8, 8);
  PAPER(16, 4);
  PAPER(16, 8);
  PAPER(32, 4);
  PAPER(32, 2);
  return 0;
}
