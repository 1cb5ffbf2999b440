//===- PipelinePlanTest.cpp - The pipeline pass's analysis ----------------===//
//
// planPipeline() on small pipelines, with the pragmas and candidates the tool
// itself collects: which stages the entry reaches and in which order, their
// group sizes, items and ranks, the calls that hand items on (serial rank
// loops included), cycles, the clauses, and every refusal with its reason
// (docs/pipeline.md, "What the input looks like").
//
//===----------------------------------------------------------------------===//

#include "rewriters/pipeline/PipelinePlan.h"
#include "analysis/Candidates.h"
#include "analysis/CudaArchRegions.h"
#include "analysis/Pragmas.h"
#include "rewriters/PassManager.h"
#include "rewriters/pipeline/PipelinePass.h"
#include "test/unit/CudaTestParse.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

#include "gtest/gtest.h"
#include <functional>

using namespace clang;
using namespace cuda_rewrite;

namespace {

/// What the plan says, as values that outlive the AST.
struct StageSummary {
  std::string Name;
  unsigned GroupSize = 0;
  std::string Item;     ///< The item parameter's name.
  std::string Rank;     ///< The rank parameter's name; empty if none.
  std::string ItemType; ///< PipelineStage::ItemType.
  bool UsesWarpIntrinsics = false;
};

struct CallSummary {
  int Caller = -2;
  unsigned Callee = ~0u;
  bool SerialRanks = false;
  std::string Text; ///< The call as written.
};

struct Planned {
  /// The source parsed, its pragmas attached and the entry candidate found.
  bool Ran = false;
  bool Accepted = false;
  std::string Refusal;
  std::string Entry, Host, Launch, Model, ConfigFile;
  bool HasCycles = false;
  std::vector<StageSummary> Stages;
  std::vector<CallSummary> Calls;

  std::vector<std::string> stageNames() const {
    std::vector<std::string> Names;
    for (const StageSummary &S : Stages)
      Names.push_back(S.Name);
    return Names;
  }
  const StageSummary *stage(llvm::StringRef Name) const {
    for (const StageSummary &S : Stages)
      if (S.Name == Name)
        return &S;
    return nullptr;
  }
  /// Calls as "caller->callee" with "entry" for -1.
  std::vector<std::string> edges() const {
    std::vector<std::string> Edges;
    for (const CallSummary &C : Calls)
      Edges.push_back(
          (C.Caller < 0 ? std::string("entry") : Stages[C.Caller].Name) + "->" +
          Stages[C.Callee].Name);
    return Edges;
  }
};

std::string text(const ASTContext &Ctx, SourceRange R) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(R),
                              Ctx.getSourceManager(), Ctx.getLangOpts())
      .str();
}

Planned summarize(const PipelinePlanResult &R, const ASTContext &Ctx) {
  Planned P;
  P.Ran = true;
  P.Refusal = R.Refused.Reason;
  if (!R.Plan)
    return P;
  const PipelinePlan &Plan = *R.Plan;
  P.Accepted = true;
  P.Entry = Plan.Entry ? Plan.name() : "";
  P.Host = Plan.HostFunction ? Plan.HostFunction->getNameAsString() : "";
  P.Launch = Plan.Launch ? text(Ctx, Plan.Launch->getSourceRange()) : "";
  P.Model = Plan.Model;
  P.ConfigFile = Plan.ConfigFile;
  P.HasCycles = Plan.hasCycles();
  for (const PipelineStage &S : Plan.Stages)
    P.Stages.push_back({S.name(), S.GroupSize,
                        S.Item ? S.Item->getNameAsString() : "",
                        S.Rank ? S.Rank->getNameAsString() : "", S.ItemType,
                        S.UsesWarpIntrinsics});
  for (const StageCall &C : Plan.Calls)
    P.Calls.push_back({C.Caller, C.Callee, C.SerialRanks,
                       C.Call ? text(Ctx, C.Call->getSourceRange()) : ""});
  return P;
}

/// Called with the parsed file and the candidates the tool would collect.
using AnalysisFn =
    std::function<void(ASTContext &, const std::vector<Candidate> &)>;

/// Parses \p Code as the tool does (host side, pragma handler installed),
/// attaches its pragmas and collects its candidates, then calls \p Fn while
/// the AST is alive. Fails the test on a parse or pragma error.
void analyze(llvm::StringRef Code, AnalysisFn Fn) {
  test::parseCudaWithPragmas(
      Code, [&](ASTContext &Ctx, const std::vector<AttachedPragma> &Attached) {
        if (Ctx.getDiagnostics().hasErrorOccurred()) {
          ADD_FAILURE() << "the test's CUDA source did not parse, or one of "
                           "its pragmas was refused";
          return;
        }
        CudaArchRegions Regions;
        Fn(Ctx, collectCandidates(Ctx, Attached, Regions));
      });
}

const FunctionDecl *functionNamed(ASTContext &Ctx, llvm::StringRef Name) {
  struct Finder : RecursiveASTVisitor<Finder> {
    llvm::StringRef Name;
    const FunctionDecl *Found = nullptr;
    bool VisitFunctionDecl(FunctionDecl *F) {
      if (F->getIdentifier() && F->getName() == Name &&
          F->doesThisDeclarationHaveABody())
        Found = F;
      return !Found;
    }
  } Finder;
  Finder.Name = Name;
  Finder.TraverseAST(Ctx);
  return Finder.Found;
}

/// The group sizes PipelinePass builds: each `stage` candidate's threads(n),
/// 1 without the clause.
StageGroupSizes groupSizes(const std::vector<Candidate> &Candidates) {
  StageGroupSizes Sizes;
  for (const Candidate &C : Candidates) {
    if (C.Kind != &PipelinePass::PipelineStage)
      continue;
    unsigned Threads = 1;
    if (const PragmaClause *T = C.Annotation->clause("threads"))
      llvm::StringRef(T->Args.front()).getAsInteger(10, Threads);
    Sizes[C.Function->getCanonicalDecl()] = Threads;
  }
  return Sizes;
}

/// Functions to treat as stages though no pragma marks them (the pragma
/// itself would refuse them), with their group sizes.
using ExtraStages = std::vector<std::pair<std::string, unsigned>>;

/// Plans the first `pipeline` launch of \p Code as PipelinePass does.
Planned plan(llvm::StringRef Code, const ExtraStages &Extra = {}) {
  Planned P;
  analyze(Code, [&](ASTContext &Ctx, const std::vector<Candidate> &Cands) {
    StageGroupSizes Sizes = groupSizes(Cands);
    for (const auto &[Name, Threads] : Extra) {
      const FunctionDecl *F = functionNamed(Ctx, Name);
      if (!F) {
        ADD_FAILURE() << "no function '" << Name << "' in the source";
        return;
      }
      Sizes[F->getCanonicalDecl()] = Threads;
    }
    for (const Candidate &C : Cands)
      if (C.Kind == &PipelinePass::PipelineEntry) {
        P = summarize(planPipeline(C, Sizes, Ctx), Ctx);
        return;
      }
    ADD_FAILURE() << "no pipeline entry candidate in the source";
  });
  return P;
}

/// Expects a refusal whose reason contains \p Why.
#define EXPECT_REFUSED(P, Why)                                                 \
  do {                                                                         \
    ASSERT_TRUE((P).Ran);                                                      \
    EXPECT_FALSE((P).Accepted) << "accepted, stages: " << (P).Stages.size();   \
    EXPECT_NE((P).Refusal.find(Why), std::string::npos)                        \
        << "refusal: " << (P).Refusal;                                         \
  } while (0)

/// Expects a plan (and no refusal).
#define ASSERT_PLANNED(P)                                                      \
  do {                                                                         \
    ASSERT_TRUE((P).Ran);                                                      \
    ASSERT_TRUE((P).Accepted) << "refused: " << (P).Refusal;                   \
    EXPECT_EQ((P).Refusal, "");                                                \
  } while (0)

using Names = std::vector<std::string>;

/// The common head of the sources below: an item type and an output.
const char *Prelude = R"cu(
struct Item {
  int index;
};
__device__ int *out;
)cu";

std::string withPrelude(llvm::StringRef Body) {
  return std::string(Prelude) + Body.str();
}

/// A source whose one stage, \p Stage under \p Pragma, is called by the
/// entry with \p Call; \p Before (helpers) goes above the pragma.
std::string oneStage(llvm::StringRef Pragma, llvm::StringRef Stage,
                     llvm::StringRef Call = "bad(Item{0});",
                     llvm::StringRef Before = "") {
  return withPrelude((Before + "\n" + Pragma + "\n" + Stage +
                      "\n__global__ void entry() { " + Call +
                      " }\n"
                      "void host() {\n"
                      "#pragma cuda_rewrite pipeline\n"
                      "  entry<<<1, 32>>>();\n"
                      "}\n")
                         .str());
}

//===----------------------------------------------------------------------===//
// Stages, their order and their signatures
//===----------------------------------------------------------------------===//

TEST(PipelinePlan, StagesAreInBreadthFirstOrderFromTheEntry) {
  // Defined in the reverse of the order the pipeline reaches them.
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void d(Item it) { out[it.index] = 4; }
#pragma cuda_rewrite stage
__device__ void c(Item it) { out[it.index] = 3; }
#pragma cuda_rewrite stage
__device__ void b(Item it) { d(it); }
#pragma cuda_rewrite stage
__device__ void a(Item it) { c(it); d(it); }
#pragma cuda_rewrite stage
__device__ void unreached(Item it) { out[it.index] = 9; }
__global__ void entry() {
  a(Item{0});
  b(Item{1});
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  // a and b from the entry, then a's callees c and d; b's d is no new stage.
  EXPECT_EQ(P.stageNames(), (Names{"a", "b", "c", "d"}));
  EXPECT_EQ(P.edges(), (Names{"entry->a", "entry->b", "a->c", "a->d", "b->d"}));
  EXPECT_EQ(P.Entry, "entry");
  EXPECT_EQ(P.Host, "host");
  EXPECT_EQ(P.Launch, "entry<<<1, 32>>>()");
  EXPECT_FALSE(P.HasCycles);
}

TEST(PipelinePlan, GroupSizesAndRankParameters) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage threads(4)
__device__ void quad(Item it, int part) { out[it.index + part] = 4; }
#pragma cuda_rewrite stage threads(32)
__device__ void warp(Item job, int lane) {
  if (lane == 0)
    quad(job, 0);
}
__global__ void entry() { warp(Item{1}, threadIdx.x % 32); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  // `warp` calls `quad` with 32 threads but threads(4): refused, which says
  // the group sizes were read.
  EXPECT_REFUSED(P, "the call of stage 'quad' comes from 'warp', whose "
                    "groups are not threads(4)");

  Planned Q = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage threads(4)
__device__ void quad(Item it, int part) { out[it.index + part] = 4; }
#pragma cuda_rewrite stage threads(32)
__device__ void warp(Item job, int lane) { out[job.index + lane] = 32; }
#pragma cuda_rewrite stage
__device__ void single(Item one) { out[one.index] = 1; }
__global__ void entry() {
  single(Item{0});
  quad(Item{1}, threadIdx.x % 4);
  warp(Item{2}, threadIdx.x % 32);
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  ASSERT_PLANNED(Q);
  ASSERT_EQ(Q.stageNames(), (Names{"single", "quad", "warp"}));
  EXPECT_EQ(Q.Stages[0].GroupSize, 1u);
  EXPECT_EQ(Q.Stages[0].Item, "one");
  EXPECT_EQ(Q.Stages[0].Rank, "");
  EXPECT_EQ(Q.Stages[1].GroupSize, 4u);
  EXPECT_EQ(Q.Stages[1].Item, "it");
  EXPECT_EQ(Q.Stages[1].Rank, "part");
  EXPECT_EQ(Q.Stages[2].GroupSize, 32u);
  EXPECT_EQ(Q.Stages[2].Item, "job");
  EXPECT_EQ(Q.Stages[2].Rank, "lane");
  EXPECT_EQ(Q.edges(), (Names{"entry->single", "entry->quad", "entry->warp"}));
}

TEST(PipelinePlan, AWideStageCallsStagesOfItsWidthAndThreadsOneStages) {
  // Every thread of a threads(32) group calls the threads(32) callee: fine;
  // a threads(32) stage calling a threads(1) stage pushes once per thread.
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void narrow(Item it) { out[it.index] = 1; }
#pragma cuda_rewrite stage threads(32)
__device__ void next(Item it, int rank) { narrow(it); }
#pragma cuda_rewrite stage threads(32)
__device__ void wide(Item it, int rank) { next(it, rank); }
__global__ void entry() { wide(Item{0}, threadIdx.x % 32); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.edges(), (Names{"entry->wide", "wide->next", "next->narrow"}));
  for (const CallSummary &C : P.Calls)
    EXPECT_FALSE(C.SerialRanks) << C.Text;
}

TEST(PipelinePlan, ItemTypesAreFullyQualified) {
  Planned P = plan(R"cu(
__device__ int *out;
struct Plain {
  int index;
};
namespace geo {
struct Box {
  float lo, hi;
};
namespace deep {
struct Cell {
  int x, y;
};
} // namespace deep
} // namespace geo
enum Color { Red, Green };
#pragma cuda_rewrite stage
__device__ void byInt(int i) { out[i] = 1; }
#pragma cuda_rewrite stage
__device__ void byPlain(Plain p) { out[p.index] = 2; }
#pragma cuda_rewrite stage
__device__ void byBox(geo::Box b) { out[0] = int(b.lo); }
#pragma cuda_rewrite stage
__device__ void byCell(const geo::deep::Cell c) { out[c.x] = c.y; }
#pragma cuda_rewrite stage
__device__ void byPointer(float *p) { *p = 0; }
#pragma cuda_rewrite stage
__device__ void byEnum(Color c) { out[0] = c; }
__global__ void entry(float *f) {
  byInt(0);
  byPlain(Plain{1});
  byBox(geo::Box{0, 1});
  byCell(geo::deep::Cell{1, 2});
  byPointer(f);
  byEnum(Green);
}
void host(float *f) {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>(f);
}
)cu");
  ASSERT_PLANNED(P);
  ASSERT_EQ(P.Stages.size(), 6u);
  EXPECT_EQ(P.stage("byInt")->ItemType, "int");
  EXPECT_EQ(P.stage("byPlain")->ItemType, "Plain");
  EXPECT_EQ(P.stage("byBox")->ItemType, "geo::Box");
  // Qualifiers of the parameter are no part of the queued item's type.
  EXPECT_EQ(P.stage("byCell")->ItemType, "geo::deep::Cell");
  EXPECT_EQ(P.stage("byPointer")->ItemType, "float *");
  EXPECT_EQ(P.stage("byEnum")->ItemType, "Color");
}

TEST(PipelinePlan, ItemTypeWrittenWithAUsingDirectiveIsStillQualified) {
  Planned P = plan(R"cu(
__device__ int *out;
namespace geo {
struct Box {
  int lo;
};
} // namespace geo
using namespace geo;
#pragma cuda_rewrite stage
__device__ void byBox(Box b) { out[0] = b.lo; }
__global__ void entry() { byBox(Box{1}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu");
  ASSERT_PLANNED(P);
  ASSERT_EQ(P.Stages.size(), 1u);
  EXPECT_EQ(P.Stages[0].ItemType, "geo::Box");
}

//===----------------------------------------------------------------------===//
// Calls and cycles
//===----------------------------------------------------------------------===//

TEST(PipelinePlan, CallsNameTheirCallerAndCallee) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void second(Item it) { out[it.index] = 2; }
#pragma cuda_rewrite stage
__device__ void first(Item it) {
  second(Item{it.index + 1});
  second(Item{it.index + 2});
}
__global__ void entry(int n) {
  if (n > 0)
    first(Item{n});
}
void host(int n) {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>(n);
}
)cu"));
  ASSERT_PLANNED(P);
  ASSERT_EQ(P.Calls.size(), 3u);
  EXPECT_EQ(P.Calls[0].Caller, -1);
  EXPECT_EQ(P.Calls[0].Callee, 0u);
  EXPECT_EQ(P.Calls[0].Text, "first(Item{n})");
  EXPECT_EQ(P.Calls[1].Caller, 0);
  EXPECT_EQ(P.Calls[1].Callee, 1u);
  EXPECT_EQ(P.Calls[1].Text, "second(Item{it.index + 1})");
  EXPECT_EQ(P.Calls[2].Caller, 0);
  EXPECT_EQ(P.Calls[2].Callee, 1u);
  EXPECT_EQ(P.Calls[2].Text, "second(Item{it.index + 2})");
  EXPECT_FALSE(P.HasCycles);
}

TEST(PipelinePlan, RecursionIsACycle) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void split(Item it) {
  if (it.index > 1) {
    split(Item{it.index / 2});
    split(Item{it.index - it.index / 2});
  } else {
    out[0] = 1;
  }
}
__global__ void entry(int n) { split(Item{n}); }
void host(int n) {
#pragma cuda_rewrite pipeline
  entry<<<1, 1>>>(n);
}
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.stageNames(), (Names{"split"}));
  EXPECT_EQ(P.edges(), (Names{"entry->split", "split->split", "split->split"}));
  EXPECT_TRUE(P.HasCycles);
}

TEST(PipelinePlan, LoopBackToAnEarlierStageIsACycle) {
  Planned P = plan(withPrelude(R"cu(
__device__ void again(Item it);
#pragma cuda_rewrite stage
__device__ void work(Item it) {
  out[it.index] += 1;
  again(it);
}
#pragma cuda_rewrite stage
__device__ void again(Item it) {
  if (out[it.index] < 3)
    work(it);
}
__global__ void entry() { work(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 1>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.stageNames(), (Names{"work", "again"}));
  EXPECT_EQ(P.edges(), (Names{"entry->work", "work->again", "again->work"}));
  EXPECT_TRUE(P.HasCycles);
}

TEST(PipelinePlan, StraightChainHasNoCycle) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void three(Item it) { out[it.index] = 3; }
#pragma cuda_rewrite stage
__device__ void two(Item it) { three(it); }
#pragma cuda_rewrite stage
__device__ void one(Item it) { two(it); }
__global__ void entry() { one(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 1>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.stageNames(), (Names{"one", "two", "three"}));
  EXPECT_EQ(P.edges(), (Names{"entry->one", "one->two", "two->three"}));
  EXPECT_FALSE(P.HasCycles);
}

TEST(PipelinePlan, ACallBackToAnEarlierStageInADagIsNoCycle) {
  // entry -> a, entry -> b, b -> a: b hands items to a stage before it in
  // pipeline order, but the graph has no cycle.
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void a(Item it) { out[it.index] = 1; }
#pragma cuda_rewrite stage
__device__ void b(Item it) { a(it); }
__global__ void entry() {
  a(Item{0});
  b(Item{1});
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 1>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.edges(), (Names{"entry->a", "entry->b", "b->a"}));
  EXPECT_FALSE(P.HasCycles);
}

//===----------------------------------------------------------------------===//
// Serial rank loops
//===----------------------------------------------------------------------===//

/// A threads(1) stage `narrow` whose body is \p Loop, calling the threads(32)
/// stage `wide` (whose body is \p WideBody).
std::string rankLoop(llvm::StringRef Loop,
                     llvm::StringRef WideBody = "out[it.index + rank] = 1;") {
  return withPrelude(("#pragma cuda_rewrite stage threads(32)\n"
                      "__device__ void wide(Item it, int rank) { " +
                      WideBody +
                      " }\n"
                      "#pragma cuda_rewrite stage\n"
                      "__device__ void narrow(Item it) {\n" +
                      Loop +
                      "\n}\n"
                      "__global__ void entry() { narrow(Item{0}); }\n"
                      "void host() {\n"
                      "#pragma cuda_rewrite pipeline\n"
                      "  entry<<<1, 32>>>();\n"
                      "}\n")
                         .str());
}

const char *NotARankLoop = "the call of stage 'wide' comes from 'narrow', "
                           "whose groups are not threads(32)";

TEST(PipelinePlan, SerialRanksFromAThreadsOneStage) {
  Planned P = plan(rankLoop("for (int r = 0; r < 32; ++r) wide(it, r);"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.stageNames(), (Names{"narrow", "wide"}));
  ASSERT_EQ(P.Calls.size(), 2u);
  EXPECT_FALSE(P.Calls[0].SerialRanks);
  EXPECT_EQ(P.Calls[1].Caller, 0);
  EXPECT_EQ(P.Calls[1].Callee, 1u);
  EXPECT_TRUE(P.Calls[1].SerialRanks);
  EXPECT_EQ(P.Calls[1].Text, "wide(it, r)");
  EXPECT_FALSE(P.Stages[1].UsesWarpIntrinsics);
}

TEST(PipelinePlan, SerialRanksAllowBracesAndPostIncrement) {
  Planned P = plan(rankLoop("for (int r = 0; r < 32; r++) {\n"
                            "  wide(Item{it.index + 1}, r);\n"
                            "}"));
  ASSERT_PLANNED(P);
  ASSERT_EQ(P.Calls.size(), 2u);
  EXPECT_TRUE(P.Calls[1].SerialRanks);
}

TEST(PipelinePlan, SerialRanksRefusesAWrongBound) {
  EXPECT_REFUSED(plan(rankLoop("for (int r = 0; r < 16; ++r) wide(it, r);")),
                 NotARankLoop);
  EXPECT_REFUSED(plan(rankLoop("for (int r = 0; r <= 31; ++r) wide(it, r);")),
                 NotARankLoop);
  EXPECT_REFUSED(plan(rankLoop("for (int r = 1; r < 32; ++r) wide(it, r);")),
                 NotARankLoop);
  EXPECT_REFUSED(plan(rankLoop("for (int r = 0; r < 32; r += 2) wide(it, r);")),
                 NotARankLoop);
}

TEST(PipelinePlan, SerialRanksRefusesAnItemThatDependsOnTheRank) {
  EXPECT_REFUSED(
      plan(rankLoop("for (int r = 0; r < 32; ++r) wide(Item{r}, r);")),
      NotARankLoop);
}

TEST(PipelinePlan, SerialRanksRefusesARankThatIsNotTheLoopVariable) {
  EXPECT_REFUSED(
      plan(rankLoop("for (int r = 0; r < 32; ++r) wide(it, 31 - r);")),
      NotARankLoop);
  EXPECT_REFUSED(plan(rankLoop("for (int r = 0; r < 32; ++r) wide(it, 0);")),
                 NotARankLoop);
}

TEST(PipelinePlan, SerialRanksRefusesACallThatIsNotTheWholeLoopBody) {
  EXPECT_REFUSED(plan(rankLoop("for (int r = 0; r < 32; ++r) {\n"
                               "  out[r] = 0;\n"
                               "  wide(it, r);\n"
                               "}")),
                 NotARankLoop);
  EXPECT_REFUSED(plan(rankLoop("wide(it, 0);")), NotARankLoop);
}

TEST(PipelinePlan, SerialRanksRefusesACalleeUsingWarpIntrinsics) {
  Planned P =
      plan(rankLoop("for (int r = 0; r < 32; ++r) wide(it, r);",
                    "out[it.index] = __shfl_sync(0xffffffffu, rank, 0);"));
  EXPECT_REFUSED(P, "'narrow' runs the ranks of stage 'wide' one after "
                    "another, but that stage uses warp intrinsics");
}

TEST(PipelinePlan, SerialRanksRefusesACalleeWhoseHelperUsesWarpIntrinsics) {
  Planned P = plan(withPrelude(R"cu(
__device__ int vote(int rank) { return __ballot_sync(0xffffffffu, rank & 1); }
#pragma cuda_rewrite stage threads(32)
__device__ void wide(Item it, int rank) { out[it.index] = vote(rank); }
#pragma cuda_rewrite stage
__device__ void narrow(Item it) {
  for (int r = 0; r < 32; ++r)
    wide(it, r);
}
__global__ void entry() { narrow(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "'narrow' runs the ranks of stage 'wide' one after "
                    "another, but that stage uses warp intrinsics");
}

//===----------------------------------------------------------------------===//
// What a stage may not do
//===----------------------------------------------------------------------===//

TEST(PipelinePlan, RefusesABarrier) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  __syncthreads();\n"
                               "  out[it.index] = 1;\n"
                               "}")),
                 "'bad' calls __syncthreads, a barrier that the other groups "
                 "of the block, running other items, never reach");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  out[it.index] = __syncthreads_count(1);\n"
                               "}")),
                 "'bad' calls __syncthreads_count, a barrier");
}

TEST(PipelinePlan, RefusesABarrierInAHelperOfAStage) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  wait();\n"
                               "  out[it.index] = 1;\n"
                               "}",
                               "bad(Item{0});",
                               "__device__ void wait() { __syncthreads(); }")),
                 "'wait' calls __syncthreads, a barrier");
}

TEST(PipelinePlan, TheEntryMayUseBarriersAndThreadPositions) {
  // The entry runs with the original launch's threads.
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
__global__ void entry() {
  __shared__ int seen[32];
  seen[threadIdx.x % 32] = blockIdx.x;
  __syncthreads();
  take(Item{seen[(threadIdx.x + 1) % 32]});
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<4, 32>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.stageNames(), (Names{"take"}));
}

TEST(PipelinePlan, RefusesThreadAndBlockPositions) {
  EXPECT_REFUSED(
      plan(oneStage("#pragma cuda_rewrite stage",
                    "__device__ void bad(Item it) { out[it.index] = "
                    "threadIdx.x; }")),
      "'bad' reads 'threadIdx', which means another thread or block once "
      "the stage runs from a queue");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) { out[it.index] "
                               "= blockIdx.y; }")),
                 "'bad' reads 'blockIdx'");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) { out[it.index] "
                               "= blockDim.x * gridDim.x; }")),
                 "'bad' reads 'blockDim'");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) { out[it.index] "
                               "= where(); }",
                               "bad(Item{0});",
                               "__device__ int where() { return "
                               "gridDim.z; }")),
                 "'where' reads 'gridDim'");
}

TEST(PipelinePlan, RefusesSharedMemoryDeclaredInAStage) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  __shared__ int scratch[32];\n"
                               "  scratch[it.index % 32] = it.index;\n"
                               "  out[it.index] = scratch[0];\n"
                               "}")),
                 "'bad' declares __shared__ 'scratch', which items of other "
                 "stages in the same block would share");
}

TEST(PipelinePlan, RefusesWarpIntrinsicsOutsideThreads32) {
  EXPECT_REFUSED(
      plan(oneStage("#pragma cuda_rewrite stage threads(16)",
                    "__device__ void bad(Item it, int rank) {\n"
                    "  out[it.index] = __shfl_sync(0xffffffffu, rank, 0);\n"
                    "}",
                    "bad(Item{0}, threadIdx.x % 16);")),
      "'bad' calls __shfl_sync in a threads(16) stage; warp intrinsics need "
      "threads(32), where a group is exactly one warp");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  __syncwarp();\n"
                               "  out[it.index] = 1;\n"
                               "}")),
                 "'bad' calls __syncwarp in a threads(1) stage");
  EXPECT_REFUSED(
      plan(oneStage("#pragma cuda_rewrite stage threads(64)",
                    "__device__ void bad(Item it, int rank) {\n"
                    "  out[it.index] = __ballot_sync(0xffffffffu, rank);\n"
                    "}",
                    "bad(Item{0}, threadIdx.x % 64);")),
      "'bad' calls __ballot_sync in a threads(64) stage");
}

TEST(PipelinePlan, AcceptsWarpIntrinsicsInThreads32) {
  Planned P = plan(withPrelude(R"cu(
__device__ int sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
#pragma cuda_rewrite stage
__device__ void plain(Item it) { out[it.index] = 0; }
#pragma cuda_rewrite stage threads(32)
__device__ void reduce(Item it, int rank) {
  int total = sum(rank);
  if (rank == 0) {
    out[it.index] = total;
    plain(it);
  }
}
__global__ void entry() { reduce(Item{0}, threadIdx.x % 32); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  ASSERT_PLANNED(P);
  ASSERT_EQ(P.stageNames(), (Names{"reduce", "plain"}));
  // Through the helper `sum`.
  EXPECT_TRUE(P.Stages[0].UsesWarpIntrinsics);
  EXPECT_FALSE(P.Stages[1].UsesWarpIntrinsics);
}

TEST(PipelinePlan, RefusesAKernelLaunchInAStage) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  child<<<1, 1>>>(out + it.index);\n"
                               "}",
                               "bad(Item{0});",
                               "__global__ void child(int *p) { *p = 1; }")),
                 "'bad' launches a kernel");
}

TEST(PipelinePlan, RefusesInlineAssemblyInAStage) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  unsigned lane;\n"
                               "  asm(\"mov.u32 %0, %%laneid;\" : "
                               "\"=r\"(lane));\n"
                               "  out[it.index] = lane;\n"
                               "}")),
                 "'bad' has inline assembly, which may read the thread's "
                 "position");
}

TEST(PipelinePlan, RefusesACallThroughAFunctionPointer) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  void (*f)(int) = set;\n"
                               "  f(it.index);\n"
                               "}",
                               "bad(Item{0});",
                               "__device__ void set(int i) { out[i] = 1; }")),
                 "'bad' calls through a function pointer, which the pipeline "
                 "cannot follow");
}

//===----------------------------------------------------------------------===//
// Items handed on
//===----------------------------------------------------------------------===//

const char *PointerPrelude = R"cu(
struct Pointer {
  int *at;
};
__device__ int *out;
#pragma cuda_rewrite stage
__device__ void keep(Pointer p) { *p.at = 1; }
#pragma cuda_rewrite stage
__device__ void value(int v) { out[0] = v; }
#pragma cuda_rewrite stage
__device__ void keepRaw(int *p) { *p = 1; }
)cu";

std::string entryBody(llvm::StringRef Body) {
  return std::string(PointerPrelude) + "__global__ void entry(int *g) {\n" +
         Body.str() +
         "\n}\n"
         "void host(int *g) {\n"
         "#pragma cuda_rewrite pipeline\n"
         "  entry<<<1, 32>>>(g);\n"
         "}\n";
}

const char *LocalAddress = "the call of stage 'keep' passes the address of a "
                           "local variable; the item outlives the caller once "
                           "it is queued";

TEST(PipelinePlan, RefusesTheAddressOfALocal) {
  EXPECT_REFUSED(plan(entryBody("int local = 0;\nkeep(Pointer{&local});")),
                 LocalAddress);
  // A member of a local struct, an element of a local array.
  EXPECT_REFUSED(plan(entryBody("Pointer s{g};\nkeep(Pointer{(int *)&s.at});")),
                 LocalAddress);
  EXPECT_REFUSED(plan(entryBody("int a[4] = {};\nkeep(Pointer{&a[1]});")),
                 LocalAddress);
  // A local array decays to a pointer to its first element.
  EXPECT_REFUSED(plan(entryBody("int a[4] = {};\nkeep(Pointer{a + 2});")),
                 LocalAddress);
  EXPECT_REFUSED(plan(entryBody("int a[4] = {};\nkeepRaw(a);")),
                 "the call of stage 'keepRaw' passes the address of a local");
}

TEST(PipelinePlan, RefusesTheAddressOfAStageParameter) {
  Planned P = plan(std::string(PointerPrelude) + R"cu(
#pragma cuda_rewrite stage
__device__ void forward(int v) { keep(Pointer{&v}); }
__global__ void entry() { forward(1); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu");
  EXPECT_REFUSED(P, LocalAddress);
}

TEST(PipelinePlan, AcceptsValuesReadFromLocals) {
  // An element of a local array by value, a local struct by value, global
  // pointers (through a local pointer variable, a member of a parameter).
  Planned P = plan(entryBody(R"cu(
  int a[4] = {1, 2, 3, 4};
  int grid[2][2] = {};
  Pointer s{g};
  int *p = g + 1;
  value(a[threadIdx.x % 4]);
  value(grid[1][threadIdx.x % 2]);
  keep(s);
  keep(Pointer{p});
  keep(Pointer{&g[2]});
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.edges(), (Names{"entry->value", "entry->value", "entry->keep",
                              "entry->keep", "entry->keep"}));
}

TEST(PipelinePlan, RefusesAHelperThatCallsAStage) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void last(Item it) { out[it.index] = 2; }
__device__ void helper(Item it) { last(it); }
#pragma cuda_rewrite stage
__device__ void first(Item it) { helper(it); }
__global__ void entry() { first(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "'helper', a device function that the pipeline calls, "
                    "calls a stage; only stages and the entry kernel may");
}

TEST(PipelinePlan, RefusesAHelperOfTheEntryThatCallsAStage) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void last(Item it) { out[it.index] = 2; }
__device__ void helper(Item it) { last(it); }
__global__ void entry() {
  last(Item{1});
  helper(Item{0});
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "'helper', a device function that the pipeline calls, "
                    "calls a stage");
}

TEST(PipelinePlan, RefusesAStageCallWrittenInAMacro) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void next(Item it) { out[it.index] = 2; }
#define HAND_ON(x) next(x)
__global__ void entry() { HAND_ON(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "the call of stage 'next' is written in a macro");
}

TEST(PipelinePlan, RefusesAWideCallFromAStageOfAnotherWidth) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage threads(16)
__device__ void half(Item it, int rank) { out[it.index + rank] = 1; }
#pragma cuda_rewrite stage threads(32)
__device__ void wide(Item it, int rank) {
  if (rank < 16)
    half(it, rank);
}
__global__ void entry() { wide(Item{0}, threadIdx.x % 32); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "the call of stage 'half' comes from 'wide', whose "
                    "groups are not threads(16)");
}

//===----------------------------------------------------------------------===//
// Stage signatures
//===----------------------------------------------------------------------===//

TEST(PipelinePlan, RefusesANonVoidStage) {
  // The stage pragma itself refuses a non-void function; planPipeline
  // checks again for stages it is given.
  Planned P = plan(oneStage("", "__device__ int bad(Item it) { return 1; }"),
                   {{"bad", 1}});
  EXPECT_REFUSED(P, "stage 'bad' returns a value; stages hand results on by "
                    "calling the next stage");
}

TEST(PipelinePlan, RefusesAReferenceItem) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(const Item &it) { "
                               "out[it.index] = 4; }")),
                 "stage 'bad' must take its item by value, of a trivially "
                 "copyable type");
}

TEST(PipelinePlan, RefusesANonTriviallyCopyableItem) {
  Planned P = plan(R"cu(
__device__ int *out;
struct Counted {
  int n;
  __device__ Counted(int n) : n(n) {}
  __device__ Counted(const Counted &o) : n(o.n + 1) {}
};
#pragma cuda_rewrite stage
__device__ void bad(Counted c) { out[0] = c.n; }
__global__ void entry() { bad(Counted(1)); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu");
  EXPECT_REFUSED(P, "stage 'bad' must take its item by value, of a trivially "
                    "copyable type");
}

TEST(PipelinePlan, RefusesAWrongParameterCount) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it, int rank) { "
                               "out[it.index] = rank; }",
                               "bad(Item{0}, 0);")),
                 "stage 'bad' must take one item");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage threads(8)",
                               "__device__ void bad(Item it) { "
                               "out[it.index] = 1; }")),
                 "stage 'bad' is threads(8) and must take (item, int rank)");
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage threads(8)",
                               "__device__ void bad(Item it, int rank, int "
                               "more) { out[it.index] = rank + more; }",
                               "bad(Item{0}, 0, 1);")),
                 "stage 'bad' is threads(8) and must take (item, int rank)");
}

TEST(PipelinePlan, RefusesANonIntegerRank) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage threads(2)",
                               "__device__ void bad(Item it, float rank) { "
                               "out[it.index] = 1; }",
                               "bad(Item{0}, 0.0f);")),
                 "stage 'bad''s rank parameter must be an int");
}

TEST(PipelinePlan, RefusesUnnamedParameters) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage threads(2)",
                               "__device__ void bad(Item it, int) { "
                               "out[it.index] = 1; }",
                               "bad(Item{0}, 0);")),
                 "stage 'bad''s parameters must be named");
}

TEST(PipelinePlan, RefusesAStageInANamespace) {
  Planned P = plan(withPrelude(R"cu(
namespace work {
#pragma cuda_rewrite stage
__device__ void bad(Item it) { out[it.index] = 1; }
} // namespace work
__global__ void entry() { work::bad(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "stage 'bad' must be a plain function at file scope");
}

TEST(PipelinePlan, RefusesAStageNamedControl) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void control(Item it) { out[it.index] = 1; }
__global__ void entry() { control(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "a stage is named 'control', the name of the pipeline's "
                    "own member");
}

TEST(PipelinePlan, RefusesTheNamePipelineInAStage) {
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  int pipeline = it.index;\n"
                               "  out[pipeline] = 1;\n"
                               "}")),
                 "stage 'bad' uses the name 'pipeline', which its rewritten "
                 "copy needs for the pipeline's queues");
  // As a parameter name, too.
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item pipeline) { "
                               "out[pipeline.index] = 1; }")),
                 "stage 'bad' uses the name 'pipeline'");
  // A file-scope variable of that name read in a stage.
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) { "
                               "out[it.index] = pipeline; }",
                               "bad(Item{0});", "__device__ int pipeline;")),
                 "stage 'bad' uses the name 'pipeline'");
}

TEST(PipelinePlan, RefusesTheNamePipelineInTheEntry) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
__global__ void entry(int pipeline) { take(Item{pipeline}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>(3);
}
)cu"));
  EXPECT_REFUSED(P, "the entry kernel uses the name 'pipeline'");
}

TEST(PipelinePlan, RefusesMoreThanSixteenStages) {
  std::string Code = withPrelude("");
  for (int I = 16; I >= 0; --I) {
    Code += "#pragma cuda_rewrite stage\n__device__ void s" +
            std::to_string(I) + "(Item it) { ";
    Code +=
        I == 16 ? "out[it.index] = 1;" : "s" + std::to_string(I + 1) + "(it);";
    Code += " }\n";
  }
  Code += "__global__ void entry() { s0(Item{0}); }\n"
          "void host() {\n"
          "#pragma cuda_rewrite pipeline\n"
          "  entry<<<1, 32>>>();\n"
          "}\n";
  EXPECT_REFUSED(plan(Code), "the pipeline has 17 stages; the runtime "
                             "schedules at most 16");
}

//===----------------------------------------------------------------------===//
// The entry, its launch and the pragma's clauses
//===----------------------------------------------------------------------===//

TEST(PipelinePlan, RefusesAnEntryThatCallsNoStage) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void unused(Item it) { out[it.index] = 1; }
__global__ void entry() { out[0] = 5; }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "the entry kernel 'entry' calls no stage; mark the stages "
                    "with '#pragma cuda_rewrite stage'");
}

TEST(PipelinePlan, RefusesAStageDefinedAfterTheHostFunction) {
  Planned P = plan(withPrelude(R"cu(
__device__ void late(Item it);
__global__ void entry() { late(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
#pragma cuda_rewrite stage
__device__ void late(Item it) { out[it.index] = 1; }
)cu"));
  EXPECT_REFUSED(P, "stage 'late' must be defined in this file above the "
                    "function that launches the pipeline");
}

TEST(PipelinePlan, RefusesAnEntryDefinedAfterTheHostFunction) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
__global__ void entry();
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
__global__ void entry() { take(Item{0}); }
)cu"));
  EXPECT_REFUSED(P, "the entry kernel must be defined in this file above the "
                    "function that launches it");
}

TEST(PipelinePlan, RefusesAStageWithoutADefinition) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void elsewhere(Item it);
__global__ void entry() { elsewhere(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "stage 'elsewhere' has no definition in this file");
}

TEST(PipelinePlan, RefusesATemplateEntryKernel) {
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
template <typename T> __global__ void entry(T v) { take(Item{int(v)}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>(3);
}
)cu"));
  EXPECT_REFUSED(P, "the entry kernel is a template");
}

TEST(PipelinePlan, RefusesAPragmaBeforeSomethingElseThanALaunch) {
  // The pragma accepts any statement that launches; the plan needs the
  // launch itself.
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
__global__ void entry() { take(Item{0}); }
void host(bool go) {
#pragma cuda_rewrite pipeline
  if (go)
    entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "the pragma must precede a kernel launch statement");
}

TEST(PipelinePlan, RefusesALaunchFromDeviceCode) {
  // The pipeline pragma cannot be put there; planPipeline refuses such a
  // candidate all the same.
  std::string Code = withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
__global__ void entry() { take(Item{0}); }
__global__ void parent() { entry<<<1, 32>>>(); }
)cu");
  bool Ran = false;
  analyze(Code, [&](ASTContext &Ctx, const std::vector<Candidate> &Cands) {
    const FunctionDecl *Parent = functionNamed(Ctx, "parent");
    ASSERT_NE(Parent, nullptr);
    const auto *Body = cast<CompoundStmt>(Parent->getBody());
    Candidate C;
    C.Kind = &PipelinePass::PipelineEntry;
    C.Function = Parent;
    C.Statement = Body->body_front();
    PipelinePlanResult R = planPipeline(C, groupSizes(Cands), Ctx);
    EXPECT_FALSE(R.Plan.has_value());
    EXPECT_NE(
        R.Refused.Reason.find("the pipeline is launched from device code"),
        std::string::npos)
        << R.Refused.Reason;
    Ran = true;
  });
  EXPECT_TRUE(Ran);
}

TEST(PipelinePlan, WithoutAnAnnotationTheModelIsAuto) {
  std::string Code = withPrelude(R"cu(
#pragma cuda_rewrite stage
__device__ void take(Item it) { out[it.index] = 1; }
__global__ void entry() { take(Item{0}); }
void host() { entry<<<1, 32>>>(); }
)cu");
  bool Ran = false;
  analyze(Code, [&](ASTContext &Ctx, const std::vector<Candidate> &Cands) {
    const FunctionDecl *Host = functionNamed(Ctx, "host");
    ASSERT_NE(Host, nullptr);
    Candidate C;
    C.Kind = &PipelinePass::PipelineEntry;
    C.Function = Host;
    C.Statement = cast<CompoundStmt>(Host->getBody())->body_front();
    Planned P = summarize(planPipeline(C, groupSizes(Cands), Ctx), Ctx);
    ASSERT_PLANNED(P);
    EXPECT_EQ(P.Model, "auto");
    EXPECT_EQ(P.ConfigFile, "");
    EXPECT_EQ(P.stageNames(), (Names{"take"}));
    Ran = true;
  });
  EXPECT_TRUE(Ran);
}

/// A one-stage pipeline launched under \p Pragma.
std::string launchedWith(llvm::StringRef Pragma) {
  return withPrelude(("#pragma cuda_rewrite stage\n"
                      "__device__ void take(Item it) { out[it.index] = 1; }\n"
                      "__global__ void entry() { take(Item{0}); }\n"
                      "void host() {\n" +
                      Pragma +
                      "\n"
                      "  entry<<<1, 32>>>();\n"
                      "}\n")
                         .str());
}

TEST(PipelinePlan, ReadsTheModelClause) {
  Planned P = plan(launchedWith("#pragma cuda_rewrite pipeline"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.Model, "auto");
  EXPECT_EQ(P.ConfigFile, "");

  Planned Q =
      plan(launchedWith("#pragma cuda_rewrite pipeline model(megakernel)"));
  ASSERT_PLANNED(Q);
  EXPECT_EQ(Q.Model, "megakernel");

  Planned R = plan(launchedWith("#pragma cuda_rewrite pipeline model(kbk)"));
  ASSERT_PLANNED(R);
  EXPECT_EQ(R.Model, "kbk");
}

TEST(PipelinePlan, ReadsTheConfigClause) {
  Planned P = plan(launchedWith(
      "#pragma cuda_rewrite pipeline model(hybrid) config(tune.json)"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.Model, "hybrid");
  EXPECT_EQ(P.ConfigFile, "tune.json");

  // Quotes are dropped.
  Planned Q =
      plan(launchedWith("#pragma cuda_rewrite pipeline config(\"tune.json\")"));
  ASSERT_PLANNED(Q);
  EXPECT_EQ(Q.Model, "auto");
  EXPECT_EQ(Q.ConfigFile, "tune.json");
}

TEST(PipelinePlan, RefusesAConfigThatIsNoPlainFileName) {
  Planned P = plan(
      launchedWith("#pragma cuda_rewrite pipeline config(\"dir\\\\t.json\")"));
  // The clause's argument is spelled without its quotes.
  EXPECT_REFUSED(P, "config(dir\\\\t.json) is not a plain file name");
}

//===----------------------------------------------------------------------===//
// Found by these tests: pipelines the plan gets wrong
//===----------------------------------------------------------------------===//

TEST(PipelinePlan, RefusesOverloadedStages) {
  // docs/pipeline.md: stages are "not overloaded". The generated struct has
  // one member per stage, named after it, so two stages `visit` give a struct
  // with two members `visit` that does not compile. checkNames() fills a
  // StringSet of the stage names but never looks at what insert() returns,
  // so the duplicate is not refused.
  Planned P = plan(R"cu(
__device__ int *out;
struct A {
  int i;
};
struct B {
  float f;
};
#pragma cuda_rewrite stage
__device__ void visit(A a) { out[a.i] = 1; }
#pragma cuda_rewrite stage
__device__ void visit(B b) { out[0] = int(b.f); }
__global__ void entry() {
  visit(A{0});
  visit(B{1.0f});
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu");
  EXPECT_REFUSED(P, "visit");
}

TEST(PipelinePlan, RefusesFileScopeSharedMemoryReadInAStage) {
  // docs/pipeline.md: a stage may not use __shared__ memory, since the
  // groups of one block run other items (of other stages) at the same time.
  // The check only looks at __shared__ variables *declared* in the stage;
  // a file-scope `__shared__` array (or `extern __shared__` dynamic shared
  // memory) that the stage reads and writes is not refused.
  EXPECT_REFUSED(plan(oneStage("#pragma cuda_rewrite stage",
                               "__device__ void bad(Item it) {\n"
                               "  scratch[it.index % 32] = it.index;\n"
                               "  out[it.index] = scratch[0];\n"
                               "}",
                               "bad(Item{0});", "__shared__ int scratch[32];")),
                 "__shared__");
  EXPECT_REFUSED(
      plan(oneStage("#pragma cuda_rewrite stage",
                    "__device__ void bad(Item it) {\n"
                    "  dynamic[it.index % 32] = it.index;\n"
                    "}",
                    "bad(Item{0});", "extern __shared__ int dynamic[];")),
      "__shared__");
}

TEST(PipelinePlan, RefusesARankLoopCallingAWideStageWithoutARank) {
  // `wide` is threads(32) but takes no rank; a threads(1) stage calls it in
  // a loop shaped like a rank loop. addCall() runs isRankLoop() before the
  // callee's signature is checked, and isRankLoop() reads Call->getArg(1) of
  // a call with one argument: out of bounds (an assertion in a debug LLVM,
  // undefined behaviour in a release one). The pipeline should be refused
  // for wide's signature.
  Planned P = plan(withPrelude(R"cu(
#pragma cuda_rewrite stage threads(32)
__device__ void wide(Item it) { out[it.index] = 1; }
#pragma cuda_rewrite stage
__device__ void narrow(Item it) {
  for (int r = 0; r < 32; ++r)
    wide(it);
}
__global__ void entry() { narrow(Item{0}); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "stage 'wide' is threads(32) and must take (item, int "
                    "rank)");
}

TEST(PipelinePlan, RefusesCooperativeGroups) {
  // checkCallee() refuses a callee whose nearest enclosing namespace is
  // named `cooperative_groups`, but CUDA declares everything of
  // <cooperative_groups.h> in `cooperative_groups::__v1` (_CG_BEGIN_NAMESPACE
  // in cooperative_groups/details/info.h), so the test never matches: a
  // stage that syncs its block through cooperative groups is accepted, and
  // the header's own __syncthreads is not seen since helpers outside the
  // main file are not traversed.
  Planned P = plan(withPrelude(R"cu(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#pragma cuda_rewrite stage threads(32)
__device__ void bad(Item it, int rank) {
  cg::thread_block block = cg::this_thread_block();
  out[it.index + rank] = 1;
  block.sync();
}
__global__ void entry() { bad(Item{0}, threadIdx.x % 32); }
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"));
  EXPECT_REFUSED(P, "'bad' uses cooperative groups, whose groups are the "
                    "block's and the grid's");
}

TEST(PipelinePlan, RefusesALocalArrayDecayingInABracedItem) {
  // `keepRaw(a)` is refused, but `keep(Pointer{a})` is not: pointsIntoFrame()
  // traverses the syntactic form of the InitListExpr `Pointer{a}`, where `a`
  // has no ArrayToPointerDecay cast (the cast is in the semantic form only),
  // so the item that holds the address of the caller's local array is
  // queued and read after the caller returned.
  EXPECT_REFUSED(plan(entryBody("int a[4] = {};\nkeep(Pointer{a});")),
                 LocalAddress);
}

TEST(PipelinePlan, RefusesAPointerToALocalHeldInAVariable) {
  // The address of a local goes through a pointer variable before it is
  // handed on: the entry takes a local's address, so its local pointers
  // may hold one.
  EXPECT_REFUSED(plan(entryBody("int x = 0;\nint *p = &x;\n"
                                "keep(Pointer{p});")),
                 "passes a local that may hold the address of a local "
                 "variable ('entry' takes one)");
}

TEST(PipelinePlan, RefusesAnItemThatBindsAReferenceToALocal) {
  // An item type with a reference member is trivially copyable; binding the
  // member to a local, `Ref{local}`, takes the local's address without an
  // `&`: such items are refused.
  EXPECT_REFUSED(plan(R"cu(
__device__ int *out;
struct Ref {
  int &at;
};
#pragma cuda_rewrite stage
__device__ void keep(Ref r) { r.at = 1; }
__global__ void entry() {
  int local = 0;
  keep(Ref{local});
  out[0] = local;
}
void host() {
#pragma cuda_rewrite pipeline
  entry<<<1, 32>>>();
}
)cu"),
                 "stage 'keep''s item holds a reference");
}

TEST(PipelinePlan, AcceptsAddressesOfLocalsUsedOnlyToComputeTheItem) {
  // The item is an int: it cannot point anywhere. `&x` and the decay of `a`
  // are arguments of helpers that compute it before the stage is called,
  // and only items whose type can hold an address are checked for them.
  Planned P = plan(entryBody(R"cu(
  int a[4] = {1, 2, 3, 4};
  int x = 5;
  value(sum4(a));
  value(load(&x));
)cu")
                       .insert(0, R"cu(
__device__ int sum4(const int *p) { return p[0] + p[1] + p[2] + p[3]; }
__device__ int load(const int *p) { return *p; }
)cu"));
  ASSERT_PLANNED(P);
  EXPECT_EQ(P.edges(), (Names{"entry->value", "entry->value"}));
}

// threads(n) other than a power of two up to 256 is an error at the
// pragma: PragmasTest.ClauseValuesOutOfRangeAreErrors.

} // namespace
