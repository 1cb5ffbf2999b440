//===- PromotePlanTest.cpp - The promote pass's analysis ------------------===//
//
// planPromotion() on small self-launching chains: how the arguments go from
// link to link, whether the launch condition is known at the start, where
// links publish, and the refusals with their reasons (docs/promote.md).
//
//===----------------------------------------------------------------------===//

#include "rewriters/promote/PromotePlan.h"
#include "analysis/LaunchSites.h"
#include "rewriters/common/SourceLines.h"
#include "test/unit/CudaTestParse.h"

#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

/// The AST stays alive with the plan, whose pointers point into it.
struct Planned {
  std::unique_ptr<ASTUnit> AST;
  PromotePlanResult Result;
  bool Parsed = false;
};

/// Plans \p Kernel of \p Code as PromotePass does: with the file's launch
/// sites and the variant the pragma's clauses name.
Planned plan(llvm::StringRef Code, llvm::StringRef Kernel,
             PromoteVariant Variant = {}) {
  Planned P;
  P.AST = parseCuda(Code);
  if (!P.AST)
    return P;
  const FunctionDecl *F = findFunction(*P.AST, Kernel);
  if (!F) {
    ADD_FAILURE() << "no kernel '" << Kernel.str() << "' in the source";
    return P;
  }
  ASTContext &Ctx = P.AST->getASTContext();
  std::vector<LaunchSite> Launches = findLaunchSites(Ctx);
  P.Result = planPromotion(*F, Variant, Launches, Ctx);
  P.Parsed = true;
  return P;
}

PromoteVariant pool(unsigned N, bool Overlap = false) {
  PromoteVariant V;
  V.Pool = N;
  V.Overlap = Overlap;
  return V;
}

PromoteVariant overlap() { return pool(0, true); }

const PromoteArg *arg(const PromotePlan &Plan, llvm::StringRef Name) {
  for (const PromoteArg &A : Plan.Args)
    if (A.Param->getName() == Name)
      return &A;
  return nullptr;
}

const PromoteBuffer *buffer(const PromotePlan &Plan, llvm::StringRef Name) {
  for (const PromoteBuffer &B : Plan.Buffers)
    if (B.Param->getName() == Name)
      return &B;
  return nullptr;
}

/// Expects a refusal whose reason contains \p Why.
#define EXPECT_REFUSED(P, Why)                                                 \
  do {                                                                         \
    ASSERT_TRUE((P).Parsed);                                                   \
    EXPECT_FALSE((P).Result.Plan.has_value());                                 \
    EXPECT_NE((P).Result.Refused.Reason.find(Why), std::string::npos)          \
        << "refusal: " << (P).Result.Refused.Reason;                           \
  } while (0)

/// Expects a plan (and no refusal).
#define ASSERT_PLANNED(P)                                                      \
  do {                                                                         \
    ASSERT_TRUE((P).Parsed);                                                   \
    ASSERT_TRUE((P).Result.Plan.has_value())                                   \
        << "refused: " << (P).Result.Refused.Reason;                           \
    EXPECT_EQ((P).Result.Refused.Reason, "");                                  \
  } while (0)

/// The compaction chain of test/lit/promote/variants.cu: `in`, `out`,
/// `count` and `n` forwarded, `chunk + 1` stepped, the running offset
/// computed in the body and postponed.
const char *Compact = R"cu(
constexpr int kBlock = 256;
__global__ void compact(const int *__restrict__ in, int *__restrict__ out,
                        int *__restrict__ count, int n, int chunk,
                        int offset) {
  __shared__ int kept[kBlock];
  const int begin = chunk * kBlock;
  const int i = begin + threadIdx.x;
  const int flag = i < n && in[i] % 2 == 0;
  kept[threadIdx.x] = flag;
  __syncthreads();
  int rank = 0, total = 0;
  for (int k = 0; k < kBlock; ++k) {
    rank += k < threadIdx.x ? kept[k] : 0;
    total += kept[k];
  }
#pragma cuda_rewrite overlap_boundary
  const int next = offset + total;
  if (threadIdx.x == 0 && n - begin > kBlock) {
    compact<<<1, kBlock, 0, cudaStreamTailLaunch>>>(in, out, count, n,
                                                     chunk + 1, next);
  }
  if (flag)
    out[offset + rank] = in[i];
  if (threadIdx.x == 0 && n - begin <= kBlock)
    *count = next;
}
void host(const int *in, int *out, int *count, int n) {
  compact<<<1, kBlock>>>(in, out, count, n, 0, 0);
}
)cu";

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

TEST(PromotePlanArgs, CompactionChainForwardsStepsAndPostpones) {
  Planned P = plan(Compact, "compact");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  const ASTContext &Ctx = P.AST->getASTContext();
  ASSERT_EQ(Plan.Args.size(), 6u);
  // One per parameter, in order.
  const char *Names[] = {"in", "out", "count", "n", "chunk", "offset"};
  for (unsigned I = 0; I != 6; ++I)
    EXPECT_EQ(Plan.Args[I].Param->getName(), Names[I]) << I;

  for (const char *Forwarded : {"in", "out", "count", "n"}) {
    EXPECT_EQ(arg(Plan, Forwarded)->Kind, ArgKind::Uniform) << Forwarded;
    EXPECT_EQ(argText(*arg(Plan, Forwarded), Ctx), Forwarded);
  }
  const PromoteArg *Chunk = arg(Plan, "chunk");
  EXPECT_EQ(Chunk->Kind, ArgKind::Stepped);
  EXPECT_EQ(argText(*Chunk, Ctx), "chunk + 1");
  EXPECT_EQ(Chunk->StepSign, '+');
  EXPECT_EQ(stepAmountText(*Chunk, Ctx), "1");
  const PromoteArg *Offset = arg(Plan, "offset");
  EXPECT_EQ(Offset->Kind, ArgKind::Postponed);
  EXPECT_EQ(argText(*Offset, Ctx), "next");
  EXPECT_TRUE(Plan.hasPostponed());
}

TEST(PromotePlanArgs, CompactionChainLaunchPieces) {
  Planned P = plan(Compact, "compact");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  EXPECT_EQ(Plan.Kernel->getName(), "compact");
  ASSERT_NE(Plan.SelfLaunch, nullptr);
  EXPECT_EQ(Plan.SelfLaunch->getDirectCallee()->getName(), "compact");
  ASSERT_NE(Plan.LaunchIf, nullptr);
  // The `if` is statement 9 of the body: after `next`.
  EXPECT_EQ(Plan.Body->body_begin()[9], Plan.LaunchIf);
  EXPECT_EQ(blockText(Plan, P.AST->getASTContext()), "kBlock");
  // The leading declarations the launch needs, `kept` and `begin`, are the
  // prefix (docs/promote.md); `i` reads threadIdx.x through its getter
  // call, which the prefix conservatively stops at.
  EXPECT_EQ(Plan.PrefixEnd, 2u);
  ASSERT_EQ(Plan.HostLaunches.size(), 1u);
  // Without `overlap` the boundary pragma is still located.
  ASSERT_TRUE(Plan.Boundary.has_value());
  EXPECT_EQ(*Plan.Boundary, 8u);
  EXPECT_LT(Plan.BoundaryPragmaBegin, Plan.BoundaryPragmaEnd);
}

TEST(PromotePlanArgs, StepSignAndParenthesizedAmount) {
  Planned P = plan(R"cu(
constexpr int kStep = 3;
__global__ void k(int *out, int a, int b, int c) {
  if (threadIdx.x == 0 && a > 0)
    k<<<1, 32>>>(out, a - 1, b + 2 * 4, c + kStep);
  out[threadIdx.x] = a + b + c;
}
void host(int *out) { k<<<1, 32>>>(out, 10, 0, 0); }
)cu",
                   "k");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  const ASTContext &Ctx = P.AST->getASTContext();
  const PromoteArg *A = arg(Plan, "a");
  EXPECT_EQ(A->Kind, ArgKind::Stepped);
  EXPECT_EQ(A->StepSign, '-');
  EXPECT_EQ(stepAmountText(*A, Ctx), "1");
  const PromoteArg *B = arg(Plan, "b");
  EXPECT_EQ(B->Kind, ArgKind::Stepped);
  EXPECT_EQ(B->StepSign, '+');
  EXPECT_EQ(stepAmountText(*B, Ctx), "(2 * 4)");
  const PromoteArg *C = arg(Plan, "c");
  EXPECT_EQ(C->Kind, ArgKind::Stepped);
  EXPECT_EQ(stepAmountText(*C, Ctx), "kStep");
  EXPECT_FALSE(Plan.hasPostponed());
}

TEST(PromotePlanArgs, NonAffineStartValueIsEarlyForPlainPromote) {
  Planned P = plan(R"cu(
__global__ void doubling(int *out, int stride, int other) {
  if (threadIdx.x == 0 && stride < 1024)
    doubling<<<1, 64>>>(out, stride * 2, stride + other);
  out[stride + threadIdx.x] = stride;
}
void host(int *out) { doubling<<<1, 64>>>(out, 1, 0); }
)cu",
                   "doubling");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  // Computable at the start, but neither p nor p +- constant.
  EXPECT_EQ(arg(Plan, "stride")->Kind, ArgKind::Early);
  EXPECT_EQ(arg(Plan, "other")->Kind, ArgKind::Early);
  EXPECT_FALSE(Plan.hasPostponed());
}

TEST(PromotePlanArgs, AssignedParameterAndItsUsersArePostponed) {
  // `a` is assigned in the body, so forwarding it is not uniform; `b`'s
  // argument uses the postponed `c`, which only the fixed point sees (b
  // comes before c).
  Planned P = plan(R"cu(
__global__ void k(int *out, int a, int b, int c) {
  a += out[0];
  const int here = out[threadIdx.x];
  if (threadIdx.x == 0 && b < 100)
    k<<<1, 32>>>(out, a, b + c, here);
  out[threadIdx.x] = a;
}
void host(int *out) { k<<<1, 32>>>(out, 0, 0, 0); }
)cu",
                   "k");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  EXPECT_EQ(arg(Plan, "out")->Kind, ArgKind::Uniform);
  EXPECT_EQ(arg(Plan, "a")->Kind, ArgKind::Postponed);
  EXPECT_EQ(arg(Plan, "b")->Kind, ArgKind::Postponed);
  EXPECT_EQ(arg(Plan, "c")->Kind, ArgKind::Postponed);
  // The body starts with an assignment: no prefix.
  EXPECT_EQ(Plan.PrefixEnd, 0u);
}

//===----------------------------------------------------------------------===//
// The launch condition
//===----------------------------------------------------------------------===//

TEST(PromotePlanCondition, KnownAtTheStartFromPrefixAndParameters) {
  Planned P = plan(Compact, "compact");
  ASSERT_PLANNED(P);
  EXPECT_EQ(conditionText(*P.Result.Plan, P.AST->getASTContext()),
            "n - begin > kBlock");
  EXPECT_TRUE(P.Result.Plan->EarlyCondition);
}

TEST(PromotePlanCondition, KnownOnlyInTheBodyIsSpeculative) {
  Planned P = plan(R"cu(
__global__ void smooth(int *data, int chunk, int carry) {
  const int i = chunk * 128 + threadIdx.x;
  const int v = data[i] + carry;
  const int more = __syncthreads_or(v != 0);
  if (threadIdx.x == 0 && more)
    smooth<<<1, 128>>>(data, chunk + 1, v);
  data[i] = v / 2;
}
void host(int *data) { smooth<<<1, 128>>>(data, 0, 0); }
)cu",
                   "smooth");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  EXPECT_EQ(conditionText(Plan, P.AST->getASTContext()), "more");
  EXPECT_FALSE(Plan.EarlyCondition);
  EXPECT_EQ(arg(Plan, "carry")->Kind, ArgKind::Postponed);
  EXPECT_EQ(arg(Plan, "chunk")->Kind, ArgKind::Stepped);
}

TEST(PromotePlanCondition, OnlyTheThreadTestIsTrueAndReversedTestCounts) {
  Planned P = plan(R"cu(
__global__ void k(int *out, int chunk) {
  out[threadIdx.x] = chunk;
  if (0 == threadIdx.x)
    k<<<1, 32>>>(out, chunk + 1);
}
void host(int *out) { k<<<1, 32>>>(out, 0); }
)cu",
                   "k");
  ASSERT_PLANNED(P);
  EXPECT_EQ(conditionText(*P.Result.Plan, P.AST->getASTContext()), "true");
  EXPECT_TRUE(P.Result.Plan->EarlyCondition);
}

TEST(PromotePlanCondition, SpeculativeConditionRefusedWithOverlap) {
  Planned P = plan(R"cu(
__global__ void k(const int *__restrict__ in, int *__restrict__ out,
                  int chunk) {
  const int v = in[chunk * 64 + threadIdx.x];
#pragma cuda_rewrite overlap_boundary
  const int total = __syncthreads_count(v > 0);
  if (threadIdx.x == 0 && total > 0)
    k<<<1, 64, 0, cudaStreamTailLaunch>>>(in, out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = v;
}
void host(const int *in, int *out) { k<<<1, 64>>>(in, out, 0); }
)cu",
                   "k", overlap());
  EXPECT_REFUSED(P, "the launch condition 'total > 0' depends on values "
                    "computed in the body");
}

//===----------------------------------------------------------------------===//
// Buffers and where links publish
//===----------------------------------------------------------------------===//

TEST(PromotePlanBuffers, WrittenBuffersMakeLinksPublishAtTheEnd) {
  Planned P = plan(Compact, "compact");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  ASSERT_EQ(Plan.Buffers.size(), 3u); // Pointers only.
  const PromoteBuffer *In = buffer(Plan, "in");
  EXPECT_TRUE(In->Read);
  EXPECT_FALSE(In->Written);
  const PromoteBuffer *Out = buffer(Plan, "out");
  EXPECT_FALSE(Out->Read);
  EXPECT_TRUE(Out->Written);
  const PromoteBuffer *Count = buffer(Plan, "count"); // `*count = next`.
  EXPECT_FALSE(Count->Read);
  EXPECT_TRUE(Count->Written);
  EXPECT_TRUE(Plan.PublishAtEnd);
}

TEST(PromotePlanBuffers, ReadOnlyBuffersPublishWhereTheOriginalLaunched) {
  Planned P = plan(R"cu(
__global__ void k(const int *in, int *unused, int chunk) {
  __shared__ int s[32];
  s[threadIdx.x] = in[chunk * 32 + threadIdx.x];
  if (threadIdx.x == 0 && chunk < 8)
    k<<<1, 32>>>(in, unused, chunk + 1);
}
void host(const int *in, int *p) { k<<<1, 32>>>(in, p, 0); }
)cu",
                   "k");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  EXPECT_TRUE(buffer(Plan, "in")->Read);
  EXPECT_FALSE(buffer(Plan, "in")->Written);
  // Forwarding a pointer to the next link is no use of its memory, so the
  // non-restrict `unused` is no alias concern either.
  EXPECT_FALSE(buffer(Plan, "unused")->Read);
  EXPECT_FALSE(buffer(Plan, "unused")->Written);
  EXPECT_FALSE(Plan.PublishAtEnd);
}

TEST(PromotePlanBuffers, InPlaceAndEscapingBuffersAreWritten) {
  Planned P = plan(R"cu(
__device__ void touch(int *p) { *p = 0; }
__device__ int peek(const int *p) { return *p; }
__global__ void k(int *__restrict__ data, int *__restrict__ handed,
                  const int *__restrict__ seen, int chunk) {
  data[threadIdx.x] += peek(seen);
  touch(handed + chunk);
  if (threadIdx.x == 0 && chunk < 8)
    k<<<1, 32>>>(data, handed, seen, chunk + 1);
}
void host(int *d, int *h, const int *s) { k<<<1, 32>>>(d, h, s, 0); }
)cu",
                   "k");
  ASSERT_PLANNED(P);
  const PromotePlan &Plan = *P.Result.Plan;
  EXPECT_TRUE(buffer(Plan, "data")->Read);
  EXPECT_TRUE(buffer(Plan, "data")->Written);
  // Handed to a function taking a pointer to non-const: read and written.
  EXPECT_TRUE(buffer(Plan, "handed")->Read);
  EXPECT_TRUE(buffer(Plan, "handed")->Written);
  // Handed as a pointer to const: read only.
  EXPECT_TRUE(buffer(Plan, "seen")->Read);
  EXPECT_FALSE(buffer(Plan, "seen")->Written);
  EXPECT_TRUE(Plan.PublishAtEnd);
}

TEST(PromotePlanBuffers, OnlyPointerMayBeWrittenWithoutRestrict) {
  Planned P = plan(R"cu(
__global__ void k(int *out, int chunk) {
  out[chunk * 64 + threadIdx.x] = chunk;
  if (threadIdx.x == 0 && chunk < 8)
    k<<<1, 64>>>(out, chunk + 1);
}
void host(int *out) { k<<<1, 64>>>(out, 0); }
)cu",
                   "k");
  ASSERT_PLANNED(P);
  EXPECT_TRUE(P.Result.Plan->PublishAtEnd);
}

//===----------------------------------------------------------------------===//
// Refusals
//===----------------------------------------------------------------------===//

TEST(PromotePlanRefusal, TwoSelfLaunches) {
  Planned P = plan(R"cu(
__global__ void twice(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    twice<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  if (threadIdx.x == 0 && chunk < 4)
    twice<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 2);
}
void host(int *out) { twice<<<1, 64>>>(out, 0); }
)cu",
                   "twice");
  EXPECT_REFUSED(P, "the kernel launches itself more than once (line 6)");
}

TEST(PromotePlanRefusal, LaunchInsideALoop) {
  Planned P = plan(R"cu(
__global__ void looped(int *out, int chunk) {
  for (int k = 0; k < 1; ++k)
    if (threadIdx.x == 0 && chunk < 8)
      looped<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}
void host(int *out) { looped<<<1, 64>>>(out, 0); }
)cu",
                   "looped");
  EXPECT_REFUSED(P, "the self-launch (line 5) is inside a loop");
}

TEST(PromotePlanRefusal, LaunchNotGuardedByThreadZero) {
  Planned P = plan(R"cu(
__global__ void everyThread(int *out, int chunk) {
  out[chunk * 64 + threadIdx.x] = chunk;
  if (threadIdx.x == 1 && chunk < 8)
    everyThread<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}
void host(int *out) { everyThread<<<1, 64>>>(out, 0); }
)cu",
                   "everyThread");
  EXPECT_REFUSED(P, "is not guarded by a test that selects one thread of the "
                    "block");
}

TEST(PromotePlanRefusal, ALocalNarrowerThan32BitsSelectsNoOneThread) {
  // A char holding threadIdx.x is 0 for thread 256 too.
  Planned P = plan(R"cu(
__global__ void narrow(int *out, int chunk) {
  const char t = threadIdx.x;
  out[chunk * 512 + threadIdx.x] = chunk;
  if (t == 0 && chunk < 8)
    narrow<<<1, 512, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}
void host(int *out) { narrow<<<1, 512>>>(out, 0); }
)cu",
                   "narrow");
  EXPECT_REFUSED(P, "is not guarded by a test that selects one thread of the "
                    "block");
}

TEST(PromotePlan, ThreadZeroThroughALocalOrNestedIfs) {
  // The guard through a local, its conjuncts split over nested ifs: the
  // launch condition is what remains, and the launch is replaced inside
  // the innermost if.
  Planned P = plan(R"cu(
__global__ void nested(int *out, int chunk) {
  int tid = threadIdx.x;
  out[chunk * 64 + tid] = chunk;
  if (tid == 0) {
    if (chunk < 8)
      nested<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  }
}
void host(int *out) { nested<<<1, 64>>>(out, 0); }
)cu",
                   "nested");
  ASSERT_TRUE(P.Result.Plan.has_value()) << P.Result.Refused.Reason;
  const PromotePlan &Plan = *P.Result.Plan;
  ASSERT_EQ(Plan.Conditions.size(), 1u);
  EXPECT_EQ(
      sourceText(P.AST->getASTContext(), Plan.Conditions[0]->getSourceRange()),
      "chunk < 8");
  EXPECT_NE(Plan.LaunchIf, Plan.LaunchParent);
  EXPECT_EQ(Plan.LaunchParent->getThen(), Plan.LaunchStmt);
}

TEST(PromotePlanRefusal, LaunchOutsideAnIf) {
  Planned P = plan(R"cu(
__global__ void bare(int *out, int chunk) {
  out[chunk * 64 + threadIdx.x] = chunk;
  bare<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}
void host(int *out) { bare<<<1, 64>>>(out, 0); }
)cu",
                   "bare");
  EXPECT_REFUSED(P, "is not a statement of an `if (threadIdx.x == 0 && ...)`");
}

TEST(PromotePlanRefusal, HostGridOtherThanOne) {
  Planned P = plan(R"cu(
__global__ void grid2(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    grid2<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}
void host(int *out) {
  grid2<<<2, 64>>>(out, 0);
}
)cu",
                   "grid2");
  EXPECT_REFUSED(P, "the host launch (line 8) does not launch a grid of "
                    "literally 1 block");
}

TEST(PromotePlanRefusal, SelfLaunchGridOtherThanOne) {
  Planned P = plan(R"cu(
__global__ void wide(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    wide<<<4, 64>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}
void host(int *out) { wide<<<1, 64>>>(out, 0); }
)cu",
                   "wide");
  EXPECT_REFUSED(P, "the self-launch (line 4) does not launch a grid of 1 "
                    "block");
}

TEST(PromotePlanRefusal, MismatchedBlockSizes) {
  Planned P = plan(R"cu(
__global__ void blocks(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    blocks<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}
void host(int *out) { blocks<<<1, 128>>>(out, 0); }
)cu",
                   "blocks");
  EXPECT_REFUSED(P, "uses block size '128', the self-launch '64': every link "
                    "must have the same block");
}

TEST(PromotePlanRefusal, BlockDimSelfLaunchAcceptsAnyHostBlock) {
  // The counterpart of MismatchedBlockSizes: `blockDim.x` is the parent's.
  Planned P = plan(R"cu(
__global__ void same(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    same<<<1, blockDim.x, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}
void host(int *out) {
  same<<<1, 128>>>(out, 0);
  same<<<1, 64>>>(out, 0);
}
)cu",
                   "same");
  ASSERT_PLANNED(P);
  EXPECT_EQ(blockText(*P.Result.Plan, P.AST->getASTContext()), "blockDim.x");
  EXPECT_EQ(P.Result.Plan->HostLaunches.size(), 2u);
}

TEST(PromotePlanRefusal, OverlapWithoutBoundary) {
  Planned P = plan(R"cu(
__global__ void noBoundary(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    noBoundary<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}
void host(int *out) { noBoundary<<<1, 64>>>(out, 0); }
)cu",
                   "noBoundary", overlap());
  EXPECT_REFUSED(P, "`overlap` needs `#pragma cuda_rewrite overlap_boundary`");
}

TEST(PromotePlanRefusal, OverlapPrologueWritesAWrittenBuffer) {
  Planned P = plan(R"cu(
__global__ void early(int *out, int chunk) {
  out[chunk * 64 + threadIdx.x] = chunk;
#pragma cuda_rewrite overlap_boundary
  __syncthreads();
  if (threadIdx.x == 0 && chunk < 8)
    early<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}
void host(int *out) { early<<<1, 64>>>(out, 0); }
)cu",
                   "early", overlap());
  EXPECT_REFUSED(P, "the prologue before overlap_boundary (line 3) accesses "
                    "'out', which the links write, before the link knows");
}

TEST(PromotePlanRefusal, OverlapPrologueReadsAnInPlaceBuffer) {
  const char *InPlace = R"cu(
__global__ void inPlace(int *data, int chunk) {
  const int v = data[chunk * 64 + threadIdx.x + 1];
#pragma cuda_rewrite overlap_boundary
  __syncthreads();
  if (threadIdx.x == 0 && chunk < 8)
    inPlace<<<1, 64, 0, cudaStreamTailLaunch>>>(data, chunk + 1);
  data[chunk * 64 + threadIdx.x] = v;
}
void host(int *data) { inPlace<<<1, 64>>>(data, 0); }
)cu";
  Planned PO = plan(InPlace, "inPlace", overlap());
  EXPECT_REFUSED(PO, "accesses 'data', which the links both read and write");
  // Without `overlap` the same chain is promoted, publishing at the end.
  Planned Plain = plan(InPlace, "inPlace");
  ASSERT_PLANNED(Plain);
  EXPECT_TRUE(Plain.Result.Plan->PublishAtEnd);
}

TEST(PromotePlanRefusal, OverlapPrologueUsesAPostponedArgument) {
  Planned P = plan(R"cu(
__global__ void k(const int *__restrict__ in, int *__restrict__ out,
                  int chunk, int offset) {
  const int v = in[offset + threadIdx.x];
#pragma cuda_rewrite overlap_boundary
  const int next = offset + __syncthreads_count(v > 0);
  if (threadIdx.x == 0 && chunk < 8)
    k<<<1, 64>>>(in, out, chunk + 1, next);
  out[offset + threadIdx.x] = v;
}
void host(const int *in, int *out) { k<<<1, 64>>>(in, out, 0, 0); }
)cu",
                   "k", overlap());
  EXPECT_REFUSED(P, "uses 'offset', which the previous link computes");
}

TEST(PromotePlanRefusal, AggregateWithNonSteppedChangingArgument) {
  const char *Doubling = R"cu(
__global__ void doubling(int *out, int stride) {
  if (threadIdx.x == 0 && stride < 1024)
    doubling<<<1, 64, 0, cudaStreamTailLaunch>>>(out, stride * 2);
  out[stride + threadIdx.x] = stride;
}
void host(int *out) { doubling<<<1, 64>>>(out, 1); }
)cu";
  Planned PA = plan(Doubling, "doubling", pool(8));
  EXPECT_REFUSED(PA, "argument 'stride * 2' for parameter 'stride' is not "
                     "the parameter plus or minus a constant");
  // Plain promote computes it at the start instead.
  Planned Plain = plan(Doubling, "doubling");
  ASSERT_PLANNED(Plain);
  EXPECT_EQ(arg(*Plain.Result.Plan, "stride")->Kind, ArgKind::Early);
}

TEST(PromotePlanRefusal, AggregateWithBlockIdx) {
  Planned P = plan(R"cu(
__global__ void k(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    k<<<1, 64>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x + blockIdx.x] = chunk;
}
void host(int *out) { k<<<1, 64>>>(out, 0); }
)cu",
                   "k", pool(8));
  EXPECT_REFUSED(P, "the body reads blockIdx or gridDim");
}

TEST(PromotePlanRefusal, WrittenPointerWithoutRestrict) {
  const char *Aliased = R"cu(
__global__ void aliased(const int *in, int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    aliased<<<1, 64, 0, cudaStreamTailLaunch>>>(in, out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = in[chunk * 64 + threadIdx.x];
}
void host(const int *in, int *out) { aliased<<<1, 64>>>(in, out, 0); }
)cu";
  Planned P = plan(Aliased, "aliased");
  EXPECT_REFUSED(P, "'out' is written and may alias another pointer "
                    "parameter; mark the pointers __restrict__");
  // Only the written pointer needs __restrict__.
  std::string Restricted = Aliased;
  Restricted.replace(Restricted.find("int *out"), 8, "int *__restrict__ out");
  Planned Q = plan(Restricted, "aliased");
  ASSERT_PLANNED(Q);
  EXPECT_TRUE(Q.Result.Plan->PublishAtEnd);
}

TEST(PromotePlanRefusal, ReturnBeforeTheLaunch) {
  Planned P = plan(R"cu(
__global__ void early(int *out, int chunk, int offset) {
  if (offset < 0)
    return;
  if (threadIdx.x == 0 && chunk < 8)
    early<<<1, 64>>>(out, chunk + 1, offset + out[0]);
  out[chunk * 64 + threadIdx.x] = offset;
}
void host(int *out) { early<<<1, 64>>>(out, 0, 0); }
)cu",
                   "early");
  EXPECT_REFUSED(P, "a return before the self-launch (line 3)");
}

TEST(PromotePlanRefusal, ReturnInALambdaIsNoReturnFromTheKernel) {
  // The selection samples flag elements with a lambda (samples/common/
  // chain.cuh, selectChunk): its return leaves the lambda, not the link.
  Planned P = plan(R"cu(
__global__ void lambda(int *out, int chunk, int offset) {
  auto twice = [](int v) { return 2 * v; };
  const int here = twice(chunk);
  if (threadIdx.x == 0 && chunk < 8)
    lambda<<<1, 64>>>(out, chunk + 1, offset + here);
  out[chunk * 64 + threadIdx.x] = offset;
}
void host(int *out) { lambda<<<1, 64>>>(out, 0, 0); }
)cu",
                   "lambda");
  ASSERT_PLANNED(P);
}

TEST(PromotePlanRefusal, NoHostLaunch) {
  Planned P = plan(R"cu(
__global__ void deviceOnly(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    deviceOnly<<<1, 64>>>(out, chunk + 1);
}
)cu",
                   "deviceOnly");
  EXPECT_REFUSED(P, "no host launch of 'deviceOnly' in this file");
}

//===----------------------------------------------------------------------===//
// Variants
//===----------------------------------------------------------------------===//

TEST(PromotePlanVariant, NameFromTheClauses) {
  EXPECT_EQ(PromoteVariant().name(), "P");
  EXPECT_EQ(pool(1).name(), "PA");
  EXPECT_EQ(pool(128).name(), "PA");
  EXPECT_EQ(overlap().name(), "PO");
  EXPECT_EQ(pool(128, true).name(), "PAO");
}

TEST(PromotePlanVariant, CompactionChainPlansInEveryVariant) {
  struct {
    PromoteVariant Variant;
    const char *Name;
  } Cases[] = {{PromoteVariant(), "P"},
               {pool(4), "PA"},
               {overlap(), "PO"},
               {pool(128, true), "PAO"}};
  for (const auto &C : Cases) {
    SCOPED_TRACE(C.Name);
    Planned P = plan(Compact, "compact", C.Variant);
    ASSERT_PLANNED(P);
    const PromotePlan &Plan = *P.Result.Plan;
    EXPECT_EQ(Plan.Variant.name(), C.Name);
    EXPECT_EQ(Plan.Variant.Pool, C.Variant.Pool);
    EXPECT_EQ(Plan.Variant.Overlap, C.Variant.Overlap);
    // The wait goes at the statement after the boundary pragma.
    ASSERT_TRUE(Plan.Boundary.has_value());
    EXPECT_EQ(*Plan.Boundary, 8u);
  }
}

TEST(PromotePlanVariant, BoundaryMovesPastThePrefix) {
  // The boundary pragma sits among the leading declarations the hoisted
  // launch needs: the wait goes after them.
  Planned P = plan(R"cu(
__global__ void k(const int *__restrict__ in, int *__restrict__ out,
                  int chunk) {
  const int begin = chunk * 64;
#pragma cuda_rewrite overlap_boundary
  const int end = begin + 64;
  out[begin + threadIdx.x] = in[end - 1 - threadIdx.x];
  if (threadIdx.x == 0 && end < 1024)
    k<<<1, 64>>>(in, out, chunk + 1);
}
void host(const int *in, int *out) { k<<<1, 64>>>(in, out, 0); }
)cu",
                   "k", overlap());
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.Result.Plan->PrefixEnd, 2u);
  ASSERT_TRUE(P.Result.Plan->Boundary.has_value());
  EXPECT_EQ(*P.Result.Plan->Boundary, 2u);
}

} // namespace
