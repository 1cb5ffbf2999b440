#include "rewriters/common/GeneratedLayout.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;

namespace {

// The user's code keeps its own (odd) layout throughout.
const char *User = "__global__ void  user( int *p )\n"
                   "{\n"
                   "    p[ 0 ] = 1;\n"
                   "    p[ 1 ] = 2;\n"
                   "}\n";

unsigned offsetOf(llvm::StringRef Text) {
  return unsigned(llvm::StringRef(User).find(Text));
}

/// \p Edits applied to \p Source after the layout, in \p Style.
std::string laidOutIn(llvm::StringRef Source,
                      std::vector<tooling::Replacement> Edits,
                      format::FormatStyle Style = format::getLLVMStyle()) {
  tooling::Replacements All;
  for (const tooling::Replacement &R : Edits)
    EXPECT_FALSE(bool(All.add(R)));
  return test::appliedEdits(Source,
                            layOutGeneratedCode(Source, All, Style, "user.cu"));
}

/// \p Edits applied to User after the layout, in \p Style.
std::string laidOut(std::vector<tooling::Replacement> Edits,
                    format::FormatStyle Style = format::getLLVMStyle()) {
  return laidOutIn(User, std::move(Edits), Style);
}

tooling::Replacement insert(unsigned Offset, llvm::StringRef Text) {
  return tooling::Replacement("user.cu", Offset, 0, Text);
}

TEST(GeneratedLayoutTest, InsertedDefinitionIsLaidOutAndTheUsersCodeIsNot) {
  std::string Out =
      laidOut({insert(0, "__device__ int   twice(int x){return 2*x;}\n\n")});
  EXPECT_EQ(Out, "__device__ int twice(int x) { return 2 * x; }\n\n" +
                     std::string(User));
}

TEST(GeneratedLayoutTest, DeletionFormatsNothing) {
  unsigned Begin = offsetOf("    p[ 1 ]");
  std::string Out = laidOut({tooling::Replacement(
      "user.cu", Begin, unsigned(llvm::StringRef("    p[ 1 ] = 2;\n").size()),
      "")});
  EXPECT_EQ(Out, "__global__ void  user( int *p )\n{\n    p[ 0 ] = 1;\n}\n");
}

TEST(GeneratedLayoutTest, LineHoldingGeneratedTextIsLaidOut) {
  // A replaced statement: its line follows the style, the others stay.
  unsigned Begin = offsetOf("p[ 1 ] = 2;");
  std::string Out = laidOut({tooling::Replacement(
      "user.cu", Begin, unsigned(llvm::StringRef("p[ 1 ] = 2;").size()),
      "p[1]=helper( p );")});
  EXPECT_NE(Out.find("    p[ 0 ] = 1;\n"), std::string::npos) << Out;
  EXPECT_NE(Out.find("  p[1] = helper(p);\n"), std::string::npos) << Out;
  EXPECT_NE(Out.find("__global__ void  user( int *p )\n"), std::string::npos)
      << Out;
}

TEST(GeneratedLayoutTest, PragmasKeepTheIndentationOfTheirLoop) {
  std::string Out = laidOut({insert(0, "__device__ void f(float *a) {\n"
                                       "// Each element.\n"
                                       "#pragma unroll\n"
                                       "for (int i = 0; i < 4; ++i) a[i] = 0;\n"
                                       "}\n")});
  EXPECT_EQ(Out.substr(0, Out.find(User)), "__device__ void f(float *a) {\n"
                                           "  // Each element.\n"
                                           "  #pragma unroll\n"
                                           "  for (int i = 0; i < 4; ++i)\n"
                                           "    a[i] = 0;\n"
                                           "}\n");
}

TEST(GeneratedLayoutTest, PragmaPastTheColumnLimitStaysWhole) {
  // Its comment form would be reflowed into several lines.
  format::FormatStyle Narrow = format::getLLVMStyle();
  Narrow.ColumnLimit = 30;
  std::string Out =
      laidOut({insert(0, "__device__ void f() {\n"
                         "  #pragma nv_diag_suppress set_but_not_used\n"
                         "  int unused = 0;\n"
                         "}\n")},
              Narrow);
  EXPECT_NE(Out.find("\n  #pragma nv_diag_suppress set_but_not_used\n"),
            std::string::npos)
      << Out;
}

TEST(GeneratedLayoutTest, DisableFormatKeepsTheTextAsWritten) {
  format::FormatStyle Off = format::getLLVMStyle();
  Off.DisableFormat = true;
  std::string Out = laidOut({insert(0, "int   g(){return 1;}\n")}, Off);
  EXPECT_EQ(Out, "int   g(){return 1;}\n" + std::string(User));
}

} // namespace

namespace {

TEST(GeneratedLayoutTest, PragmaAfterALongCommentStaysAPragma) {
  // Reflowing would join the pragma's comment form to a comment above that
  // fills its line.
  std::string Out = laidOut(
      {insert(0, "__device__ void f(float *a) {\n"
                 "  // Pass the partial sums one column on: within the lane, "
                 "and from the lane below.\n"
                 "  #pragma unroll\n"
                 "  for (int i = 0; i < 4; ++i) a[i] = 0;\n"
                 "}\n")});
  EXPECT_EQ(Out.find("cuda-rewrite-pragma"), std::string::npos) << Out;
  EXPECT_NE(Out.find("\n  #pragma unroll\n  for"), std::string::npos) << Out;
}

} // namespace

namespace {

TEST(GeneratedLayoutTest, LaunchBoundsAreAnAttributeNotTheName) {
  auto Style = generatedCodeStyle("/nonexistent/dir/k.cu", "");
  ASSERT_TRUE(bool(Style));
  std::string Out = laidOut(
      {insert(0, "__global__ void __launch_bounds__(1024) "
                 "child_aggregated(cuda_rewrite::LaunchTable cr_launches, int "
                 "*p, int n) {}\n")},
      *Style);
  EXPECT_EQ(Out.substr(0, Out.find(User)),
            "__global__ void __launch_bounds__(1024)\n"
            "child_aggregated(cuda_rewrite::LaunchTable cr_launches, int *p, "
            "int n) {}\n");
}

} // namespace

namespace {

TEST(GeneratedLayoutTest, UserCommentAboveAGeneratedOneStaysAsWritten) {
  // clang-format reflows consecutive line comments as one paragraph; a
  // blank line keeps the user's lines apart from the generated one.
  const char *Comments = "// The user's comment,\n"
                         "// in short lines.\n";
  std::string Source = std::string(Comments) + User;
  std::string Out = laidOutIn(
      Source, {insert(unsigned(llvm::StringRef(Comments).size()),
                      "// A generated comment that is long enough to be "
                      "broken by the layout into two lines.\n")});
  EXPECT_EQ(Out.substr(0, Out.find(User)),
            "// The user's comment,\n"
            "// in short lines.\n"
            "\n"
            "// A generated comment that is long enough to be broken by the "
            "layout into two\n"
            "// lines.\n");
}

} // namespace

namespace {

TEST(GeneratedLayoutTest, UserCommentNeverReflowedWithGeneratedText) {
  // A removed line between them: the generated comment comes right after
  // the user's in the result. Whatever the layout does, the user's lines
  // stay as written and nothing is lost.
  const char *Head = "// The user's comment, long enough that a reflow would "
                     "join the next one\n"
                     "// to it.\n"
                     "#pragma removed\n";
  std::string Source = std::string(Head) + User;
  unsigned Pragma = unsigned(llvm::StringRef(Head).find("#pragma"));
  std::string Out = laidOutIn(
      Source,
      {tooling::Replacement(
           "user.cu", Pragma,
           unsigned(llvm::StringRef("#pragma removed\n").size()), ""),
       insert(unsigned(llvm::StringRef(Head).size()),
              "// Generated: a comment line of its own, and a long one that "
              "the layout breaks.\nint generated;\n")});
  EXPECT_EQ(Out.find("// The user's comment, long enough that a reflow would "
                     "join the next one\n// to it.\n"),
            0u)
      << Out;
  EXPECT_NE(Out.find("// Generated: a comment line of its own"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("int generated;\n"), std::string::npos) << Out;
}

} // namespace

namespace {

TEST(GeneratedLayoutTest, LongDocCommentIsReflowed) {
  // Reflowing `///` lines moves words across the markers; that is still
  // layout only, so it is kept.
  std::string Out = laidOut(
      {insert(0, "/// A generated helper whose comment runs on and on past "
                 "the column limit of eighty, and\n/// then some.\n"
                 "__device__ void helper();\n")});
  std::string Generated = Out.substr(0, Out.find(User));
  EXPECT_EQ(Generated, "/// A generated helper whose comment runs on and on "
                       "past the column limit of\n"
                       "/// eighty, and then some.\n"
                       "__device__ void helper();\n");
}

} // namespace

namespace {

TEST(GeneratedLayoutTest, ContinuedLinesOfAnEditedStatementAreLaidOutWithIt) {
  // Launch bounds added to a kernel head that continues on a second line:
  // the head is laid out as a whole (else it would pass 80 columns), the
  // body stays as written.
  const char *Kernel =
      "__global__ void parent(float **rows, const int *lengths, int count,\n"
      "                       float scale) {\n"
      "    rows[ 0 ][ 0 ] = scale;\n"
      "}\n";
  std::string Out = laidOutIn(
      Kernel, {insert(unsigned(llvm::StringRef(Kernel).find("parent")),
                      "__launch_bounds__(256) ")});
  for (llvm::StringRef Line : llvm::split(Out, '\n'))
    EXPECT_LE(Line.size(), 80u) << Out;
  EXPECT_NE(Out.find("parent(float **rows, const int *lengths, int count, "
                     "float scale) {\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("\n    rows[ 0 ][ 0 ] = scale;\n}\n"), std::string::npos)
      << Out;
}

} // namespace
