#include "analysis/StageGraph.h"
#include "analysis/StageAccess.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const char *Kernels = R"cu(
__global__ void copy(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x]; }
__global__ void sum(const float *a, const float *b, float *out) {
  out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}
__global__ void scale(float *io) { io[threadIdx.x] *= 2; }
__global__ void opaque(const float *in, float *out);
)cu";

/// The graph of the first { } block in the body of `run`, described, with
/// its edges as "from->to buffer kind" and its problems.
struct Described {
  std::string Summary;
  std::vector<std::string> Edges, Problems, Live;
};

Described graphOf(const std::string &Host) {
  Described D;
  auto AST = parseCuda(std::string(Kernels) + Host);
  if (!AST)
    return D;
  const FunctionDecl *Run = findFunction(*AST, "run");
  if (!Run)
    return D;
  const CompoundStmt *Block = nullptr;
  for (const Stmt *S : cast<CompoundStmt>(Run->getBody())->body())
    if ((Block = dyn_cast<CompoundStmt>(S)))
      break;
  if (!Block)
    return D;
  StageGraph G = buildStageGraph(*Block, *Run, AST->getASTContext());
  D.Summary = describeStageGraph(G);
  static const char *const Kind[] = {"flow", "anti", "output"};
  for (const StageGraph::Edge &E : G.Edges)
    D.Edges.push_back(std::to_string(E.From) + "->" + std::to_string(E.To) +
                      " " + E.Buffer->getNameAsString() + " " +
                      Kind[int(E.Kind)]);
  D.Problems = G.Problems;
  for (const StageGraph::Buffer &B : G.Buffers)
    if (B.LiveAfter)
      D.Live.push_back(B.Decl->getNameAsString() + ": " + B.WhyLive);
  return D;
}

using Strings = std::vector<std::string>;

} // namespace

TEST(StageGraph, DiamondIsOneComponent) {
  // Harris's shape: two stages read the input, a third both results.
  Described D = graphOf(R"cu(
void run(const float *in, float *out) {
  float *gx = nullptr, *gy = nullptr;
  cudaMalloc((void **)&gx, 128);
  cudaMalloc((void **)&gy, 128);
  {
    copy<<<1, 32>>>(in, gx);
    copy<<<1, 32>>>(in, gy);
    sum<<<1, 32>>>(gx, gy, out);
  }
})cu");
  EXPECT_EQ(D.Summary, "3 stages, 2 edges, 1 component; inputs 'in'; "
                       "intermediates 'gx', 'gy'; outputs 'out' (live after)");
  EXPECT_EQ(D.Edges, (Strings{"0->2 gx flow", "1->2 gy flow"}));
  EXPECT_TRUE(D.Problems.empty());
  EXPECT_EQ(D.Live, (Strings{"in: a parameter: the caller may read it",
                             "out: a parameter: the caller may read it"}));
}

TEST(StageGraph, FlowEdgeComesFromTheLatestWriter) {
  Described D = graphOf(R"cu(
void run(const float *in, float *out) {
  float *t;
  cudaMalloc((void **)&t, 128);
  {
    copy<<<1, 32>>>(in, t);
    scale<<<1, 32>>>(t);
    copy<<<1, 32>>>(t, out);
  }
})cu");
  // scale reads and writes t: flow from 0, output after 0; the last copy
  // reads scale's t, not the first copy's.
  EXPECT_EQ(D.Edges, (Strings{"0->1 t flow", "0->1 t output", "1->2 t flow"}));
  EXPECT_EQ(D.Summary, "3 stages, 3 edges, 1 component; inputs 'in'; "
                       "intermediates 't'; outputs 'out' (live after)");
}

TEST(StageGraph, OverwritingWhatAnEarlierStageReadIsAnAntiEdge) {
  Described D = graphOf(R"cu(
void run(float *a, float *b, float *c) {
  {
    copy<<<1, 32>>>(a, b);
    copy<<<1, 32>>>(c, a);
  }
})cu");
  EXPECT_EQ(D.Edges, (Strings{"0->1 a anti"}));
  EXPECT_EQ(D.Summary, "2 stages, 1 edge, 1 component; inputs 'c'; "
                       "intermediates none; outputs 'a' (live after), 'b' "
                       "(live after)");
}

TEST(StageGraph, IndependentPipelinesAreComponents) {
  Described D = graphOf(R"cu(
void run(const float *x, const float *y, float *p, float *q) {
  float *s, *t;
  {
    copy<<<1, 32>>>(x, s);
    copy<<<1, 32>>>(y, t);
    copy<<<1, 32>>>(s, p);
    copy<<<1, 32>>>(t, q);
  }
})cu");
  EXPECT_EQ(D.Edges, (Strings{"0->2 s flow", "1->3 t flow"}));
  EXPECT_NE(D.Summary.find("4 stages, 2 edges, 2 components"),
            std::string::npos)
      << D.Summary;
}

TEST(StageGraph, LocalsAreDeadOnlyIfAllocatedHereAndOnlyFreedAfter) {
  Described D = graphOf(R"cu(
void run(const float *in, float *out) {
  float *t = nullptr, *u = nullptr, *v = out, *w;
  cudaMalloc((void **)&t, 128);
  cudaMallocAsync((void **)&u, 128, 0);
  {
    copy<<<1, 32>>>(in, t);
    copy<<<1, 32>>>(t, u);
    copy<<<1, 32>>>(u, v);
    copy<<<1, 32>>>(v, w);
  }
  cudaFree(t);
  cudaFreeAsync(u, 0);
  float *keep = w;
})cu");
  EXPECT_EQ(
      D.Live,
      (Strings{"in: a parameter: the caller may read it",
               "v: a local that may point to memory other code reads (only "
               "one the function allocates itself, with cudaMalloc or "
               "cudaMallocAsync, and frees or drops is known dead)",
               "w: named after the launches, at line 21"}));
}

TEST(StageGraph, AnAllocatedLocalNamedAfterTheBlockIsLive) {
  Described D = graphOf(R"cu(
void use(float *);
void run(const float *in, float *out) {
  float *t = nullptr;
  cudaMalloc((void **)&t, 128);
  {
    copy<<<1, 32>>>(in, t);
    copy<<<1, 32>>>(t, out);
  }
  use(t);
})cu");
  EXPECT_EQ(D.Live, (Strings{"in: a parameter: the caller may read it",
                             "t: named after the launches, at line 17",
                             "out: a parameter: the caller may read it"}));
}

TEST(StageGraph, MembersAreLive) {
  Described D = graphOf(R"cu(
struct Buffers { float *In, *Tmp, *Out; };
void run(Buffers B) {
  {
    copy<<<1, 32>>>(B.In, B.Tmp);
    copy<<<1, 32>>>(B.Tmp, B.Out);
  }
})cu");
  EXPECT_EQ(D.Edges, (Strings{"0->1 Tmp flow"}));
  EXPECT_EQ(D.Summary, "2 stages, 1 edge, 1 component; inputs 'In'; "
                       "intermediates 'Tmp' (live after); outputs 'Out' (live "
                       "after)");
}

TEST(StageGraph, ProblemsSayWhereAndWhat) {
  Described D = graphOf(R"cu(
void run(const float *in, float *out, int n) {
  float *t;
  {
    copy<<<1, 32>>>(in, t);
    cudaMemset(t, 0, 4);
    for (int i = 0; i < n; ++i)
      scale<<<1, 32>>>(t);
    opaque<<<1, 32>>>(t, out);
  }
})cu");
  EXPECT_EQ(D.Problems,
            (Strings{"line 13: a host statement between the launches calls "
                     "'cudaMemset', which may touch the launches' memory",
                     "line 14: a launch inside a compound statement (a loop "
                     "or a branch), not a straight-line stage",
                     "line 16: the body of 'opaque' is not visible"}));
  // The opaque kernel may read and write everything it is passed.
  EXPECT_EQ(D.Edges, (Strings{"0->1 t flow", "0->1 t output"}));
}

TEST(StageGraph, StatementsAroundTheLaunchesAreNoPartAndBetweenThemMayMove) {
  Described D = graphOf(R"cu(
void run(const float *in, float *out, float *h) {
  {
    float *t;
    cudaMalloc(&t, 128);
    copy<<<1, 32>>>(in, t);
    cudaDeviceSynchronize();
    copy<<<1, 32>>>(t, out);
    cudaMemcpy(h, out, 128, cudaMemcpyDeviceToHost);
    cudaFree(t);
  }
})cu");
  EXPECT_TRUE(D.Problems.empty());
  EXPECT_EQ(D.Summary, "2 stages, 1 edge, 1 component; inputs 'in'; "
                       "intermediates 't'; outputs 'out' (live after)");
}

TEST(StageGraph, FlowEdgesCarryTheConsumersReads) {
  auto AST = parseCuda(R"cu(
__global__ void square(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = in[y * W + x] * in[y * W + x];
}
__global__ void sum3(const float *a, const float *b, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y >= H || x >= W - 1)
    return;
  out[y * W + x] = a[y * W + x - 1] + a[y * W + x + 1] + b[2 * y * W + x];
}
void run(const float *in, float *out, int W, int H) {
  float *sq;
  {
    square<<<1, 32>>>(in, sq, W, H);
    sum3<<<1, 32>>>(sq, in, out, W, H);
  }
})cu");
  ASSERT_TRUE(AST);
  const FunctionDecl *Run = findFunction(*AST, "run");
  const CompoundStmt *Block = nullptr;
  for (const Stmt *S : cast<CompoundStmt>(Run->getBody())->body())
    if ((Block = dyn_cast<CompoundStmt>(S)))
      break;
  ASSERT_TRUE(Block);
  StageGraph G = buildStageGraph(*Block, *Run, AST->getASTContext());
  ASSERT_EQ(G.Edges.size(), 1u);
  std::optional<std::vector<StageRead>> Reads = readsAlong(G, G.Edges[0]);
  ASSERT_TRUE(Reads);
  std::vector<std::string> Described;
  for (const StageRead &R : *Reads)
    Described.push_back(describeStageRead(R));
  // sum3's reads of 'sq' (its parameter 'a'), not of 'in' ('b').
  EXPECT_EQ(Described, (Strings{"a[x - 1, y]", "a[x + 1, y]"}));
}
