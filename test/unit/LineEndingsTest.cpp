#include "tool/LineEndings.h"
#include "gtest/gtest.h"

using namespace clang::tooling;
using namespace cuda_rewrite;

TEST(LineEndings, MostLinesDecide) {
  EXPECT_TRUE(endsLinesWithCrlf("a\r\nb\r\n"));
  EXPECT_TRUE(endsLinesWithCrlf("a\r\nb\r\nc\n"));
  EXPECT_FALSE(endsLinesWithCrlf("a\r\nb\nc\n"));
  EXPECT_FALSE(endsLinesWithCrlf("a\nb\n"));
  EXPECT_FALSE(endsLinesWithCrlf("no newline"));
}

TEST(LineEndings, NewTextTakesTheFilesLineEnding) {
  std::string Crlf = "int a;\r\nint b;\r\n";
  Replacements Edits;
  cantFail(Edits.add(Replacement("f.cu", 8, 0, "// new\nint c;\r\n\n")));
  Replacements Out = withLineEndingsOf(Crlf, Edits);
  EXPECT_EQ(cantFail(applyAllReplacements(Crlf, Out)),
            "int a;\r\n// new\r\nint c;\r\n\r\nint b;\r\n");
  // An LF file's edits stay as they are.
  std::string Lf = "int a;\nint b;\n";
  Replacements LfEdits;
  cantFail(LfEdits.add(Replacement("f.cu", 7, 0, "// new\nint c;\r\n\n")));
  EXPECT_EQ(cantFail(applyAllReplacements(Lf, withLineEndingsOf(Lf, LfEdits))),
            "int a;\n// new\nint c;\r\n\nint b;\n");
}
