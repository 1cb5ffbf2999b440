//===- bilateral.cu - Bilateral Grid, one kernel per stage, for fuse ------===//
//
// Bilateral Grid (PolyMage-GPU's BG, Table 2: 7 stages, 2560 x 1536; the
// Halide app bilateral_grid; Chen, Paris and Durand, SIGGRAPH 2007): an
// edge-preserving blur of a grayscale image. The pixels are binned into a
// coarse 3D grid over (x / s, y / s, value / r), s = 8 pixels and r = 0.1
// (Halide's s_sigma and r_sigma); every cell sums the values of the pixels
// it holds and counts them; the grid is blurred along its three axes; every
// pixel then reads both sums back at its own (x / s, y / s, value / r) by
// trilinear interpolation and divides the one by the other. Pixels of
// distant values sit in distant levels of the grid and are not averaged
// together, which keeps edges. The seven stages, Halide's formulas:
//
//   clampInput  v = the input clamped to [0, 1]
//   buildGrid   the histogram: cell (x, y, z) sums (v, 1) over the s x s
//               pixels (s x + i - s/2, s y + j - s/2), i, j in [0, s),
//               clamped to the image, whose level int(v / r + 0.5) is z
//   blurZ       [1 4 6 4 1] along z, both sums
//   blurX       the same along x
//   blurY       the same along y
//   slice       both sums trilinearly interpolated at (x / s, y / s, v / r)
//   normalize   the value sum divided by the count
//
// The grid is Halide's grid with an apron of kApron = 2 cells (the blurs'
// radius) on every side: the slice reads cells 0 to (W - 1) / s + 1 along
// x (likewise y) and levels 0 to 1 / r + 1; the blurs reach two cells
// beyond those, and the apron holds them, filled by buildGrid like any
// other cell (past the image, with the clamped border pixels, as Halide's
// repeat_edge input does; past the levels, empty). The blurs clamp their
// reads at the grid's edge, and such a clamp only changes apron cells that
// the slice never reads, directly or through a later blur: the output is
// that of Halide's unbounded grid.
//
// Layout: images are W x H floats; the slice's output has two planes
// (value sum, count), (c * H + y) * W + x. The grid and its blurs are GW x
// GH x kGridZ cells of two planes, element (c, z, y, x) at
// ((c * kGridZ + z) * GH + y) * GW + x. A grid stage's thread owns the cell
// (x, y, blockIdx.z) and computes both of its sums, as in Halide's GPU
// schedule (the channel loop innermost, unrolled), since the two are always
// computed and read together.
//
// The histogram is a gather, not a scatter: the thread of a cell reads the
// cell's s x s pixels and adds those of its level, instead of one thread
// per pixel atomicAdd-ing into its cell. Every cell is then written exactly
// once, so the grid needs no zeroing and the fuse block is the seven stage
// launches and nothing else; the sums are the same, in the same order, on
// every run, so the check's tolerance need not cover float atomics'
// arbitrary order; and the stage has the shape of the others (one thread
// per output point, inputs read at s x + constant, clamped), which is
// Halide's own formulation (an RDom over each cell's pixels). The price is
// that every pixel is read once per level of its cell, from cache. Fusing a
// reduction into its consumers is what PolyMage-GPU cannot do (Section 7.2:
// Halide's hand schedule does it on this app); buildGrid stays a kernel of
// its own either way.
//
// The slice reads the grid at a level computed from the pixel's value, not
// at a constant offset: a tile of its output needs every level of the
// grid's cells under it, which is a small bounded range (kGridZ = 16).
//
// Input: values uniform in [0, 1) from the seed; the output is checked
// everywhere against a float64 reference of the same stages and borders.
//
//   nvcc -O3 -arch=sm_90 -I samples/common -I runtime/include
//        samples/fuse/bilateral.cu -o bilateral
//   ./bilateral [W [H]] [--seed=N] [--reps=N]       # default 2560 x 1536
//
//===----------------------------------------------------------------------===//

#include "image.cuh"

#include <climits>
#include <cmath>

namespace {

/// The grid's spacing in pixels along x and y (Halide's s_sigma).
constexpr int kSigmaS = 8;
/// The grid's spacing in value (Halide's r_sigma), and its inverse as Halide
/// computes it (1.0f / 0.1f rounds to exactly 10).
constexpr float kSigmaR = 0.1f;
constexpr float kInvSigmaR = 1.f / kSigmaR;
/// The blurs' radius: the cells the grid has beyond those the slice reads.
constexpr int kApron = 2;
/// The levels the slice reads: v / r ranges over [0, 10], and the slice
/// reads the level below it and the next, up to 11 (the histogram's
/// rounded levels stay within 0 to 10).
constexpr int kLevels = 12;
/// Grid levels, the apron included.
constexpr int kGridZ = kLevels + 2 * kApron;

/// Grid cells along an image axis of N pixels: the slice reads cells 0 to
/// (N - 1) / s + 1, and the apron adds kApron either side.
int gridCells(int N) { return (N - 1) / kSigmaS + 2 + 2 * kApron; }

} // namespace

/// The level a pixel of value \p V (in [0, 1]) counts in: Halide's
/// int(v / r + 0.5), written as one fmaf so that it rounds once on the host
/// and the device alike (nvcc contracts v * 10 + 0.5 into an FMA, the host
/// compiler does not); a value at a rounding boundary must land in the same
/// level in the kernel and the reference.
__host__ __device__ inline int histogramLevel(float V) {
  return int(fmaf(V, kInvSigmaR, 0.5f));
}

/// Halide's lerp for floats: \p A at \p T = 0, \p B at \p T = 1.
template <typename T> __host__ __device__ inline T lerp(T A, T B, T Weight) {
  return A * (T(1) - Weight) + B * Weight;
}

//===-- Stages ------------------------------------------------------------===//

/// Stage 1: the input clamped to the range the grid's levels cover.
__global__ void clampInput(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = fminf(fmaxf(in[y * W + x], 0.f), 1.f);
}

/// Stage 2, the histogram. Cell (x, y, z) is Halide's cell (x - kApron,
/// y - kApron, z - kApron): it sums the values, and counts, of the s x s
/// pixels around pixel (s (x - kApron), s (y - kApron)) whose level is
/// z - kApron.
__global__ void buildGrid(const float *__restrict__ in,
                          float *__restrict__ grid, int W, int H, int GW,
                          int GH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x >= GW || y >= GH)
    return;
  const int x0 = (x - kApron) * kSigmaS - kSigmaS / 2;
  const int y0 = (y - kApron) * kSigmaS - kSigmaS / 2;
  float sum = 0.f, count = 0.f;
  for (int j = 0; j < kSigmaS; ++j) {
    const int py = image::clamp(y0 + j, 0, H - 1);
    for (int i = 0; i < kSigmaS; ++i) {
      const float v = in[py * W + image::clamp(x0 + i, 0, W - 1)];
      if (histogramLevel(v) + kApron == z) {
        sum += v;
        count += 1.f;
      }
    }
  }
  grid[((0 * kGridZ + z) * GH + y) * GW + x] = sum;
  grid[((1 * kGridZ + z) * GH + y) * GW + x] = count;
}

/// Stage 3: both sums blurred along z.
__global__ void blurZ(const float *__restrict__ in, float *__restrict__ out,
                      int GW, int GH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (x >= GW || y >= GH)
    return;
  for (int c = 0; c < 2; ++c) {
    const int plane = c * kGridZ;
    out[((plane + z) * GH + y) * GW + x] =
        in[((plane + image::clamp(z - 2, 0, kGridZ - 1)) * GH + y) * GW + x] +
        4.f * in[((plane + image::clamp(z - 1, 0, kGridZ - 1)) * GH + y) * GW +
                 x] +
        6.f * in[((plane + z) * GH + y) * GW + x] +
        4.f * in[((plane + image::clamp(z + 1, 0, kGridZ - 1)) * GH + y) * GW +
                 x] +
        in[((plane + image::clamp(z + 2, 0, kGridZ - 1)) * GH + y) * GW + x];
  }
}

/// Stage 4: the sums blurred along x, one plane (sum or count, at a level)
/// per blockIdx.z.
__global__ void blurX(const float *__restrict__ in, float *__restrict__ out,
                      int GW, int GH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int p = blockIdx.z;
  if (x >= GW || y >= GH)
    return;
  const int row = (p * GH + y) * GW;
  out[row + x] = in[row + image::clamp(x - 2, 0, GW - 1)] +
                 4.f * in[row + image::clamp(x - 1, 0, GW - 1)] +
                 6.f * in[row + x] +
                 4.f * in[row + image::clamp(x + 1, 0, GW - 1)] +
                 in[row + image::clamp(x + 2, 0, GW - 1)];
}

/// Stage 5: the sums blurred along y, one plane per blockIdx.z.
__global__ void blurY(const float *__restrict__ in, float *__restrict__ out,
                      int GW, int GH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int p = blockIdx.z;
  if (x >= GW || y >= GH)
    return;
  const int layer = p * GH;
  out[(layer + y) * GW + x] =
      in[(layer + image::clamp(y - 2, 0, GH - 1)) * GW + x] +
      4.f * in[(layer + image::clamp(y - 1, 0, GH - 1)) * GW + x] +
      6.f * in[(layer + y) * GW + x] +
      4.f * in[(layer + image::clamp(y + 1, 0, GH - 1)) * GW + x] +
      in[(layer + image::clamp(y + 2, 0, GH - 1)) * GW + x];
}

/// Stage 6: sum blockIdx.z of the blurred grid, trilinearly interpolated at
/// the pixel's (x / s, y / s, v / r). Never out of the grid: x / s + 1 is
/// at most (W - 1) / s + 1, and v / r + 1 at most 11.
__global__ void slice(const float *__restrict__ in,
                      const float *__restrict__ grid, float *__restrict__ out,
                      int W, int H, int GW, int GH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const float v = in[y * W + x];
  // The level below v / r and the fraction past it. zf is one fmaf, not
  // v * (1 / r) - zi, for the same reason as histogramLevel(): nvcc would
  // contract that into an FMA on the device and not on the host. It may be
  // a rounding below 0 where v / r is just below an integer that the
  // product rounds up to; the interpolation is continuous there.
  const int zi = int(v * kInvSigmaR);
  const float zf = fmaf(v, kInvSigmaR, -float(zi));
  const float xf = float(x % kSigmaS) / kSigmaS;
  const float yf = float(y % kSigmaS) / kSigmaS;
  // The corner (x / s, y / s, zi) of Halide's grid; the others are one cell
  // on along x (+ 1), y (+ GW) and z (+ GH * GW).
  const int i = ((c * kGridZ + zi + kApron) * GH + y / kSigmaS + kApron) * GW +
                x / kSigmaS + kApron;
  const int j = i + GH * GW;
  out[(c * H + y) * W + x] =
      lerp(lerp(lerp(grid[i], grid[i + 1], xf),
                lerp(grid[i + GW], grid[i + GW + 1], xf), yf),
           lerp(lerp(grid[j], grid[j + 1], xf),
                lerp(grid[j + GW], grid[j + GW + 1], xf), yf),
           zf);
}

/// Stage 7: the interpolated value sum over the interpolated count, which
/// is positive: the pixel itself counts in a cell within one cell and level
/// of each corner, and the blurs spread it over two.
__global__ void normalize(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x] / in[(H + y) * W + x];
}

//===-- The pipeline ------------------------------------------------------===//

/// Filters the W x H image \p In into \p Out. The intermediate stages go to
/// buffers allocated and freed here, so nothing reads them after the block.
static void runBilateralGrid(const float *In, float *Out, int W, int H) {
  const int GW = gridCells(W), GH = gridCells(H);
  const dim3 Block(32, 8);
  const dim3 Pixels = image::grid(Block, W, H);
  dim3 Cells = image::grid(Block, GW, GH);
  Cells.z = kGridZ;
  dim3 CellPlanes = Cells; // Sums and counts, every level.
  CellPlanes.z = 2 * kGridZ;
  dim3 SlicePlanes = Pixels;
  SlicePlanes.z = 2;
  const size_t ImageBytes = size_t(W) * H * sizeof(float);
  const size_t GridBytes = size_t(2) * kGridZ * GH * GW * sizeof(float);
  float *Clamped = nullptr, *Grid = nullptr, *BlurredZ = nullptr,
        *BlurredX = nullptr, *BlurredY = nullptr, *Sliced = nullptr;
  HARNESS_CHECK(cudaMallocAsync(&Clamped, ImageBytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Grid, GridBytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&BlurredZ, GridBytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&BlurredX, GridBytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&BlurredY, GridBytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Sliced, 2 * ImageBytes, 0));
#pragma cuda_rewrite fuse
  {
    clampInput<<<Pixels, Block>>>(In, Clamped, W, H);
    buildGrid<<<Cells, Block>>>(Clamped, Grid, W, H, GW, GH);
    blurZ<<<Cells, Block>>>(Grid, BlurredZ, GW, GH);
    blurX<<<CellPlanes, Block>>>(BlurredZ, BlurredX, GW, GH);
    blurY<<<CellPlanes, Block>>>(BlurredX, BlurredY, GW, GH);
    slice<<<SlicePlanes, Block>>>(Clamped, BlurredY, Sliced, W, H, GW, GH);
    normalize<<<Pixels, Block>>>(Sliced, Out, W, H);
  }
  HARNESS_CHECK(cudaFreeAsync(Clamped, 0));
  HARNESS_CHECK(cudaFreeAsync(Grid, 0));
  HARNESS_CHECK(cudaFreeAsync(BlurredZ, 0));
  HARNESS_CHECK(cudaFreeAsync(BlurredX, 0));
  HARNESS_CHECK(cudaFreeAsync(BlurredY, 0));
  HARNESS_CHECK(cudaFreeAsync(Sliced, 0));
}

//===-- Reference ---------------------------------------------------------===//

namespace {

/// The seven stages in float64, with the same formulas, borders and grid.
/// Only the two decisions that pick a cell are made in float, by the same
/// functions as the kernels' (histogramLevel, and zi and zf of the slice):
/// a pixel at a level's boundary would otherwise count in one level here
/// and in the next on the device, which no tolerance covers. The values
/// they are made from are float in both: clamping the float input is exact.
std::vector<double> referenceBilateralGrid(const std::vector<float> &In, int W,
                                           int H) {
  const int GW = gridCells(W), GH = gridCells(H);
  std::vector<double> Clamped(In.size());
  for (size_t I = 0; I < In.size(); ++I)
    Clamped[I] = std::min(std::max(double(In[I]), 0.0), 1.0);

  auto Cell = [&](int C, int Z, int Y, int X) {
    return ((size_t(C) * kGridZ + Z) * GH + Y) * GW + X;
  };
  const size_t GridSize = size_t(2) * kGridZ * GH * GW;
  // forRows runs over the grid's rows of all levels: row R is level R / GH,
  // row R % GH.
  const int GridRows = kGridZ * GH;
  std::vector<double> Grid(GridSize);
  image::forRows(GridRows, [&](int R) {
    const int Z = R / GH, Y = R % GH;
    for (int X = 0; X < GW; ++X) {
      double Sum = 0, Count = 0;
      for (int J = 0; J < kSigmaS; ++J)
        for (int I = 0; I < kSigmaS; ++I) {
          const int PX =
              image::clamp((X - kApron) * kSigmaS + I - kSigmaS / 2, 0, W - 1);
          const int PY =
              image::clamp((Y - kApron) * kSigmaS + J - kSigmaS / 2, 0, H - 1);
          const double V = Clamped[size_t(PY) * W + PX];
          if (histogramLevel(float(V)) + kApron == Z)
            Sum += V, Count += 1;
        }
      Grid[Cell(0, Z, Y, X)] = Sum;
      Grid[Cell(1, Z, Y, X)] = Count;
    }
  });

  // [1 4 6 4 1] along the axis (DX, DY, DZ), reads clamped to the grid.
  const double Taps[5] = {1, 4, 6, 4, 1};
  auto Blur = [&](const std::vector<double> &Src, int DX, int DY, int DZ) {
    std::vector<double> Dst(GridSize);
    image::forRows(GridRows, [&](int R) {
      const int Z = R / GH, Y = R % GH;
      for (int C = 0; C < 2; ++C)
        for (int X = 0; X < GW; ++X) {
          double Sum = 0;
          for (int K = -2; K <= 2; ++K)
            Sum += Taps[K + 2] *
                   Src[Cell(C, image::clamp(Z + K * DZ, 0, kGridZ - 1),
                            image::clamp(Y + K * DY, 0, GH - 1),
                            image::clamp(X + K * DX, 0, GW - 1))];
          Dst[Cell(C, Z, Y, X)] = Sum;
        }
    });
    return Dst;
  };
  const std::vector<double> BlurredZ = Blur(Grid, 0, 0, 1);
  const std::vector<double> BlurredX = Blur(BlurredZ, 1, 0, 0);
  const std::vector<double> BlurredY = Blur(BlurredX, 0, 1, 0);

  std::vector<double> Out(In.size());
  image::forRows(H, [&](int Y) {
    for (int X = 0; X < W; ++X) {
      const double V = Clamped[size_t(Y) * W + X];
      const int ZI = int(float(V) * kInvSigmaR);
      const double ZF = fmaf(float(V), kInvSigmaR, -float(ZI));
      const double XF = double(X % kSigmaS) / kSigmaS;
      const double YF = double(Y % kSigmaS) / kSigmaS;
      const int GX = X / kSigmaS + kApron, GY = Y / kSigmaS + kApron;
      const int GZ = ZI + kApron;
      double Sliced[2];
      for (int C = 0; C < 2; ++C) {
        auto At = [&](int DX, int DY, int DZ) {
          return BlurredY[Cell(C, GZ + DZ, GY + DY, GX + DX)];
        };
        Sliced[C] = lerp(lerp(lerp(At(0, 0, 0), At(1, 0, 0), XF),
                              lerp(At(0, 1, 0), At(1, 1, 0), XF), YF),
                         lerp(lerp(At(0, 0, 1), At(1, 0, 1), XF),
                              lerp(At(0, 1, 1), At(1, 1, 1), XF), YF),
                         ZF);
      }
      Out[size_t(Y) * W + X] = Sliced[0] / Sliced[1];
    }
  });
  return Out;
}

/// The output check's tolerance. Float error, relative to the output (each
/// bound holds in any order of the sums, u = 2^-24): a cell's value sum adds
/// at most 64 values in [0, 1], 63 roundings, 63u; the counts and their
/// blurs are integers below 64 * 16^3 = 2^18, exact; each blur adds 4
/// roundings of positive terms, 4u, 12u for three; each of the slice's three
/// lerp levels 3u (1 - w is exact for w = k / 8, may round for zf); the
/// division u. Value sum 63u + 12u + 9u, count 9u, quotient about 94u =
/// 5.6e-6 in the worst case (4e-7 measured on an H200). Outputs are averages
/// of values in [0, 1], so compareFloat's floor is up to 0.01 and judges
/// small outputs less strictly still. 1e-5 covers the bound; a wrong cell,
/// level, tap or weight is off by far more.
constexpr double kTolerance = 1e-5;

/// The image size from the command line, checked.
image::Size imageSize(const harness::Args &A) {
  // Checks 2 * W * H < 2^31, the slice's two planes' int indices.
  const image::Size Planes = image::size(A, 2);
  const image::Size S{Planes.W, Planes.H, 1};
  const int GW = gridCells(S.W), GH = gridCells(S.H);
  const long long GridSize = 2LL * kGridZ * GH * GW;
  if (GridSize > INT_MAX)
    harness::fail(
        "the grid needs 2 * 16 * ((W - 1) / 8 + 6) * ((H - 1) / 8 + 6) < 2^31");
  return S;
}

} // namespace

// The Halide driver includes this file for its reference, without main().
#ifndef FUSE_SAMPLE_NO_MAIN
int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "bilateral", {2560, 1536});
  const image::Size S = imageSize(A);
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceBilateralGrid(In, S.W, S.H);

  image::keepPoolMemory();
  harness::DeviceArray<float> DIn(In), DOut(In.size());
  harness::Result Res = image::measureAgainst(
      A, DOut, Ref, kTolerance, [&] { DOut.poison(); },
      [&] { runBilateralGrid(DIn.data(), DOut.data(), S.W, S.H); });
  // The input read once, the output written once.
  return harness::report(A, Res, 2.0 * double(DIn.bytes()));
}
#endif
