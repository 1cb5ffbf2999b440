#include "rewriters/common/CodeWriter.h"
#include "clang/Basic/LangOptions.h"
#include "gtest/gtest.h"
#include <optional>

using namespace cuda_rewrite;

namespace {

TEST(CodeWriterTest, NestedBlocksAreIndented) {
  CodeWriter W;
  {
    CodeWriter::Block Function = W.block("void f() {");
    CodeWriter::Block Loop = W.block("for (int i = 0; i < n; ++i) {");
    {
      CodeWriter::Block Then = W.unbraced("if (i % 2)");
      W.line("x += i;");
    }
    W.line("y += i;");
  }
  W.line("int z;");
  EXPECT_EQ(W.str(), "void f() {\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    if (i % 2)\n"
                     "      x += i;\n"
                     "    y += i;\n"
                     "  }\n"
                     "}\n"
                     "int z;\n");
}

TEST(CodeWriterTest, BlocksCloseInReverseOrder) {
  CodeWriter W(4);
  {
    CodeWriter::Block Struct = W.block("struct S {", "};");
    CodeWriter::Block Method = W.block("void f() {");
    CodeWriter::Block Loop = W.unbraced("while (g())");
    W.line("h();");
  }
  W.line("int x;");
  EXPECT_EQ(W.str(), "struct S {\n"
                     "    void f() {\n"
                     "        while (g())\n"
                     "            h();\n"
                     "    }\n"
                     "};\n"
                     "int x;\n");
}

/// A function that writes a block's head and leaves its body to the caller.
CodeWriter::Block openLoop(CodeWriter &W, const std::string &Var) {
  W.line("#pragma unroll");
  return W.block("for (int " + Var + " = 0; " + Var + " < 4; ++" + Var + ") {");
}

TEST(CodeWriterTest, BlocksMoveToTheCaller) {
  CodeWriter W;
  {
    CodeWriter::Block Outer = openLoop(W, "i");
    std::optional<CodeWriter::Block> Inner;
    Inner.emplace(openLoop(W, "j"));
    W.line("s += a[i][j];");
  }
  EXPECT_EQ(W.str(), "#pragma unroll\n"
                     "for (int i = 0; i < 4; ++i) {\n"
                     "  #pragma unroll\n"
                     "  for (int j = 0; j < 4; ++j) {\n"
                     "    s += a[i][j];\n"
                     "  }\n"
                     "}\n");
}

TEST(CodeWriterTest, ContinueWithWritesBetweenBodies) {
  CodeWriter W;
  {
    CodeWriter::Block Loop = W.block("for (;;) {");
    CodeWriter::Block If = W.block("if (a) {");
    W.line("b();");
    If.continueWith("} else {");
    W.line("c();");
  }
  EXPECT_EQ(W.str(), "for (;;) {\n"
                     "  if (a) {\n"
                     "    b();\n"
                     "  } else {\n"
                     "    c();\n"
                     "  }\n"
                     "}\n");
}

TEST(CodeWriterTest, EmptyLinesHaveNoBlanks) {
  CodeWriter W;
  CodeWriter::Block Body = W.block("{");
  W.line("a();");
  W.line("");
  W.line("b();\n\nc();");
  W.comment("First.\n\nSecond.");
  EXPECT_EQ(W.str(), "{\n"
                     "  a();\n"
                     "\n"
                     "  b();\n"
                     "\n"
                     "  c();\n"
                     "  // First.\n"
                     "  //\n"
                     "  // Second.\n");
}

TEST(CodeWriterTest, ContinuationLinesKeepTheirRelativeIndentation) {
  CodeWriter W;
  CodeWriter::Block Body = W.block("{");
  W.line("const bool b = x > 0 ||\n    y > 0;");
  W.line("int n = " + llvm::Twine(42) + "; // The answer.");
  EXPECT_EQ(W.str(), "{\n"
                     "  const bool b = x > 0 ||\n"
                     "      y > 0;\n"
                     "  int n = 42; // The answer.\n");
}

TEST(CodeWriterTest, RawTextIsNotIndented) {
  CodeWriter W;
  CodeWriter::Block Body = W.block("{");
  W.raw("#define N 4\n");
  W.line("f(N);");
  EXPECT_EQ(W.str(), "{\n"
                     "#define N 4\n"
                     "  f(N);\n");
}

TEST(NameAllocatorTest, FreeNamesAreGivenAsWanted) {
  NameAllocator Names;
  EXPECT_EQ(Names.name("i"), "i");
  EXPECT_EQ(Names.name("sum"), "sum");
}

TEST(NameAllocatorTest, NamesAreMemoized) {
  NameAllocator Names;
  Names.reserve("i");
  std::string First = Names.name("i");
  EXPECT_EQ(First, "i_");
  EXPECT_EQ(Names.name("i"), First);
  EXPECT_EQ(Names.name("j"), "j");
  EXPECT_EQ(Names.name("j"), "j");
}

TEST(NameAllocatorTest, RepeatedCollisionsAppendUnderscores) {
  NameAllocator Names;
  Names.reserve("lane");
  Names.reserve("lane_");
  Names.reserve("lane__");
  EXPECT_EQ(Names.name("lane"), "lane___");
}

TEST(NameAllocatorTest, GivenNamesAreTaken) {
  NameAllocator Names;
  Names.reserve("x");
  // "x_" is given to "x", so a generator that wants "x_" itself gets
  // another name rather than a second variable of the same name.
  EXPECT_EQ(Names.name("x"), "x_");
  EXPECT_EQ(Names.name("x_"), "x__");
  EXPECT_EQ(Names.name("x"), "x_");
}

TEST(NameAllocatorTest, FreshNamesAreNeverGivenTwice) {
  NameAllocator Names;
  Names.reserve("c");
  // Two host arguments that would both be named "a_b" get two names; a
  // later name("a_b") is not one of them.
  EXPECT_EQ(Names.fresh("a_b"), "a_b");
  EXPECT_EQ(Names.fresh("a_b"), "a_b_");
  EXPECT_EQ(Names.fresh("c"), "c_");
  EXPECT_EQ(Names.name("a_b"), "a_b__");
  EXPECT_EQ(Names.name("a_b"), "a_b__");
}

/// Checks that each of \p Taken was reserved (it is given with one
/// underscore) and each of \p Free was not (it is given as it is).
void expectReserved(NameAllocator &Names,
                    std::initializer_list<const char *> Taken,
                    std::initializer_list<const char *> Free) {
  for (const char *Name : Taken)
    EXPECT_EQ(Names.name(Name), std::string(Name) + "_") << Name;
  for (const char *Name : Free)
    EXPECT_EQ(Names.name(Name), Name) << Name;
}

TEST(NameAllocatorTest, IdentifiersAreScannedFromText) {
  NameAllocator Names;
  Names.reserveIdentifiersIn("w[2 * k + _row] + filter[k1] * 1.0f");
  // The suffix of a number is reserved too ("f"), at worst an underscore
  // too many; parts of words are not: 'row' and 'ilter' only occur inside
  // others.
  expectReserved(Names, {"w", "k", "_row", "k1", "filter", "f"},
                 {"row", "ilter"});
}

TEST(NameAllocatorTest, SourceIsReadAsTheLexerReadsIt) {
  NameAllocator Names;
  clang::LangOptions Lang;
  Lang.CPlusPlus = true;
  Names.reserveIdentifiersOfSource(
      "int sum = row[i]; // CHECK: cr_pending_0\n"
      "const char *s = \"cr_self\"; /* cr_grid */ float g = 1.0f;",
      Lang);
  // Words in comments and string literals are not the user's names, nor is
  // the suffix of a number.
  expectReserved(Names, {"sum", "row", "i", "g"},
                 {"cr_pending_0", "cr_self", "cr_grid", "f"});
}

} // namespace
