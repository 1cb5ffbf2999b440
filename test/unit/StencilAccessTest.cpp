//===- StencilAccessTest.cpp - Neighbour offsets of stencil kernels -------===//

#include "analysis/StencilAccess.h"
#include "analysis/AffineExpr.h"
#include "test/unit/CudaTestParse.h"

#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

//===----------------------------------------------------------------------===//
// AffineExpr
//===----------------------------------------------------------------------===//

std::string names(SymbolId S) { return std::string(1, char('a' + S)); }

TEST(StencilAffineExprTest, NormalisesProductsOfSums) {
  AffineExpr X = AffineExpr::symbol(0), Y = AffineExpr::symbol(1),
             W = AffineExpr::symbol(2), C = AffineExpr::constant(1);
  // (y + 1) * W + x - 1 == y*W + x + W - 1
  AffineExpr A = (Y + C) * W + X - C;
  AffineExpr B = Y * W + X + W - C;
  EXPECT_EQ(A, B);
  EXPECT_EQ(A.toString(names), "b*c + a + c - 1");
  EXPECT_EQ((A - B).getConstant(), 0);
  EXPECT_TRUE((A - B).isZero());
}

TEST(StencilAffineExprTest, CoefficientsAndSubstitution) {
  AffineExpr X = AffineExpr::symbol(0), Y = AffineExpr::symbol(1),
             W = AffineExpr::symbol(2);
  AffineExpr P = Y * W * 3 + X * 2 + AffineExpr::constant(5);
  EXPECT_EQ(*P.linearCoefficient(1), W * 3);
  EXPECT_EQ(*P.linearCoefficient(0), AffineExpr::constant(2));
  EXPECT_EQ(P.withoutSymbol(1), X * 2 + AffineExpr::constant(5));
  EXPECT_EQ(P.substitute(2, AffineExpr::constant(10)),
            Y * 30 + X * 2 + AffineExpr::constant(5));
  EXPECT_FALSE((X * X).linearCoefficient(0).has_value());
  EXPECT_EQ(P.constantTerm(), 5);
  EXPECT_TRUE(P.mentions(2));
  EXPECT_FALSE(P.mentions(3));
}

TEST(StencilAffineExprTest, ExactDivisionAndLeadingMonomial) {
  AffineExpr W = AffineExpr::symbol(2), H = AffineExpr::symbol(3);
  AffineExpr P = H * W * 4 + W * 2;
  EXPECT_EQ(*P.divideExactly(W * 2), H * 2 + AffineExpr::constant(1));
  EXPECT_FALSE(P.divideExactly(H).has_value());
  EXPECT_FALSE(P.divideExactly(W + H).has_value());
  EXPECT_EQ(P.leadingMonomial(), (Monomial{2, 3}));
}

TEST(StencilAffineExprTest, OverflowIsReported) {
  AffineExpr Big = AffineExpr::constant(INT64_MAX);
  EXPECT_TRUE((Big + AffineExpr::constant(1)).overflowed());
  EXPECT_TRUE((Big * 2).overflowed());
  EXPECT_FALSE((Big + AffineExpr::constant(1)).getConstant().has_value());
  EXPECT_EQ(AffineExpr().toString(names), "0");
  EXPECT_EQ((-AffineExpr::symbol(0)).toString(names), "-a");
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Parses \p Code and analyses the kernel named "k". The AST stays alive
/// with the result so that declarations in it can be inspected.
struct Analysis {
  std::unique_ptr<clang::ASTUnit> AST;
  StencilResult Result;

  const StencilShape &shape() const { return *Result.Shape; }
  std::string refusal() const {
    return Result ? "<accepted: " + describeOffsets(*Result.Shape) + ">"
                  : Result.Refusal;
  }
  std::string describe() const {
    return Result ? describeOffsets(*Result.Shape)
                  : "<refused: " + Result.Refusal + ">";
  }
  unsigned refusalLine() const {
    return AST->getSourceManager().getPresumedLineNumber(Result.Loc);
  }
};

Analysis analyze(llvm::StringRef Code, llvm::StringRef Kernel = "k") {
  Analysis A;
  A.AST = parseCuda(Code);
  if (!A.AST) {
    A.Result.Refusal = "<parse error>";
    return A;
  }
  const clang::FunctionDecl *F = findFunction(*A.AST, Kernel);
  if (!F) {
    A.Result.Refusal = "<no kernel>";
    return A;
  }
  A.Result = analyzeStencil(*F);
  return A;
}

std::string offsets(const StencilShape &S) {
  std::string Out;
  for (const StencilOffset &O : S.Offsets)
    Out += (Out.empty() ? "(" : " (") + std::to_string(O.DX) + "," +
           std::to_string(O.DY) + "," + std::to_string(O.DZ) + ")";
  return Out;
}

/// "offset=weight" for every point, in order.
std::string weights(const StencilShape &S) {
  std::string Out;
  for (const StencilPoint &P : S.Points)
    Out += (Out.empty() ? "" : " ") + std::to_string(P.Offset.DX) + "," +
           std::to_string(P.Offset.DY) + "," + std::to_string(P.Offset.DZ) +
           "=" + P.Weight.describe();
  return Out;
}

std::string bounds(const StencilShape &S) {
  std::string Out;
  for (const CoordinateBound &B : S.Bounds)
    Out += (Out.empty() ? "" : ", ") + B.describe();
  return Out;
}

//===----------------------------------------------------------------------===//
// 2D stencils
//===----------------------------------------------------------------------===//

const char *FivePoint = R"(
__global__ void k(const float *in, float *out, int W, int H, float c0,
                  float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < W - 1 && y > 0 && y < H - 1)
    out[y * W + x] = c0 * in[y * W + x] +
                     c1 * (in[y * W + x - 1] + in[y * W + x + 1] +
                           in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}
)";

TEST(StencilAccessTest, FivePoint2D) {
  Analysis A = analyze(FivePoint);
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(describeOffsets(S), "2D star radius 1: 5 points (0,0) (-1,0) "
                                "(1,0) (0,-1) (0,1) into out from in");
  EXPECT_EQ(S.Rank, 2u);
  EXPECT_EQ(S.radius(), 1);
  EXPECT_EQ(S.Output->getName(), "out");
  ASSERT_EQ(S.Inputs.size(), 1u);
  EXPECT_EQ(S.Inputs[0]->getName(), "in");
  EXPECT_EQ(S.Element, ElementKind::Float);
  EXPECT_EQ(S.ElementType, "float");
  EXPECT_EQ(S.OutputStrides[0], "1");
  EXPECT_EQ(S.OutputStrides[1], "W");
  EXPECT_EQ(S.OutputStrides[2], "");
  EXPECT_FALSE(S.NoAlias);
  EXPECT_EQ(weights(S), "0,0,0=c0 -1,0,0=c1 1,0,0=c1 0,-1,0=c1 0,1,0=c1");
  EXPECT_EQ(S.Points[0].Weight.K, StencilCoefficient::Parameter);
  EXPECT_EQ(S.Guard, "x > 0 && x < W - 1 && y > 0 && y < H - 1");
  EXPECT_TRUE(S.GuardIsSimple);
  EXPECT_EQ(bounds(S), "x > 0, x < W - 1, y > 0, y < H - 1");
  EXPECT_EQ(S.Bounds[0].LimitValue, 0);
  EXPECT_FALSE(S.Bounds[1].LimitValue.has_value());
  for (const StencilPoint &P : S.Points)
    EXPECT_FALSE(P.Conditional);
}

TEST(StencilAccessTest, FivePointWithIndexVariableAndEarlyReturn) {
  Analysis A = analyze(R"(
__global__ void k(const float *__restrict__ in, float *__restrict__ out,
                  int W, int H) {
  const int x = threadIdx.x + blockIdx.x * blockDim.x;
  const int y = threadIdx.y + blockIdx.y * blockDim.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  const int idx = y * W + x;
  out[idx] = 0.25f * (in[idx - 1] + in[idx + 1] + in[idx - W] + in[idx + W])
             - in[idx];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(offsets(S), "(-1,0,0) (1,0,0) (0,-1,0) (0,1,0) (0,0,0)");
  EXPECT_EQ(weights(S), "-1,0,0=0.25 1,0,0=0.25 0,-1,0=0.25 0,1,0=0.25 "
                        "0,0,0=-1");
  EXPECT_TRUE(S.NoAlias);
  EXPECT_EQ(S.Guard, "!(x < 1 || y < 1 || x >= W - 1 || y >= H - 1)");
  EXPECT_EQ(bounds(S), "x >= 1, y >= 1, x < W - 1, y < H - 1");
  EXPECT_TRUE(S.GuardIsSimple);
}

TEST(StencilAccessTest, NinePointBoxWithLiteralWeights) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && y >= 1 && x < W - 1 && y < H - 1) {
    float s = 0.0f;
    s += in[(y - 1) * W + x - 1] + in[(y - 1) * W + x] + in[(y - 1) * W + x + 1];
    s += in[y * W + x - 1] + in[y * W + x] + in[y * W + x + 1];
    s += in[(y + 1) * W + x - 1] + in[(y + 1) * W + x] + in[(y + 1) * W + x + 1];
    out[y * W + x] = s / 9.0f;
  }
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(),
            "2D box radius 1: 9 points (-1,-1) (0,-1) (1,-1) (-1,0) (0,0) "
            "(1,0) (-1,1) (0,1) (1,1) into out from in");
  for (const StencilPoint &P : A.shape().Points) {
    EXPECT_EQ(P.Weight.K, StencilCoefficient::Literal);
    EXPECT_DOUBLE_EQ(P.Weight.Scale, 1.0 / 9.0);
  }
}

TEST(StencilAccessTest, NinePointBoxWithTapLoops) {
  Analysis A = analyze(R"(
#define R 1
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || y < R || x >= W - R || y >= H - R) return;
  float sum = 0;
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; dx++)
      sum += in[(y + dy) * W + (x + dx)];
  out[y * W + x] = sum;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(),
            "2D box radius 1: 9 points (-1,-1) (0,-1) (1,-1) (-1,0) (0,0) "
            "(1,0) (-1,1) (0,1) (1,1) into out from in");
  EXPECT_EQ(A.shape().Guard, "!(x < R || y < R || x >= W - R || y >= H - R)");
  EXPECT_EQ(bounds(A.shape()), "x >= 1, y >= 1, x < W - 1, y < H - 1");
}

TEST(StencilAccessTest, TwoDimensionalArraySubscripts) {
  Analysis A = analyze(R"(
#define N 512
__global__ void k(const float in[][N], float (*out)[N]) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x < N - 1 && y < N - 1)
    out[y][x] = in[y][x] + in[y][x - 1] + in[y][x + 1] + in[y - 1][x] +
                in[y + 1][x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(describeOffsets(S), "2D star radius 1: 5 points (0,0) (-1,0) "
                                "(1,0) (0,-1) (0,1) into out from in");
  EXPECT_EQ(S.OutputStrides[0], "[1]");
  EXPECT_EQ(S.OutputStrides[1], "[0]");
  // x includes the halo's + 1: the bound is on x itself.
  EXPECT_EQ(bounds(S), "x < 511, y < 511");
}

TEST(StencilAccessTest, GlobalTwoDimensionalArrays) {
  Analysis A = analyze(R"(
__device__ float grid_in[256][256];
__device__ float grid_out[256][256];
__global__ void k() {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && y > 0 && x < 255 && y < 255)
    grid_out[y][x] = 0.5f * grid_in[y][x] + 0.125f * (grid_in[y][x - 1] +
                     grid_in[y][x + 1] + grid_in[y - 1][x] + grid_in[y + 1][x]);
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D star radius 1: 5 points (0,0) (-1,0) (1,0) "
                          "(0,-1) (0,1) into grid_out from grid_in");
  EXPECT_TRUE(A.shape().NoAlias);
  EXPECT_EQ(weights(A.shape()),
            "0,0,0=0.5 -1,0,0=0.125 1,0,0=0.125 0,-1,0=0.125 0,1,0=0.125");
}

TEST(StencilAccessTest, PointerOffsetRows) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int pitch, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1) return;
  const float *row = in + y * pitch;
  const float *up = row - pitch;
  const float *down = row + pitch;
  float *o = out + y * pitch;
  o[x] = up[x] + row[x - 1] + row[x] + row[x + 1] + *(down + x);
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D star radius 1: 5 points (0,-1) (-1,0) (0,0) "
                          "(1,0) (0,1) into out from in");
  EXPECT_EQ(A.shape().OutputStrides[1], "pitch");
}

TEST(StencilAccessTest, LdgAndMacroIndices) {
  Analysis A = analyze(R"(
#define IDX(i, j) ((j) * W + (i))
__global__ void k(const float *__restrict__ in, float *__restrict__ out,
                  int W, int H) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 1 && j > 1 && i < W - 2 && j < H - 2)
    out[IDX(i, j)] = __ldg(&in[IDX(i - 2, j)]) + __ldg(in + IDX(i + 2, j)) +
                     __ldg(&in[IDX(i, j - 2)]) + __ldg(&in[IDX(i, j + 2)]);
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D irregular radius 2: 4 points (-2,0) (2,0) "
                          "(0,-2) (0,2) into out from in");
}

TEST(StencilAccessTest, InlineCoordinatesWithoutVariables) {
  Analysis A = analyze(R"(
__global__ void k(const double *in, double *out, int W) {
  out[(blockIdx.y * blockDim.y + threadIdx.y) * W + blockIdx.x * blockDim.x +
      threadIdx.x] =
      in[(blockIdx.y * blockDim.y + threadIdx.y) * W + blockIdx.x * blockDim.x +
         threadIdx.x + 1] -
      in[(blockIdx.y * blockDim.y + threadIdx.y) * W + blockIdx.x * blockDim.x +
         threadIdx.x - 1];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D irregular radius 1: 2 points (1,0) (-1,0) into "
                          "out from in");
  EXPECT_EQ(weights(A.shape()), "1,0,0=1 -1,0,0=-1");
  EXPECT_EQ(A.shape().Element, ElementKind::Double);
  EXPECT_EQ(A.shape().Guard, "");
  EXPECT_TRUE(A.shape().Bounds.empty());
}

//===----------------------------------------------------------------------===//
// Convolutions with filter arrays
//===----------------------------------------------------------------------===//

TEST(StencilAccessTest, Conv3x3FromFilterParameter) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const float *filter, float *out, int W,
                  int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1) return;
  float acc = 0.0f;
  for (int i = -1; i <= 1; ++i)
    for (int j = -1; j <= 1; ++j)
      acc += filter[(i + 1) * 3 + (j + 1)] * in[(y + i) * W + (x + j)];
  out[y * W + x] = acc;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(describeOffsets(S),
            "2D box radius 1: 9 points (-1,-1) (0,-1) (1,-1) (-1,0) (0,0) "
            "(1,0) (-1,1) (0,1) (1,1) into out from in");
  EXPECT_EQ(weights(S), "-1,-1,0=filter[0] 0,-1,0=filter[1] 1,-1,0=filter[2] "
                        "-1,0,0=filter[3] 0,0,0=filter[4] 1,0,0=filter[5] "
                        "-1,1,0=filter[6] 0,1,0=filter[7] 1,1,0=filter[8]");
  EXPECT_EQ(S.Points[4].Weight.K, StencilCoefficient::FilterElement);
  EXPECT_EQ(S.Points[4].Weight.Source->getName(), "filter");
  EXPECT_EQ(S.Points[4].Weight.FilterIndex, (std::vector<int64_t>{4}));
  ASSERT_EQ(S.Inputs.size(), 1u) << "the filter is not a stencil input";
}

TEST(StencilAccessTest, Conv5x5FromConstantArrayWithConstexprRadius) {
  Analysis A = analyze(R"(
constexpr int RADIUS = 2;
constexpr int DIAM = 2 * RADIUS + 1;
__constant__ float c_filter[DIAM][DIAM];
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= RADIUS && y >= RADIUS && x < W - RADIUS && y < H - RADIUS) {
    float sum = 0.0f;
#pragma unroll
    for (int fy = 0; fy < DIAM; fy++) {
#pragma unroll
      for (int fx = 0; fx < DIAM; fx++) {
        float w = c_filter[fy][fx];
        sum = fmaf(w, in[(y + fy - RADIUS) * W + x + fx - RADIUS], sum);
      }
    }
    out[y * W + x] = sum;
  }
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(describeOffsets(S), "2D box radius 2: 25 points (-2,-2) (-1,-2) "
                                "(0,-2) (1,-2) (2,-2) (-2,-1) (-1,-1) (0,-1) "
                                "(1,-1) (2,-1) (-2,0) (-1,0) (0,0) (1,0) "
                                "(2,0) (-2,1) (-1,1) (0,1) (1,1) (2,1) "
                                "(-2,2) (-1,2) (0,2) (1,2) (2,2) into out "
                                "from in");
  ASSERT_EQ(S.Points.size(), 25u);
  EXPECT_EQ(S.Points[0].Weight.describe(), "c_filter[0][0]");
  EXPECT_EQ(S.Points[7].Weight.describe(), "c_filter[1][2]");
  EXPECT_EQ(S.Points[24].Weight.describe(), "c_filter[4][4]");
  EXPECT_EQ(bounds(S), "x >= 2, y >= 2, x < W - 2, y < H - 2");
}

TEST(StencilAccessTest, ConvEvenFilter4x4) {
  Analysis A = analyze(R"(
__constant__ float w[16];
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      s += in[(y + i - 2) * W + x + j - 1] * w[i * 4 + j];
  out[y * W + x] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D box 4x4 (x -1..2, y -2..1): 16 points (-1,-2) "
                          "(0,-2) (1,-2) (2,-2) (-1,-1) (0,-1) (1,-1) (2,-1) "
                          "(-1,0) (0,0) (1,0) (2,0) (-1,1) (0,1) (1,1) (2,1) "
                          "into out from in");
  EXPECT_EQ(A.shape().Points[5].Weight.describe(), "w[5]");
  EXPECT_EQ(A.shape().radius(), 2);
}

TEST(StencilAccessTest, ConvRectangular3x7WithConstLocals) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const float *__restrict__ taps, float *out,
                  int W, int H) {
  const int M = 3;  // rows
  const int N = 7;  // columns
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= N / 2 && x < W - N / 2 && y >= M / 2 && y < H - M / 2) {
    float s = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        s += taps[m * N + n] * in[(y + m - M / 2) * W + (x + n - N / 2)];
    out[y * W + x] = s;
  }
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(S.Offsets.size(), 21u);
  EXPECT_EQ(describeOffsets(S),
            "2D box 7x3 (x -3..3, y -1..1): 21 points (-3,-1) (-2,-1) (-1,-1) "
            "(0,-1) (1,-1) (2,-1) (3,-1) (-3,0) (-2,0) (-1,0) (0,0) (1,0) "
            "(2,0) (3,0) (-3,1) (-2,1) (-1,1) (0,1) (1,1) (2,1) (3,1) into "
            "out from in");
  EXPECT_EQ(S.Points[20].Weight.describe(), "taps[20]");
  EXPECT_EQ(bounds(S), "x >= 3, x < W - 3, y >= 1, y < H - 1");
}

TEST(StencilAccessTest, LargeBoxIsNotListed) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const float *f, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0;
  for (int i = -3; i <= 3; ++i)
    for (int j = -3; j <= 3; ++j)
      s += f[(i + 3) * 7 + j + 3] * in[(y + i) * W + x + j];
  out[y * W + x] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D box radius 3: 49 points into out from in");
}

TEST(StencilAccessTest, OneDimensionalConvolutionWithStep) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, const float *f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 4 || i >= n - 4) return;
  float s = 0;
  for (int t = -4; t <= 4; t += 2)
    s += f[(t + 4) / 2] * in[i + t];
  out[i] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "1D irregular radius 4: 5 points (-4) (-2) (0) (2) "
                          "(4) into out from in");
  EXPECT_EQ(weights(A.shape()),
            "-4,0,0=f[0] -2,0,0=f[1] 0,0,0=f[2] 2,0,0=f[3] 4,0,0=f[4]");
}

//===----------------------------------------------------------------------===//
// 3D stencils
//===----------------------------------------------------------------------===//

TEST(StencilAccessTest, SevenPoint3D) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= W - 1 || y >= H - 1 || z >= D - 1)
    return;
  int i = (z * H + y) * W + x;
  out[i] = -6.0f * in[i] + in[i - 1] + in[i + 1] + in[i - W] + in[i + W] +
           in[(z - 1) * H * W + y * W + x] + in[((z + 1) * H + y) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(describeOffsets(S),
            "3D star radius 1: 7 points (0,0,0) (-1,0,0) (1,0,0) (0,-1,0) "
            "(0,1,0) (0,0,-1) (0,0,1) into out from in");
  EXPECT_EQ(S.OutputStrides[2], "H*W");
  EXPECT_EQ(weights(S), "0,0,0=-6 -1,0,0=1 1,0,0=1 0,-1,0=1 0,1,0=1 "
                        "0,0,-1=1 0,0,1=1");
  EXPECT_EQ(bounds(S), "x >= 1, y >= 1, z >= 1, x < W - 1, y < H - 1, "
                       "z < D - 1");
}

TEST(StencilAccessTest, TwentySevenPoint3DWithLoopsInDoublePrecision) {
  Analysis A = analyze(R"(
__global__ void k(const double *in, double *out, int nx, int ny, int nz,
                  double c) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  int z = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (x >= nx - 1 || y >= ny - 1 || z >= nz - 1) return;
  double s = 0.0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        s += in[((z + dz) * ny + (y + dy)) * nx + (x + dx)];
  out[(z * ny + y) * nx + x] = c * s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(describeOffsets(S),
            "3D box radius 1: 27 points (-1,-1,-1) (0,-1,-1) (1,-1,-1) "
            "(-1,0,-1) (0,0,-1) (1,0,-1) (-1,1,-1) (0,1,-1) (1,1,-1) "
            "(-1,-1,0) (0,-1,0) (1,-1,0) (-1,0,0) (0,0,0) (1,0,0) (-1,1,0) "
            "(0,1,0) (1,1,0) (-1,-1,1) (0,-1,1) (1,-1,1) (-1,0,1) (0,0,1) "
            "(1,0,1) (-1,1,1) (0,1,1) (1,1,1) into out from in");
  EXPECT_EQ(S.Element, ElementKind::Double);
  EXPECT_EQ(S.ElementType, "double");
  for (const StencilPoint &P : S.Points) {
    EXPECT_EQ(P.Weight.K, StencilCoefficient::Parameter);
    EXPECT_EQ(P.Weight.SourceName, "c");
  }
  EXPECT_EQ(bounds(S), "x < nx - 1, y < ny - 1, z < nz - 1");
}

TEST(StencilAccessTest, ThreeDimensionalArrayParameter) {
  Analysis A = analyze(R"(
__global__ void k(const float (*in)[64][64], float (*out)[64][64]) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  out[z][y][x] = in[z - 1][y][x] + in[z + 1][y][x] + in[z][y][x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  // A line along z is a (degenerate) box.
  EXPECT_EQ(A.describe(), "3D box 1x1x3 (x 0..0, y 0..0, z -1..1): 3 points "
                          "(0,0,-1) (0,0,1) (0,0,0) into out from in");
}

//===----------------------------------------------------------------------===//
// Index styles, weights, guards
//===----------------------------------------------------------------------===//

TEST(StencilAccessTest, FlattenedTapLoopWithDivisionAndModulo) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const float *w, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0;
  for (int t = 0; t < 9; ++t)
    s += w[t] * in[(y + t / 3 - 1) * W + x + t % 3 - 1];
  out[y * W + x] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(),
            "2D box radius 1: 9 points (-1,-1) (0,-1) (1,-1) (-1,0) (0,0) "
            "(1,0) (-1,1) (0,1) (1,1) into out from in");
  EXPECT_EQ(A.shape().Points[8].Weight.describe(), "w[8]");
}

TEST(StencilAccessTest, FilterIndexWithDivisionPerTap) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, const float *f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 4 || i >= n - 4) return;
  float s = 0;
  for (int t = -4; t <= 4; t += 2)
    s += f[(t + 4) / 2] * in[i + t];
  out[i] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "1D irregular radius 4: 5 points (-4) (-2) (0) (2) "
                          "(4) into out from in");
  EXPECT_EQ(weights(A.shape()),
            "-4,0,0=f[0] -2,0,0=f[1] 0,0,0=f[2] 2,0,0=f[3] 4,0,0=f[4]");
  EXPECT_EQ(bounds(A.shape()), "x >= 4, x < n - 4");
}

TEST(StencilAccessTest, LoopWithNotEqualAndStep) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int t = -2; t != 4; t += 2)
    s += in[i + t];
  out[i] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(-2,0,0) (0,0,0) (2,0,0)");
}

TEST(StencilAccessTest, ValidConvolutionIntoSmallerOutput) {
  // The output has its own width: offsets relate the same coordinates.
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int OW) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      s += in[(y + i) * W + x + j];
  out[y * OW + x] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "2D box 3x3 (x 0..2, y 0..2): 9 points (0,0) (1,0) "
                          "(2,0) (0,1) (1,1) (2,1) (0,2) (1,2) (2,2) into out "
                          "from in");
  EXPECT_EQ(A.shape().OutputStrides[1], "OW");
}

TEST(StencilAccessTest, ConstantWidthFlatIndex) {
  Analysis A = analyze(R"(
#define WIDTH 512
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * WIDTH + x] = in[(y - 1) * WIDTH + x + 2] + in[(y + 2) * WIDTH + x - 3];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(2,-1,0) (-3,2,0)");
  EXPECT_EQ(A.shape().OutputStrides[1], "512");
}

TEST(StencilAccessTest, FlatOutputTwoDimensionalInput) {
  Analysis A = analyze(R"(
__global__ void k(const float (*in)[512], float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * 512 + x] = in[y - 1][x] + in[y + 1][x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(0,-1,0) (0,1,0)");
}

TEST(StencilAccessTest, ColumnMajorLayout) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[x * H + y] = in[(x + 1) * H + y] + in[x * H + y - 1];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(1,0,0) (0,-1,0)");
  EXPECT_EQ(A.shape().OutputStrides[0], "H");
  EXPECT_EQ(A.shape().OutputStrides[1], "1");
}

TEST(StencilAccessTest, StructParameterFields) {
  Analysis A = analyze(R"(
struct Dims { int w, h; };
__global__ void k(const float *in, float *out, Dims d) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < d.w - 1 && y < d.h)
    out[y * d.w + x] = in[y * d.w + x + 1] + in[(y + 1) * d.w + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(1,0,0) (0,1,0)");
  EXPECT_EQ(A.shape().OutputStrides[1], "d.w");
  EXPECT_EQ(bounds(A.shape()), "x < d.w - 1, y < d.h");
}

TEST(StencilAccessTest, TwoInputs) {
  Analysis A = analyze(R"(
__global__ void k(const float *a, const float *b, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[i - 1] * b[i] + b[i + 1];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.describe(), "1D box radius 1: 3 points (-1) (0) (1) into out "
                          "from a, b");
  // a[i - 1] * b[i] is not linear in either read.
  EXPECT_EQ(weights(A.shape()), "-1,0,0=? 0,0,0=? 1,0,0=1");
  EXPECT_EQ(A.shape().Points[1].Input->getName(), "b");
}

TEST(StencilAccessTest, ConstantAndConstexprWeights) {
  Analysis A = analyze(R"(
constexpr float kCentre = -4.0f;
__constant__ float c_side;
__global__ void k(const float *in, float *out, int W) {
  const float kHalf = 0.5f;
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int i = y * W + x;
  out[i] = kCentre * in[i] + c_side * in[i - 1] - kHalf * in[i + 1] +
           in[i - W] / 4 + 2 * (in[i + W] * 3);
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(weights(S),
            "0,0,0=kCentre -1,0,0=c_side 1,0,0=-kHalf 0,-1,0=0.25 0,1,0=6");
  EXPECT_EQ(S.Points[0].Weight.K, StencilCoefficient::Constant);
  EXPECT_EQ(S.Points[0].Weight.Value, -4.0);
  EXPECT_EQ(S.Points[1].Weight.K, StencilCoefficient::Constant);
  EXPECT_FALSE(S.Points[1].Weight.Value.has_value())
      << "the host may change a __constant__ variable";
  EXPECT_EQ(S.Points[2].Weight.Value, 0.5);
  EXPECT_DOUBLE_EQ(S.Points[2].Weight.Scale, -1.0);
}

TEST(StencilAccessTest, WeightsThroughAccumulatorChain) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, float alpha) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float lap = in[i - 1] - 2.0f * in[i];
  lap += in[i + 1];
  float scaled = alpha * lap;
  out[i] = scaled;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(weights(A.shape()), "-1,0,0=alpha 0,0,0=-2*alpha 1,0,0=alpha");
}

TEST(StencilAccessTest, WeightsUnknownWhenAccumulatorIsOverwritten) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = in[i - 1];
  s = in[i + 1];
  out[i] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(weights(A.shape()), "-1,0,0=? 1,0,0=?");
}

TEST(StencilAccessTest, WeightsUnknownForNonLinearUse) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = in[i - 1] + in[i + 1];
  out[i] = s * s + (float)(int)in[i];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(weights(A.shape()), "-1,0,0=? 1,0,0=? 0,0,0=?");
}

TEST(StencilAccessTest, RepeatedReadMultipliesWeight) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int rep = 0; rep < 3; ++rep)
    s += in[i + 1];
  out[i] = s - in[i];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(weights(A.shape()), "1,0,0=3 0,0,0=-1");
}

TEST(StencilAccessTest, ConditionalReadsAreMarked) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = in[i];
  for (int t = -1; t <= 1; t += 2) {
    int j = i + t;
    if (j < 0 || j >= n) continue;
    s += in[j];
  }
  out[i] = (i > 0 ? in[i - 2] : 0.0f) + s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(offsets(S), "(0,0,0) (-1,0,0) (1,0,0) (-2,0,0)");
  ASSERT_EQ(S.Points.size(), 4u);
  EXPECT_FALSE(S.Points[0].Conditional);
  EXPECT_TRUE(S.Points[1].Conditional);
  EXPECT_TRUE(S.Points[2].Conditional);
  // A `?:` with a zero branch passes the read's weight on; its mask is no
  // zero border (x > 0 does not cut the tap at -2 where it leaves the
  // written points), so the read stays conditional.
  EXPECT_TRUE(S.Points[3].Conditional);
  EXPECT_EQ(S.Points[3].Weight.describe(), "1");
  EXPECT_EQ(S.CodegenProblem, "the read at offset (-2) is 0 where 'x > 0' "
                              "fails, which is not where the written "
                              "points end");
  EXPECT_EQ(bounds(S), "x < n");
}

TEST(StencilAccessTest, GuardThatIsNotOnlyCoordinateBounds) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, bool enabled) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (enabled && W - 1 > x && 0 < x)
    out[x] = in[x - 1] + in[x + 1];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(S.Guard, "enabled && W - 1 > x && 0 < x");
  EXPECT_FALSE(S.GuardIsSimple);
  EXPECT_EQ(bounds(S), "x < W - 1, x > 0");
  EXPECT_EQ(S.Bounds[1].Op, clang::BO_GT);
  EXPECT_EQ(S.Bounds[1].LimitValue, 0);
}

TEST(StencilAccessTest, NestedIfsAndEarlyReturnsFormOneGuard) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y >= H) return;
  if (x >= 1) {
    if (!(x >= W - 1))
      out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
  }
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().Guard, "!(y >= H) && x >= 1 && !(x >= W - 1)");
  EXPECT_EQ(bounds(A.shape()), "y < H, x >= 1, x < W - 1");
  EXPECT_TRUE(A.shape().GuardIsSimple);
}

TEST(StencilAccessTest, ReferenceAliasAndThreadLocalArray) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float &c = in[i];
  float v[3];
  int n = 0;
  v[n++] = in[i - 1];
  v[n++] = in[i + 1];
  out[i] = c + v[0] + v[1];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(0,0,0) (-1,0,0) (1,0,0)");
  EXPECT_EQ(weights(A.shape()), "0,0,0=1 -1,0,0=? 1,0,0=?");
}

TEST(StencilAccessTest, PointLocationsAndStoreLocation) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float l = in[i - 1];
  float r = in[i + 1];
  out[i] = l + r;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const clang::SourceManager &SM = A.AST->getSourceManager();
  EXPECT_EQ(SM.getPresumedLineNumber(A.shape().Points[0].Loc), 4u);
  EXPECT_EQ(SM.getPresumedLineNumber(A.shape().Points[1].Loc), 5u);
  EXPECT_EQ(SM.getPresumedLineNumber(A.shape().StoreLoc), 6u);
  EXPECT_EQ(weights(A.shape()), "-1,0,0=1 1,0,0=1");
}

TEST(StencilAccessTest, IrregularShapeListIsCapped) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int t = -60; t <= 60; t += 2)
    s += in[i + t];
  out[i] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().Offsets.size(), 61u);
  EXPECT_EQ(A.describe(),
            "1D irregular radius 60: 61 points (-60) (-58) (-56) (-54) (-52) "
            "(-50) (-48) (-46) (-44) (-42) (-40) (-38) (-36) (-34) (-32) "
            "(-30) (-28) (-26) (-24) (-22) (-20) (-18) (-16) (-14) (-12) "
            "(-10) (-8) ... into out from in");
}

TEST(StencilAccessTest, CoordinateWithConstantBlockSize) {
  Analysis A = analyze(R"(
#define BX 16
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * BX + threadIdx.x;
  int y = blockIdx.y * 8 + threadIdx.y;
  out[y * W + x] = in[y * W + x + 1] + in[(y - 1) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(1,0,0) (0,-1,0)");
}

//===----------------------------------------------------------------------===//
// Refusals
//===----------------------------------------------------------------------===//

TEST(StencilAccessRefusalTest, NotAKernel) {
  Analysis A = analyze(R"(
__device__ void k(const float *in, float *out) { out[0] = in[0]; })");
  EXPECT_EQ(A.refusal(), "not a __global__ function");
}

TEST(StencilAccessRefusalTest, DataDependentOffset) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const int *idx, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[idx[i]] + in[i];
}
)");
  EXPECT_EQ(A.refusal(), "data-dependent offset: the index depends on a value "
                         "loaded from memory");
  EXPECT_EQ(A.refusalLine(), 4u);
}

TEST(StencilAccessRefusalTest, DataDependentOffsetThroughVariable) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const int *map, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = map[i];
  j += 1;
  out[i] = in[j];
}
)");
  EXPECT_EQ(A.refusal(), "data-dependent offset: the index depends on 'j', "
                         "which holds a value loaded from memory");
}

TEST(StencilAccessRefusalTest, InPlaceUpdate) {
  Analysis A = analyze(R"(
__global__ void k(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) a[i] = 0.5f * (a[i - 1] + a[i + 1]);
}
)");
  EXPECT_EQ(A.refusal(), "in-place update: 'a' is both read and written");
}

TEST(StencilAccessRefusalTest, InPlaceThroughAlias) {
  Analysis A = analyze(R"(
__global__ void k(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float *b = a + n;
  b[i] = a[i - 1] + a[i + 1];
}
)");
  EXPECT_EQ(A.refusal(), "in-place update: 'a' is both read and written");
}

TEST(StencilAccessRefusalTest, CompoundStoreIsInPlace) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] += in[x - 1] + in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "in-place update: the store to 'out' also reads it");
}

TEST(StencilAccessRefusalTest, MoreThanOneOutput) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, float *grad) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x - 1] + in[x + 1];
  grad[x] = in[x + 1] - in[x - 1];
}
)");
  EXPECT_EQ(A.refusal(), "more than one output: 'out' and 'grad'");
  EXPECT_EQ(A.refusalLine(), 5u);
}

TEST(StencilAccessRefusalTest, OutputWrittenTwice) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x == 0 || x == n - 1) out[x] = in[x];
  else out[x] = in[x - 1] + in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "output 'out' is written at 2 places");
}

TEST(StencilAccessRefusalTest, AtomicSideEffect) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, float *total) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[x - 1] + in[x + 1];
  atomicAdd(total, v);
  out[x] = v;
}
)");
  EXPECT_EQ(A.refusal(), "side effect: atomic operation 'atomicAdd'");
  EXPECT_EQ(A.refusalLine(), 5u);
}

TEST(StencilAccessRefusalTest, PrintfSideEffect) {
  Analysis A = analyze(R"(
#include <cstdio>
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x == 0) printf("start\n");
  out[x] = in[x - 1] + in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "side effect: calls 'printf'");
}

TEST(StencilAccessRefusalTest, CallToFunctionWithoutBody) {
  Analysis A = analyze(R"(
__device__ float noise(int i);
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x - 1] + in[x + 1] + noise(x);
}
)");
  EXPECT_EQ(A.refusal(),
            "side effect: calls 'noise', which has no visible body");
}

TEST(StencilAccessRefusalTest, CallToImpureFunction) {
  Analysis A = analyze(R"(
__device__ int counter;
__device__ float tick(float v) { counter = counter + 1; return v; }
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = tick(in[x - 1] + in[x + 1]);
}
)");
  EXPECT_EQ(A.refusal(), "side effect: calls 'tick', which writes 'counter'");
}

TEST(StencilAccessRefusalTest, PureHelpersAndMathAreAllowed) {
  Analysis A = analyze(R"(
__device__ float clampf(float v, float lo, float hi) {
  return fminf(fmaxf(v, lo), hi);
}
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = clampf(sqrtf(in[x - 1] * in[x + 1]), 0.0f, 1.0f);
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(weights(A.shape()), "-1,0,0=? 1,0,0=?");
}

TEST(StencilAccessRefusalTest, PointerPassedToHelper) {
  Analysis A = analyze(R"(
__device__ float at(const float *p, int i) { return p[i]; }
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = at(in, x - 1) + at(in, x + 1);
}
)");
  EXPECT_EQ(A.refusal(), "passes a pointer or reference to 'at'; accesses "
                         "inside called functions are not followed");
}

TEST(StencilAccessRefusalTest, LoopBoundsNotConstant) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int r) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int i = -r; i <= r; ++i)
    s += in[x + i];
  out[x] = s;
}
)");
  EXPECT_EQ(A.refusal(), "the bounds of loop 'i' are not constant");
}

TEST(StencilAccessRefusalTest, ReadInsideWhileLoop) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  int t = 0;
  while (t < n) { s += in[x]; ++t; }
  out[x] = s;
}
)");
  EXPECT_EQ(A.refusal(), "the read of 'in' is inside a while loop");
}

TEST(StencilAccessRefusalTest, LoopVariableChangedInBody) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int i = 0; i < 8; ++i) { s += in[x + i]; i += in[x] > 0; }
  out[x] = s;
}
)");
  EXPECT_EQ(A.refusal(), "loop 'i' changes its variable outside its increment");
}

TEST(StencilAccessRefusalTest, TooManyOffsets) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0;
  for (int i = -40; i <= 40; ++i)
    for (int j = -40; j <= 40; ++j)
      s += in[(y + i) * W + x + j];
  out[y * W + x] = s;
}
)");
  EXPECT_EQ(A.refusal(),
            "too many offsets: more than 4096 after expanding the loops");
}

TEST(StencilAccessRefusalTest, NoThreadCoordinates) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int i) {
  out[i] = in[i - 1] + in[i + 1];
}
)");
  EXPECT_EQ(A.refusal(), "no thread coordinates: the index of 'out' does not "
                         "depend on threadIdx");
}

TEST(StencilAccessRefusalTest, NonAffineCoordinates) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int x = idx % W;
  int y = (idx + 1) / W;
  out[y * W + x] = in[y * W + x + 1];
}
)");
  // The thread's own number splits into coordinates (StencilLinearSplit
  // tests); a number offset from it does not.
  EXPECT_EQ(A.refusal(), "the index uses '/' on values that are not "
                         "constants: '(idx + 1) / W'");
}

TEST(StencilAccessRefusalTest, OffsetIsNotAMultipleOfTheStrides) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * W + x] = in[y * W + x + H];
}
)");
  EXPECT_EQ(A.refusal(), "the offset from the output is not a constant "
                         "multiple of the strides: 'H'");
}

TEST(StencilAccessRefusalTest, SharedMemoryTile) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int n) {
  __shared__ float tile[34];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x + 1] = in[x];
  __syncthreads();
  out[x] = tile[threadIdx.x] + tile[threadIdx.x + 2];
}
)");
  EXPECT_EQ(A.refusal(), "synchronisation: calls '__syncthreads'");
}

TEST(StencilAccessRefusalTest, SharedMemoryWrite) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  __shared__ float tile[32];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[x];
  out[x] = tile[threadIdx.x] + in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "writes __shared__ memory 'tile' (shared-memory "
                         "tiled kernels are not supported)");
}

TEST(StencilAccessRefusalTest, GlobalScalarWrite) {
  Analysis A = analyze(R"(
__device__ int done;
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x + 1];
  done = 1;
}
)");
  EXPECT_EQ(A.refusal(), "side effect: writes the global variable 'done'");
}

TEST(StencilAccessRefusalTest, InputEscapes) {
  Analysis A = analyze(R"(
__device__ const float *last;
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x - 1] + in[x + 1];
  if (x == 0) last = in;
}
)");
  EXPECT_EQ(A.refusal(), "side effect: writes the global variable 'last'");
}

TEST(StencilAccessRefusalTest, InputConvertedToInteger) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  bool aligned = ((unsigned long long)in & 15) == 0;
  out[x] = aligned ? in[x - 1] : in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "input 'in' escapes: converted to a non-pointer type");
}

TEST(StencilAccessRefusalTest, StoreInsideLoop) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  for (int z = 1; z < D - 1; ++z)
    out[z * W + x] = in[(z - 1) * W + x] + in[(z + 1) * W + x];
}
)");
  EXPECT_EQ(A.refusal(), "the store to 'out' is inside a loop");
}

TEST(StencilAccessRefusalTest, NoStore) {
  Analysis A = analyze(R"(
__global__ void k(const float *in) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[x];
  (void)v;
}
)");
  EXPECT_EQ(A.refusal(), "no store to global memory");
}

TEST(StencilAccessRefusalTest, NoNeighbourRead) {
  Analysis A = analyze(R"(
__global__ void k(float *out, float v) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = v;
}
)");
  EXPECT_EQ(A.refusal(), "no input is read at an offset from the thread's "
                         "coordinates");
}

TEST(StencilAccessRefusalTest, ReadUsesCoordinateTheOutputDoesNot) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[x] = in[y * W + x];
}
)");
  EXPECT_EQ(A.refusal(), "the index of 'in' uses coordinate y, which the "
                         "output index does not");
}

TEST(StencilAccessRefusalTest, TemplateKernelPattern) {
  Analysis A = analyze(R"(
template <int R>
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x - R] + in[x + R];
}
)");
  EXPECT_EQ(A.refusal(), "template kernel: only instantiations are analysed");
}

TEST(StencilAccessRefusalTest, PointerCastIsNotFollowed) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, size_t pitch) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  const float *row = (const float *)((const char *)in + y * pitch);
  out[x] = row[x];
}
)");
  EXPECT_EQ(A.refusal(), "the pointer is cast from 'const char *' to 'const "
                         "float *'");
}

TEST(StencilAccessRefusalTest, InlineAssembly) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("membar.gl;");
  out[x] = in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "side effect: inline assembly");
}

TEST(StencilAccessRefusalTest, WarpShuffle) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[x];
  out[x] = v + __shfl_down_sync(0xffffffffu, v, 1);
}
)");
  EXPECT_EQ(A.refusal(), "warp-level intrinsic '__shfl_down_sync'");
}

TEST(StencilAccessRefusalTest, ParameterChangedInKernel) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  W = W * 2;
  out[x] = in[x + W];
}
)");
  EXPECT_EQ(A.refusal(),
            "the index uses parameter 'W', which the kernel changes");
}

TEST(StencilAccessRefusalTest, PerBlockReadIsNotAffineInCoordinates) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x + 1] + in[blockIdx.x];
}
)");
  EXPECT_EQ(A.refusal(), "the index is not affine in the thread "
                         "coordinates: 'blockIdx.x'");
}

TEST(StencilAccessRefusalTest, HelperReadingGlobalArray) {
  Analysis A = analyze(R"(
__device__ float g_in[1024];
__device__ float left(int i) { return g_in[i - 1]; }
__global__ void k(float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = left(x) + g_in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "calls 'left', which reads 'g_in'; accesses inside "
                         "called functions are not followed");
}

TEST(StencilAccessRefusalTest, ScatterStoreIsDataDependent) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, const int *perm, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[perm[x]] = in[x - 1] + in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "data-dependent offset: the index depends on a "
                         "value loaded from memory");
}

TEST(StencilAccessRefusalTest, ModifiedPointerParameter) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  in += W;
  out[x] = in[x - 1] + in[x + 1];
}
)");
  EXPECT_EQ(A.refusal(), "pointer 'in' changes after its initialisation");
}

TEST(StencilAccessRefusalTest, NestedCallToPrintf) {
  Analysis A = analyze(R"(
#include <cstdio>
__device__ float logged(float v) { printf("%f\n", v); return v; }
__device__ float twice(float v) { return logged(v) * 2.0f; }
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = twice(in[x + 1]);
}
)");
  EXPECT_EQ(A.refusal(),
            "side effect: calls 'twice', which calls 'logged' (side effect: "
            "calls 'logged', which calls 'printf' (side effect: calls "
            "'printf'))");
}

TEST(StencilAccessRefusalTest, RefusalsNeverCrashOnOddCode) {
  // Each of these must give some refusal (or a shape), not a crash.
  const char *Sources[] = {
      R"(__global__ void k() {})",
      R"(__global__ void k(float *o) { for (;;) { o[0] = 1; break; } })",
      R"(__global__ void k(float *o, int n) {
           switch (n) { case 0: o[threadIdx.x] = 1; break; default: break; } })",
      R"(__global__ void k(float **p) { p[0][threadIdx.x] = p[1][threadIdx.x]; })",
      R"(struct S { float a[4]; };
         __global__ void k(S *s, float *o) { o[threadIdx.x] = s->a[threadIdx.x]; })",
      R"(__global__ void k(float *o, const float *i) {
           int x = threadIdx.x; o[x] = i[x * x]; })",
      R"(__global__ void k(float *o, const float *i) {
           int x = threadIdx.x; o[x] = i[x + 9223372036854775807LL] + i[x + 1]; })",
      R"(__global__ void k(float *o, const float *i, int n) {
           int x = threadIdx.x; goto end; end: o[x] = i[x]; })",
      R"(__global__ void k(float *o, const float *i) {
           int x = threadIdx.x; auto f = [&](int j) { return i[j]; }; o[x] = f(x); })",
      R"(__global__ void k(float *o, const float *i) {
           unsigned x = threadIdx.x; int z = 0;
           for (int t = 0; t < 2; ++t) { o[x] = i[x + t / z]; } })",
  };
  for (const char *Code : Sources) {
    Analysis A = analyze(Code);
    EXPECT_TRUE(A.Result || !A.Result.Refusal.empty()) << Code;
  }
}

TEST(StencilAccessRefusalTest, FarOffset) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = in[x + 1] + in[x + 100000];
}
)");
  EXPECT_EQ(A.refusal(),
            "a read of 'in' is more than 4096 points away from the output");
}

TEST(StencilAccessTest, TemplateInstantiationIsAnalysed) {
  std::unique_ptr<clang::ASTUnit> AST = parseCuda(R"(
template <typename T, int R>
__global__ void k(const T *in, T *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < R || x >= n - R) return;
  T s = 0;
  for (int i = -R; i <= R; ++i)
    s += in[x + i];
  out[x] = s / T(2 * R + 1);
}
template __global__ void k<double, 2>(const double *, double *, int);
)");
  ASSERT_TRUE(AST);
  const clang::FunctionDecl *Pattern = findFunction(*AST, "k");
  ASSERT_TRUE(Pattern && Pattern->getDescribedFunctionTemplate());
  std::vector<const clang::FunctionDecl *> Specs(
      Pattern->getDescribedFunctionTemplate()->spec_begin(),
      Pattern->getDescribedFunctionTemplate()->spec_end());
  ASSERT_EQ(Specs.size(), 1u);
  StencilResult R = analyzeStencil(*Specs[0]);
  ASSERT_TRUE(R) << R.Refusal;
  EXPECT_EQ(describeOffsets(*R.Shape), "1D box radius 2: 5 points (-2) (-1) "
                                       "(0) (1) (2) into out from in");
  EXPECT_EQ(R.Shape->Element, ElementKind::Double);
  EXPECT_DOUBLE_EQ(R.Shape->Points[0].Weight.Scale, 0.2);
  EXPECT_EQ(R.Shape->Guard, "!(x < R || x >= n - R)");
  std::string Bounds;
  for (const CoordinateBound &B : R.Shape->Bounds)
    Bounds += B.describe() + ";";
  EXPECT_EQ(Bounds, "x >= 2;x < n - 2;");
}

TEST(StencilAccessTest, ConstReferenceArgumentsOfSystemFunctions) {
  Analysis A = analyze(R"(
#include <algorithm>
__global__ void k(const float *in, float *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float s, c;
  sincosf(in[x], &s, &c);
  out[x] = std::max(in[x - 1], in[x + 1]) + s * c;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(offsets(A.shape()), "(0,0,0) (-1,0,0) (1,0,0)");
  EXPECT_EQ(weights(A.shape()), "0,0,0=? -1,0,0=? 1,0,0=?");
}

TEST(StencilAccessRefusalTest, SystemFunctionWritingThroughPointer) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, float *other) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  float c;
  sincosf(in[x + 1], &other[x], &c);
  out[x] = c;
}
)");
  EXPECT_EQ(A.refusal(),
            "side effect: calls 'sincosf' with a pointer argument");
}

//===----------------------------------------------------------------------===//
// What code generation needs: Indexing, BlockFactor, Origin, ReadFreeTerm
// and CodegenProblem (the systolic pass)
//===----------------------------------------------------------------------===//

/// "[s_x, s_y, s_z] + rest" for each subscript of \p I, outermost first;
/// "-" marks a zero stride.
std::string layout(const ArrayIndexing &I) {
  std::string Out;
  for (size_t K = 0; K != I.Strides.size(); ++K) {
    Out += K ? "; [" : "[";
    for (unsigned D = 0; D != 3; ++D)
      Out += (D ? "," : "") +
             (I.Strides[K][D].empty() ? std::string("-") : I.Strides[K][D]);
    Out += "] + " + (K < I.Rest.size() ? I.Rest[K] : std::string("<none>"));
  }
  return Out;
}

/// Analyses kernel "k" with the parameters (in, out, W, H[, \p Extra]),
/// the usual coordinates and the guard 1 <= x < W - 1, 1 <= y < H - 1,
/// then \p Body.
Analysis analyzeInterior2D(llvm::StringRef Extra, llvm::StringRef Body) {
  std::string Code =
      "__global__ void k(const float *in, float *out, int W, int H" +
      std::string(Extra.empty() ? "" : ", ") + Extra.str() +
      ") {\n"
      "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
      "  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)\n"
      "    return;\n" +
      Body.str() + "}\n";
  return analyze(Code);
}

TEST(StencilCodegenFieldsTest, FlatIndexing2D) {
  Analysis A = analyze(FivePoint);
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(S.CodegenProblem, "");
  EXPECT_EQ(S.ReadFreeTerm, "");
  // The output first, then each input.
  ASSERT_EQ(S.Indexing.size(), 2u);
  EXPECT_EQ(S.Indexing[0].Array, S.Output);
  EXPECT_EQ(S.Indexing[1].Array, S.Inputs[0]);
  EXPECT_EQ(layout(S.Indexing[0]), "[1,W,-] + 0");
  // An input's Rest is where offset 0 lies.
  EXPECT_EQ(layout(S.Indexing[1]), "[1,W,-] + 0");
  EXPECT_EQ(S.Indexing[0].element({"col", "row", ""}), "out[col + W * row]");
  EXPECT_EQ(S.Indexing[1].element({"c + 1", "r", ""}), "in[c + 1 + W * r]");
  EXPECT_EQ(S.BlockFactor[0], "blockDim.x");
  EXPECT_EQ(S.BlockFactor[1], "blockDim.y");
  EXPECT_EQ(S.BlockFactor[2], "");
  EXPECT_EQ(S.Origin, (std::array<int64_t, 3>{0, 0, 0}));
}

TEST(StencilCodegenFieldsTest, Index32OnlyForSignedIntIndices) {
  // Index32 of the interior 2D kernel with \p Body, which must be a stencil.
  auto Index32 = [](llvm::StringRef Body) {
    Analysis A = analyzeInterior2D("", Body);
    EXPECT_TRUE(A.Result) << Body.str() << ": " << A.Result.Refusal;
    return A.Result && A.shape().Index32;
  };
  // int subscripts and int pointer offsets: every index fits in int.
  EXPECT_TRUE(analyze(FivePoint).shape().Index32);
  EXPECT_TRUE(Index32("  const float *row = in + y * W;\n"
                      "  out[y * W + x] = row[x - 1] + row[x + 1];\n"));
  // A 64-bit subscript, or a 64-bit pointer offset, anywhere: not.
  EXPECT_FALSE(Index32("  long long i = (long long)y * W + x;\n"
                       "  out[i] = in[i - 1] + in[i + 1];\n"));
  EXPECT_FALSE(Index32("  const float *row = in + (size_t)y * W;\n"
                       "  out[y * W + x] = row[x - 1] + row[x + 1];\n"));
  // Unsigned int: its values may exceed int's.
  EXPECT_FALSE(Index32("  unsigned i = y * W + x;\n"
                       "  out[i] = in[i - 1] + in[i + 1];\n"));
}

TEST(StencilCodegenFieldsTest, TwoDimensionalArrayIndexing) {
  Analysis A = analyze(R"(
#define N 512
__global__ void k(const float (*in)[N], float (*out)[N]) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < N - 1 && y > 0 && y < N - 1)
    out[y][x] = (in[y][x - 1] + in[y][x + 1] + in[y - 1][x] + in[y + 1][x]) / 4;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(S.CodegenProblem, "");
  ASSERT_EQ(S.Indexing.size(), 2u);
  // One subscript per dimension, outermost (y) first.
  EXPECT_EQ(layout(S.Indexing[0]), "[-,1,-] + 0; [1,-,-] + 0");
  EXPECT_EQ(layout(S.Indexing[1]), "[-,1,-] + 0; [1,-,-] + 0");
  EXPECT_EQ(S.Indexing[0].element({"c", "r", ""}), "out[r][c]");
  EXPECT_EQ(S.Indexing[1].element({"c", "r", ""}), "in[r][c]");
}

TEST(StencilCodegenFieldsTest, ThreeDimensionalFlatIndexing) {
  Analysis A = analyze(R"(
__global__ void k(const double *in, double *out, int W, int H, int D) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= W - 1 || y >= H - 1 || z >= D - 1)
    return;
  out[(z * H + y) * W + x] = in[(z * H + y) * W + x - 1] +
                             in[((z + 1) * H + y) * W + x] +
                             in[(z * H + y - 1) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(S.Rank, 3u);
  EXPECT_EQ(S.CodegenProblem, "");
  ASSERT_EQ(S.Indexing.size(), 2u);
  EXPECT_EQ(layout(S.Indexing[0]), "[1,W,H*W] + 0");
  EXPECT_EQ(layout(S.Indexing[1]), "[1,W,H*W] + 0");
  // A stride that is not a single name is parenthesised.
  EXPECT_EQ(S.Indexing[1].element({"c", "r", "p"}),
            "in[c + W * r + (H*W) * p]");
  EXPECT_EQ(S.BlockFactor[2], "blockDim.z");
}

TEST(StencilCodegenFieldsTest, ConstantBlockFactor) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = threadIdx.y + 8 * blockIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().BlockFactor[0], "32");
  EXPECT_EQ(A.shape().BlockFactor[1], "8");
  EXPECT_EQ(A.shape().CodegenProblem, "");
}

TEST(StencilCodegenFieldsTest, BlockFactorThatIsNeitherBlockDimNorConstant) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * 2 * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().BlockFactor[0], "2*blockDim.x");
  EXPECT_EQ(A.shape().CodegenProblem,
            "coordinate x steps by '2*blockDim.x' per block, neither "
            "blockDim.x nor a constant");
}

TEST(StencilCodegenFieldsTest, OriginOfShiftedCoordinates) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  int y = blockIdx.y * blockDim.y + threadIdx.y + 2;
  if (x < W - 1 && y < H - 2)
    out[y * W + x] = in[y * W + x - 1] + in[(y - 2) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(S.Origin, (std::array<int64_t, 3>{1, 2, 0}));
  EXPECT_EQ(S.CodegenProblem, "");
  // Offsets stay relative to the stored point; the bounds are on x and y.
  EXPECT_EQ(offsets(S), "(-1,0,0) (0,-2,0)");
  EXPECT_EQ(bounds(S), "x < W - 1, y < H - 2");
  // Indexing is in coordinates before the origin: the origin is in Rest.
  ASSERT_EQ(S.Indexing.size(), 2u);
  EXPECT_EQ(layout(S.Indexing[0]), "[1,W,-] + 2*W + 1");
}

TEST(StencilCodegenFieldsTest, ReadFreeTermIsABias) {
  Analysis A = analyzeInterior2D("", R"(
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1] + 1.0f;
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().ReadFreeTerm, "1.0f");
  // The weights still describe the reads.
  EXPECT_EQ(weights(A.shape()), "-1,0,0=1 1,0,0=1");
}

TEST(StencilCodegenFieldsTest, ReadFreeTermThroughAnAccumulator) {
  Analysis A = analyzeInterior2D("float bias", R"(
  float s = bias;
  s += in[y * W + x - 1];
  s += in[(y + 1) * W + x];
  out[y * W + x] = s;
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().ReadFreeTerm, "bias");
}

TEST(StencilCodegenFieldsTest, ZeroInitialisedAccumulatorIsNoBias) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, const float *w, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W - 2 || y >= H - 2)
    return;
  float s = 0;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i)
      s += w[j * 3 + i] * in[(y + j) * W + x + i];
  out[y * W + x] = s;
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().ReadFreeTerm, "");
  EXPECT_EQ(A.shape().CodegenProblem, "");
  EXPECT_EQ(A.shape().Points.size(), 9u);
}

TEST(StencilCodegenFieldsTest, ScaledSumIsNoBias) {
  Analysis A = analyzeInterior2D("", R"(
  out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1]);
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().ReadFreeTerm, "");
  EXPECT_EQ(weights(A.shape()), "-1,0,0=0.25 1,0,0=0.25");
}

TEST(StencilCodegenFieldsTest, BoundThatDependsOnBlockDim) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - blockDim.x || y < 1 || y >= H - 1)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().CodegenProblem,
            "the guard compares x with '-blockDim.x + W', which depends on "
            "the launch");
}

TEST(StencilCodegenFieldsTest, InputReadWithTwoBases) {
  Analysis A = analyzeInterior2D("int P", R"(
  out[y * W + x] = in[y * W + x - 1] + in[y * P + x];
)");
  // The offsets are still known (y's stride differs: in[y * P + x] is at
  // offset (0,0) in its own layout), but one cache cannot serve both.
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().CodegenProblem,
            "input 'in' is read with two different layouts");
}

TEST(StencilCodegenFieldsTest, InputReadAtANonConstantBaseIsRefused) {
  // A second region of the same input (a plane at W*H) is no offset.
  Analysis A = analyzeInterior2D("", R"(
  out[y * W + x] = in[y * W + x - 1] + in[W * H + y * W + x];
)");
  EXPECT_EQ(A.refusal(), "the offset from the output is not a constant "
                         "multiple of the strides: 'W*H'");
}

//===----------------------------------------------------------------------===//
// A linear thread index split into coordinates; zero borders
//===----------------------------------------------------------------------===//

/// The bounds a point's read is masked by, "x < W - 1 && y >= 1".
std::string masks(const StencilPoint &P) {
  std::string Out;
  for (const CoordinateBound &B : P.When)
    Out += (Out.empty() ? "" : " && ") + B.describe();
  return Out;
}

TEST(StencilLinearSplitTest, RemainderAndQuotientAreXAndY) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= W * H)
    return;
  int x = id % W, y = id / W;
  if (x < 1 || x >= W - 1)
    return;
  out[y * W + x] = in[id - 1] + in[id + 1] + in[id + W];
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  // `id` itself is x + W * y: its reads are offsets along x.
  EXPECT_EQ(offsets(A.shape()), "(-1,0,0) (1,0,0) (0,1,0)");
  ASSERT_TRUE(A.shape().Split.has_value());
  EXPECT_EQ(A.shape().Split->Divisor, "W");
  ASSERT_EQ(A.shape().Split->Limits.size(), 1u);
  EXPECT_EQ(A.shape().Split->Limits[0], "W*H");
  EXPECT_EQ(bounds(A.shape()), "x >= 1, x < W - 1");
  EXPECT_TRUE(A.shape().GuardIsSimple);
  EXPECT_EQ(A.shape().BlockFactor[0], "blockDim.x");
  EXPECT_EQ(A.shape().CodegenProblem, "");
}

TEST(StencilLinearSplitTest, OneSplitPerKernel) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W, int H) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  out[id % W + id / H * W] = in[id % W + id / H * W + 1];
}
)");
  EXPECT_EQ(A.refusal(), "the thread index is split two ways: by 'W' and by "
                         "'H'");
}

TEST(StencilLinearSplitTest, DivisorFixedForTheLaunch) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int x = id % blockDim.x, y = id / blockDim.x;
  out[x + y * 64] = in[x + y * 64 + 1];
}
)");
  EXPECT_EQ(A.refusal(), "the thread index is split by 'blockDim.x', which "
                         "is not fixed for the launch");
}

TEST(StencilLinearSplitTest, NoOtherThreadDimension) {
  Analysis A = analyze(R"(
__global__ void k(const float *in, float *out, int W) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int x = id % W, y = id / W + threadIdx.y;
  out[x + y * W] = in[x + y * W + 1];
}
)");
  EXPECT_EQ(A.refusal(), "the index uses threadIdx.y or blockIdx.y beside a "
                         "thread index split into x and y");
}

TEST(StencilZeroBorderTest, TernaryTapsAreMaskedReads) {
  Analysis A = analyze(R"(
__global__ void k(const double *in, double *out, unsigned n, double r) {
  int id = blockDim.x * blockIdx.x + threadIdx.x;
  if (id < n * n) {
    int i = id % n, j = id / n;
    out[i + j * n] = in[i + j * n] + r * ((i < n - 1) ? in[i + 1 + j * n] : 0.0) +
                     r * ((j > 0) ? in[i + (j - 1) * n] : 0.0);
  }
}
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  const StencilShape &S = A.shape();
  EXPECT_EQ(weights(S), "0,0,0=1 1,0,0=r 0,-1,0=r");
  ASSERT_EQ(S.Points.size(), 3u);
  EXPECT_FALSE(S.Points[1].Conditional);
  EXPECT_EQ(masks(S.Points[0]), "");
  EXPECT_EQ(masks(S.Points[1]), "x < n - 1");
  EXPECT_EQ(masks(S.Points[2]), "y > 0");
  std::string Limits;
  for (const CoordinateBound &B : S.ReadLimits)
    Limits += (Limits.empty() ? "" : ", ") + B.describe();
  EXPECT_EQ(Limits, "x < n, y >= 0");
  EXPECT_EQ(S.CodegenProblem, "");
}

TEST(StencilZeroBorderTest, MaskShortOfTheEdgeStaysConditional) {
  Analysis A = analyzeInterior2D("", R"(
  out[y * W + x] = in[y * W + x] + ((x < W - 3) ? in[y * W + x + 1] : 0.0f);
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_TRUE(A.shape().Points[1].Conditional);
  EXPECT_EQ(A.shape().CodegenProblem,
            "the read at offset (1,0) is 0 where 'x < W - 3' fails, which is "
            "not where the written points end");
}

TEST(StencilZeroBorderTest, MaskOnAnotherAxisIsNoBorder) {
  Analysis A = analyzeInterior2D("", R"(
  out[y * W + x] = in[y * W + x] + ((x < W - 1) ? in[(y + 1) * W + x] : 0.0f);
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_EQ(A.shape().CodegenProblem,
            "the read at offset (0,1) is 0 where 'x < W - 1' fails, which "
            "does not cut it where it reaches past the written points");
}

TEST(StencilZeroBorderTest, OtherBranchMustBeZero) {
  Analysis A = analyzeInterior2D("", R"(
  out[y * W + x] = (x < W - 1) ? in[y * W + x + 1] : in[y * W + x];
)");
  ASSERT_TRUE(A.Result) << A.Result.Refusal;
  EXPECT_TRUE(A.shape().Points[0].Conditional);
  EXPECT_TRUE(A.shape().Points[0].When.empty());
}

} // namespace
