// Experiment: what keeps the generated 2d5pt float kernel from the copy
// bandwidth? Variants of the systolic kernel the tool generated (2026-11-21),
// each changing one thing, timed against a copy of the same bytes.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o x bench/experiments/systolic_2d5pt.cu
//   ./x            # 8192 x 8192 float, median of 30 runs each
//
// Rows: copy ceilings (cudaMemcpy, a float and a float4 copy kernel), the plain
// kernel, the generated kernel (v0), then v0 with 32-bit indices (v1), with
// unpredicated loads for interior tiles (v2), with each warp walking several
// tiles down a column strip, carrying the halo rows (v3), and v3 with other P.
#include "stencil2d5pt.cuh"

// v3: each warp walks Tiles tiles down its column strip; the two halo rows of
// one tile are the first two of the next, so each row is loaded once.
template <int Rows, int Warps, int Tiles>
__global__ void __launch_bounds__(Warps * 32)
    v3(const real *__restrict__ in, real *__restrict__ out, int W, int H,
       int extentX, int extentY) {
  constexpr int Cached = Rows + 2, Halo = 2, Columns = 32 - Halo;
  const int xBegin = 1, xEnd = ::min(extentX, W - 1);
  const int yBegin = 1, yEnd = ::min(extentY, H - 1);
  const int lane = threadIdx.x % 32;
  const int tileX = (blockIdx.x * Warps + threadIdx.x / 32) * Columns;
  if (tileX >= xEnd || tileX + Columns <= xBegin)
    return;
  const int col = ::min(tileX + lane - 1, W - 1);
  const int strip = blockIdx.y * Rows * Tiles;
  const int stripEnd = ::min(strip + Rows * Tiles, yEnd);
  real cache[Cached];
  // Rows strip-1 and strip (clamped inside the array).
  cache[0] = in[col + W * ::max(strip - 1, 0)];
  cache[1] = in[col + W * strip];
  for (int tileY = strip; tileY < stripEnd; tileY += Rows) {
#pragma unroll
    for (int c = 2; c < Cached; ++c)
      cache[c] = in[col + W * ::min(tileY + c - 1, H - 1)];
    real sum[Rows];
    systolic5<Rows>(cache, sum);
    const int outX = tileX + lane - Halo;
    if (lane >= Halo && outX >= xBegin && outX < xEnd) {
#pragma unroll
      for (int i = 0; i < Rows; ++i) {
        const int outY = tileY + i;
        if (outY >= yBegin && outY < yEnd)
          out[outX + W * outY] = sum[i];
      }
    }
    cache[0] = cache[Rows];
    cache[1] = cache[Rows + 1];
  }
}

int main(int argc, char **argv) {
  const Domain2D Dom(argc, argv);
  const int W = Dom.W, H = Dom.H;
  const long long N = Dom.N;
  const double Bytes = Dom.Bytes, Cells = Dom.Cells;
  const DeviceBuffers D(N);
  real *In = D.In, *Out = D.Out;
  std::vector<real> HRef(N), HOut(N);
  Timer T;
  std::printf("%-28s %9s %8s %8s %s\n", "variant", "ms", "GB/s", "GCell/s",
              "max|diff|");
  auto Row = [&](const char *Name, float Ms, bool Check) {
    double Diff = 0;
    if (Check) {
      CHECK(cudaMemcpy(HOut.data(), Out, N * sizeof(real),
                       cudaMemcpyDeviceToHost));
      for (int Y = 1; Y < H - 1; ++Y)
        for (int X = 1; X < W - 1; ++X)
          Diff = std::max(Diff, (double)std::abs(HOut[(long long)Y * W + X] -
                                                 HRef[(long long)Y * W + X]));
    }
    std::printf("%-28s %9.4f %8.0f %8.1f %s%.2g\n", Name, Ms, Bytes / Ms / 1e6,
                Cells / Ms / 1e6, Check ? "" : "(no check) ", Diff);
  };
  Row("cudaMemcpy", T.median([&] {
    CHECK(cudaMemcpyAsync(Out, In, N * sizeof(real), cudaMemcpyDeviceToDevice));
  }),
      false);
  Row("copy float",
      T.median([&] { copyKernel<<<(N + 255) / 256, 256>>>(In, Out, N); }),
      false);
  Row("copy float4", T.median([&] {
    copyKernel4<<<(N / 4 + 255) / 256, 256>>>((const float4 *)In, (float4 *)Out,
                                              N / 4);
  }),
      false);
  const dim3 PB(32, 8), PG((W + 31) / 32, (H + 7) / 8);
  CHECK(cudaMemset(Out, 0, N * sizeof(real)));
  Row("plain 32x8", T.median([&] { plain<<<PG, PB>>>(In, Out, W, H); }), false);
  CHECK(cudaMemcpy(HRef.data(), Out, N * sizeof(real), cudaMemcpyDeviceToHost));
  const long long EX = (long long)PG.x * 32, EY = (long long)PG.y * 8;

#define GRID(Rows, Warps)                                                      \
  dim3((unsigned)((EX + Warps * 30 - 1) / (Warps * 30)),                       \
       (unsigned)((EY + Rows - 1) / Rows))
  auto Reset = [&] { CHECK(cudaMemset(Out, 0, N * sizeof(real))); };
  Reset();
  Row("v0 P16 w4 (generated)", T.median([&] {
    v12<long long, 16, 4, false><<<GRID(16, 4), 128>>>(In, Out, W, H, EX, EY);
  }),
      true);
  Reset();
  Row("v1 int P16 w4", T.median([&] {
    v12<int, 16, 4, false><<<GRID(16, 4), 128>>>(In, Out, W, H, EX, EY);
  }),
      true);
#define V1(Rows, Warps, MinBlocks, Streaming)                                  \
  do {                                                                         \
    Reset();                                                                   \
    Row("v1 P" #Rows " w" #Warps " min" #MinBlocks " cs" #Streaming,           \
        T.median([&] {                                                         \
          v12<int, Rows, Warps, false, MinBlocks, Streaming>                   \
              <<<GRID(Rows, Warps), Warps * 32>>>(In, Out, W, H, EX, EY);      \
        }),                                                                    \
        true);                                                                 \
  } while (0)
  V1(4, 4, 1, false);
  V1(8, 4, 1, false);
  V1(8, 8, 1, false);
  V1(8, 16, 1, false);
  V1(12, 4, 1, false);
  V1(16, 4, 12, false);
  V1(16, 4, 16, false);
  V1(16, 8, 1, false);
  V1(16, 4, 1, true);
  V1(8, 4, 1, true);
  return 0;
}
