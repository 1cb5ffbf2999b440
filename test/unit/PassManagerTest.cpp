//===- PassManagerTest.cpp - The pass list and who owns what
//---------------===//

#include "rewriters/PassManager.h"
#include "rewriters/pipeline/PipelinePass.h"
#include "rewriters/promote/PromotePass.h"
#include "rewriters/systolic/SystolicPass.h"

#include "llvm/ADT/StringSet.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;

namespace {

// The pass manager hands a candidate to the one pass that takes its kind: a
// kind no pass or two passes took would be dropped or rewritten twice.
TEST(PassManager, EveryCandidateKindHasExactlyOnePass) {
  llvm::StringSet<> Names;
  for (const std::unique_ptr<Pass> &Owner : registeredPasses())
    for (const CandidateKind *Kind : Owner->candidateKinds()) {
      EXPECT_TRUE(Names.insert(Kind->Name).second) << Kind->Name.str();
      unsigned Takers = 0;
      for (const std::unique_ptr<Pass> &P : registeredPasses())
        Takers += P->takes(*Kind);
      EXPECT_EQ(Takers, 1u) << Kind->Name.str();
      EXPECT_EQ(&passFor(*Kind), Owner.get()) << Kind->Name.str();
    }
  EXPECT_EQ(passFor(SystolicPass::Stencil).name(), "systolic");
  EXPECT_EQ(passFor(PipelinePass::PipelineEntry).name(), "pipeline");
}

TEST(PassManager, DirectivesBelongToOnePassExceptMarkers) {
  EXPECT_EQ(passForDirective(PromotePass::Directive)->name(), "promote");
  EXPECT_EQ(passForDirective(PipelinePass::Stage)->name(), "pipeline");
  EXPECT_EQ(passForDirective(PipelinePass::Pipeline)->name(), "pipeline");
  // overlap_boundary marks a statement inside a promoted kernel: it
  // annotates no candidate, so no pass warns that it is unused.
  EXPECT_EQ(passForDirective(PromotePass::OverlapBoundary), nullptr);
}

// The pragma handler's table: every pass's directives and markers, in the
// order the passes run (its messages list them so), each name once.
TEST(PassManager, DirectiveTableListsEveryPassesDirectivesOnce) {
  std::vector<std::string> Names;
  for (const DirectiveSpec *D : registeredDirectives())
    Names.push_back(D->Name.str());
  EXPECT_EQ(Names, (std::vector<std::string>{"aggregate", "promote",
                                             "overlap_boundary", "systolic",
                                             "fuse", "stage", "pipeline"}));
}

TEST(PassManager, PassesRunInTheDocumentedOrderWithUniqueNames) {
  std::vector<std::string> Names;
  llvm::StringSet<> Seen;
  for (const std::unique_ptr<Pass> &P : createPasses(PassOptions())) {
    Names.push_back(P->name().str());
    EXPECT_TRUE(Seen.insert(P->name()).second) << P->name().str();
    EXPECT_FALSE(P->summary().empty());
  }
  EXPECT_EQ(Names, (std::vector<std::string>{"aggregate", "promote", "systolic",
                                             "fuse", "pipeline"}));
}

TEST(PassManager, SharingNamesRegisteredPasses) {
  for (const PassSharing &Share : passSharing()) {
    EXPECT_TRUE(PassSet::all().contains(Share.Leaves));
    EXPECT_TRUE(PassSet::all().contains(Share.To));
  }
}

TEST(PassManager, PassListsAreCheckedAgainstTheRegisteredNames) {
  llvm::Expected<PassSet> Some = enabledPasses("systolic,fuse", "fuse");
  ASSERT_TRUE(static_cast<bool>(Some));
  EXPECT_TRUE(Some->contains("systolic"));
  EXPECT_FALSE(Some->contains("fuse"));
  EXPECT_FALSE(Some->contains("aggregate"));
  llvm::Expected<PassSet> Bad = parsePassList("systolic,stencil");
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "unknown pass 'stencil'; valid passes: aggregate, promote, "
            "systolic, fuse, pipeline");
}

} // namespace
