//===- conv_libraries.cu - NPP and cuDNN baselines for 2D convolution -----===//
//
// Times a library's 2D convolution of a float image with an R x C filter, so
// that bench/run.py can set the systolic pass's convolution samples
// (samples/systolic/conv<R>x<C>.cu) against what a user would otherwise call:
//
//   --npp    nppiFilterBorder_32f_C1R_Ctx over the whole W x H image, border
//            NPP_BORDER_REPLICATE, the filter reversed (NPP convolves) and
//            anchored so that it reads the offsets below, on the legacy
//            default stream
//   --cudnn  cudnnConvolutionForward, NCHW 1x1xHxW, one 1x1xRxC filter,
//            CUDNN_CROSS_CORRELATION, no padding (the output is the
//            interior), CUDNN_FMA_MATH (float precision, as the samples:
//            TF32 tensor cores would not meet the check); the algorithm is
//            the fastest that cudnnFindConvolutionForwardAlgorithm reports
//            whose output passes the check, its workspace allocated
//
// Both compute, at every interior point (x, y) (the filter inside the image),
//
//   out(x, y) = sum over r < R, c < C of w[r][c] * in(x + c - C/2, y + r - R/2)
//
// that is, offsets -(K/2) .. K-1-K/2 in each dimension, as a plain stencil
// writes them. Only the interior is checked, on ~100k random points against a
// float64 CPU reference (harness::compareFloat: relative error, 1e-5).
// Timing is harness::measure's: the output poisoned before each run, a
// checked cold run, warm-up runs, then the median of --reps runs timed with
// CUDA events around the library call alone.
//
// The libraries are compiled in with -DCONV_WITH_NPP and -DCONV_WITH_CUDNN;
// bench/run.py builds one binary per library, so that a missing cuDNN costs
// only the cudnn rows:
//
//   nvcc -O3 -arch=sm_90 -I samples/common -DCONV_WITH_NPP
//        bench/baselines/conv_libraries.cu -lnppif -lnppc -o conv-npp
//   nvcc -O3 -arch=sm_90 -I samples/common -DCONV_WITH_CUDNN
//        bench/baselines/conv_libraries.cu -lcudnn -o conv-cudnn
//   ./conv-npp R C [W [H]] --npp [--seed=N] [--reps=N] [--warmup=N]
//
// Default image 8192 x 8192. Output ends with one harness-style line
//
//   RESULT sample=conv<R>x<C>-<library> median_ms=<x> min_ms=<x>
//          max_rel_err=<e> mismatches=<n> unwritten=<n> stray=<n>
//          bytes=<2*4*cells> cells=<interior points> seed=<n> runs=<n>
//          algo=<what ran> status=ok|FAIL
//
// or, when the library is not compiled in or cannot run here (cuDNN failing
// to initialize or to load a sub-library, no algorithm for the shape, none
// accurate enough), a line `<sample>: SKIPPED: <why>` and
// `RESULT sample=<sample> status=SKIPPED`, exit status 0.
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#ifdef CONV_WITH_NPP
#include <npp.h>
#endif
#ifdef CONV_WITH_CUDNN
#include <cudnn.h>
#endif

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

namespace {

/// The image, the filter and the points the check looks at.
struct Problem {
  int R = 0, C = 0, W = 0, H = 0;
  std::vector<float> In;     ///< H rows of W.
  std::vector<float> Filter; ///< R rows of C, w[r][c] as in the formula.
  std::vector<int> X, Y;     ///< Checked interior points...
  std::vector<double> Want;  ///< ... and their float64 reference.

  /// The interior: x in [C/2, C/2 + iw()), y in [R/2, R/2 + ih()).
  int iw() const { return W - C + 1; }
  int ih() const { return H - R + 1; }
  double cells() const { return double(iw()) * ih(); }

  explicit Problem(const harness::Args &A)
      : R(int(A.size(0))), C(int(A.size(1))), W(int(A.size(2))),
        H(int(A.size(3))), In(size_t(W) * H), Filter(size_t(R) * C) {
    harness::Rng Rng(A.Seed);
    Rng.fill(In, 0.0f, 1.0f);
    // Positive weights that sum to 1: values stay in the input's range and
    // nothing cancels, as in the samples.
    Rng.fill(Filter, 0.0f, 1.0f);
    double Total = 0;
    for (float F : Filter)
      Total += F;
    for (float &F : Filter)
      F = float(F / Total);

    // Every interior point of a small image, else ~100k random ones.
    const size_t Interior = size_t(iw()) * ih();
    const size_t Points = Interior <= 200000 ? Interior : 100000;
    for (size_t I = 0; I < Points; ++I) {
      size_t P = Points == Interior ? I : size_t(Rng.next() % Interior);
      X.push_back(C / 2 + int(P % iw()));
      Y.push_back(R / 2 + int(P / iw()));
      double Sum = 0;
      for (int Dy = 0; Dy < R; ++Dy)
        for (int Dx = 0; Dx < C; ++Dx)
          Sum += double(Filter[size_t(Dy) * C + Dx]) *
                 double(In[size_t(Y.back() + Dy - R / 2) * W + X.back() + Dx -
                           C / 2]);
      Want.push_back(Sum);
    }
  }

  /// Compares Got(x, y), the library's output at each checked point.
  template <typename GotFn> harness::Check check(GotFn Got) const {
    std::vector<float> Values(X.size());
    for (size_t I = 0; I < X.size(); ++I)
      Values[I] = Got(X[I], Y[I]);
    return harness::compareFloat(Values, Want);
  }
};

/// The RESULT line of harness::report, with cells= and the algorithm.
[[maybe_unused]] int report(const harness::Args &A, const harness::Result &Res,
                            const Problem &P, const std::string &Algo) {
  const harness::Check &C = Res.Output;
  // Each input read once, each output written once, as the samples count.
  const double Bytes = 2.0 * sizeof(float) * P.cells();
  std::printf("%s: %s: median %.4f ms (min %.4f, max %.4f, %d runs), "
              "%.1f GB/s, %.2f GCells/s\n",
              A.Name.c_str(), Algo.c_str(), Res.MedianMs, Res.MinMs, Res.MaxMs,
              Res.Runs, Bytes / (Res.MedianMs * 1e-3) / 1e9,
              P.cells() / (Res.MedianMs * 1e-3) / 1e9);
  std::printf("%s: max_rel_err %.3g, %zu mismatched, %zu unwritten of %zu "
              "checked points\n",
              A.Name.c_str(), C.MaxRelErr, C.Mismatches, C.Unwritten,
              P.X.size());
  if (!C.ok())
    std::printf("%s: first bad point (%d, %d): got %.9g, want %.9g\n",
                A.Name.c_str(), P.X[C.FirstBad], P.Y[C.FirstBad], C.FirstBadGot,
                C.FirstBadWant);
  std::printf("RESULT sample=%s median_ms=%.6f min_ms=%.6f max_rel_err=%.3g "
              "mismatches=%zu unwritten=%zu stray=%zu bytes=%.0f cells=%.0f "
              "seed=%llu runs=%d algo=%s status=%s\n",
              A.Name.c_str(), Res.MedianMs, Res.MinMs, C.MaxRelErr,
              C.Mismatches, C.Unwritten, C.Stray, Bytes, P.cells(),
              (unsigned long long)A.Seed, Res.Runs, Algo.c_str(),
              C.ok() ? "ok" : "FAIL");
  std::fflush(stdout);
  return C.ok() ? 0 : 1;
}

/// The library cannot run here: says why, and is no failure.
int skipped(const harness::Args &A, const std::string &Why) {
  std::printf("%s: SKIPPED: %s\nRESULT sample=%s status=SKIPPED\n",
              A.Name.c_str(), Why.c_str(), A.Name.c_str());
  std::fflush(stdout);
  return 0;
}

//===-- NPP ---------------------------------------------------------------===//

#ifdef CONV_WITH_NPP
/// The stream context of the _Ctx functions, filled by hand as NPP's
/// documentation describes (CUDA 13's NPP has no nppGetStreamContext): the
/// legacy default stream, where harness::measure() records its events.
NppStreamContext nppContext() {
  NppStreamContext Ctx = {};
  Ctx.hStream = 0;
  HARNESS_CHECK(cudaGetDevice(&Ctx.nCudaDeviceId));
  auto Attribute = [&](cudaDeviceAttr Attr) {
    int Value = 0;
    HARNESS_CHECK(cudaDeviceGetAttribute(&Value, Attr, Ctx.nCudaDeviceId));
    return Value;
  };
  Ctx.nMultiProcessorCount = Attribute(cudaDevAttrMultiProcessorCount);
  Ctx.nMaxThreadsPerMultiProcessor =
      Attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  Ctx.nMaxThreadsPerBlock = Attribute(cudaDevAttrMaxThreadsPerBlock);
  Ctx.nSharedMemPerBlock =
      size_t(Attribute(cudaDevAttrMaxSharedMemoryPerBlock));
  Ctx.nCudaDevAttrComputeCapabilityMajor =
      Attribute(cudaDevAttrComputeCapabilityMajor);
  Ctx.nCudaDevAttrComputeCapabilityMinor =
      Attribute(cudaDevAttrComputeCapabilityMinor);
  HARNESS_CHECK(cudaStreamGetFlags(Ctx.hStream, &Ctx.nStreamFlags));
  return Ctx;
}

int runNpp(const harness::Args &A, const Problem &P) {
  const NppStreamContext Ctx = nppContext();

  // nppiFilter computes a convolution, dst(x, y) = sum over r, c of
  // k[r][c] * src(x + ax - c, y + ay - r) (its coefficients "are expected to
  // be stored in reverse order"). With k = w reversed, that is w's
  // cross-correlation at offsets c - (C-1-ax): anchor C-1-C/2 (R-1-R/2 in y)
  // gives -(C/2) .. C-1-C/2, the formula above; C/2 only for odd C.
  std::vector<float> Reversed(P.Filter.rbegin(), P.Filter.rend());
  harness::DeviceArray<float> DIn(P.In), DOut(P.In.size()), DKernel(Reversed);
  const NppiSize Size = {P.W, P.H}, KernelSize = {P.C, P.R};
  const NppiPoint Origin = {0, 0},
                  Anchor = {P.C - 1 - P.C / 2, P.R - 1 - P.R / 2};
  const Npp32s Step = Npp32s(sizeof(float) * P.W);

  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); },
      [&] {
        NppStatus S = nppiFilterBorder_32f_C1R_Ctx(
            DIn.data(), Step, Size, Origin, DOut.data(), Step, Size,
            DKernel.data(), KernelSize, Anchor, NPP_BORDER_REPLICATE, Ctx);
        if (S < 0) // Positive values are warnings.
          harness::fail("nppiFilterBorder_32f_C1R_Ctx returned " +
                        std::to_string(S));
      },
      [&] {
        std::vector<float> Out = DOut.download();
        return P.check([&](int X, int Y) { return Out[size_t(Y) * P.W + X]; });
      });
  return report(A, Res, P, "nppiFilterBorder_32f_C1R");
}
#endif

//===-- cuDNN -------------------------------------------------------------===//

#ifdef CONV_WITH_CUDNN
const char *algoName(cudnnConvolutionFwdAlgo_t Algo) {
  switch (Algo) {
  case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    return "IMPLICIT_GEMM";
  case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    return "IMPLICIT_PRECOMP_GEMM";
  case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
    return "GEMM";
  case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
    return "DIRECT";
  case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
    return "FFT";
  case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
    return "FFT_TILING";
  case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
    return "WINOGRAD";
  case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
    return "WINOGRAD_NONFUSED";
  default:
    return "UNKNOWN";
  }
}

/// Whether a cuDNN error says that it cannot run here (not initialized, a
/// sub-library that does not load, a shape or GPU it does not support)
/// rather than that this program is wrong.
bool cudnnUnavailable(cudnnStatus_t S) {
  return CUDNN_STATUS_CATEGORY(S) == 1000 ||
         CUDNN_STATUS_CATEGORY(S) == CUDNN_STATUS_NOT_SUPPORTED;
}

/// Setting up: a cuDNN that cannot run here skips the row; any other error
/// fails it.
#define CUDNN_SETUP(Call)                                                      \
  do {                                                                         \
    cudnnStatus_t S_ = (Call);                                                 \
    if (S_ != CUDNN_STATUS_SUCCESS) {                                          \
      std::string Why_ = std::string(#Call) + ": " + cudnnGetErrorString(S_);  \
      if (cudnnUnavailable(S_))                                                \
        return skipped(A, Why_);                                               \
      harness::fail(Why_);                                                     \
    }                                                                          \
  } while (0)

/// Destroys the descriptors on every way out.
struct CudnnState {
  cudnnHandle_t Handle = nullptr;
  cudnnTensorDescriptor_t XDesc = nullptr, YDesc = nullptr;
  cudnnFilterDescriptor_t WDesc = nullptr;
  cudnnConvolutionDescriptor_t ConvDesc = nullptr;
  ~CudnnState() {
    if (ConvDesc)
      cudnnDestroyConvolutionDescriptor(ConvDesc);
    if (WDesc)
      cudnnDestroyFilterDescriptor(WDesc);
    if (YDesc)
      cudnnDestroyTensorDescriptor(YDesc);
    if (XDesc)
      cudnnDestroyTensorDescriptor(XDesc);
    if (Handle)
      cudnnDestroy(Handle);
  }
};

int runCudnn(const harness::Args &A, const Problem &P) {
  CudnnState St;
  CUDNN_SETUP(cudnnCreate(&St.Handle));
  CUDNN_SETUP(cudnnSetStream(St.Handle, 0));
  CUDNN_SETUP(cudnnCreateTensorDescriptor(&St.XDesc));
  CUDNN_SETUP(cudnnCreateTensorDescriptor(&St.YDesc));
  CUDNN_SETUP(cudnnCreateFilterDescriptor(&St.WDesc));
  CUDNN_SETUP(cudnnCreateConvolutionDescriptor(&St.ConvDesc));
  CUDNN_SETUP(cudnnSetTensor4dDescriptor(St.XDesc, CUDNN_TENSOR_NCHW,
                                         CUDNN_DATA_FLOAT, 1, 1, P.H, P.W));
  CUDNN_SETUP(cudnnSetFilter4dDescriptor(St.WDesc, CUDNN_DATA_FLOAT,
                                         CUDNN_TENSOR_NCHW, 1, 1, P.R, P.C));
  // No padding, stride 1, no dilation: the output is the interior.
  CUDNN_SETUP(cudnnSetConvolution2dDescriptor(St.ConvDesc, 0, 0, 1, 1, 1, 1,
                                              CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  CUDNN_SETUP(cudnnSetConvolutionMathType(St.ConvDesc, CUDNN_FMA_MATH));
  int N = 0, K = 0, OH = 0, OW = 0;
  CUDNN_SETUP(cudnnGetConvolution2dForwardOutputDim(
      St.ConvDesc, St.XDesc, St.WDesc, &N, &K, &OH, &OW));
  if (N != 1 || K != 1 || OH != P.ih() || OW != P.iw())
    harness::fail("cuDNN's output is " + std::to_string(OW) + "x" +
                  std::to_string(OH) + ", not the interior");
  CUDNN_SETUP(cudnnSetTensor4dDescriptor(St.YDesc, CUDNN_TENSOR_NCHW,
                                         CUDNN_DATA_FLOAT, 1, 1, OH, OW));

  harness::DeviceArray<float> DIn(P.In), DOut(size_t(OW) * OH),
      DFilter(P.Filter);
  cudnnConvolutionFwdAlgoPerf_t Perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int Found = 0;
  CUDNN_SETUP(cudnnFindConvolutionForwardAlgorithm(
      St.Handle, St.XDesc, St.WDesc, St.ConvDesc, St.YDesc,
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &Found, Perf));

  const float One = 1, Zero = 0;
  cudnnConvolutionFwdAlgo_t Algo = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  size_t WorkspaceBytes = 0;
  auto Forward = [&](cudnnConvolutionFwdAlgo_t Which, void *Workspace,
                     size_t Bytes) {
    cudnnStatus_t S = cudnnConvolutionForward(
        St.Handle, &One, St.XDesc, DIn.data(), St.WDesc, DFilter.data(),
        St.ConvDesc, Which, Workspace, Bytes, &Zero, St.YDesc, DOut.data());
    if (S != CUDNN_STATUS_SUCCESS)
      harness::fail(std::string("cudnnConvolutionForward: ") +
                    cudnnGetErrorString(S));
  };
  auto Check = [&] {
    std::vector<float> Out = DOut.download();
    return P.check([&](int X, int Y) {
      return Out[size_t(Y - P.R / 2) * OW + (X - P.C / 2)];
    });
  };
  // Perf is sorted by time: the first that runs and passes the check wins
  // (FFT and Winograd round differently from a direct sum).
  for (int I = 0; I < Found && Algo == CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++I) {
    if (Perf[I].status != CUDNN_STATUS_SUCCESS)
      continue;
    harness::DeviceArray<unsigned char> Workspace(
        std::max<size_t>(1, Perf[I].memory));
    DOut.poison();
    Forward(Perf[I].algo, Workspace.data(), Perf[I].memory);
    HARNESS_CHECK(cudaDeviceSynchronize());
    harness::Check C = Check();
    std::printf("%s: %s: %.4f ms in cudnnFind, %zu B workspace, max_rel_err "
                "%.3g%s\n",
                A.Name.c_str(), algoName(Perf[I].algo), Perf[I].time,
                Perf[I].memory, C.MaxRelErr,
                C.ok() ? "" : ": fails the check, not used");
    if (C.ok())
      Algo = Perf[I].algo, WorkspaceBytes = Perf[I].memory;
  }
  if (Algo == CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
    return skipped(A, "no forward algorithm of cuDNN " +
                          std::to_string(cudnnGetVersion()) +
                          " runs this shape and passes the check (" +
                          std::to_string(Found) + " found)");

  harness::DeviceArray<unsigned char> Workspace(
      std::max<size_t>(1, WorkspaceBytes));
  harness::Result Res = harness::measure(
      A, [&] { DOut.poison(); },
      [&] { Forward(Algo, Workspace.data(), WorkspaceBytes); }, Check);
  return report(A, Res, P, std::string("cudnn-") + algoName(Algo));
}
#endif

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(
      argc, argv, "conv-libraries", {3, 3, 8192, 8192}, {"--npp", "--cudnn"});
  const bool Npp = A.has("--npp");
  if (Npp == A.has("--cudnn")) {
    std::fprintf(stderr, "usage: conv_libraries R C [W [H]] --npp|--cudnn "
                         "[--seed=N] [--reps=N] [--warmup=N]\n");
    return 2;
  }
  A.Name = harness::sampleName() = "conv" + std::to_string(A.size(0)) + "x" +
                                   std::to_string(A.size(1)) +
                                   (Npp ? "-npp" : "-cudnn");
  if (A.size(0) < 1 || A.size(1) < 1 || A.size(2) < A.size(1) ||
      A.size(3) < A.size(0) || A.size(2) * A.size(3) > INT_MAX)
    harness::fail("want 1 <= R <= H, 1 <= C <= W and W * H below 2^31");
  const Problem P(A);
  if (Npp) {
#ifdef CONV_WITH_NPP
    return runNpp(A, P);
#else
    return skipped(A, "built without NPP (-DCONV_WITH_NPP)");
#endif
  }
#ifdef CONV_WITH_CUDNN
  return runCudnn(A, P);
#else
  return skipped(A, "built without cuDNN (-DCONV_WITH_CUDNN)");
#endif
}
