#include "tool/CoverageReport.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;

namespace {

TEST(CoverageReportTest, CausesDropNamesAndNumbers) {
  EXPECT_EQ(refusalCause("a clamped read of 'in' is not provably clamped"),
            "a clamped read of '_' is not provably clamped");
  EXPECT_EQ(refusalCause("needs 50176 bytes of shared memory, more than 48 "
                         "KiB"),
            "needs N bytes of shared memory, more than N KiB");
  // Digits inside a name stay: sm_90 and x2 are words, not numbers.
  EXPECT_EQ(refusalCause("not on sm_90 with x2 at 3.5"),
            "not on sm_90 with x2 at N");
  // An apostrophe is no quote.
  EXPECT_EQ(refusalCause("the user's kernel"), "the user's kernel");
  EXPECT_EQ(refusalCause("the input's stride 'n' is 2"),
            "the input's stride '_' is N");
}

CoverageEntry entry(const char *Kind, CoverageEntry::Verdict What,
                    const char *Reason, const char *Function = "k") {
  CoverageEntry E;
  E.Where = "1:1";
  E.Function = Function;
  E.Kind = Kind;
  E.Pass = "systolic";
  E.What = What;
  E.Reason = Reason;
  return E;
}

TEST(CoverageReportTest, TotalsCountEachKindAndCause) {
  using V = CoverageEntry::Verdict;
  std::vector<CoverageFile> Files(2);
  Files[0].Path = "a.cu";
  Files[0].Entries = {entry("stencil", V::Rewritten, "ok"),
                      entry("stencil", V::Refused, "a read of 'a' at x + 3"),
                      entry("kernel", V::NoCandidate, "", "plain")};
  Files[1].Path = "b.cu";
  Files[1].Entries = {entry("stencil", V::Refused, "a read of 'b' at x + 7")};
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printCoverageReport(OS, Files);
  EXPECT_NE(Text.find("2 files (2 parsed): 3 candidates, 1 kernel with no "
                      "candidate."),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("| stencil | 3 | 1 | 2 | 0 | 0 |"), std::string::npos)
      << Text;
  // Both refusals are one cause, first seen in a.cu.
  EXPECT_NE(Text.find("| 2 | systolic: a read of '_' at x + N | a.cu:1:1 |"),
            std::string::npos)
      << Text;
  EXPECT_EQ(Text.find("did not parse"), std::string::npos) << Text;
}

TEST(CoverageReportTest, AKernelWithACandidateOnTheOtherSideIsNotBare) {
  using V = CoverageEntry::Verdict;
  std::vector<CoverageEntry> Host = {entry("kernel", V::NoCandidate, "", "k")};
  Host[0].Offset = 10;
  std::vector<CoverageEntry> Device = {entry("stencil", V::Rewritten, "ok")};
  Device[0].Offset = 10;
  mergeCoverage(Host, Device);
  ASSERT_EQ(Host.size(), 1u);
  EXPECT_EQ(Host[0].Kind, "stencil");
}

} // namespace
