// Experiment: aligned warp rows for 2d5pt float. The generated kernel
// (overlapped blocking, bench/experiments/systolic_2d5pt.cu v1) loads 32
// columns per warp row to write 30, so its rows start one column before a
// 128-byte line. Here each lane holds V consecutive columns (a float2 or
// float4), a warp covers 32 * V aligned columns and writes all of them; the
// columns just left and right of the warp's come from the neighbour lanes
// (shuffles of the inputs) and, for lanes 0 and 31, from one extra load.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o x
//   bench/experiments/systolic_2d5pt_aligned.cu
//   ./x            # 8192 x 8192 float, median of 30 runs each
#include "stencil2d5pt.cuh"

template <int V> struct Vec;
template <> struct Vec<2> {
  using T = float2;
  __device__ static float get(const T &v, int j) { return j == 0 ? v.x : v.y; }
  __device__ static void set(T &v, int j, float x) {
    if (j == 0)
      v.x = x;
    else
      v.y = x;
  }
};
template <> struct Vec<4> {
  using T = float4;
  __device__ static float get(const T &v, int j) {
    return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
  }
  __device__ static void set(T &v, int j, float x) {
    if (j == 0)
      v.x = x;
    else if (j == 1)
      v.y = x;
    else if (j == 2)
      v.z = x;
    else
      v.w = x;
  }
};

// Aligned: lane holds columns tileX + V*lane .. + V - 1. Each cached row: a
// vector load (when the original reads any of its columns in that row), and
// the columns left and right of the lane's from its neighbours; lanes 0 and
// 31 load theirs (HaloByLanes = false) or every lane loads one halo value and
// the row's halo is shuffled from it (HaloByLanes = true: two loads per tile
// instead of 2 * Cached predicated ones).
template <int V, int Rows, int Warps, bool HaloByLanes>
__global__ void __launch_bounds__(Warps * 32)
    aligned(const real *__restrict__ in, real *__restrict__ out, int W, int H,
            int extentX, int extentY) {
  using VT = typename Vec<V>::T;
  constexpr int Cached = Rows + 2, Columns = 32 * V;
  static_assert(!HaloByLanes || Cached <= 16, "halo lanes");
  const int xBegin = 1, xEnd = ::min(extentX, W - 1);
  const int yBegin = 1, yEnd = ::min(extentY, H - 1);
  const int lane = threadIdx.x % 32;
  const int tileX = (blockIdx.x * Warps + threadIdx.x / 32) * Columns;
  if (tileX >= xEnd || tileX + Columns <= xBegin)
    return;
  const int col = tileX + V * lane; // First of this lane's V columns.
  // Whether the original reads any of the lane's columns: in the centre
  // row (x - 1 .. x + 1 of written x) and in the rows above and below (x).
  const bool readsCentre = col < xEnd + 1 && col + V > xBegin - 1;
  const bool readsSide = col < xEnd && col + V > xBegin;
  for (int tileY = blockIdx.y * Rows; tileY < yEnd; tileY += gridDim.y * Rows) {
    if (tileY + Rows <= yBegin)
      continue;
    VT cache[Cached];
    real left[Cached], right[Cached];
    real haloValue = 0;
    if (HaloByLanes) {
      // Lane c loads the column left of the warp in row c, lane 16 + c the
      // column right of it.
      const int c = lane % 16;
      const int row = tileY + c - 1;
      const int hcol = lane < 16 ? tileX - 1 : tileX + Columns;
      if (c < Cached && row >= yBegin && row < yEnd && hcol >= xBegin - 1 &&
          hcol < xEnd + 1)
        haloValue = in[hcol + W * row];
    }
#pragma unroll
    for (int c = 0; c < Cached; ++c) {
      const int row = tileY + c - 1;
      const bool reads = (readsCentre && row >= yBegin && row < yEnd) ||
                         (readsSide && row >= yBegin - 1 && row < yEnd + 1);
      cache[c] =
          reads ? *reinterpret_cast<const VT *>(&in[col + W * row]) : VT{};
    }
    if (!HaloByLanes) {
#pragma unroll
      for (int c = 0; c < Cached; ++c) {
        const int row = tileY + c - 1;
        const int hcol = lane == 0 ? tileX - 1 : tileX + Columns;
        left[c] = right[c] = 0;
        if ((lane == 0 || lane == 31) && row >= yBegin && row < yEnd &&
            hcol >= xBegin - 1 && hcol < xEnd + 1) {
          real h = in[hcol + W * row];
          left[c] = right[c] = h;
        }
      }
    }
#pragma unroll
    for (int c = 1; c < Cached - 1; ++c) {
      const real fromLeft =
          __shfl_up_sync(0xffffffffu, Vec<V>::get(cache[c], V - 1), 1);
      const real fromRight =
          __shfl_down_sync(0xffffffffu, Vec<V>::get(cache[c], 0), 1);
      if (HaloByLanes) {
        const real hl = __shfl_sync(0xffffffffu, haloValue, c);
        const real hr = __shfl_sync(0xffffffffu, haloValue, 16 + c);
        left[c] = lane == 0 ? hl : fromLeft;
        right[c] = lane == 31 ? hr : fromRight;
      } else {
        left[c] = lane == 0 ? left[c] : fromLeft;
        right[c] = lane == 31 ? right[c] : fromRight;
      }
    }
    VT result[Rows];
#pragma unroll
    for (int i = 0; i < Rows; ++i) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const real w = j > 0 ? Vec<V>::get(cache[i + 1], j - 1) : left[i + 1];
        const real e =
            j < V - 1 ? Vec<V>::get(cache[i + 1], j + 1) : right[i + 1];
        real s = CW * w;
        s = fma(CS, Vec<V>::get(cache[i], j), s);
        s = fma(CC, Vec<V>::get(cache[i + 1], j), s);
        s = fma(CN, Vec<V>::get(cache[i + 2], j), s);
        s = fma(CE, e, s);
        Vec<V>::set(result[i], j, s);
      }
    }
    const bool wholeX = col >= xBegin && col + V <= xEnd;
#pragma unroll
    for (int i = 0; i < Rows; ++i) {
      const int outY = tileY + i;
      if (outY < yBegin || outY >= yEnd)
        continue;
      if (wholeX) {
        *reinterpret_cast<VT *>(&out[col + W * outY]) = result[i];
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (col + j >= xBegin && col + j < xEnd)
            out[col + j + W * outY] = Vec<V>::get(result[i], j);
      }
    }
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
              "check");
  // Compares every point: interior against the plain kernel, the border
  // against the poison (it must stay unwritten).
  auto Row = [&](const char *Name, float Ms, bool Check) {
    const char *Verdict = "-";
    if (Check) {
      CHECK(cudaMemcpy(HOut.data(), Out, N * sizeof(real),
                       cudaMemcpyDeviceToHost));
      double Diff = 0;
      bool BorderOk = true;
      for (int Y = 0; Y < H; ++Y)
        for (int X = 0; X < W; ++X) {
          const long long I = (long long)Y * W + X;
          if (X == 0 || Y == 0 || X == W - 1 || Y == H - 1)
            BorderOk &= HOut[I] == -1.0f;
          else
            Diff = std::max(Diff, (double)std::abs(HOut[I] - HRef[I]));
        }
      Verdict = BorderOk && Diff < 1e-5 ? "ok" : "WRONG";
    }
    std::printf("%-28s %9.4f %8.0f %8.1f %s\n", Name, Ms, Bytes / Ms / 1e6,
                Cells / Ms / 1e6, Verdict);
  };
  auto Poison = [&] {
    std::vector<real> P(N, -1.0f);
    CHECK(cudaMemcpy(Out, P.data(), N * sizeof(real), cudaMemcpyHostToDevice));
  };
  Row("cudaMemcpy", T.median([&] {
    CHECK(cudaMemcpyAsync(Out, In, N * sizeof(real), cudaMemcpyDeviceToDevice));
  }),
      false);
  Row("copy float4", T.median([&] {
    copyKernel4<<<(N / 4 + 255) / 256, 256>>>((const float4 *)In, (float4 *)Out,
                                              N / 4);
  }),
      false);
  const dim3 PB(32, 8), PG((W + 31) / 32, (H + 7) / 8);
  Poison();
  Row("plain 32x8", T.median([&] { plain<<<PG, PB>>>(In, Out, W, H); }), false);
  CHECK(cudaMemcpy(HRef.data(), Out, N * sizeof(real), cudaMemcpyDeviceToHost));
  const int EX = PG.x * 32, EY = PG.y * 8;

#define OVERLAPPED(Rows, Warps)                                                \
  do {                                                                         \
    Poison();                                                                  \
    const dim3 G((EX + Warps * 30 - 1) / (Warps * 30),                         \
                 (EY + Rows - 1) / Rows);                                      \
    Row("overlapped P" #Rows " w" #Warps, T.median([&] {                       \
      v12<int, Rows, Warps, false><<<G, Warps * 32>>>(In, Out, W, H, EX, EY);  \
    }),                                                                        \
        true);                                                                 \
  } while (0)
#define ALIGNED(V, Rows, Warps, ByLanes)                                       \
  do {                                                                         \
    Poison();                                                                  \
    const dim3 G((EX + Warps * 32 * V - 1) / (Warps * 32 * V),                 \
                 (EY + Rows - 1) / Rows);                                      \
    Row("aligned V" #V " P" #Rows " w" #Warps " lanes" #ByLanes,               \
        T.median([&] {                                                         \
          aligned<V, Rows, Warps, ByLanes>                                     \
              <<<G, Warps * 32>>>(In, Out, W, H, EX, EY);                      \
        }),                                                                    \
        true);                                                                 \
  } while (0)
  OVERLAPPED(16, 4);
  OVERLAPPED(8, 4);
  ALIGNED(2, 8, 4, false);
  ALIGNED(2, 8, 4, true);
  ALIGNED(2, 14, 4, true);
  ALIGNED(2, 4, 4, true);
  ALIGNED(4, 4, 4, false);
  ALIGNED(4, 4, 4, true);
  ALIGNED(4, 8, 4, true);
  ALIGNED(4, 8, 2, true);
  ALIGNED(4, 2, 4, true);
  ALIGNED(2, 8, 8, true);
  ALIGNED(4, 4, 8, true);
  // A width that is not a multiple of the warp's columns: ragged last tile.
  return 0;
}
