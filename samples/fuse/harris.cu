//===- harris.cu - Harris corner response, one kernel per stage, for fuse -===//
//
// Harris Corner as in PolyMage (PolyMage-GPU, Table 2: 11 stages, 4256 x
// 2832): the corner response of a grayscale image, in 11 stages, each one
// kernel:
//
//   Ix, Iy         the 3x3 Sobel derivatives along x and y, divided by 12
//   Ixx, Iyy, Ixy  their pointwise products Ix * Ix, Iy * Iy, Ix * Iy
//   Sxx, Syy, Sxy  the 3x3 box sums of the products
//   det            Sxx * Syy - Sxy * Sxy
//   trace          Sxx + Syy
//   harris         det - 0.04 * trace * trace
//
// The input is taken as grayscale directly (PolyMage's version has no
// colour conversion stage either), so the 11 stages are exactly PolyMage's.
// Borders are guarded, as PolyMage computes them: each stage writes only the
// points whose reads stay inside what its producers wrote. Ix, Iy and the
// products cover 1 <= x < W - 1, 1 <= y < H - 1; the box sums and all after
// them 2 <= x < W - 2, 2 <= y < H - 2. The output's outer two rows and
// columns are not written.
//
// Written the ordinary way: one thread per output point, every intermediate
// stored whole in a global buffer and read back by its consumers, ten round
// trips through DRAM for one image in and one out. The fuse pass computes
// the stages together in overlapped tiles instead.
//
//   nvcc -O3 -arch=sm_90 -I samples/common -I runtime/include
//        samples/fuse/harris.cu -o harris
//   ./harris [W [H]] [--seed=N] [--reps=N]        # default 4256 x 2832
//
//===----------------------------------------------------------------------===//

#include "image.cuh"

/// The weight of trace^2 in the response (Harris and Stephens' k).
constexpr float kSensitivity = 0.04f;

/// Stage Ix: the Sobel derivative along x.
__global__ void gradientX(const float *__restrict__ in, float *__restrict__ ix,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  ix[y * W + x] = (-in[(y - 1) * W + x - 1] + in[(y - 1) * W + x + 1] -
                   2.f * in[y * W + x - 1] + 2.f * in[y * W + x + 1] -
                   in[(y + 1) * W + x - 1] + in[(y + 1) * W + x + 1]) /
                  12.f;
}

/// Stage Iy: the Sobel derivative along y.
__global__ void gradientY(const float *__restrict__ in, float *__restrict__ iy,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  iy[y * W + x] = (-in[(y - 1) * W + x - 1] - 2.f * in[(y - 1) * W + x] -
                   in[(y - 1) * W + x + 1] + in[(y + 1) * W + x - 1] +
                   2.f * in[(y + 1) * W + x] + in[(y + 1) * W + x + 1]) /
                  12.f;
}

/// Stage Ixx.
__global__ void productXX(const float *__restrict__ ix, float *__restrict__ ixx,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  ixx[y * W + x] = ix[y * W + x] * ix[y * W + x];
}

/// Stage Iyy.
__global__ void productYY(const float *__restrict__ iy, float *__restrict__ iyy,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  iyy[y * W + x] = iy[y * W + x] * iy[y * W + x];
}

/// Stage Ixy.
__global__ void productXY(const float *__restrict__ ix,
                          const float *__restrict__ iy, float *__restrict__ ixy,
                          int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  ixy[y * W + x] = ix[y * W + x] * iy[y * W + x];
}

/// Stage Sxx: the 3x3 box sum of Ixx.
__global__ void sumXX(const float *__restrict__ ixx, float *__restrict__ sxx,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  sxx[y * W + x] = ixx[(y - 1) * W + x - 1] + ixx[(y - 1) * W + x] +
                   ixx[(y - 1) * W + x + 1] + ixx[y * W + x - 1] +
                   ixx[y * W + x] + ixx[y * W + x + 1] +
                   ixx[(y + 1) * W + x - 1] + ixx[(y + 1) * W + x] +
                   ixx[(y + 1) * W + x + 1];
}

/// Stage Syy: the 3x3 box sum of Iyy.
__global__ void sumYY(const float *__restrict__ iyy, float *__restrict__ syy,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  syy[y * W + x] = iyy[(y - 1) * W + x - 1] + iyy[(y - 1) * W + x] +
                   iyy[(y - 1) * W + x + 1] + iyy[y * W + x - 1] +
                   iyy[y * W + x] + iyy[y * W + x + 1] +
                   iyy[(y + 1) * W + x - 1] + iyy[(y + 1) * W + x] +
                   iyy[(y + 1) * W + x + 1];
}

/// Stage Sxy: the 3x3 box sum of Ixy.
__global__ void sumXY(const float *__restrict__ ixy, float *__restrict__ sxy,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  sxy[y * W + x] = ixy[(y - 1) * W + x - 1] + ixy[(y - 1) * W + x] +
                   ixy[(y - 1) * W + x + 1] + ixy[y * W + x - 1] +
                   ixy[y * W + x] + ixy[y * W + x + 1] +
                   ixy[(y + 1) * W + x - 1] + ixy[(y + 1) * W + x] +
                   ixy[(y + 1) * W + x + 1];
}

/// Stage det: the determinant of the structure tensor [Sxx Sxy; Sxy Syy].
__global__ void determinant(const float *__restrict__ sxx,
                            const float *__restrict__ syy,
                            const float *__restrict__ sxy,
                            float *__restrict__ det, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  det[y * W + x] =
      sxx[y * W + x] * syy[y * W + x] - sxy[y * W + x] * sxy[y * W + x];
}

/// Stage trace: the trace of the structure tensor.
__global__ void trace(const float *__restrict__ sxx,
                      const float *__restrict__ syy, float *__restrict__ tr,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  tr[y * W + x] = sxx[y * W + x] + syy[y * W + x];
}

/// Stage harris: the corner response, large and positive at corners.
__global__ void response(const float *__restrict__ det,
                         const float *__restrict__ tr, float *__restrict__ out,
                         int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= W - 2 || y >= H - 2)
    return;
  out[y * W + x] =
      det[y * W + x] - kSensitivity * tr[y * W + x] * tr[y * W + x];
}

/// The Harris response of the W x H image \p In into \p Out. The ten
/// intermediate images, each W x H, go to buffers allocated and freed here,
/// so nothing reads them after the block.
///
/// The stages form a graph, not a line: Ix and Iy both read only the input,
/// Ixy reads both, det reads all three sums. The launches are in an order
/// that keeps producer next to consumer as much as a graph allows: the x
/// branch, the y branch up to trace (which needs only Sxx and Syy), then
/// the cross term through det to the response: three runs in which each
/// launch reads what the one before it wrote, the fewest any order gives.
static void runPipeline(const float *In, float *Out, int W, int H) {
  const dim3 Block(32, 8);
  const dim3 Grid = image::grid(Block, W, H);
  const size_t Bytes = size_t(W) * H * sizeof(float);
  float *Ix = nullptr, *Iy = nullptr, *Ixx = nullptr, *Iyy = nullptr,
        *Ixy = nullptr, *Sxx = nullptr, *Syy = nullptr, *Sxy = nullptr,
        *Det = nullptr, *Trace = nullptr;
  HARNESS_CHECK(cudaMallocAsync(&Ix, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Iy, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Ixx, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Iyy, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Ixy, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Sxx, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Syy, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Sxy, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Det, Bytes, 0));
  HARNESS_CHECK(cudaMallocAsync(&Trace, Bytes, 0));
#pragma cuda_rewrite fuse
  {
    gradientX<<<Grid, Block>>>(In, Ix, W, H);
    productXX<<<Grid, Block>>>(Ix, Ixx, W, H);
    sumXX<<<Grid, Block>>>(Ixx, Sxx, W, H);
    gradientY<<<Grid, Block>>>(In, Iy, W, H);
    productYY<<<Grid, Block>>>(Iy, Iyy, W, H);
    sumYY<<<Grid, Block>>>(Iyy, Syy, W, H);
    trace<<<Grid, Block>>>(Sxx, Syy, Trace, W, H);
    productXY<<<Grid, Block>>>(Ix, Iy, Ixy, W, H);
    sumXY<<<Grid, Block>>>(Ixy, Sxy, W, H);
    determinant<<<Grid, Block>>>(Sxx, Syy, Sxy, Det, W, H);
    response<<<Grid, Block>>>(Det, Trace, Out, W, H);
  }
  HARNESS_CHECK(cudaFreeAsync(Ix, 0));
  HARNESS_CHECK(cudaFreeAsync(Iy, 0));
  HARNESS_CHECK(cudaFreeAsync(Ixx, 0));
  HARNESS_CHECK(cudaFreeAsync(Iyy, 0));
  HARNESS_CHECK(cudaFreeAsync(Ixy, 0));
  HARNESS_CHECK(cudaFreeAsync(Sxx, 0));
  HARNESS_CHECK(cudaFreeAsync(Syy, 0));
  HARNESS_CHECK(cudaFreeAsync(Sxy, 0));
  HARNESS_CHECK(cudaFreeAsync(Det, 0));
  HARNESS_CHECK(cudaFreeAsync(Trace, 0));
}

namespace {

/// Whether element I of a W x H image lies in the output's interior, the
/// part the response stage writes.
struct Interior {
  int W, H;
  bool operator()(size_t I) const {
    const int X = int(I % size_t(W)), Y = int(I / size_t(W));
    return X >= 2 && Y >= 2 && X < W - 2 && Y < H - 2;
  }
};

/// The same 11 stages in float64 over the same domains; elements outside
/// the output's interior are 0 and not compared.
std::vector<double> referenceHarris(const std::vector<float> &Input,
                                    const image::Size &S) {
  const int W = S.W, H = S.H;
  const std::vector<double> In = image::toDouble(Input);
  const size_t N = In.size();
  std::vector<double> Ix(N), Iy(N), Ixx(N), Iyy(N), Ixy(N), Sxx(N), Syy(N),
      Sxy(N), Det(N), Trace(N), Out(N);
  auto At = [W](int Y, int X) { return size_t(Y) * W + X; };
  // Sobel weights, rows y - 1 .. y + 1, columns x - 1 .. x + 1.
  const double SobelX[3][3] = {{-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1}};
  const double SobelY[3][3] = {{-1, -2, -1}, {0, 0, 0}, {1, 2, 1}};
  // Ix, Iy and the products, where the Sobel taps stay inside the image.
  image::forRows(H, [&](int Y) {
    if (Y < 1 || Y >= H - 1)
      return;
    for (int X = 1; X < W - 1; ++X) {
      double GX = 0, GY = 0;
      for (int DY = -1; DY <= 1; ++DY)
        for (int DX = -1; DX <= 1; ++DX) {
          GX += SobelX[DY + 1][DX + 1] * In[At(Y + DY, X + DX)];
          GY += SobelY[DY + 1][DX + 1] * In[At(Y + DY, X + DX)];
        }
      const size_t I = At(Y, X);
      Ix[I] = GX / 12;
      Iy[I] = GY / 12;
      Ixx[I] = Ix[I] * Ix[I];
      Iyy[I] = Iy[I] * Iy[I];
      Ixy[I] = Ix[I] * Iy[I];
    }
  });
  // The box sums and what follows, where the sums' taps stay inside the
  // products' domain.
  const double K = kSensitivity; // The kernel's float constant.
  image::forRows(H, [&](int Y) {
    if (Y < 2 || Y >= H - 2)
      return;
    for (int X = 2; X < W - 2; ++X) {
      const size_t I = At(Y, X);
      for (int DY = -1; DY <= 1; ++DY)
        for (int DX = -1; DX <= 1; ++DX) {
          Sxx[I] += Ixx[At(Y + DY, X + DX)];
          Syy[I] += Iyy[At(Y + DY, X + DX)];
          Sxy[I] += Ixy[At(Y + DY, X + DX)];
        }
      Det[I] = Sxx[I] * Syy[I] - Sxy[I] * Sxy[I];
      Trace[I] = Sxx[I] + Syy[I];
      Out[I] = Det[I] - K * Trace[I] * Trace[I];
    }
  });
  return Out;
}

/// The output check's tolerance. The response cancels: det and
/// 0.04 * trace^2 are differences of products of box sums (up to about
/// 0.06), while the response is mostly near 2e-3 and at most about 0.05.
/// Float rounding of the products dominates: against compareFloat's floor
/// (1% of the largest response, about 5e-4 at the default size) a float
/// evaluation of these kernels on the host (with and without FMA
/// contraction, four seeds) erred by at most 3.3e-5, and by 1.7e-5 in
/// compareFloat's measure. 2e-4 leaves a factor of 6 for other rounding
/// orders (the GPU's, a rewrite's); a wrong tap or border is off by about
/// the response itself, 1 or more in this measure.
constexpr double kTolerance = 2e-4;

/// The image size from the command line, checked.
image::Size imageSize(const harness::Args &A) {
  const image::Size S = image::size(A);
  if (S.W < 5 || S.H < 5)
    harness::fail("need W, H >= 5: the response skips two pixels per side");
  return S;
}

/// The bytes a run moves: the input read once, the response written on the
/// interior only.
double bytesMoved(const image::Size &S) {
  const double Written = double(S.W - 4) * double(S.H - 4);
  return double(S.pixels() * sizeof(float)) + Written * sizeof(float);
}

} // namespace

// The Halide driver includes this file for its reference, without main().
#ifndef FUSE_SAMPLE_NO_MAIN
int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "harris", {4256, 2832});
  const image::Size S = imageSize(A);
  harness::Rng R(A.Seed);
  const std::vector<float> In = image::randomImage(R, S);
  const std::vector<double> Ref = referenceHarris(In, S);
  image::keepPoolMemory();
  harness::DeviceArray<float> DIn(In), DOut(In.size());
  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); },
      [&] { runPipeline(DIn.data(), DOut.data(), S.W, S.H); },
      [&] {
        return harness::compareFloat(DOut.download(), Ref, Interior{S.W, S.H},
                                     kTolerance);
      });
  return harness::report(A, Res, bytesMoved(S));
}
#endif
