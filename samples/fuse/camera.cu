//===- camera.cu - Camera Pipeline, one kernel per stage, for fuse --------===//
//
// Camera Pipeline (PolyMage-GPU's CP, Table 2: 2592 x 1968 raw input; the
// Halide app camera_pipe): turns a raw Bayer mosaic from a sensor into an
// RGB image. The mosaic has one colour per pixel, in 2 x 2 quads
//
//   G R      row 2y:     green in a red row (Gr), red (R)
//   B G      row 2y + 1: blue (B), green in a blue row (Gb)
//
// and the pipeline is Halide's, stage for stage, in float:
//
//   suppressHotPixels  clamp each pixel to the range of the four of its
//                      colour two pixels away                       1 stage
//   deinterleave       the four colours into half-size planes Gr, R, B, Gb
//                      (quad (x, y) is raw (2x, 2y) ... (2x + 1, 2y + 1))
//                                                                   1 stage
//   demosaic, at half size (names: colour At site):
//     greenAtRed, greenAtBlue  the average of the two neighbours along the
//                      direction (vertical, horizontal) they differ less
//     redAtGr, blueAtGr, redAtGb, blueAtGb  the average of the two
//                      neighbours of that colour, corrected by how much
//                      green there differs from green's average at them
//     redAtBlue, blueAtRed  the same along the diagonal of the two that
//                      differ less                                 8 stages
//   interleaveX        the columns of two half-size planes interleaved
//                      into W x H/2 rows: even raw rows (Gr, R sites) and
//                      odd raw rows (B, Gb sites) of each colour   6 stages
//   interleaveY        the two rows of a colour interleaved into W x H
//                                                                  3 stages
//   correctColor       a 3 x 4 colour matrix (blockIdx.z is the colour)
//   applyCurve         gamma and contrast, a 1024-entry table in
//                      __constant__ memory indexed by the value
//   unsharpY, unsharpX [1 2 1] / 4 along y, then x
//   unsharpMask        the curved image minus its blur
//   sharpen            the curved image plus the mask, clamped to
//                      [0, 255]: the output                        6 stages
//                                                                 25 stages
//
// The paper counts 32 for its version; here the hot-pixel bounds, the
// demosaic's candidate interpolations and Halide's colour matrix Func are
// expressions inside stages, and Halide's shifted input is replaced by the
// crop below.
//
// Sizes, as in Halide's process.cpp: the raw input is W x H (2592 x 1968),
// W and H even; the output is OW x OH x 3 with OW = (W - 32) / 32 * 32 and
// OH = (H - 24) / 32 * 32 (2560 x 1920), whole 32 x 32 tiles, and output
// pixel (x, y) is raw pixel (x + 16, y + 12). Every other stage covers its
// whole buffer (W x H, W/2 x H/2, W x H/2) with its reads clamped to it, so
// that each is defined everywhere. The output depends only on points within
// 6 raw pixels of its own (1 for sharpening, 3 more for demosaicking, which
// reads the quads around a pixel's, 2 for the hot pixels), and the crop
// leaves at least 12 on every side: no clamp acts on anything the output
// depends on, as in Halide, whose version has no border rule at all. (So
// the check cannot see the clamps; they only keep reads in bounds.)
//
// Halide computes in 16-bit integers; this version computes in float but
// keeps every value exact: the raw values are integers in [0, 1023] (10-bit
// samples), demosaicking averages and differences them into multiples of
// 1/4 below 2^12 in magnitude, the colour matrix is Halide's Q8.8 (multiples
// of 1/256), so colour correction's products and sums are multiples of
// 2^-10 below 2^14 (9389 at most for this matrix), within float's 24 bits
// with or without FMA; the curve's entries are integers, and its index is
// computed from that exact value; sharpening averages integers below 2^8
// into multiples of 1/16. The float64 reference therefore computes the
// same values bit for bit, and a rewrite that reorders sums still does.
//
// Parameters: Halide's defaults (colour temperature 3700 K, gamma 2,
// contrast 50, sharpening strength 1, black level 25, white level 1023).
// Input: a raw mosaic of integers uniform in [0, 1023] from the seed; the
// output is checked everywhere against the float64 reference.
//
//   nvcc -O3 -arch=sm_90 -I samples/common -I runtime/include
//        samples/fuse/camera.cu -o camera
//   ./camera [W [H]] [--seed=N] [--reps=N]          # default 2592 x 1968
//
//===----------------------------------------------------------------------===//

#include "image.cuh"

#include <cmath>
#include <initializer_list>

namespace {

/// Halide's camera_pipe parameters (apps/camera_pipe/process.cpp).
constexpr float kColorTemperature = 3700.f;
constexpr float kGamma = 2.f;
constexpr float kContrast = 50.f;
constexpr float kSharpenStrength = 1.f;
constexpr int kBlackLevel = 25;
constexpr int kWhiteLevel = 1023;

/// Entries of the tone curve: one per 10-bit value.
constexpr int kCurveSize = 1024;

/// Where the output starts in the raw image, and its size: whole 32 x 32
/// tiles (process.cpp).
constexpr int kCropX = 16, kCropY = 12;
int outputWidth(int W) { return (W - 32) / 32 * 32; }
int outputHeight(int H) { return (H - 24) / 32 * 32; }

} // namespace

/// Row c of the colour matrix gives colour c: m[c][3] + m[c][0] r +
/// m[c][1] g + m[c][2] b. Set by the host (colorMatrix()).
__constant__ float kColorMatrix[3][4];
/// The tone curve, indexed by the colour-corrected value clamped to
/// [0, 1023]. Set by the host (toneCurve()).
__constant__ float kToneCurve[kCurveSize];

/// Halide's avg and absd, for floats; both exact on this pipeline's values.
template <typename T> __host__ __device__ inline T avg(T A, T B) {
  return (A + B) / T(2);
}
template <typename T> __host__ __device__ inline T absd(T A, T B) {
  return A > B ? A - B : B - A;
}

//===-- Stages ------------------------------------------------------------===//
//
// One thread per output point (x, y), of colour blockIdx.z where a stage
// has three; images are planar, (c * H + y) * W + x. Reads at an offset are
// clamped to the image.

/// Each raw pixel clamped to the range of the four pixels two away, the
/// nearest of its own colour along x and y: a lone outlier (a hot pixel)
/// is pulled back to its neighbours.
__global__ void suppressHotPixels(const float *__restrict__ in,
                                  float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  const float left = in[y * W + image::clamp(x - 2, 0, W - 1)];
  const float right = in[y * W + image::clamp(x + 2, 0, W - 1)];
  const float up = in[image::clamp(y - 2, 0, H - 1) * W + x];
  const float down = in[image::clamp(y + 2, 0, H - 1) * W + x];
  const float lo = fminf(fminf(left, right), fminf(up, down));
  const float hi = fmaxf(fmaxf(left, right), fmaxf(up, down));
  out[y * W + x] = fminf(fmaxf(in[y * W + x], lo), hi);
}

/// The mosaic's four colours as half-size planes: quad (x, y) of the W2 x
/// H2 quads holds Gr at raw (2x, 2y), R at (2x + 1, 2y), B at (2x, 2y + 1)
/// and Gb at (2x + 1, 2y + 1).
__global__ void deinterleave(const float *__restrict__ in,
                             float *__restrict__ gGr, float *__restrict__ rR,
                             float *__restrict__ bB, float *__restrict__ gGb,
                             int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int W = 2 * W2;
  gGr[y * W2 + x] = in[2 * y * W + 2 * x];
  rR[y * W2 + x] = in[2 * y * W + 2 * x + 1];
  bB[y * W2 + x] = in[(2 * y + 1) * W + 2 * x];
  gGb[y * W2 + x] = in[(2 * y + 1) * W + 2 * x + 1];
}

/// Green at the red sites: Gb above and below, Gr left and right (Gr of the
/// same quad, of the next); the pair that differs less is averaged.
__global__ void greenAtRed(const float *__restrict__ gGr,
                           const float *__restrict__ gGb,
                           float *__restrict__ out, int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const float up = gGb[image::clamp(y - 1, 0, H2 - 1) * W2 + x];
  const float down = gGb[y * W2 + x];
  const float left = gGr[y * W2 + x];
  const float right = gGr[y * W2 + image::clamp(x + 1, 0, W2 - 1)];
  out[y * W2 + x] =
      absd(right, left) < absd(up, down) ? avg(right, left) : avg(up, down);
}

/// Green at the blue sites: Gr above and below, Gb left and right.
__global__ void greenAtBlue(const float *__restrict__ gGr,
                            const float *__restrict__ gGb,
                            float *__restrict__ out, int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const float up = gGr[y * W2 + x];
  const float down = gGr[image::clamp(y + 1, 0, H2 - 1) * W2 + x];
  const float left = gGb[y * W2 + image::clamp(x - 1, 0, W2 - 1)];
  const float right = gGb[y * W2 + x];
  out[y * W2 + x] =
      absd(left, right) < absd(down, up) ? avg(left, right) : avg(down, up);
}

/// Red at the Gr sites: the reds left and right, corrected by the
/// difference between green here and green's average at those reds.
__global__ void redAtGr(const float *__restrict__ gGr,
                        const float *__restrict__ gR,
                        const float *__restrict__ rR, float *__restrict__ out,
                        int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int left = y * W2 + image::clamp(x - 1, 0, W2 - 1);
  const int here = y * W2 + x;
  out[here] = gGr[here] - avg(gR[here], gR[left]) + avg(rR[left], rR[here]);
}

/// Blue at the Gr sites: the blues above and below, corrected likewise.
__global__ void blueAtGr(const float *__restrict__ gGr,
                         const float *__restrict__ gB,
                         const float *__restrict__ bB, float *__restrict__ out,
                         int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int up = image::clamp(y - 1, 0, H2 - 1) * W2 + x;
  const int here = y * W2 + x;
  out[here] = gGr[here] - avg(gB[here], gB[up]) + avg(bB[here], bB[up]);
}

/// Red at the Gb sites: the reds above and below.
__global__ void redAtGb(const float *__restrict__ gGb,
                        const float *__restrict__ gR,
                        const float *__restrict__ rR, float *__restrict__ out,
                        int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int here = y * W2 + x;
  const int down = image::clamp(y + 1, 0, H2 - 1) * W2 + x;
  out[here] = gGb[here] - avg(gR[here], gR[down]) + avg(rR[here], rR[down]);
}

/// Blue at the Gb sites: the blues left and right.
__global__ void blueAtGb(const float *__restrict__ gGb,
                         const float *__restrict__ gB,
                         const float *__restrict__ bB, float *__restrict__ out,
                         int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int here = y * W2 + x;
  const int right = y * W2 + image::clamp(x + 1, 0, W2 - 1);
  out[here] = gGb[here] - avg(gB[here], gB[right]) + avg(bB[here], bB[right]);
}

/// Red at the blue sites: the four reds are diagonal neighbours, R of this
/// quad (upper right), of the quad to the left (upper left) and of those
/// below them; the diagonal whose two differ less is averaged, corrected
/// by green.
__global__ void redAtBlue(const float *__restrict__ gR,
                          const float *__restrict__ gB,
                          const float *__restrict__ rR, float *__restrict__ out,
                          int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int xl = image::clamp(x - 1, 0, W2 - 1);
  const int yd = image::clamp(y + 1, 0, H2 - 1);
  const int here = y * W2 + x, left = y * W2 + xl;
  const int down = yd * W2 + x, downLeft = yd * W2 + xl;
  const float positive =
      gB[here] - avg(gR[here], gR[downLeft]) + avg(rR[here], rR[downLeft]);
  const float negative =
      gB[here] - avg(gR[left], gR[down]) + avg(rR[left], rR[down]);
  out[here] = absd(rR[here], rR[downLeft]) < absd(rR[left], rR[down])
                  ? positive
                  : negative;
}

/// Blue at the red sites: the four blues are diagonal neighbours, B of this
/// quad (lower left), of the quad to the right (lower right) and of those
/// above them.
__global__ void blueAtRed(const float *__restrict__ gR,
                          const float *__restrict__ gB,
                          const float *__restrict__ bB, float *__restrict__ out,
                          int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int xr = image::clamp(x + 1, 0, W2 - 1);
  const int yu = image::clamp(y - 1, 0, H2 - 1);
  const int here = y * W2 + x, right = y * W2 + xr;
  const int up = yu * W2 + x, upRight = yu * W2 + xr;
  const float positive =
      gR[here] - avg(gB[here], gB[upRight]) + avg(bB[here], bB[upRight]);
  const float negative =
      gR[here] - avg(gB[right], gB[up]) + avg(bB[right], bB[up]);
  out[here] = absd(bB[here], bB[upRight]) < absd(bB[right], bB[up]) ? positive
                                                                    : negative;
}

/// W x H2 rows from two (W / 2) x H2 planes: even columns from \p even,
/// odd columns from \p odd.
__global__ void interleaveX(const float *__restrict__ even,
                            const float *__restrict__ odd,
                            float *__restrict__ out, int W, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H2)
    return;
  const int W2 = W / 2;
  out[y * W + x] = x % 2 == 0 ? even[y * W2 + x / 2] : odd[y * W2 + x / 2];
}

/// A W x H image from two W x (H / 2) ones: even rows from \p even, odd
/// rows from \p odd.
__global__ void interleaveY(const float *__restrict__ even,
                            const float *__restrict__ odd,
                            float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = y % 2 == 0 ? even[y / 2 * W + x] : odd[y / 2 * W + x];
}

/// Colour blockIdx.z of the colour-corrected image.
__global__ void correctColor(const float *__restrict__ red,
                             const float *__restrict__ green,
                             const float *__restrict__ blue,
                             float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = y * W + x;
  out[(c * H + y) * W + x] = kColorMatrix[c][3] + kColorMatrix[c][0] * red[i] +
                             kColorMatrix[c][1] * green[i] +
                             kColorMatrix[c][2] * blue[i];
}

/// The tone curve: the value's integer part, clamped to the table, picks
/// the entry (Halide's int16 value, clamped).
__global__ void applyCurve(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = (c * H + y) * W + x;
  out[i] = kToneCurve[image::clamp(int(in[i]), 0, kCurveSize - 1)];
}

/// [1 2 1] / 4 along y.
__global__ void unsharpY(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int plane = c * H;
  out[(plane + y) * W + x] =
      (in[(plane + image::clamp(y - 1, 0, H - 1)) * W + x] +
       2.f * in[(plane + y) * W + x] +
       in[(plane + image::clamp(y + 1, 0, H - 1)) * W + x]) /
      4.f;
}

/// [1 2 1] / 4 along x.
__global__ void unsharpX(const float *__restrict__ in, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int row = (c * H + y) * W;
  out[row + x] = (in[row + image::clamp(x - 1, 0, W - 1)] + 2.f * in[row + x] +
                  in[row + image::clamp(x + 1, 0, W - 1)]) /
                 4.f;
}

/// What the blur takes away.
__global__ void unsharpMask(const float *__restrict__ in,
                            const float *__restrict__ blurred,
                            float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  const int i = (c * H + y) * W + x;
  out[i] = in[i] - blurred[i];
}

/// The output, OW x OH x 3: the curved image plus the weighted mask,
/// clamped to 8 bits' range, at raw (x + 16, y + 12).
__global__ void sharpen(const float *__restrict__ in,
                        const float *__restrict__ mask, float *__restrict__ out,
                        int W, int H, int OW, int OH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= OW || y >= OH)
    return;
  const int i = (c * H + y + kCropY) * W + x + kCropX;
  out[(c * OH + y) * OW + x] =
      fminf(fmaxf(in[i] + kSharpenStrength * mask[i], 0.f), 255.f);
}

//===-- The pipeline ------------------------------------------------------===//

namespace {

/// The raw W x H mosaic \p Raw into the RGB image \p Out (outputWidth(W) x
/// outputHeight(H) x 3). Every intermediate stage has a buffer of its own,
/// allocated before the block and freed after it, so nothing reads them
/// after the block. Names: colour, then the sites it is at (Gr, R, B, Gb;
/// Even and Odd raw rows).
///
/// The stages form a graph, not a line (the demosaic reads the four planes
/// in many combinations): the launches are in an order that keeps producer
/// next to consumer where a graph allows, red, then blue, then green, then
/// the colour stages, which do form a line.
void runCameraPipe(const float *Raw, float *Out, int W, int H) {
  const int W2 = W / 2, H2 = H / 2;
  const int OW = outputWidth(W), OH = outputHeight(H);
  const dim3 Block(32, 8);
  const dim3 Full = image::grid(Block, W, H);
  const dim3 Half = image::grid(Block, W2, H2);
  const dim3 HalfRows = image::grid(Block, W, H2);
  dim3 FullRgb = Full;
  FullRgb.z = 3;
  dim3 OutRgb = image::grid(Block, OW, OH);
  OutRgb.z = 3;
  const size_t Pixels = size_t(W) * H;
  auto Bytes = [](size_t Floats) { return Floats * sizeof(float); };
  // W x H.
  float *Denoised = nullptr;
  // W/2 x H/2 each: the Bayer planes, then the demosaic's values at them.
  float *GGr = nullptr, *RR = nullptr, *BB = nullptr, *GGb = nullptr;
  float *GR = nullptr, *GB = nullptr, *RGr = nullptr, *BGr = nullptr,
        *RGb = nullptr, *BGb = nullptr, *RB = nullptr, *BR = nullptr;
  // W x H/2 each.
  float *REven = nullptr, *ROdd = nullptr, *GEven = nullptr, *GOdd = nullptr,
        *BEven = nullptr, *BOdd = nullptr;
  // W x H each.
  float *Red = nullptr, *Green = nullptr, *Blue = nullptr;
  // W x H x 3 each.
  float *Corrected = nullptr, *Curved = nullptr, *UnsharpY = nullptr,
        *UnsharpX = nullptr, *Mask = nullptr;
  HARNESS_CHECK(cudaMallocAsync(&Denoised, Bytes(Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&GGr, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&RR, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&BB, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&GGb, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&GR, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&GB, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&RGr, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&BGr, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&RGb, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&BGb, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&RB, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&BR, Bytes(Pixels / 4), 0));
  HARNESS_CHECK(cudaMallocAsync(&REven, Bytes(Pixels / 2), 0));
  HARNESS_CHECK(cudaMallocAsync(&ROdd, Bytes(Pixels / 2), 0));
  HARNESS_CHECK(cudaMallocAsync(&GEven, Bytes(Pixels / 2), 0));
  HARNESS_CHECK(cudaMallocAsync(&GOdd, Bytes(Pixels / 2), 0));
  HARNESS_CHECK(cudaMallocAsync(&BEven, Bytes(Pixels / 2), 0));
  HARNESS_CHECK(cudaMallocAsync(&BOdd, Bytes(Pixels / 2), 0));
  HARNESS_CHECK(cudaMallocAsync(&Red, Bytes(Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&Green, Bytes(Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&Blue, Bytes(Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&Corrected, Bytes(3 * Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&Curved, Bytes(3 * Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&UnsharpY, Bytes(3 * Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&UnsharpX, Bytes(3 * Pixels), 0));
  HARNESS_CHECK(cudaMallocAsync(&Mask, Bytes(3 * Pixels), 0));
#pragma cuda_rewrite fuse
  {
    suppressHotPixels<<<Full, Block>>>(Raw, Denoised, W, H);
    deinterleave<<<Half, Block>>>(Denoised, GGr, RR, BB, GGb, W2, H2);
    // Red.
    greenAtRed<<<Half, Block>>>(GGr, GGb, GR, W2, H2);
    redAtGr<<<Half, Block>>>(GGr, GR, RR, RGr, W2, H2);
    interleaveX<<<HalfRows, Block>>>(RGr, RR, REven, W, H2);
    greenAtBlue<<<Half, Block>>>(GGr, GGb, GB, W2, H2);
    redAtBlue<<<Half, Block>>>(GR, GB, RR, RB, W2, H2);
    redAtGb<<<Half, Block>>>(GGb, GR, RR, RGb, W2, H2);
    interleaveX<<<HalfRows, Block>>>(RB, RGb, ROdd, W, H2);
    interleaveY<<<Full, Block>>>(REven, ROdd, Red, W, H);
    // Blue.
    blueAtGr<<<Half, Block>>>(GGr, GB, BB, BGr, W2, H2);
    blueAtRed<<<Half, Block>>>(GR, GB, BB, BR, W2, H2);
    interleaveX<<<HalfRows, Block>>>(BGr, BR, BEven, W, H2);
    blueAtGb<<<Half, Block>>>(GGb, GB, BB, BGb, W2, H2);
    interleaveX<<<HalfRows, Block>>>(BB, BGb, BOdd, W, H2);
    interleaveY<<<Full, Block>>>(BEven, BOdd, Blue, W, H);
    // Green.
    interleaveX<<<HalfRows, Block>>>(GGr, GR, GEven, W, H2);
    interleaveX<<<HalfRows, Block>>>(GB, GGb, GOdd, W, H2);
    interleaveY<<<Full, Block>>>(GEven, GOdd, Green, W, H);
    // Colour.
    correctColor<<<FullRgb, Block>>>(Red, Green, Blue, Corrected, W, H);
    applyCurve<<<FullRgb, Block>>>(Corrected, Curved, W, H);
    unsharpY<<<FullRgb, Block>>>(Curved, UnsharpY, W, H);
    unsharpX<<<FullRgb, Block>>>(UnsharpY, UnsharpX, W, H);
    unsharpMask<<<FullRgb, Block>>>(Curved, UnsharpX, Mask, W, H);
    sharpen<<<OutRgb, Block>>>(Curved, Mask, Out, W, H, OW, OH);
  }
  HARNESS_CHECK(cudaFreeAsync(Denoised, 0));
  HARNESS_CHECK(cudaFreeAsync(GGr, 0));
  HARNESS_CHECK(cudaFreeAsync(RR, 0));
  HARNESS_CHECK(cudaFreeAsync(BB, 0));
  HARNESS_CHECK(cudaFreeAsync(GGb, 0));
  HARNESS_CHECK(cudaFreeAsync(GR, 0));
  HARNESS_CHECK(cudaFreeAsync(GB, 0));
  HARNESS_CHECK(cudaFreeAsync(RGr, 0));
  HARNESS_CHECK(cudaFreeAsync(BGr, 0));
  HARNESS_CHECK(cudaFreeAsync(RGb, 0));
  HARNESS_CHECK(cudaFreeAsync(BGb, 0));
  HARNESS_CHECK(cudaFreeAsync(RB, 0));
  HARNESS_CHECK(cudaFreeAsync(BR, 0));
  HARNESS_CHECK(cudaFreeAsync(REven, 0));
  HARNESS_CHECK(cudaFreeAsync(ROdd, 0));
  HARNESS_CHECK(cudaFreeAsync(GEven, 0));
  HARNESS_CHECK(cudaFreeAsync(GOdd, 0));
  HARNESS_CHECK(cudaFreeAsync(BEven, 0));
  HARNESS_CHECK(cudaFreeAsync(BOdd, 0));
  HARNESS_CHECK(cudaFreeAsync(Red, 0));
  HARNESS_CHECK(cudaFreeAsync(Green, 0));
  HARNESS_CHECK(cudaFreeAsync(Blue, 0));
  HARNESS_CHECK(cudaFreeAsync(Corrected, 0));
  HARNESS_CHECK(cudaFreeAsync(Curved, 0));
  HARNESS_CHECK(cudaFreeAsync(UnsharpY, 0));
  HARNESS_CHECK(cudaFreeAsync(UnsharpX, 0));
  HARNESS_CHECK(cudaFreeAsync(Mask, 0));
}

//===-- Tables ------------------------------------------------------------===//

/// The colour matrix as Halide's color_correct computes it, in float: the
/// calibrated matrices for 3200 K and 7000 K mixed by inverse temperature
/// (weighted as Halide weighs them: alpha is 0 at 3200 K and 1 at 7000 K,
/// and multiplies the 3200 K matrix), then truncated to Q8.8 fixed point, which
/// keeps colour correction exact in float (see the file comment).
std::vector<float> colorMatrix() {
  const float Matrix3200[3][4] = {{1.6697f, -0.2693f, -0.4004f, -42.4346f},
                                  {-0.3576f, 1.0615f, 1.5949f, -37.1158f},
                                  {-0.2175f, -1.8751f, 6.9640f, -26.6970f}};
  const float Matrix7000[3][4] = {{2.2997f, -0.4478f, 0.1706f, -39.0923f},
                                  {-0.3826f, 1.5906f, -0.2080f, -25.4311f},
                                  {-0.0888f, -0.7344f, 2.2832f, -20.0826f}};
  const float Alpha =
      (1.f / kColorTemperature - 1.f / 3200) / (1.f / 7000 - 1.f / 3200);
  std::vector<float> M(12);
  for (int C = 0; C < 3; ++C)
    for (int K = 0; K < 4; ++K) {
      const float V = Matrix3200[C][K] * Alpha + Matrix7000[C][K] * (1 - Alpha);
      M[C * 4 + K] = float(int16_t(V * 256.f)) / 256.f;
    }
  return M;
}

/// Halide's tone curve: the value's place between the black and white
/// levels, gamma-corrected, through a piecewise quadratic contrast curve,
/// rounded to 8 bits; 0 at and below the black level.
std::vector<float> toneCurve() {
  const float MinRaw = kBlackLevel, MaxRaw = kWhiteLevel;
  const float InvRange = 1.f / (MaxRaw - MinRaw);
  const float B = 2.f - std::pow(2.f, kContrast / 100.f);
  const float A = 2.f - 2.f * B;
  std::vector<float> Curve(kCurveSize);
  for (int I = 0; I < kCurveSize; ++I) {
    const float XF = std::min(std::max(float(I - MinRaw) * InvRange, 0.f), 1.f);
    const float G = std::pow(XF, 1.f / kGamma);
    const float Z = G > 0.5f ? 1.f - (A * (1.f - G) * (1.f - G) + B * (1.f - G))
                             : A * G * G + B * G;
    const float Val =
        float(uint8_t(std::min(std::max(Z * 255.f + 0.5f, 0.f), 255.f)));
    Curve[size_t(I)] = I <= MinRaw ? 0.f : I > MaxRaw ? 255.f : Val;
  }
  return Curve;
}

//===-- Reference ---------------------------------------------------------===//

/// A float64 image of the reference, planar like the device's.
struct Plane {
  int W, H, C;
  std::vector<double> V;
  Plane(int W, int H, int C = 1) : W(W), H(H), C(C), V(size_t(W) * H * C) {}
  /// Point (X, Y) of colour Ch, the coordinates clamped to the image. The
  /// kernels clamp exactly the reads that can leave it, and clamping one
  /// that cannot changes nothing, so clamping every read here is the same.
  double at(int X, int Y, int Ch = 0) const {
    return V[(size_t(Ch) * H + image::clamp(Y, 0, H - 1)) * W +
             image::clamp(X, 0, W - 1)];
  }
};

/// The W x H x C image F(x, y, c), rows in parallel.
template <typename PointFn> Plane compute(int W, int H, int C, PointFn F) {
  Plane Out(W, H, C);
  image::forRows(C * H, [&](int R) {
    const int Ch = R / H, Y = R % H;
    for (int X = 0; X < W; ++X)
      Out.V[(size_t(Ch) * H + Y) * W + X] = F(X, Y, Ch);
  });
  return Out;
}

/// Hot-pixel suppression through the interleaving: the colour planes Red,
/// Green and Blue (W x H each).
std::vector<Plane> referenceDemosaic(const Plane &Raw) {
  const int W = Raw.W, H = Raw.H, W2 = W / 2, H2 = H / 2;
  const Plane Denoised = compute(W, H, 1, [&](int X, int Y, int) {
    const double L = Raw.at(X - 2, Y), R = Raw.at(X + 2, Y);
    const double U = Raw.at(X, Y - 2), D = Raw.at(X, Y + 2);
    return std::min(std::max(Raw.at(X, Y), std::min({L, R, U, D})),
                    std::max({L, R, U, D}));
  });
  auto Bayer = [&](int DX, int DY) {
    return compute(W2, H2, 1, [&](int X, int Y, int) {
      return Denoised.at(2 * X + DX, 2 * Y + DY);
    });
  };
  const Plane GGr = Bayer(0, 0), RR = Bayer(1, 0), BB = Bayer(0, 1),
              GGb = Bayer(1, 1);

  const Plane GR = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double Up = GGb.at(X, Y - 1), Down = GGb.at(X, Y);
    const double Left = GGr.at(X, Y), Right = GGr.at(X + 1, Y);
    return absd(Right, Left) < absd(Up, Down) ? avg(Right, Left)
                                              : avg(Up, Down);
  });
  const Plane GB = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double Up = GGr.at(X, Y), Down = GGr.at(X, Y + 1);
    const double Left = GGb.at(X - 1, Y), Right = GGb.at(X, Y);
    return absd(Left, Right) < absd(Down, Up) ? avg(Left, Right)
                                              : avg(Down, Up);
  });
  const Plane RGr = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGr.at(X, Y) - avg(GR.at(X, Y), GR.at(X - 1, Y)) +
           avg(RR.at(X - 1, Y), RR.at(X, Y));
  });
  const Plane BGr = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGr.at(X, Y) - avg(GB.at(X, Y), GB.at(X, Y - 1)) +
           avg(BB.at(X, Y), BB.at(X, Y - 1));
  });
  const Plane RGb = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGb.at(X, Y) - avg(GR.at(X, Y), GR.at(X, Y + 1)) +
           avg(RR.at(X, Y), RR.at(X, Y + 1));
  });
  const Plane BGb = compute(W2, H2, 1, [&](int X, int Y, int) {
    return GGb.at(X, Y) - avg(GB.at(X, Y), GB.at(X + 1, Y)) +
           avg(BB.at(X, Y), BB.at(X + 1, Y));
  });
  // Halide's rp_b, rn_b and their differences rpd_b, rnd_b; likewise blue.
  const Plane RB = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double P = GB.at(X, Y) - avg(GR.at(X, Y), GR.at(X - 1, Y + 1)) +
                     avg(RR.at(X, Y), RR.at(X - 1, Y + 1));
    const double N = GB.at(X, Y) - avg(GR.at(X - 1, Y), GR.at(X, Y + 1)) +
                     avg(RR.at(X - 1, Y), RR.at(X, Y + 1));
    return absd(RR.at(X, Y), RR.at(X - 1, Y + 1)) <
                   absd(RR.at(X - 1, Y), RR.at(X, Y + 1))
               ? P
               : N;
  });
  const Plane BR = compute(W2, H2, 1, [&](int X, int Y, int) {
    const double P = GR.at(X, Y) - avg(GB.at(X, Y), GB.at(X + 1, Y - 1)) +
                     avg(BB.at(X, Y), BB.at(X + 1, Y - 1));
    const double N = GR.at(X, Y) - avg(GB.at(X + 1, Y), GB.at(X, Y - 1)) +
                     avg(BB.at(X + 1, Y), BB.at(X, Y - 1));
    return absd(BB.at(X, Y), BB.at(X + 1, Y - 1)) <
                   absd(BB.at(X + 1, Y), BB.at(X, Y - 1))
               ? P
               : N;
  });

  auto InterleaveX = [&](const Plane &Even, const Plane &Odd) {
    return compute(W, H2, 1, [&](int X, int Y, int) {
      return X % 2 == 0 ? Even.at(X / 2, Y) : Odd.at(X / 2, Y);
    });
  };
  auto InterleaveY = [&](const Plane &Even, const Plane &Odd) {
    return compute(W, H, 1, [&](int X, int Y, int) {
      return Y % 2 == 0 ? Even.at(X, Y / 2) : Odd.at(X, Y / 2);
    });
  };
  std::vector<Plane> Rgb;
  Rgb.push_back(InterleaveY(InterleaveX(RGr, RR), InterleaveX(RB, RGb)));
  Rgb.push_back(InterleaveY(InterleaveX(GGr, GR), InterleaveX(GB, GGb)));
  Rgb.push_back(InterleaveY(InterleaveX(BGr, BR), InterleaveX(BB, BGb)));
  return Rgb;
}

/// The whole pipeline in float64: the same stages, formulas, borders and
/// tables as the kernels.
std::vector<double> referenceCameraPipe(const std::vector<float> &RawInput,
                                        int W, int H,
                                        const std::vector<float> &Matrix,
                                        const std::vector<float> &Curve) {
  Plane Raw(W, H);
  Raw.V = image::toDouble(RawInput);
  const std::vector<Plane> Rgb = referenceDemosaic(Raw);
  const Plane Corrected = compute(W, H, 3, [&](int X, int Y, int C) {
    return double(Matrix[C * 4 + 3]) +
           double(Matrix[C * 4 + 0]) * Rgb[0].at(X, Y) +
           double(Matrix[C * 4 + 1]) * Rgb[1].at(X, Y) +
           double(Matrix[C * 4 + 2]) * Rgb[2].at(X, Y);
  });
  const Plane Curved = compute(W, H, 3, [&](int X, int Y, int C) {
    return double(Curve[size_t(
        image::clamp(int(Corrected.at(X, Y, C)), 0, kCurveSize - 1))]);
  });
  const Plane UnsharpY = compute(W, H, 3, [&](int X, int Y, int C) {
    return (Curved.at(X, Y - 1, C) + 2 * Curved.at(X, Y, C) +
            Curved.at(X, Y + 1, C)) /
           4;
  });
  const Plane UnsharpX = compute(W, H, 3, [&](int X, int Y, int C) {
    return (UnsharpY.at(X - 1, Y, C) + 2 * UnsharpY.at(X, Y, C) +
            UnsharpY.at(X + 1, Y, C)) /
           4;
  });
  const Plane Mask = compute(W, H, 3, [&](int X, int Y, int C) {
    return Curved.at(X, Y, C) - UnsharpX.at(X, Y, C);
  });
  const Plane Out =
      compute(outputWidth(W), outputHeight(H), 3, [&](int X, int Y, int C) {
        const double V =
            Curved.at(X + kCropX, Y + kCropY, C) +
            double(kSharpenStrength) * Mask.at(X + kCropX, Y + kCropY, C);
        return std::min(std::max(V, 0.0), 255.0);
      });
  return Out.V;
}

/// The output check's tolerance. Every value is exact in float (see the
/// file comment), so the output equals the reference: max_rel_err is 0 (as
/// measured on an H200). The outputs are multiples of 1/16 in [0, 255], so a
/// wrong one is off by at least 1/16, 2.4e-4 of the largest output:
/// compareFloat's default 1e-5 is an exact check in effect.
constexpr double kTolerance = 1e-5;

/// The raw image's size from the command line, checked.
image::Size imageSize(const harness::Args &A) {
  // Checks 3 * W * H < 2^31, the colour stages' int indices.
  const image::Size Rgb = image::size(A, 3);
  const image::Size S{Rgb.W, Rgb.H, 1};
  if (S.W % 2 || S.H % 2 || S.W < 64 || S.H < 56)
    harness::fail("need even W >= 64 and even H >= 56: a Bayer mosaic, "
                  "cropped to whole 32 x 32 tiles");
  return S;
}

/// The raw mosaic from \p R: 10-bit samples, integers in [0, 1023]
/// (u * 1024 is exact and below 1024 for u in [0, 1)).
std::vector<float> randomMosaic(harness::Rng &R, const image::Size &S) {
  std::vector<float> Raw = image::randomImage(R, S);
  for (float &V : Raw)
    V = std::floor(V * 1024.f);
  return Raw;
}

/// What this program and the Halide driver run: the command line, the
/// mosaic from its seed, the colour matrix, the tone curve and the
/// reference.
struct Problem {
  harness::Args A;
  image::Size S;
  std::vector<float> Raw, Matrix, Curve;
  std::vector<double> Ref;
};

Problem setUp(int argc, char **argv) {
  Problem P;
  P.A = harness::parseArgs(argc, argv, "camera", {2592, 1968});
  P.S = imageSize(P.A);
  harness::Rng R(P.A.Seed);
  P.Raw = randomMosaic(R, P.S);
  P.Matrix = colorMatrix();
  P.Curve = toneCurve();
  P.Ref = referenceCameraPipe(P.Raw, P.S.W, P.S.H, P.Matrix, P.Curve);
  return P;
}

} // namespace

// The Halide driver includes this file for its reference, without main().
#ifndef FUSE_SAMPLE_NO_MAIN
int main(int argc, char **argv) {
  const Problem P = setUp(argc, argv);
  const int OW = outputWidth(P.S.W), OH = outputHeight(P.S.H);
  HARNESS_CHECK(
      cudaMemcpyToSymbol(kColorMatrix, P.Matrix.data(), sizeof(kColorMatrix)));
  HARNESS_CHECK(
      cudaMemcpyToSymbol(kToneCurve, P.Curve.data(), sizeof(kToneCurve)));

  image::keepPoolMemory();
  harness::DeviceArray<float> DRaw(P.Raw), DOut(size_t(OW) * OH * 3);
  harness::Result Res = image::measureAgainst(
      P.A, DOut, P.Ref, kTolerance, [&] { DOut.poison(); },
      [&] { runCameraPipe(DRaw.data(), DOut.data(), P.S.W, P.S.H); });
  // The raw mosaic read once, the output written once.
  return harness::report(P.A, Res, double(DRaw.bytes() + DOut.bytes()));
}
#endif
