// The 2D 5-point stencil the experiments share: its weights, the plain
// one-thread-per-point kernel, and the systolic kernel the tool generated
// (overlapped blocking), with the variants systolic_2d5pt.cu times.
#ifndef CUDA_REWRITE_BENCH_STENCIL2D5PT_CUH
#define CUDA_REWRITE_BENCH_STENCIL2D5PT_CUH

#include "experiment.cuh"

using real = float;
constexpr real CC = 0.5f, CW = 0.15f, CE = 0.1f, CS = 0.14f, CN = 0.11f;

__global__ void copyKernel(const float *__restrict__ in,
                           float *__restrict__ out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i];
}

__global__ void plain(const real *__restrict__ in, real *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = CC * in[y * W + x] + CW * in[y * W + x - 1] +
                     CE * in[y * W + x + 1] + CS * in[(y - 1) * W + x] +
                     CN * in[(y + 1) * W + x];
}

// The systolic step shared by every variant: Cached rows in, Rows sums out.
template <int Rows>
__device__ __forceinline__ void systolic5(const real (&cache)[Rows + 2],
                                          real (&sum)[Rows]) {
#pragma unroll
  for (int i = 0; i < Rows; ++i)
    sum[i] = CW * cache[i + 1];
#pragma unroll
  for (int i = 0; i < Rows; ++i)
    sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
#pragma unroll
  for (int i = 0; i < Rows; ++i) {
    sum[i] = fma(CS, cache[i], sum[i]);
    sum[i] = fma(CC, cache[i + 1], sum[i]);
    sum[i] = fma(CN, cache[i + 2], sum[i]);
  }
#pragma unroll
  for (int i = 0; i < Rows; ++i)
    sum[i] = __shfl_up_sync(0xffffffffu, sum[i], 1);
#pragma unroll
  for (int i = 0; i < Rows; ++i)
    sum[i] = fma(CE, cache[i + 1], sum[i]);
}

// v0 (Index = long long, Fast = false): the generated kernel, 64-bit indices
// and predicated loads. v1 (Index = int): 32-bit indices. v2 (Fast = true):
// plus loads and stores without predicates when the warp's whole tile is
// inside.
template <class Index, int Rows, int Warps, bool Fast, int MinBlocks = 1,
          bool Streaming = false>
__global__ void __launch_bounds__(Warps * 32, MinBlocks)
    v12(const real *__restrict__ in, real *__restrict__ out, int W, int H,
        Index extentX, Index extentY) {
  constexpr int Cached = Rows + 2, Halo = 2, Columns = 32 - Halo;
  const Index xBegin = 1, xEnd = ::min(extentX, (Index)(W - 1));
  const Index yBegin = 1, yEnd = ::min(extentY, (Index)(H - 1));
  const int lane = threadIdx.x % 32;
  const Index tileX = ((Index)blockIdx.x * Warps + threadIdx.x / 32) * Columns;
  if (tileX >= xEnd || tileX + Columns <= xBegin)
    return;
  const Index col = tileX + lane - 1;
  const bool readsColumn0 = (col >= xBegin && col < xEnd);
  const bool readsColumn1 = (col >= xBegin - 1 && col < xEnd + 1);
  const bool interiorX = tileX - 1 >= xBegin - 1 && tileX + 31 < xEnd + 1 &&
                         tileX >= xBegin && tileX + 30 <= xEnd;
  for (Index tileY = (Index)blockIdx.y * Rows; tileY < yEnd;
       tileY += (Index)gridDim.y * Rows) {
    if (tileY + Rows <= yBegin)
      continue;
    real cache[Cached];
    const bool interior =
        Fast && interiorX && tileY >= yBegin && tileY + Rows <= yEnd;
    if (interior) {
      // Lanes 0 and 31 read corners the star does not need; they are inside
      // the array, so reading them is safe (and the value unused).
#pragma unroll
      for (int c = 0; c < Cached; ++c)
        cache[c] = in[col + W * (tileY + c - 1)];
    } else {
#pragma unroll
      for (int c = 0; c < Cached; ++c) {
        const Index row = tileY + c - 1;
        cache[c] = (readsColumn0 && row >= yBegin - 1 && row < yEnd - 1) ||
                           (readsColumn1 && row >= yBegin && row < yEnd) ||
                           (readsColumn0 && row >= yBegin + 1 && row < yEnd + 1)
                       ? in[col + W * row]
                       : real(0);
      }
    }
    real sum[Rows];
    systolic5<Rows>(cache, sum);
    const Index outX = tileX + lane - Halo;
    if (interior) {
      if (lane >= Halo) {
#pragma unroll
        for (int i = 0; i < Rows; ++i)
          out[outX + W * (tileY + i)] = sum[i];
      }
    } else if (lane >= Halo && outX >= xBegin && outX < xEnd) {
#pragma unroll
      for (int i = 0; i < Rows; ++i) {
        const Index outY = tileY + i;
        if (outY >= yBegin && outY < yEnd) {
          if (Streaming)
            __stcs(&out[outX + W * outY], sum[i]);
          else
            out[outX + W * outY] = sum[i];
        }
      }
    }
  }
}

/// The domain of a 2D experiment (W x H from the command line, 8192^2 by
/// default) and what each run moves: the input read and the output written
/// once, the interior's cells computed.
struct Domain2D {
  int W, H;
  long long N;
  double Bytes, Cells;
  Domain2D(int argc, char **argv)
      : W(argc > 1 ? std::atoi(argv[1]) : 8192),
        H(argc > 2 ? std::atoi(argv[2]) : W), N((long long)W * H),
        Bytes(2.0 * N * sizeof(real)), Cells((double)(W - 2) * (H - 2)) {}
};

#endif
