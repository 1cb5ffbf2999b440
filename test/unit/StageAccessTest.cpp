#include "analysis/StageAccess.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

/// image::clamp as samples/common/image.cuh writes it, and one that only
/// looks like it.
const char *Prelude = R"cu(
namespace image {
__host__ __device__ inline int clamp(int V, int Lo, int Hi) {
  return V < Lo ? Lo : V > Hi ? Hi : V;
}
__host__ __device__ inline int wrap(int V, int Lo, int Hi) {
  return V < Lo ? Hi : V > Hi ? Lo : V;
}
} // namespace image
)cu";

/// Kernel `k` (after the prelude) analysed, with the AST its declarations
/// live in, or why not ("no AST", "no kernel", "refused: <why>").
struct Analysed {
  std::unique_ptr<ASTUnit> AST;
  StageAccess Access;
  std::string Error;
};

Analysed analyse(const std::string &Kernel) {
  Analysed A;
  A.AST = parseCuda(std::string(Prelude) + Kernel);
  const FunctionDecl *K = A.AST ? findFunction(*A.AST, "k") : nullptr;
  if (!K) {
    A.Error = A.AST ? "no kernel" : "no AST";
    return A;
  }
  A.Access = analyzeStageAccess(*K);
  if (!A.Access)
    A.Error = "refused: " + A.Access.Refusal;
  return A;
}

/// The reads of kernel `k` described, or "refused: <why>".
std::vector<std::string> readsOf(const std::string &Kernel) {
  Analysed A = analyse(Kernel);
  if (!A.Error.empty())
    return {A.Error};
  std::vector<std::string> Reads;
  for (const StageRead &R : A.Access.Reads)
    Reads.push_back(describeStageRead(R));
  for (const ParmVarDecl *W : A.Access.Writes)
    Reads.push_back("writes " + W->getNameAsString());
  return Reads;
}

using Strings = std::vector<std::string>;

} // namespace

TEST(StageAccess, ClampedOffsets) {
  EXPECT_EQ(readsOf(R"cu(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + image::clamp(x - 1, 0, W - 1)] + in[y * W + x] +
                   in[image::clamp(y + 1, 0, H - 1) * W + x];
})cu"),
            (Strings{"in[clamp(x - 1, 0, W - 1), y]", "in[x, y]",
                     "in[x, clamp(y + 1, 0, H - 1)]", "writes out"}));
}

TEST(StageAccess, ChannelPlanesAndGuardedOffsets) {
  EXPECT_EQ(readsOf(R"cu(
__global__ void k(const float *in, float *out, int W, int H) {
  int y = threadIdx.y + blockIdx.y * blockDim.y;
  int x = blockDim.x * blockIdx.x + threadIdx.x;
  int c = blockIdx.z;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
    return;
  const int plane = c * H;
  out[(plane + y) * W + x] = in[(c * H + y - 1) * W + x + 1];
})cu"),
            (Strings{"in[x + 1, y - 1, z]", "writes out"}));
}

TEST(StageAccess, DownAndUpSampling) {
  // Pyramid levels: the input has another size than the output.
  EXPECT_EQ(readsOf(R"cu(
__global__ void k(const float *in, float *out, int inW, int W, int inH, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  int row = (c * inH + image::clamp((y + 1) / 2 - 1, 0, inH - 1)) * inW;
  int x0 = image::clamp(2 * x - 2, 0, inW - 1);
  out[(c * H + y) * W + x] = in[row + x0] + in[(c * inH + y / 2 + 1) * inW + x];
})cu"),
            (Strings{"in[clamp(2x - 2, 0, inW - 1), clamp((y + 1) / 2 - 1, "
                     "0, inH - 1), z]",
                     "in[x, y / 2 + 1, z]", "writes out"}));
}

TEST(StageAccess, StridesKeepTheirFactors) {
  // Bayer planes: `W` is a name of its own, not 2 * W2, so that the read
  // is row 2y + 1 of a W-wide image.
  EXPECT_EQ(readsOf(R"cu(
__global__ void k(const float *in, float *gr, float *b, int W2, int H2) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W2 || y >= H2)
    return;
  const int W = 2 * W2;
  gr[y * W2 + x] = in[2 * y * W + 2 * x];
  b[y * W2 + x] = in[(2 * y + 1) * W + 2 * x];
})cu"),
            (Strings{"in[2x, 2y]", "in[2x, 2y + 1]", "writes gr", "writes b"}));
}

TEST(StageAccess, TablesAndFixedPlanes) {
  // Constant tables are not buffers; the alpha plane of an RGBA image is
  // plane 3 whatever the thread's z.
  EXPECT_EQ(readsOf(R"cu(
__constant__ float kWeights[5];
__constant__ float kMatrix[3][4];
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  out[(c * H + y) * W + x] =
      kWeights[2] * kMatrix[c][1] * in[(c * H + y) * W + x] *
      in[(3 * H + y) * W + x];
})cu"),
            (Strings{"in[x, y, z]", "in[x, y, 3]", "writes out"}));
}

TEST(StageAccess, Refusals) {
  const char *Head = R"cu(
__global__ void k(const float *in, float *out, const int *idx, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
)cu";
  auto Refusal = [&](const std::string &Body) {
    Strings R = readsOf(Head + Body + "}");
    return R.size() == 1 ? R.front() : std::string("not refused");
  };
  EXPECT_EQ(Refusal("out[y * W + x + 1] = in[y * W + x];"),
            "refused: a store to 'out' away from the thread's own point");
  EXPECT_EQ(Refusal("out[y * W + x] = in[idx[y * W + x]];"),
            "refused: the index of 'in' is not a sum of scaled, offset or "
            "clamped coordinates times strides");
  // Not a clamp: the body is not `v < lo ? lo : v > hi ? hi : v`.
  EXPECT_EQ(Refusal("out[y * W + x] = in[y * W + image::wrap(x - 1, 0, W)];"),
            "refused: the index of 'in' is not a sum of scaled, offset or "
            "clamped coordinates times strides");
  // A loop variable (the bilateral grid's gather) is not a coordinate.
  EXPECT_EQ(Refusal("float s = 0; for (int i = 0; i < 8; ++i) s += "
                    "in[y * W + 8 * x + i]; out[y * W + x] = s;"),
            "refused: the index of 'in' is not a sum of scaled, offset or "
            "clamped coordinates times strides");
  // y both in the row and in the column.
  EXPECT_EQ(Refusal("out[y * W + x] = in[y * W + x + y];"),
            "refused: the index of 'in' multiplies one coordinate by two "
            "strides");
  EXPECT_EQ(Refusal("out[y * W + x] = in[y * W + image::clamp(x, 0, W) + 1];"),
            "refused: the x part of the index of 'in' is not a scaled, offset "
            "or clamped coordinate");
  EXPECT_EQ(Refusal("float v = in[y * W + x];"),
            "refused: no store at the thread's own point");
}

namespace {

/// The written domain of kernel `k`, or "refused: <why>".
std::string domainOf(const std::string &Kernel) {
  Analysed A = analyse(Kernel);
  return A.Error.empty() ? describeStageDomain(A.Access) : A.Error;
}

const char *GuardHead = R"cu(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
)cu";

std::string guarded(const std::string &Body) {
  return domainOf(GuardHead + Body + "\n}");
}

} // namespace

TEST(StageAccess, ReturnGuardsBoundTheWrittenPoints) {
  EXPECT_EQ(guarded("if (x >= W || y >= H) return; out[y * W + x] = 1;"),
            "x < W, y < H");
  // Harris: the interior only; a comparison may have the coordinate on
  // either side.
  EXPECT_EQ(guarded("if (x < 1 || 1 > y || x >= W - 1 || y > H - 2)\n"
                    "  return;\n"
                    "out[y * W + x] = in[y * W + x];"),
            "1 <= x < W - 1, 1 <= y < H - 2 + 1");
  EXPECT_EQ(guarded("out[y * W + x] = 1;"), "the launch's extent");
}

TEST(StageAccess, EnclosingGuardsNest) {
  EXPECT_EQ(guarded("if (x >= 2 && x <= W - 3) {\n"
                    "  if (y > 0 && y < H) { out[y * W + x] = 1; }\n"
                    "}"),
            "2 <= x < W - 3 + 1, 0 + 1 <= y < H");
}

TEST(StageAccess, GuardRefusals) {
  EXPECT_EQ(guarded("if (x % 2) return; out[y * W + x] = 1;"),
            "refused: a guard that is not a bound on the thread's coordinates");
  EXPECT_EQ(guarded("if (x == 3) return; out[y * W + x] = 1;"),
            "refused: a guard that is not a bound on the thread's coordinates");
  EXPECT_EQ(guarded("if (x >= W) return; else out[y * W + x] = 1;"),
            "refused: a guard with an else branch or a declaration");
  EXPECT_EQ(guarded("if (x >= y) return; out[y * W + x] = 1;"),
            "refused: a guard that is not a bound on the thread's coordinates");
}

namespace {

/// The dependence of kernel `k` on its parameter `in`, described.
std::string dependenceOn(const std::string &Kernel) {
  Analysed A = analyse(Kernel);
  if (!A.Error.empty())
    return A.Error;
  std::vector<StageRead> In;
  for (const StageRead &R : A.Access.Reads)
    if (R.Buffer->getName() == "in")
      In.push_back(R);
  std::string Why;
  std::optional<std::vector<AxisDependence>> D = dependenceOf(In, Why);
  return D ? describeDependence(*D) : "no dependence: " + Why;
}

} // namespace

TEST(StageAccess, DependencesCoverEveryReadAndTheRounding) {
  // Downsampling: columns 2x - 2 .. 2x + 2 of the finer level.
  EXPECT_EQ(dependenceOn(R"cu(
__global__ void k(const float *in, float *out, int inW, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * inW + image::clamp(2 * x - 2, 0, inW - 1)] +
                   in[y * inW + 2 * x + 2];
})cu"),
            "x: 2x + [-2, 2] (clamped), y: y + [0, 0]");
  // Upsampling: rows around y / 2; (y + 1) / 2 - 1 and y / 2 + 1 round
  // either way, hence the margin.
  EXPECT_EQ(dependenceOn(R"cu(
__global__ void k(const float *in, float *out, int W, int inH, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.z;
  if (x >= W || y >= H)
    return;
  out[(c * H + y) * W + x] =
      in[(c * inH + image::clamp((y + 1) / 2 - 1, 0, inH - 1)) * W + x] +
      in[(c * inH + y / 2 + 1) * W + x];
})cu"),
            "x: x + [0, 0], y: y / 2 + [-1, 2] (clamped), z: z + [0, 0]");
  EXPECT_EQ(dependenceOn(R"cu(
__global__ void k(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * W + x] = in[y * W + 2 * x] + in[y * W + x];
})cu"),
            "no dependence: reads of 'in' follow x at two scales or from two "
            "coordinates");
}
