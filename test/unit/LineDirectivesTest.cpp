//===- LineDirectivesTest.cpp - #line directives in rewritten files -------===//

#include "tool/LineDirectives.h"

#include "gtest/gtest.h"

using namespace cuda_rewrite;
using clang::tooling::Replacement;
using clang::tooling::Replacements;

namespace {

const char File[] = "/src/a.cu";

/// An edit of \p Original: \p Length characters from the first occurrence
/// of \p At replaced by \p Text.
struct Edit {
  std::string At;
  unsigned Length;
  std::string Text;
};

std::string rewrite(llvm::StringRef Original, std::vector<Edit> Edits) {
  Replacements R;
  for (const Edit &E : Edits) {
    size_t Offset = Original.find(E.At);
    EXPECT_NE(Offset, llvm::StringRef::npos) << E.At;
    llvm::cantFail(R.add(Replacement(File, Offset, E.Length, E.Text)));
  }
  return llvm::cantFail(applyWithLineDirectives(Original, R, File));
}

/// The directive for \p Line of File.
std::string line(unsigned Line) {
  return "#line " + std::to_string(Line) + " \"/src/a.cu\"\n";
}

TEST(LineDirectives, NoEditsLeaveTheTextUnchanged) {
  for (llvm::StringRef Text : {"", "int a;\n", "int a;\nint b;", "\n\n"}) {
    EXPECT_EQ(rewrite(Text, {}), Text.str());
    // An edit that changes nothing changes nothing either.
    EXPECT_EQ(rewrite(Text.str() + "x", {{"x", 1, "x"}}), Text.str() + "x");
  }
}

TEST(LineDirectives, EditThatAddsLines) {
  EXPECT_EQ(rewrite("a;\nb;\nc;\nd;\n", {{"b;", 2, "b1;\nb2;\nb3;"}}),
            line(1) + "a;\nb1;\nb2;\nb3;\n" + line(3) + "c;\nd;\n");
}

TEST(LineDirectives, EditThatRemovesLines) {
  EXPECT_EQ(rewrite("a;\nb;\nc;\nd;\n", {{"b;\nc;\n", 6, ""}}),
            line(1) + "a;\n" + line(4) + "d;\n");
  // A pragma line removed.
  EXPECT_EQ(rewrite("a;\n#pragma x\nb;\n", {{"#pragma x\n", 10, ""}}),
            line(1) + "a;\n" + line(3) + "b;\n");
}

TEST(LineDirectives, EditThatKeepsTheLineCountNeedsOnlyTheFirst) {
  EXPECT_EQ(rewrite("a;\nb;\nc;\n", {{"b", 1, "B"}}), line(1) + "a;\nB;\nc;\n");
  // An insertion that does not end a line is part of the line it precedes.
  EXPECT_EQ(rewrite("void f();\nint a;\n", {{"void", 0, "__device__ "}}),
            line(1) + "__device__ void f();\nint a;\n");
}

TEST(LineDirectivesMidLine, TheWholeLineIsTheEditsLine) {
  // The rest of the first line follows the generated text; the next line
  // is in sync again.
  EXPECT_EQ(rewrite("x = f(1); y = 2;\nz = 3;\n", {{"f(1)", 4, "g(1);\nh(1)"}}),
            line(1) + "x = g(1);\nh(1); y = 2;\n" + line(2) + "z = 3;\n");
  // An edit that joins two lines touches both.
  EXPECT_EQ(rewrite("a = 1 +\n    2;\nb;\n", {{" +\n    ", 7, " + "}}),
            line(1) + "a = 1 + 2;\n" + line(3) + "b;\n");
}

TEST(LineDirectivesMidLine, EditsOnNeighbouringLinesAreOneGroup) {
  EXPECT_EQ(rewrite("a;\nb;\nc;\nd;\n", {{"b", 1, "b\nb2"}, {"c", 1, "c\nc2"}}),
            line(1) + "a;\nb\nb2;\nc\nc2;\n" + line(4) + "d;\n");
}

TEST(LineDirectivesMidLine, GroupsApartEachGetTheirDirective) {
  EXPECT_EQ(
      rewrite("a;\nb;\nc;\nd;\ne;\n", {{"a", 1, "a\na2"}, {"d;\n", 3, ""}}),
      line(1) + "a\na2;\n" + line(2) + "b;\nc;\n" + line(5) + "e;\n");
}

TEST(LineDirectivesEnds, EditOnTheFirstLine) {
  // A runtime header included before the first declaration.
  EXPECT_EQ(
      rewrite("int a;\nint b;\n",
              {{"int a", 0, "#include \"cuda_rewrite/runtime.cuh\"\n\n"}}),
      line(1) + "#include \"cuda_rewrite/runtime.cuh\"\n\n" + line(1) +
          "int a;\nint b;\n");
  EXPECT_EQ(rewrite("int a;\nint b;\n", {{"a", 1, "a;\nint a2"}}),
            line(1) + "int a;\nint a2;\n" + line(2) + "int b;\n");
}

TEST(LineDirectivesEnds, EditOnTheLastLine) {
  // Nothing follows: no directive.
  EXPECT_EQ(rewrite("a;\nb;\n", {{"b", 1, "b\nb2"}}), line(1) + "a;\nb\nb2;\n");
  EXPECT_EQ(rewrite("a;\nb;", {{"b", 1, "b\nb2"}}), line(1) + "a;\nb\nb2;");
  EXPECT_EQ(rewrite("a;\nb;", {{"b;", 2, ""}}), line(1) + "a;\n");
  // Appended at the end.
  EXPECT_EQ(rewrite("a;\nb;\n", {{"b;\n", 3, "b;\nc;\n"}}),
            line(1) + "a;\nb;\nc;\n");
}

TEST(LineDirectivesUnsafe, NotAfterABackslashContinuation) {
  // The edit adds a line inside a macro definition: the lines after it up
  // to the end of the definition get no directive.
  EXPECT_EQ(rewrite("#define M(x) \\\n  f(x) + \\\n  h(x)\nint a;\n",
                    {{"f(x)", 4, "f(x) + \\\n  g(x)"}}),
            line(1) + "#define M(x) \\\n  f(x) + \\\n  g(x) + \\\n  h(x)\n" +
                line(4) + "int a;\n");
  // Blanks between the backslash and the newline still continue the line.
  EXPECT_EQ(rewrite("a; \\ \nb;\nc;\n", {{"a", 1, "a0;\na"}}),
            line(1) + "a0;\na; \\ \nb;\n" + line(3) + "c;\n");
}

TEST(LineDirectivesUnsafe, NotInsideABlockComment) {
  EXPECT_EQ(rewrite("int a; /* one\ntwo */ int b;\nint c;\n",
                    {{"int a;", 6, "int a;\nint a2;"}}),
            line(1) + "int a;\nint a2; /* one\ntwo */ int b;\n" + line(3) +
                "int c;\n");
  // Comment markers inside literals and line comments are no comments.
  EXPECT_EQ(rewrite("a; // /*\nb = \"/*\";\nc = '\"'; /* x */\nd;\n",
                    {{"a;", 2, "a;\na2;"}}),
            line(1) + "a;\na2; // /*\n" + line(2) +
                "b = \"/*\";\nc = '\"'; /* x */\nd;\n");
  EXPECT_EQ(rewrite("b = \"/*\"; c = '\"'; a;\nd;\n", {{"a;", 2, "a;\na2;"}}),
            line(1) + "b = \"/*\"; c = '\"'; a;\na2;\n" + line(2) + "d;\n");
}

TEST(LineDirectivesUnsafe, DigitSeparatorsAreNoCharacterLiterals) {
  // Were 1'000 taken for a character literal, the comment it precedes would
  // be missed and a directive put inside it.
  EXPECT_EQ(rewrite("a;\nint n = 1'000; /* open\nclose */ int m;\nint z;\n",
                    {{"int n", 5, "int p;\nint n"}}),
            line(1) + "a;\nint p;\nint n = 1'000; /* open\nclose */ int m;\n" +
                line(4) + "int z;\n");
}

TEST(LineDirectivesUnsafe, NotInsideARawString) {
  EXPECT_EQ(rewrite("const char *s = R\"x(\n)\" still\n)x\";\nint c;\n",
                    {{"const", 5, "int s0;\nconst"}}),
            line(1) + "int s0;\nconst char *s = R\"x(\n)\" still\n)x\";\n" +
                line(4) + "int c;\n");
}

TEST(LineDirectivesUnsafe, NotInsideParentheses) {
  // Perhaps a function-like macro's arguments, where a directive is not
  // portable.
  EXPECT_EQ(rewrite("CHECK(a,\n      b);\nint c;\n", {{"a,", 2, "a0,\na,"}}),
            line(1) + "CHECK(a0,\na,\n      b);\n" + line(3) + "int c;\n");
  // Parentheses in a preprocessor directive do not count.
  EXPECT_EQ(rewrite("#define L (\nint a;\nint b;\n",
                    {{"int a", 5, "int a0;\nint a"}}),
            line(1) + "#define L (\nint a0;\nint a;\n" + line(3) + "int b;\n");
}

TEST(LineDirectives, FileNameIsEscaped) {
  EXPECT_EQ(lineDirective(3, "C:\\src\\a \"b\".cu"),
            "#line 3 \"C:\\\\src\\\\a \\\"b\\\".cu\"\n");
  EXPECT_EQ(lineDirective(1, "/a\nb.cu"), "#line 1 \"/a\\nb.cu\"\n");
}

TEST(LineDirectives, EditPastTheEndIsAnError) {
  Replacements R;
  llvm::cantFail(R.add(Replacement(File, 5, 1, "x")));
  llvm::Expected<std::string> Out = applyWithLineDirectives("abc", R, File);
  EXPECT_FALSE(static_cast<bool>(Out));
  llvm::consumeError(Out.takeError());
}

} // namespace
