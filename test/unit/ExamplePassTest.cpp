//===- ExamplePassTest.cpp - The example pass, run end to end -------------===//
//
// Runs test/unit/example/BoundPass the way the tool runs a pass: its
// directive in the pragma handler's table, its candidates through a
// CandidateFinder, its annotated candidates handed to rewrite(), the edits
// applied to the file. docs/architecture.md walks through the pass.
//
//===----------------------------------------------------------------------===//

#include "analysis/Candidates.h"
#include "gpu/GpuSpec.h"
#include "rewriters/common/EditSet.h"
#include "rewriters/common/Remarks.h"
#include "test/unit/CudaTestParse.h"
#include "test/unit/example/BoundPass.h"

#include "clang/Tooling/Core/Replacement.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::example;

namespace {

struct Outcome {
  bool Parsed = false;
  std::vector<std::string> Kinds;    ///< Every candidate's kind.
  std::string Text;                  ///< The rewritten file.
  std::vector<RemarkRecord> Remarks; ///< What the pass reported.
};

/// Parses \p Code with the example pass's directive, finds its candidates
/// and rewrites the annotated ones.
Outcome runBoundPass(llvm::StringRef Code) {
  static const DirectiveSpec *const Table[] = {&BoundPass::Directive};
  Outcome Out;
  test::parseCudaWithPragmas(
      Code, Table,
      [&](ASTContext &Ctx, const std::vector<AttachedPragma> &Attached) {
        if (Ctx.getDiagnostics().hasErrorOccurred())
          return;
        Out.Parsed = true;
        BoundPass Pass;
        CudaArchRegions Regions;
        CandidateFinder Find(Ctx, Attached, Regions);
        Pass.findCandidates(Find);
        std::vector<Candidate> Candidates = Find.take();
        PassWork Work;
        for (const Candidate &C : Candidates) {
          Out.Kinds.push_back(C.Kind->Name.str());
          if (C.Annotation)
            Work.Candidates.push_back(&C);
        }
        llvm::Expected<GpuSpec> Gpu = getBuiltinGpuSpec("sm_90");
        ASSERT_TRUE(bool(Gpu));
        EditSet Edits(Ctx.getSourceManager());
        Remarks::Settings Settings;
        Settings.Log = &Out.Remarks;
        Remarks Remark(Ctx.getDiagnostics(), Settings);
        PassContext Context{Ctx, *Gpu, Edits, Remark};
        ASSERT_TRUE(Pass.rewrite(Context, Work));
        llvm::Expected<tooling::Replacements> Replacements = Edits.finalize();
        ASSERT_TRUE(bool(Replacements));
        llvm::Expected<std::string> Text =
            tooling::applyAllReplacements(Code, *Replacements);
        ASSERT_TRUE(bool(Text));
        Out.Text = *Text;
      });
  return Out;
}

bool contains(llvm::StringRef Text, llvm::StringRef Part) {
  return Text.contains(Part);
}

TEST(ExamplePass, BoundsAnAnnotatedKernelByItsLargestBlock) {
  Outcome R = runBoundPass(R"cu(
#pragma cuda_rewrite bound
__global__ void scale(float *a) { a[threadIdx.x] *= 2; }
__global__ void other(float *a) {}
void run(float *a) {
  scale<<<4, 128>>>(a);
  scale<<<4, dim3(64, 4)>>>(a);
  other<<<1, 32>>>(a);
}
)cu");
  ASSERT_TRUE(R.Parsed);
  // Both kernels are candidates; only the annotated one is rewritten.
  EXPECT_EQ(R.Kinds,
            (std::vector<std::string>{"unbounded-kernel", "unbounded-kernel"}));
  EXPECT_TRUE(contains(R.Text, "__global__ void __launch_bounds__(256) scale("))
      << R.Text;
  EXPECT_TRUE(contains(R.Text, "__global__ void other(")) << R.Text;
  ASSERT_EQ(R.Remarks.size(), 1u);
  EXPECT_EQ(R.Remarks[0].What, RemarkRecord::Kind::Applied);
}

TEST(ExamplePass, PinsABlockSizeSpelledByAMacro) {
  Outcome R = runBoundPass(R"cu(
#define BLOCK 256
#pragma cuda_rewrite bound
__global__ void scale(float *a) { a[threadIdx.x] *= 2; }
void run(float *a) { scale<<<4, BLOCK>>>(a); }
)cu");
  ASSERT_TRUE(R.Parsed);
  EXPECT_TRUE(contains(R.Text, "__launch_bounds__(256) scale(")) << R.Text;
  EXPECT_TRUE(contains(R.Text, "static_assert((BLOCK) == 256")) << R.Text;
}

TEST(ExamplePass, RefusesABoundBelowALaunchesBlock) {
  Outcome R = runBoundPass(R"cu(
#pragma cuda_rewrite bound threads(128)
__global__ void scale(float *a) { a[threadIdx.x] *= 2; }
void run(float *a) { scale<<<4, 256>>>(a); }
)cu");
  ASSERT_TRUE(R.Parsed);
  EXPECT_FALSE(contains(R.Text, "__launch_bounds__")) << R.Text;
  ASSERT_EQ(R.Remarks.size(), 1u);
  EXPECT_EQ(R.Remarks[0].What, RemarkRecord::Kind::Refused);
  EXPECT_TRUE(contains(R.Remarks[0].Text, "more than threads(128)"))
      << R.Remarks[0].Text;
}

TEST(ExamplePass, RefusesABlockKnownOnlyAtRunTime) {
  Outcome R = runBoundPass(R"cu(
#pragma cuda_rewrite bound
__global__ void scale(float *a) { a[threadIdx.x] *= 2; }
void run(float *a, int n) { scale<<<4, n>>>(a); }
)cu");
  ASSERT_TRUE(R.Parsed);
  EXPECT_FALSE(contains(R.Text, "__launch_bounds__")) << R.Text;
  ASSERT_EQ(R.Remarks.size(), 1u);
  EXPECT_EQ(R.Remarks[0].What, RemarkRecord::Kind::Refused);
}

TEST(ExamplePass, ItsClauseGrammarIsCheckedAtThePragma) {
  // threads(100) is not a whole number of warps: a parse error, so the
  // pass never runs.
  EXPECT_FALSE(runBoundPass(R"cu(
#pragma cuda_rewrite bound threads(100)
__global__ void scale(float *a) {}
)cu")
                   .Parsed);
  // A directive of a registered pass is unknown to this table.
  EXPECT_FALSE(runBoundPass(R"cu(
#pragma cuda_rewrite systolic
__global__ void scale(float *a) {}
)cu")
                   .Parsed);
}

} // namespace
