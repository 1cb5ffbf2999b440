#include "tool/UnifiedDiff.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;

TEST(UnifiedDiff, EqualTextsGiveNothing) {
  EXPECT_EQ(unifiedDiff("f.cu", "a\nb\n", "a\nb\n"), "");
}

TEST(UnifiedDiff, OneRemovedLineWithContext) {
  std::string Before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string After = "1\n2\n3\n4\n6\n7\n8\n9\n";
  EXPECT_EQ(
      unifiedDiff("f.cu", Before, After),
      "--- f.cu\n+++ f.cu\n@@ -2,7 +2,6 @@\n 2\n 3\n 4\n-5\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, DistantChangesMakeTwoHunks) {
  std::string Before, After;
  for (int I = 1; I <= 20; ++I) {
    Before += std::to_string(I) + "\n";
    After += (I == 2    ? "two"
              : I == 18 ? "eighteen"
                        : std::to_string(I)) +
             std::string("\n");
  }
  std::string Diff = unifiedDiff("f.cu", Before, After);
  EXPECT_NE(Diff.find("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"),
            std::string::npos)
      << Diff;
  EXPECT_NE(
      Diff.find("@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n"),
      std::string::npos)
      << Diff;
}

TEST(UnifiedDiff, CloseChangesShareAHunk) {
  std::string Diff = unifiedDiff("f.cu", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n");
  EXPECT_EQ(Diff, "--- f.cu\n+++ f.cu\n@@ -1,5 +1,5 @@\n-a\n+A\n b\n c\n d\n"
                  "-e\n+E\n");
}

TEST(UnifiedDiff, InsertionIntoEmptyFile) {
  EXPECT_EQ(unifiedDiff("f.cu", "", "x\n"),
            "--- f.cu\n+++ f.cu\n@@ -0,0 +1,1 @@\n+x\n");
}

TEST(UnifiedDiff, MissingFinalNewlineIsMarked) {
  EXPECT_EQ(unifiedDiff("f.cu", "a\nb", "a\nc"),
            "--- f.cu\n+++ f.cu\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end "
            "of file\n+c\n\\ No newline at end of file\n");
}
