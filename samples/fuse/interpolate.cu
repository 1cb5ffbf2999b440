//===- interpolate.cu - Multiscale interpolation, one kernel per stage ----===//
//
// Multiscale Interpolation (PolyMage-GPU's MI, Table 2: 2560 x 1536 x 3, after
// the Halide app `interpolate` and PolyMage's version of it): fills the
// transparent pixels of an RGBA image from their surroundings at every
// scale. Premultiply the colour by alpha, build a pyramid of (colour *
// alpha, alpha) by repeated downsampling, then come back up: each level is
// the level itself plus what it lacks in alpha, (1 - alpha), times the
// coarser result upsampled; at full resolution, divide the colour by alpha.
// Written the plain way, one kernel per stage, one thread per output point,
// every stage's output in a buffer of its own, for the fuse pass (issue 6).
//
// Ten levels, as in the Halide app: level 0 is the input, level l + 1 has
// ceil(W_l / 2) x ceil(H_l / 2) points (2560 x 1536 down to 5 x 3 by
// default; ceil, so that an odd size keeps its last column and row). Every
// stage computes all four channels (blockIdx.z) but the last. Reads past a
// level's border are clamped to it (Halide extends only the input and
// clamps once more at level 4; its levels have no edges of their own). The
// stages:
//
//   premultiply: colour * alpha, and alpha                    1 stage
//   downX, downY: [1 2 1] / 4 around column 2x, then row 2y,
//     levels 1 to 9                                          18 stages
//   upX, upY: linear interpolation, the mean of x / 2 and
//     (x + 1) / 2, then of y / 2 and (y + 1) / 2; interpolate:
//     level + (1 - level's alpha) * upsampled; levels 8 to 0 27 stages
//   normalize: colour / alpha, three channels                 1 stage
//                                                            47 stages
//
// The paper counts 49.
//
// The 47 launches are written out in one `#pragma cuda_rewrite fuse` block,
// one line per stage and level, not looped over levels: the fuse pass
// analyses straight-line launch sequences. Each intermediate buffer is
// written by exactly one launch, and allocated before the block and freed
// after it in the same function: only the output is read after the block.
//
// Input: RGBA, like the Halide app's, channel-planar W x H x 4: colour
// uniform in [0, 1) and alpha 0 or 1 (Halide's app assumes as much), both
// from the seed; a pixel is opaque with probability 1/4, so that most are
// holes and every level contributes. The output (W x H x 3) is checked
// everywhere against a float64 reference of the same stages, formulas and
// borders.
//
//   nvcc -O3 -arch=sm_90 -I samples/common -I runtime/include
//        samples/fuse/interpolate.cu -o interpolate
//   ./interpolate [W [H]] [--seed=N] [--reps=N]        # default 2560 x 1536
//
//===----------------------------------------------------------------------===//

#include "image.cuh"

namespace {

/// Pyramid levels, the input's included.
constexpr int kLevels = 10;

} // namespace

//===-- Stages ------------------------------------------------------------===//
//
// Every kernel: one thread per output point (x, y) of channel blockIdx.z;
// images are channel-planar, (c * H + y) * W + x, with alpha in channel 3.

/// Level 0: the colour premultiplied by alpha, and alpha itself.
__global__ void premultiply(const float *__restrict__ in,
                            float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  int i = (c * H + y) * W + x;
  float alpha = in[(3 * H + y) * W + x];
  out[i] = c < 3 ? in[i] * alpha : alpha;
}

/// Halves the columns: out (outW x H) at x is in (inW x H) blurred with
/// [1 2 1] / 4 around column 2x.
__global__ void downX(const float *__restrict__ in, float *__restrict__ out,
                      int inW, int outW, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= outW || y >= H)
    return;
  int row = (c * H + y) * inW;
  int x0 = image::clamp(2 * x - 1, 0, inW - 1);
  int x1 = image::clamp(2 * x, 0, inW - 1);
  int x2 = image::clamp(2 * x + 1, 0, inW - 1);
  out[(c * H + y) * outW + x] =
      (in[row + x0] + 2.f * in[row + x1] + in[row + x2]) * 0.25f;
}

/// Halves the rows: out (W x outH) at y is in (W x inH) blurred with
/// [1 2 1] / 4 around row 2y.
__global__ void downY(const float *__restrict__ in, float *__restrict__ out,
                      int W, int inH, int outH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= outH)
    return;
  int plane = c * inH;
  int y0 = image::clamp(2 * y - 1, 0, inH - 1);
  int y1 = image::clamp(2 * y, 0, inH - 1);
  int y2 = image::clamp(2 * y + 1, 0, inH - 1);
  out[(c * outH + y) * W + x] =
      (in[(plane + y0) * W + x] + 2.f * in[(plane + y1) * W + x] +
       in[(plane + y2) * W + x]) *
      0.25f;
}

/// Doubles the columns: out (outW x H) at x is the mean of in (inW x H) at
/// x / 2 and (x + 1) / 2, which is in(x / 2) itself at even x. The last
/// column of an even outW reads past in's border, and is clamped.
__global__ void upX(const float *__restrict__ in, float *__restrict__ out,
                    int inW, int outW, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= outW || y >= H)
    return;
  int row = (c * H + y) * inW;
  int x0 = image::clamp(x / 2, 0, inW - 1);
  int x1 = image::clamp((x + 1) / 2, 0, inW - 1);
  out[(c * H + y) * outW + x] = (in[row + x0] + in[row + x1]) * 0.5f;
}

/// Doubles the rows: out (W x outH) at y from in (W x inH), as upX.
__global__ void upY(const float *__restrict__ in, float *__restrict__ out,
                    int W, int inH, int outH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= outH)
    return;
  int plane = c * inH;
  int y0 = image::clamp(y / 2, 0, inH - 1);
  int y1 = image::clamp((y + 1) / 2, 0, inH - 1);
  out[(c * outH + y) * W + x] =
      (in[(plane + y0) * W + x] + in[(plane + y1) * W + x]) * 0.5f;
}

/// One level of the result: the level's own (premultiplied) values, and
/// where its alpha falls short of 1, the coarser result upsampled.
__global__ void interpolate(const float *__restrict__ level,
                            const float *__restrict__ up,
                            float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  int i = (c * H + y) * W + x;
  float alpha = level[(3 * H + y) * W + x];
  out[i] = level[i] + (1.f - alpha) * up[i];
}

/// The output: colour divided by alpha, which undoes the premultiplication.
/// Launched over three channels; in has four.
__global__ void normalize(const float *__restrict__ in, float *__restrict__ out,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  int i = (c * H + y) * W + x;
  out[i] = in[i] / in[(3 * H + y) * W + x];
}

//===-- The pipeline ------------------------------------------------------===//

namespace {

/// Fills in the transparent pixels of the W x H RGBA image \p In into the
/// RGB image \p Out (W x H x 3). Every intermediate stage has a buffer of
/// its own (named after the stage and its level, four channels), allocated
/// before the block and freed after it, so nothing reads them after the
/// block. Separate names, not arrays indexed by level, so that every launch
/// names the buffers it links by.
void launchInterpolate(const float *In, float *Out, int W, int H) {
  const dim3 Block(32, 8);
  const int W0 = W, W1 = image::halve(W0), W2 = image::halve(W1),
            W3 = image::halve(W2), W4 = image::halve(W3), W5 = image::halve(W4),
            W6 = image::halve(W5), W7 = image::halve(W6), W8 = image::halve(W7),
            W9 = image::halve(W8);
  const int H0 = H, H1 = image::halve(H0), H2 = image::halve(H1),
            H3 = image::halve(H2), H4 = image::halve(H3), H5 = image::halve(H4),
            H6 = image::halve(H5), H7 = image::halve(H6), H8 = image::halve(H7),
            H9 = image::halve(H8);
  auto Bytes = [](int BW, int BH) {
    return size_t(BW) * BH * 4 * sizeof(float);
  };
  // The downsampled pyramid: rows halved (DownX*), then the level (Down*).
  float *Down0 = nullptr, *DownX1 = nullptr, *Down1 = nullptr,
        *DownX2 = nullptr, *Down2 = nullptr, *DownX3 = nullptr,
        *Down3 = nullptr, *DownX4 = nullptr, *Down4 = nullptr,
        *DownX5 = nullptr, *Down5 = nullptr, *DownX6 = nullptr,
        *Down6 = nullptr, *DownX7 = nullptr, *Down7 = nullptr,
        *DownX8 = nullptr, *Down8 = nullptr, *DownX9 = nullptr,
        *Down9 = nullptr;
  // The way back up: level l + 1's result with columns doubled (UpX*), then
  // rows (Up*), and level l's result (Interp*).
  float *UpX0 = nullptr, *Up0 = nullptr, *Interp0 = nullptr, *UpX1 = nullptr,
        *Up1 = nullptr, *Interp1 = nullptr, *UpX2 = nullptr, *Up2 = nullptr,
        *Interp2 = nullptr, *UpX3 = nullptr, *Up3 = nullptr, *Interp3 = nullptr,
        *UpX4 = nullptr, *Up4 = nullptr, *Interp4 = nullptr, *UpX5 = nullptr,
        *Up5 = nullptr, *Interp5 = nullptr, *UpX6 = nullptr, *Up6 = nullptr,
        *Interp6 = nullptr, *UpX7 = nullptr, *Up7 = nullptr, *Interp7 = nullptr,
        *UpX8 = nullptr, *Up8 = nullptr, *Interp8 = nullptr;
  HARNESS_CHECK(cudaMallocAsync(&Down0, Bytes(W0, H0), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX1, Bytes(W1, H0), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down1, Bytes(W1, H1), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX2, Bytes(W2, H1), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down2, Bytes(W2, H2), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX3, Bytes(W3, H2), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down3, Bytes(W3, H3), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX4, Bytes(W4, H3), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down4, Bytes(W4, H4), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX5, Bytes(W5, H4), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down5, Bytes(W5, H5), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX6, Bytes(W6, H5), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down6, Bytes(W6, H6), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX7, Bytes(W7, H6), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down7, Bytes(W7, H7), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX8, Bytes(W8, H7), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down8, Bytes(W8, H8), 0));
  HARNESS_CHECK(cudaMallocAsync(&DownX9, Bytes(W9, H8), 0));
  HARNESS_CHECK(cudaMallocAsync(&Down9, Bytes(W9, H9), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX0, Bytes(W0, H1), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up0, Bytes(W0, H0), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp0, Bytes(W0, H0), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX1, Bytes(W1, H2), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up1, Bytes(W1, H1), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp1, Bytes(W1, H1), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX2, Bytes(W2, H3), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up2, Bytes(W2, H2), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp2, Bytes(W2, H2), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX3, Bytes(W3, H4), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up3, Bytes(W3, H3), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp3, Bytes(W3, H3), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX4, Bytes(W4, H5), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up4, Bytes(W4, H4), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp4, Bytes(W4, H4), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX5, Bytes(W5, H6), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up5, Bytes(W5, H5), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp5, Bytes(W5, H5), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX6, Bytes(W6, H7), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up6, Bytes(W6, H6), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp6, Bytes(W6, H6), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX7, Bytes(W7, H8), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up7, Bytes(W7, H7), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp7, Bytes(W7, H7), 0));
  HARNESS_CHECK(cudaMallocAsync(&UpX8, Bytes(W8, H9), 0));
  HARNESS_CHECK(cudaMallocAsync(&Up8, Bytes(W8, H8), 0));
  HARNESS_CHECK(cudaMallocAsync(&Interp8, Bytes(W8, H8), 0));
#pragma cuda_rewrite fuse
  {
    // Level 0: premultiplied by alpha.
    premultiply<<<image::grid(Block, W0, H0, 4), Block>>>(In, Down0, W0, H0);
    // Downsampled pyramid, levels 1 to 9.
    downX<<<image::grid(Block, W1, H0, 4), Block>>>(Down0, DownX1, W0, W1, H0);
    downY<<<image::grid(Block, W1, H1, 4), Block>>>(DownX1, Down1, W1, H0, H1);
    downX<<<image::grid(Block, W2, H1, 4), Block>>>(Down1, DownX2, W1, W2, H1);
    downY<<<image::grid(Block, W2, H2, 4), Block>>>(DownX2, Down2, W2, H1, H2);
    downX<<<image::grid(Block, W3, H2, 4), Block>>>(Down2, DownX3, W2, W3, H2);
    downY<<<image::grid(Block, W3, H3, 4), Block>>>(DownX3, Down3, W3, H2, H3);
    downX<<<image::grid(Block, W4, H3, 4), Block>>>(Down3, DownX4, W3, W4, H3);
    downY<<<image::grid(Block, W4, H4, 4), Block>>>(DownX4, Down4, W4, H3, H4);
    downX<<<image::grid(Block, W5, H4, 4), Block>>>(Down4, DownX5, W4, W5, H4);
    downY<<<image::grid(Block, W5, H5, 4), Block>>>(DownX5, Down5, W5, H4, H5);
    downX<<<image::grid(Block, W6, H5, 4), Block>>>(Down5, DownX6, W5, W6, H5);
    downY<<<image::grid(Block, W6, H6, 4), Block>>>(DownX6, Down6, W6, H5, H6);
    downX<<<image::grid(Block, W7, H6, 4), Block>>>(Down6, DownX7, W6, W7, H6);
    downY<<<image::grid(Block, W7, H7, 4), Block>>>(DownX7, Down7, W7, H6, H7);
    downX<<<image::grid(Block, W8, H7, 4), Block>>>(Down7, DownX8, W7, W8, H7);
    downY<<<image::grid(Block, W8, H8, 4), Block>>>(DownX8, Down8, W8, H7, H8);
    downX<<<image::grid(Block, W9, H8, 4), Block>>>(Down8, DownX9, W8, W9, H8);
    downY<<<image::grid(Block, W9, H9, 4), Block>>>(DownX9, Down9, W9, H8, H9);
    // From level 8 down to 0: the coarser level's interpolation upsampled
    // fills in where this level is transparent. Level 9 is its own.
    upX<<<image::grid(Block, W8, H9, 4), Block>>>(Down9, UpX8, W9, W8, H9);
    upY<<<image::grid(Block, W8, H8, 4), Block>>>(UpX8, Up8, W8, H9, H8);
    interpolate<<<image::grid(Block, W8, H8, 4), Block>>>(Down8, Up8, Interp8,
                                                          W8, H8);
    upX<<<image::grid(Block, W7, H8, 4), Block>>>(Interp8, UpX7, W8, W7, H8);
    upY<<<image::grid(Block, W7, H7, 4), Block>>>(UpX7, Up7, W7, H8, H7);
    interpolate<<<image::grid(Block, W7, H7, 4), Block>>>(Down7, Up7, Interp7,
                                                          W7, H7);
    upX<<<image::grid(Block, W6, H7, 4), Block>>>(Interp7, UpX6, W7, W6, H7);
    upY<<<image::grid(Block, W6, H6, 4), Block>>>(UpX6, Up6, W6, H7, H6);
    interpolate<<<image::grid(Block, W6, H6, 4), Block>>>(Down6, Up6, Interp6,
                                                          W6, H6);
    upX<<<image::grid(Block, W5, H6, 4), Block>>>(Interp6, UpX5, W6, W5, H6);
    upY<<<image::grid(Block, W5, H5, 4), Block>>>(UpX5, Up5, W5, H6, H5);
    interpolate<<<image::grid(Block, W5, H5, 4), Block>>>(Down5, Up5, Interp5,
                                                          W5, H5);
    upX<<<image::grid(Block, W4, H5, 4), Block>>>(Interp5, UpX4, W5, W4, H5);
    upY<<<image::grid(Block, W4, H4, 4), Block>>>(UpX4, Up4, W4, H5, H4);
    interpolate<<<image::grid(Block, W4, H4, 4), Block>>>(Down4, Up4, Interp4,
                                                          W4, H4);
    upX<<<image::grid(Block, W3, H4, 4), Block>>>(Interp4, UpX3, W4, W3, H4);
    upY<<<image::grid(Block, W3, H3, 4), Block>>>(UpX3, Up3, W3, H4, H3);
    interpolate<<<image::grid(Block, W3, H3, 4), Block>>>(Down3, Up3, Interp3,
                                                          W3, H3);
    upX<<<image::grid(Block, W2, H3, 4), Block>>>(Interp3, UpX2, W3, W2, H3);
    upY<<<image::grid(Block, W2, H2, 4), Block>>>(UpX2, Up2, W2, H3, H2);
    interpolate<<<image::grid(Block, W2, H2, 4), Block>>>(Down2, Up2, Interp2,
                                                          W2, H2);
    upX<<<image::grid(Block, W1, H2, 4), Block>>>(Interp2, UpX1, W2, W1, H2);
    upY<<<image::grid(Block, W1, H1, 4), Block>>>(UpX1, Up1, W1, H2, H1);
    interpolate<<<image::grid(Block, W1, H1, 4), Block>>>(Down1, Up1, Interp1,
                                                          W1, H1);
    upX<<<image::grid(Block, W0, H1, 4), Block>>>(Interp1, UpX0, W1, W0, H1);
    upY<<<image::grid(Block, W0, H0, 4), Block>>>(UpX0, Up0, W0, H1, H0);
    interpolate<<<image::grid(Block, W0, H0, 4), Block>>>(Down0, Up0, Interp0,
                                                          W0, H0);
    // Divide by alpha.
    normalize<<<image::grid(Block, W0, H0, 3), Block>>>(Interp0, Out, W0, H0);
  }
  HARNESS_CHECK(cudaFreeAsync(Down0, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX1, 0));
  HARNESS_CHECK(cudaFreeAsync(Down1, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX2, 0));
  HARNESS_CHECK(cudaFreeAsync(Down2, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX3, 0));
  HARNESS_CHECK(cudaFreeAsync(Down3, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX4, 0));
  HARNESS_CHECK(cudaFreeAsync(Down4, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX5, 0));
  HARNESS_CHECK(cudaFreeAsync(Down5, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX6, 0));
  HARNESS_CHECK(cudaFreeAsync(Down6, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX7, 0));
  HARNESS_CHECK(cudaFreeAsync(Down7, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX8, 0));
  HARNESS_CHECK(cudaFreeAsync(Down8, 0));
  HARNESS_CHECK(cudaFreeAsync(DownX9, 0));
  HARNESS_CHECK(cudaFreeAsync(Down9, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX0, 0));
  HARNESS_CHECK(cudaFreeAsync(Up0, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp0, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX1, 0));
  HARNESS_CHECK(cudaFreeAsync(Up1, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp1, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX2, 0));
  HARNESS_CHECK(cudaFreeAsync(Up2, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp2, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX3, 0));
  HARNESS_CHECK(cudaFreeAsync(Up3, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp3, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX4, 0));
  HARNESS_CHECK(cudaFreeAsync(Up4, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp4, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX5, 0));
  HARNESS_CHECK(cudaFreeAsync(Up5, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp5, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX6, 0));
  HARNESS_CHECK(cudaFreeAsync(Up6, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp6, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX7, 0));
  HARNESS_CHECK(cudaFreeAsync(Up7, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp7, 0));
  HARNESS_CHECK(cudaFreeAsync(UpX8, 0));
  HARNESS_CHECK(cudaFreeAsync(Up8, 0));
  HARNESS_CHECK(cudaFreeAsync(Interp8, 0));
}

/// The sizes of the levels.
struct Levels {
  int W[kLevels], H[kLevels];
};

Levels levelSizes(int W, int H) {
  Levels L;
  L.W[0] = W, L.H[0] = H;
  for (int I = 1; I < kLevels; ++I)
    L.W[I] = image::halve(L.W[I - 1]), L.H[I] = image::halve(L.H[I - 1]);
  return L;
}

//===-- Reference ---------------------------------------------------------===//

using image::forEachRow;
using image::RefImage;

RefImage downXRef(const RefImage &In, int OutW) {
  RefImage Out(OutW, In.H, In.C);
  forEachRow(In.C, In.H, [&](int C, int Y) {
    for (int X = 0; X < OutW; ++X) {
      auto P = [&](int Col) {
        return In.at(C, Y, image::clamp(Col, 0, In.W - 1));
      };
      Out.at(C, Y, X) = (P(2 * X - 1) + 2 * P(2 * X) + P(2 * X + 1)) / 4;
    }
  });
  return Out;
}

RefImage downYRef(const RefImage &In, int OutH) {
  RefImage Out(In.W, OutH, In.C);
  forEachRow(In.C, OutH, [&](int C, int Y) {
    for (int X = 0; X < In.W; ++X) {
      auto P = [&](int Row) {
        return In.at(C, image::clamp(Row, 0, In.H - 1), X);
      };
      Out.at(C, Y, X) = (P(2 * Y - 1) + 2 * P(2 * Y) + P(2 * Y + 1)) / 4;
    }
  });
  return Out;
}

RefImage upXRef(const RefImage &In, int OutW) {
  RefImage Out(OutW, In.H, In.C);
  forEachRow(In.C, In.H, [&](int C, int Y) {
    for (int X = 0; X < OutW; ++X)
      Out.at(C, Y, X) = (In.at(C, Y, image::clamp(X / 2, 0, In.W - 1)) +
                         In.at(C, Y, image::clamp((X + 1) / 2, 0, In.W - 1))) /
                        2;
  });
  return Out;
}

RefImage upYRef(const RefImage &In, int OutH) {
  RefImage Out(In.W, OutH, In.C);
  forEachRow(In.C, OutH, [&](int C, int Y) {
    const int Y0 = image::clamp(Y / 2, 0, In.H - 1);
    const int Y1 = image::clamp((Y + 1) / 2, 0, In.H - 1);
    for (int X = 0; X < In.W; ++X)
      Out.at(C, Y, X) = (In.at(C, Y0, X) + In.at(C, Y1, X)) / 2;
  });
  return Out;
}

/// The whole pipeline in float64: the same stages, formulas and borders as
/// the kernels, one level at a time. \p In is W x H x 4.
std::vector<double> referenceInterpolate(const std::vector<float> &In, int W,
                                         int H) {
  RefImage Premultiplied(W, H, 4);
  forEachRow(4, H, [&](int C, int Y) {
    for (int X = 0; X < W; ++X) {
      const double Alpha = In[(size_t(3) * H + Y) * W + X];
      const double V = In[(size_t(C) * H + Y) * W + X];
      Premultiplied.at(C, Y, X) = C < 3 ? V * Alpha : Alpha;
    }
  });
  const Levels L = levelSizes(W, H);
  std::vector<RefImage> Down{Premultiplied};
  for (int I = 1; I < kLevels; ++I)
    Down.push_back(downYRef(downXRef(Down.back(), L.W[I]), L.H[I]));
  RefImage Interp = Down.back();
  for (int I = kLevels - 2; I >= 0; --I) {
    RefImage Up = upYRef(upXRef(Interp, L.W[I]), L.H[I]);
    const RefImage &Level = Down[I];
    forEachRow(4, L.H[I], [&](int C, int Y) {
      for (int X = 0; X < L.W[I]; ++X)
        Up.at(C, Y, X) =
            Level.at(C, Y, X) + (1 - Level.at(3, Y, X)) * Up.at(C, Y, X);
    });
    Interp = std::move(Up);
  }
  std::vector<double> Out(size_t(W) * H * 3);
  forEachRow(3, H, [&](int C, int Y) {
    for (int X = 0; X < W; ++X)
      Out[(size_t(C) * H + Y) * W + X] =
          Interp.at(C, Y, X) / Interp.at(3, Y, X);
  });
  return Out;
}

/// The input, W x H x 4: uniform values from \p R, whose channel 3 becomes
/// alpha: opaque where it is below 1/4, and at (0, 0) in any case, so that
/// not even a tiny image is all holes (its output would be 0 / 0).
std::vector<float> randomInput(harness::Rng &R, const image::Size &S) {
  std::vector<float> In = image::randomImage(R, S);
  float *Alpha = In.data() + 3 * S.pixels();
  for (long long I = 0; I < S.pixels(); ++I)
    Alpha[I] = (Alpha[I] < 0.25f || I == 0) ? 1.f : 0.f;
  return In;
}

/// The output check's tolerance: the default, 1e-5. Every stage is a mean of
/// non-negative values with non-negative weights (alpha stays in [0, 1]), so
/// rounding errors stay relative, a few units of 6e-8 per stage, and the
/// output is a ratio of two such values that came through the same 47
/// stages. (1 - alpha is a difference, but only its absolute error, a few
/// units, matters: the output divides by the interpolated alpha, at least
/// the level's alpha, which is near 1 exactly where 1 - alpha is small.)
/// Every rounding going one way would make some 250 units, 1.5e-5;
/// independent ones add up like a random walk: a float emulation of these
/// kernels on the CPU, with and without FMA, measured at most 3.5e-7
/// (2560 x 1536, seeds 1 to 3, and 2561 x 1537), 30 times below the
/// tolerance.
constexpr double kTolerance = 1e-5;

/// The bytes a run moves: the RGBA input read once, the RGB output written
/// once.
double bytesMoved(const image::Size &S) {
  return double(S.pixels()) * sizeof(float) * (4 + 3);
}

/// What this program and the Halide driver run: the command line, the
/// input from its seed, and the reference.
struct Problem {
  harness::Args A;
  image::Size S;
  std::vector<float> In;
  std::vector<double> Ref;
};

Problem setUp(int argc, char **argv) {
  Problem P;
  P.A = harness::parseArgs(argc, argv, "interpolate", {2560, 1536});
  P.S = image::size(P.A, 4);
  harness::Rng R(P.A.Seed);
  P.In = randomInput(R, P.S);
  P.Ref = referenceInterpolate(P.In, P.S.W, P.S.H);
  return P;
}

} // namespace

// The Halide driver includes this file for its reference, without main().
#ifndef FUSE_SAMPLE_NO_MAIN
int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);

  image::keepPoolMemory();
  harness::DeviceArray<float> DIn(P.In), DOut(size_t(P.S.pixels()) * 3);
  harness::Result Res = image::measureAgainst(
      P.A, DOut, P.Ref, kTolerance, [&] { DOut.poison(); },
      [&] { launchInterpolate(DIn.data(), DOut.data(), P.S.W, P.S.H); });
  return harness::report(P.A, Res, bytesMoved(P.S));
}
#endif
