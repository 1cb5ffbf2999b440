#include "rewriters/fuse/FusePlan.h"
#include "rewriters/fuse/FuseCostInput.h"
#include "rewriters/fuse/HybridTiles.h"
#include "test/unit/CudaTestParse.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const char *Kernels = R"cu(
__host__ __device__ inline int clampTo(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
// Reads rows y - 1 .. y + 1, clamped.
__global__ void blurY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[clampTo(y - 1, 0, H - 1) * W + x] + in[y * W + x] +
                   in[clampTo(y + 1, 0, H - 1) * W + x];
}
// Reads columns x - 2 .. x + 1 inside a guard that keeps them in [0, W).
__global__ void inside(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || x >= W - 1 || y >= H)
    return;
  out[y * W + x] = in[y * W + x - 2] + in[y * W + x + 1];
}
// Reads column x + 1 unguarded: past the last column.
__global__ void past(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x + 1];
}
// Halves the rows: reads rows 2y - 1 .. 2y + 1 of an inH-row input.
__global__ void down(const float *in, float *out, int W, int inH, int outH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= outH)
    return;
  out[y * W + x] = in[clampTo(2 * y - 1, 0, inH - 1) * W + x] +
                   in[clampTo(2 * y + 1, 0, inH - 1) * W + x];
}
// Doubles the rows: reads rows (y - 1) / 2 and y / 2 + 1, unclamped.
__global__ void upUnclamped(const float *in, float *out, int W, int inH,
                            int outH) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= outH)
    return;
  out[y * W + x] = in[((y + 1) / 2) * W + x] + in[(y / 2 + 1) * W + x];
}
// Reads column x + 1 below a guard of its own, OW.
__global__ void shifted(const float *in, float *out, int W, int H, int OW) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= OW || y >= H)
    return;
  out[y * W + x] = in[y * W + x + 1];
}
// The same point, with another row stride.
__global__ void strided(const float *in, float *out, int W, int H, int P) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * P + x];
}
)cu";

struct Planned {
  FusePlan Plan;
  std::string Why;
  std::unique_ptr<ASTUnit> AST;
};

/// The plan of the first { } block in `run`, whose body follows the
/// kernels above.
Planned plan(const std::string &Run, GroupCostFn GroupCost = nullptr) {
  Planned P;
  P.AST = parseCuda(std::string(Kernels) + Run);
  if (!P.AST)
    return P;
  const FunctionDecl *F = findFunction(*P.AST, "run");
  if (!F)
    return P;
  for (const Stmt *S : cast<CompoundStmt>(F->getBody())->body())
    if (const auto *Block = dyn_cast<CompoundStmt>(S)) {
      StageGraph G = buildStageGraph(*Block, *F, P.AST->getASTContext());
      PlanOrRefusal<FusePlan> R =
          planFusion(G, P.AST->getASTContext(), GroupCost);
      if (R)
        P.Plan = std::move(*R.Plan);
      else
        P.Why = R.Refused.Reason;
      break;
    }
  return P;
}

const char *Prologue = R"cu(
void run(const float *in, float *out, float *live, int W, int H, int P) {
  dim3 b(32, 8), g((W + 31) / 32, (H + 7) / 8), g2(1, 1);
  float *t = nullptr, *u = nullptr;
  cudaMalloc(&t, 4 * W * H);
  cudaMalloc(&u, 4 * W * H);
)cu";

/// The plan of a block of \p Launches in run() (buffers in, out, live, t,
/// u; launch shapes g, g2 and b), with \p MoreKernels defined before it.
Planned planBlock(const std::string &Launches,
                  const std::string &MoreKernels = "",
                  GroupCostFn GroupCost = nullptr) {
  return plan(MoreKernels + Prologue + "  {\n" + Launches + "  }\n}\n",
              GroupCost);
}

/// Why each stage stays a launch of its own, in order, when the plan fuses
/// nothing; empty when it fuses something (so that a check of a reason
/// fails).
std::vector<std::string> reasonsAlone(const Planned &P) {
  std::vector<std::string> Why;
  if (P.Plan.Groups.empty())
    for (const UnfusedStage &U : P.Plan.Unfused)
      Why.push_back(U.Why);
  return Why;
}

/// The launcher's relation checks of \p G, as the plan describes them.
std::vector<std::string> relations(const FuseGroup &G) {
  std::vector<std::string> Texts;
  for (const RelationCheck &R : G.RelationChecks)
    Texts.push_back(R.describe());
  return Texts;
}

// A relation names each host argument by its source text in the plan and by
// whatever the printer is told where it is printed: the launcher's
// parameter, whatever the argument's text.
TEST(FusePlan, RelationsNameHostArgumentsWhereTheyArePrinted) {
  HostExpr Half = HostExpr::parens(HostExpr::binary(
      HostExpr::argument("img.width"), "/", HostExpr::constant(2)));
  RelationCheck R{Half, "==", HostExpr::argument("c")};
  EXPECT_EQ(R.describe(), "((img.width) / 2) == c");
  std::map<std::string, std::string> Names = {{"img.width", "img_width"},
                                              {"c", "c_"}};
  EXPECT_EQ(R.print([&](const std::string &Text) { return Names.at(Text); }),
            "(img_width / 2) == c_");
  // Parentheses around an argument alone would be redundant where it is a
  // name; a constant's are kept as built.
  EXPECT_EQ(HostExpr::parens(HostExpr::argument("W")).describe(), "W");
  EXPECT_EQ(HostExpr::binary(HostExpr::constant(2), "*",
                             HostExpr::parens(HostExpr::constant(4)))
                .describe(),
            "2 * (4)");
  EXPECT_EQ(HostExpr::plus(HostExpr::constant(3), -5).describe(), "-2");
  EXPECT_EQ(HostExpr::plus(HostExpr::argument("H"), -1).describe(), "H - 1");
}

/// Stage \p S runs at \p Scale of the warp's tile along axis \p D, over
/// its scaled tile widened by [Lo, Hi) offsets (FuseStage::RegionLo, Hi).
void expectRegion(const FuseStage &S, unsigned D, AxisScale Scale, int64_t Lo,
                  int64_t Hi) {
  EXPECT_EQ(S.Scale[D].Num, Scale.Num) << "axis " << D;
  EXPECT_EQ(S.Scale[D].Den, Scale.Den) << "axis " << D;
  EXPECT_EQ(S.RegionLo[D], Lo) << "axis " << D;
  EXPECT_EQ(S.RegionHi[D], Hi) << "axis " << D;
}

/// The hybrid tiles of \p G for \p T, every clamp bound written "bound".
HybridPlan hybridPlan(const FuseGroup &G, const FuseTile &T) {
  return planHybridTiles(
      G, T,
      [](const FuseStage &, const std::optional<ParamPlusConstant> &)
          -> std::optional<std::string> { return "bound"; });
}

/// blurY into t, then \p Reader from t into out, planned as one group
/// whose tiles keep \p Rows rows of a 32 x 8 tile in registers, split
/// along y.
struct YSplit {
  Planned P;
  HybridPlan H;
  const FuseGroup &group() const { return P.Plan.Groups.front(); }
};

YSplit splitAlongY(const std::string &Reader, unsigned Rows) {
  YSplit S;
  S.P = planBlock("    blurY<<<g, b>>>(in, t, W, H);\n    " + Reader +
                  "<<<g, b>>>(t, out, W, H);\n");
  if (S.P.Why.empty() && S.P.Plan.Groups.size() == 1) {
    FuseTile T{1, 8, 4};
    T.RegisterRows = Rows;
    S.H = hybridPlan(S.group(), T);
  }
  return S;
}

} // namespace

TEST(FusePlan, ClampedReadsWidenTheProducersRegion) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    blurY<<<g, b>>>(t, out, W, H);
)cu");
  ASSERT_TRUE(P.Why.empty()) << P.Why;
  ASSERT_EQ(P.Plan.Groups.size(), 1u);
  const FuseGroup &G = P.Plan.Groups[0];
  ASSERT_EQ(G.Stages.size(), 2u);
  // The consumer reads y - 1 .. y + 1 of t: its producer runs a row further
  // on either side, and no column further.
  expectRegion(G.Stages[0], 1, {1, 1}, -1, 1);
  expectRegion(G.Stages[0], 0, {1, 1}, 0, 0);
  EXPECT_FALSE(G.Stages[0].NeedsOwn);
  ASSERT_EQ(G.Written.size(), 2u);
  EXPECT_EQ(G.Written[0].Name, "t");
  EXPECT_TRUE(G.Written[0].OnChip);
  EXPECT_FALSE(G.Written[0].Global);
  EXPECT_EQ(G.Written[1].Name, "out");
  EXPECT_TRUE(G.Written[1].Global);
  std::vector<std::string> Extents;
  for (const ExtentCheck &C : G.ExtentChecks)
    Extents.push_back(describeExtentCheck(C));
  EXPECT_EQ(Extents,
            (std::vector<std::string>{"extent.x >= (W)", "extent.y >= (H)"}));
  // t is allocated here; in and out are parameters.
  EXPECT_EQ(G.GlobalWrites, (std::vector<std::string>{"out"}));
  EXPECT_EQ(G.OtherBuffers, (std::vector<std::string>{"in"}));
}

TEST(FusePlan, GuardedReadsProvedInsideTheProducersGuard) {
  Planned P = planBlock(R"cu(
    inside<<<g, b>>>(in, t, W, H);
    inside<<<g, b>>>(t, out, W, H);
)cu");
  // The consumer writes 2 <= x < W - 1 and reads x - 2 .. x + 1, which
  // leaves [0, W) but not [2, W - 1): not provably written.
  ASSERT_TRUE(P.Why.empty()) << P.Why;
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_NE(Why[0].find("a read of 'in' along x is not "
                        "provably inside what its producer "
                        "writes"),
            std::string::npos)
      << Why[0];
}

TEST(FusePlan, ReadPastTheLastColumnIsRefused) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    past<<<g, b>>>(t, out, W, H);
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_NE(Why[1].find("along x is not provably inside"), std::string::npos)
      << Why[1];
}

TEST(FusePlan, ALiveIntermediateIsKeptAndStoredByItsOwner) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, live, W, H);
    blurY<<<g, b>>>(live, out, W, H);
)cu");
  ASSERT_EQ(P.Plan.Groups.size(), 1u);
  const FuseGroup &G = P.Plan.Groups[0];
  EXPECT_TRUE(G.Written[0].OnChip);
  EXPECT_TRUE(G.Written[0].Global);
  EXPECT_TRUE(G.Stages[0].NeedsOwn);
  EXPECT_EQ(G.GlobalWrites, (std::vector<std::string>{"live", "out"}));
}

TEST(FusePlan, OtherLayoutsAndLaunchesStartNewGroups) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    strided<<<g, b>>>(t, u, W, H, P);
    blurY<<<g, dim3(32, 4)>>>(u, out, W, H);
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 3u);
  EXPECT_NE(Why[0].find("another layout"), std::string::npos) << Why[0];
  EXPECT_NE(Why[2].find("another block or stream"), std::string::npos)
      << Why[2];
}

// Kernels for the tests of orders and moves: a gather (data-dependent, never
// fused), a point-wise sum of two buffers, and a stage reading a half-width
// plane through a row stride it computes itself.
const char *OrderKernels = R"cu(
__global__ void gather(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[int(in[y * W + x])];
}
__global__ void combine(const float *a, const float *b, float *out, int W,
                        int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = a[y * W + x] - b[y * W + x];
}
__global__ void split(const float *in, float *a, float *b, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  a[y * W + x] = in[clampTo(y - 1, 0, H - 1) * W + x];
  b[y * W + x] = in[clampTo(y + 1, 0, H - 1) * W + x];
}
__global__ void widen(const float *half, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  const int W2 = W / 2;
  out[y * W + x] = half[y * W2 + x / 2];
}
)cu";

/// The stage graph of \p Launches' block, for the order functions.
struct Graphed {
  std::unique_ptr<ASTUnit> AST;
  StageGraph Graph;
};

Graphed graphOf(const std::string &Launches) {
  Graphed G;
  G.AST = parseCuda(std::string(Kernels) + OrderKernels + Prologue + "  {\n" +
                    Launches + "  }\n}\n");
  if (!G.AST)
    return G;
  const FunctionDecl *F = findFunction(*G.AST, "run");
  for (const Stmt *S : cast<CompoundStmt>(F->getBody())->body())
    if (const auto *Block = dyn_cast<CompoundStmt>(S)) {
      G.Graph = buildStageGraph(*Block, *F, G.AST->getASTContext());
      break;
    }
  return G;
}

// Two chains that meet: 0 -> 2 -> 3 and 1 -> 3. By levels, both first
// stages come first; consumers next puts 2 right after 0.
TEST(FusePlan, OrdersKeepEveryEdge) {
  Graphed G = graphOf(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    blurY<<<g, b>>>(in, u, W, H);
    blurY<<<g, b>>>(t, live, W, H);
    combine<<<g, b>>>(u, live, out, W, H);
)cu");
  ASSERT_TRUE(G.AST);
  ASSERT_EQ(G.Graph.Stages.size(), 4u);
  EXPECT_EQ(levelOrder(G.Graph), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(consumersNextOrder(G.Graph), (std::vector<unsigned>{0, 2, 1, 3}));
  // An anti edge (1 overwrites what 0 reads) keeps 1 after 0 in both.
  Graphed Anti = graphOf(R"cu(
    blurY<<<g, b>>>(t, out, W, H);
    blurY<<<g, b>>>(in, t, W, H);
)cu");
  ASSERT_TRUE(Anti.AST);
  EXPECT_EQ(levelOrder(Anti.Graph), (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(consumersNextOrder(Anti.Graph), (std::vector<unsigned>{0, 1}));
}

// A stage left alone joins, at its start, the group that reads what it
// writes, across a launch it is not ordered with; the schedule runs that
// launch first.
TEST(FusePlan, AStageJoinsTheGroupThatReadsItAcrossAnUnrelatedLaunch) {
  const char *Launches = R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    gather<<<g, b>>>(in, u, W, H);
    blurY<<<g, b>>>(t, live, W, H);
    combine<<<g, b>>>(live, u, out, W, H);
)cu";
  Planned P = planBlock(Launches, OrderKernels);
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  std::vector<unsigned> Stages;
  for (const FuseStage &S : P.Plan.Groups[0].Stages)
    Stages.push_back(S.Index);
  EXPECT_EQ(Stages, (std::vector<unsigned>{0, 2, 3}));
  ASSERT_EQ(P.Plan.Schedule.size(), 2u);
  EXPECT_FALSE(P.Plan.Schedule[0].IsGroup);
  EXPECT_EQ(P.Plan.Schedule[0].Index, 1u);
  EXPECT_TRUE(P.Plan.Schedule[1].IsGroup);
  // Where 'gather' reads 't' it must run after the first blur: the blur
  // stays alone.
  Planned Ordered = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    gather<<<g, b>>>(t, u, W, H);
    blurY<<<g, b>>>(t, live, W, H);
    combine<<<g, b>>>(live, u, out, W, H);
)cu",
                              OrderKernels);
  ASSERT_EQ(Ordered.Plan.Groups.size(), 1u) << Ordered.Why;
  EXPECT_EQ(Ordered.Plan.Groups[0].Stages.size(), 2u);
}

// A stage that joins a group has the group planned again from its stages
// as they were planned there: the first blur, inlined while 'combine'
// stored 'u' (read once per point), must keep a tile once the last blur
// joins, since 'combine' is then inlined where that blur reads three rows.
// Every stage is inlined exactly where its buffer is: the flag the first
// plan left used to drop the loop that wrote the buffer's tile.
TEST(FusePlan, AJoinedGroupPlansInliningAfresh) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    combine<<<g, b>>>(t, t, u, W, H);
    gather<<<g, b>>>(in, live, W, H);
    blurY<<<g, b>>>(u, out, W, H);
)cu",
                        OrderKernels);
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  const FuseGroup &G = P.Plan.Groups[0];
  std::vector<unsigned> Stages;
  for (const FuseStage &S : G.Stages)
    Stages.push_back(S.Index);
  ASSERT_EQ(Stages, (std::vector<unsigned>{0, 1, 3}));
  EXPECT_FALSE(G.Stages[0].Inlined);
  EXPECT_TRUE(G.Stages[1].Inlined);
  EXPECT_FALSE(G.Stages[2].Inlined);
  for (const FuseBuffer &B : G.Written)
    EXPECT_EQ(B.Inlined, G.Stages[B.Producer].Inlined) << B.Name;
}

// A row stride the consumer computes from its parameters (W / 2) names the
// producer's rows where it equals the producer's stride: the launcher
// checks that. Two different parameters are still another layout.
TEST(FusePlan, AComputedRowStrideIsCheckedAtRunTime) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, P, H);
    widen<<<g, b>>>(t, out, W, H);
)cu",
                        OrderKernels);
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  EXPECT_TRUE(llvm::is_contained(relations(P.Plan.Groups[0]), "(W / 2) == P"));
}

// A stage with two outputs on chip has a tile of each: the cost model
// counts the bytes of both per point.
TEST(FusePlan, EveryOutputOnChipCountsInTheCostModelsTiles) {
  Planned P = planBlock(R"cu(
    split<<<g, b>>>(in, t, u, W, H);
    blurY<<<g, b>>>(t, live, W, H);
    combine<<<g, b>>>(live, u, out, W, H);
)cu",
                        OrderKernels);
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  std::vector<CostStage> Cost =
      costStagesOf(P.Plan.Groups[0], P.AST->getASTContext());
  EXPECT_EQ(Cost[0].TileElementBytes, 8u);
}

TEST(FusePlan, StagesOfAnotherGridKeepTheirOwnExtentChecks) {
  // The grids differ, but both stages guard x < W and y < H: the launcher
  // checks each launch's extent against its own stage's guards.
  Planned P = planBlock(R"cu(
    blurY<<<g2, b>>>(in, t, W, H);
    blurY<<<g, b>>>(t, out, W, H);
)cu");
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  const FuseGroup &G = P.Plan.Groups[0];
  EXPECT_EQ(G.Grids, (std::vector<std::string>{"g", "g2"}));
  EXPECT_EQ(G.Stages[0].Grid, 1u);
  std::vector<std::string> Extents;
  for (const ExtentCheck &C : G.ExtentChecks)
    Extents.push_back(describeExtentCheck(C));
  EXPECT_EQ(Extents,
            (std::vector<std::string>{"extent.x >= (W)", "extent.y >= (H)",
                                      "extent1.x >= (W)", "extent1.y >= (H)"}));
  EXPECT_TRUE(G.CoverageChecks.empty()); // t is not stored.
}

TEST(FusePlan, ArgumentsWithSideEffectsAreRefused) {
  // The launcher would evaluate H++ once for both launches (and the fallback
  // again).
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H++);
    blurY<<<g, b>>>(t, out, W, H);
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_EQ(Why[0], "argument 4 ('H++') may have side effects");
}

TEST(FusePlan, KernelsInNamespacesAreRefused) {
  // A point function copies the kernel's body next to the host function,
  // where the namespace's names are not visible unqualified.
  Planned P = planBlock(R"cu(
    stages::copy<<<g, b>>>(in, t, W, H);
    blurY<<<g, b>>>(t, out, W, H);
)cu",
                        R"cu(
namespace stages {
__global__ void copy(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x];
}
} // namespace stages
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_EQ(Why[0], "its kernel is declared in a namespace or class");
}

TEST(FusePlan, WritesThePlanCannotSeeAreRefused) {
  // Through a helper's pointer parameter, and through a pointer local: a
  // fused kernel computes points several times, so every write must be one
  // the plan knows about.
  Planned P = planBlock(R"cu(
    viaHelper<<<g, b>>>(in, t, W, H);
    viaLocal<<<g, b>>>(t, u, W, H);
    blurY<<<g, b>>>(u, out, W, H);
)cu",
                        R"cu(
__device__ void put(float *o, int i, float v) { o[i] = v; }
__global__ void viaHelper(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  put(out, y * W + x + 1, in[y * W + x]);
  out[y * W + x] = in[y * W + x];
}
__global__ void viaLocal(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  float *next = out + 1;
  next[y * W + x] = 0.f;
  *next = 1.f;
  out[y * W + x] = in[y * W + x];
}
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 3u);
  EXPECT_EQ(Why[0], "it passes a pointer or reference to 'put'");
  // StageAccess refuses this one first (the store's base is no parameter).
  EXPECT_EQ(Why[1], "a store to memory that is not a parameter");
}

TEST(FusePlan, StoresThroughAPointerLocalAreRefused) {
  Planned P = planBlock(R"cu(
    viaDeref<<<g, b>>>(in, t, W, H);
    blurY<<<g, b>>>(t, out, W, H);
)cu",
                        R"cu(
__global__ void viaDeref(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  float *next = out + y * W + x + 1;
  *next = 0.f;
  out[y * W + x] = in[y * W + x];
}
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_EQ(Why[0], "it declares a pointer or reference ('next')");
}

// The cost model's view of a group (FuseCostInput): regions, the tile of
// the intermediate, the global read's reach and the store.
TEST(FuseCostInput, DescribesRegionsTilesReadsAndStores) {
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    blurY<<<g, b>>>(t, out, W, H);
)cu");
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  std::vector<CostStage> S =
      costStagesOf(P.Plan.Groups[0], P.AST->getASTContext());
  ASSERT_EQ(S.size(), 2u);
  // The first stage is computed a row above and below the tile, keeps
  // 't' on chip and stores nothing; its clamped reads reach rows -1..1.
  EXPECT_EQ(S[0].RegionLo[1], -1);
  EXPECT_EQ(S[0].RegionHi[1], 1);
  EXPECT_EQ(S[0].TileElementBytes, 4u);
  EXPECT_EQ(S[0].GlobalStoreBytes, 0u);
  ASSERT_EQ(S[0].GlobalReads.size(), 1u);
  EXPECT_EQ(S[0].GlobalReads[0].YLo, -1);
  EXPECT_EQ(S[0].GlobalReads[0].YHi, 1);
  EXPECT_EQ(S[0].GlobalReads[0].XLo, 0);
  // The second reads only the tile and stores 'out'.
  EXPECT_TRUE(S[1].GlobalReads.empty());
  EXPECT_EQ(S[1].GlobalStoreBytes, 4u);
  EXPECT_EQ(S[1].TileElementBytes, 0u);
  EXPECT_GT(S[0].WorkPerPoint, 5.0);
}

TEST(FuseCostInput, WorkCountsOperationsAndCalleeBodies) {
  auto AST = parseCuda(R"cu(
__device__ int twice(int v) { return v + v; }
__global__ void k(float *a, int i) { a[i] = a[i + 1] * 2.f + twice(i); }
)cu");
  ASSERT_TRUE(AST);
  const FunctionDecl *K = findFunction(*AST, "k");
  ASSERT_TRUE(K);
  // '=', '+' (index), '*', '+', two subscripts, and twice's '+'.
  EXPECT_DOUBLE_EQ(workOf(K->getBody()), 7.0);
}

// DP-Fusion splits a run of fusable stages where the cost says so; a stage
// left alone stays its launch, with the reason.
TEST(FusePlan, DpFusionSplitsARunWhereTheCostSaysSo) {
  const char *Launches = R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    blurY<<<g, b>>>(t, u, W, H);
    blurY<<<g, b>>>(u, out, W, H);
)cu";
  Planned Whole = planBlock(Launches);
  ASSERT_EQ(Whole.Plan.Groups.size(), 1u) << Whole.Why;
  EXPECT_EQ(Whole.Plan.Groups[0].Stages.size(), 3u);
  // The three together cost 100, any other group its size: the last two
  // fuse (ties go to the longer last group), the first runs alone.
  Planned Split =
      planBlock(Launches, "", [](const FuseGroup &G) -> std::optional<double> {
        return G.Stages.size() == 3 ? 100.0 : double(G.Stages.size());
      });
  ASSERT_EQ(Split.Plan.Groups.size(), 1u) << Split.Why;
  EXPECT_EQ(Split.Plan.Groups[0].Stages.size(), 2u);
  EXPECT_EQ(Split.Plan.Groups[0].Stages[0].Index, 1u);
  ASSERT_EQ(Split.Plan.Unfused.size(), 1u);
  EXPECT_EQ(Split.Plan.Unfused[0].Index, 0u);
  EXPECT_NE(Split.Plan.Unfused[0].Why.find("cost model"), std::string::npos);
  // 'u' now flows between two stages of one group: on chip.
  bool UOnChip = false;
  for (const FuseBuffer &B : Split.Plan.Groups[0].Written)
    UOnChip |= B.Name == "u" && B.OnChip;
  EXPECT_TRUE(UOnChip);
}

TEST(FusePlan, ScaledReadsComposeScalesAndRegions) {
  // down, then down again: the first runs at twice the rows of the second,
  // over 2 * y0 + [-1, 2 * TileH) (rows 2y - 1 .. 2y + 1 of each row y of
  // the second's tile); the launcher checks that each level's last row
  // doubles to a row of the level below, which no compile-time bound says.
  Planned P = planBlock(R"cu(
    down<<<g2, b>>>(in, t, W, H, P);
    down<<<g, b>>>(t, out, W, P, H);
)cu");
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  const FuseGroup &G = P.Plan.Groups[0];
  const FuseStage &First = G.Stages[0];
  expectRegion(First, 1, {2, 1}, -1, 0);
  expectRegion(First, 0, {1, 1}, 0, 0);
  EXPECT_EQ(regionExtent(First, 1, 8), 17);
  EXPECT_EQ(regionExtent(First, 0, 32), 32);
  EXPECT_EQ(scaledOrigin(First, 1, "y0"), "2 * y0");
  EXPECT_EQ(First.Grid, 1u);
  EXPECT_EQ(relations(G), (std::vector<std::string>{"2 * (H - 1) <= P - 1"}));
  EXPECT_TRUE(G.CoverageChecks.empty()); // t is not stored.
  // Read at a scaled coordinate, t's tile cannot go to registers: the cost
  // model counts all of it as shared memory, as the kernel allocates it.
  std::vector<CostStage> Cost = costStagesOf(G, P.AST->getASTContext());
  EXPECT_FALSE(Cost[0].HybridEligible);
}

TEST(FusePlan, UnclampedScaledReadsAreCheckedAgainstTheProducersGuard) {
  // Rows (y + 1) / 2 and y / 2 + 1 of the coarse level, unclamped: at
  // half the scale, over y0 / 2 + [0, TileH / 2 + 1); the launcher checks
  // the last of them against the producer's guard, P rows.
  Planned P = planBlock(R"cu(
    down<<<g2, b>>>(in, t, W, H, P);
    upUnclamped<<<g, b>>>(t, out, W, P, H);
)cu");
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  const FuseGroup &G = P.Plan.Groups[0];
  const FuseStage &Coarse = G.Stages[0];
  expectRegion(Coarse, 1, {1, 2}, 0, 1);
  EXPECT_EQ(regionExtent(Coarse, 1, 8), 5);
  EXPECT_EQ(regionExtent(Coarse, 1, 1), -1); // Half a row is no row.
  EXPECT_EQ(scaledOrigin(Coarse, 1, "y0"), "y0 / 2");
  // At another scale than the warp's tile: shared memory only.
  EXPECT_FALSE(costStagesOf(G, P.AST->getASTContext())[0].HybridEligible);
  EXPECT_EQ(relations(G), (std::vector<std::string>{"((H - 1) + 1) / 2 < P",
                                                    "(H - 1) / 2 + 1 < P"}));
}

TEST(FusePlan, ReadsBelowAnotherArgumentsGuardAreCheckedAtRunTime) {
  // shifted reads x + 1 for x < P of a stage that writes x < W: no bound
  // relates P and W at compile time, so the launcher checks P < W.
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    shifted<<<g, b>>>(t, out, W, H, P);
)cu");
  ASSERT_EQ(P.Plan.Groups.size(), 1u) << P.Why;
  EXPECT_EQ(relations(P.Plan.Groups[0]), (std::vector<std::string>{"P < W"}));
  EXPECT_EQ(P.Plan.Groups[0].Stages[0].RegionHi[0], 1);
  // With the same argument on both sides the compile-time answer stands:
  // x + 1 for x < W is past what the producer writes.
  Planned Same = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    shifted<<<g, b>>>(t, out, W, H, W);
)cu");
  std::vector<std::string> Why = reasonsAlone(Same);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_NE(Why[1].find("not provably inside"), std::string::npos) << Why[1];
}

TEST(FusePlan, LaunchConfigurationsWithSideEffectsAreRefused) {
  // The launcher evaluates each launch's grid once and the fallback again.
  Planned P = planBlock(R"cu(
    blurY<<<g, b>>>(in, t, W, H);
    blurY<<<(g.x++, g), b>>>(t, out, W, H);
)cu");
  std::vector<std::string> Why = reasonsAlone(P);
  ASSERT_EQ(Why.size(), 2u);
  EXPECT_EQ(Why[1],
            "its launch configuration ('(g.x++, g)') may have side effects");
}

TEST(HybridTiles, AlongYTheLastRowsOfEachRegionLiveInRegisters) {
  // blurY reads t at rows y - 1 .. y + 1: t's region is 32 x (8 + 2).
  // Half of the 8 rows in registers.
  YSplit S = splitAlongY("blurY", 4);
  ASSERT_EQ(S.P.Plan.Groups.size(), 1u) << S.P.Why;
  const FuseGroup &G = S.group();
  const HybridPlan &H = S.H;
  EXPECT_EQ(H.Axis, 1u);
  ASSERT_TRUE(H.inRegisters(&G.Written[0])) << llvm::join(H.Kept, "; ");
  const FuseStage &Producer = G.Stages[0], &Reader = G.Stages[1];
  // The register rows follow each region's lower edge: rows 5..8 of t's
  // -1..8, rows 4..7 of the reader's 0..7; one chunk spans 32 columns.
  EXPECT_EQ(H.rowBase(Producer), 5);
  EXPECT_EQ(H.rowBase(Reader), 4);
  EXPECT_EQ(H.rowCount(Producer), 4);
  EXPECT_EQ(H.chunkCount(Producer), 1u);
  EXPECT_EQ(H.columnBase(Producer), 0);
  EXPECT_EQ(H.idleLanes(Producer), 0);
  EXPECT_TRUE(H.splits(G, 0) && H.splits(G, 1));
  // The reader gathers the three rows it reads.
  ASSERT_EQ(H.Sources.at(1).size(), 3u);
  EXPECT_EQ(H.Sources.at(1)[0].lowest(1), -1);
  EXPECT_EQ(H.Sources.at(1)[2].highest(1), 1);

  // Split along x instead: every row of the region, the last chunk.
  FuseTile T{2, 8, 4};
  T.RegisterChunks = 1;
  HybridPlan X = hybridPlan(G, T);
  EXPECT_EQ(X.Axis, 0u);
  EXPECT_EQ(X.rowBase(Producer), -1);
  EXPECT_EQ(X.rowCount(Producer), 10);
  EXPECT_EQ(X.columnBase(Producer), 32);
}

TEST(HybridTiles, AlongYARegionWiderThanTheTileTakesAnotherChunk) {
  // 'inside' reads t at columns x - 2 and x + 1: t's region is 35 columns
  // wide, so a register row takes two chunks, aligned to its right edge
  // (column 33), the first 29 lanes left of the region.
  YSplit S = splitAlongY("inside", 8);
  ASSERT_EQ(S.P.Plan.Groups.size(), 1u) << S.P.Why;
  const FuseGroup &G = S.group();
  const HybridPlan &H = S.H;
  ASSERT_TRUE(H.inRegisters(&G.Written[0])) << llvm::join(H.Kept, "; ");
  const FuseStage &First = G.Stages[0], &Reader = G.Stages[1];
  EXPECT_EQ(H.chunkCount(First), 2u);
  EXPECT_EQ(H.columnBase(First), -31);
  EXPECT_EQ(H.idleLanes(First), 29);
  // The reader's region is the tile: one chunk, no idle lane, all 8 rows.
  EXPECT_EQ(H.chunkCount(Reader), 1u);
  EXPECT_EQ(H.idleLanes(Reader), 0);
  EXPECT_EQ(H.rowBase(Reader), 0);
  EXPECT_EQ(H.rowCount(First), 8);
}
