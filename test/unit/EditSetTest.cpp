#include "rewriters/common/EditSet.h"
#include "test/unit/CudaTestParse.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

const char *Source = "#define TWICE(x) ((x) + (x))\n"
                     "__global__ void k(int *p) {\n"
                     "  p[0] = 1;\n"
                     "  p[1] = TWICE(2);\n"
                     "}\n";

class EditSetTest : public ::testing::Test {
protected:
  void SetUp() override {
    AST = parseCuda(Source);
    ASSERT_TRUE(AST);
    SM = &AST->getSourceManager();
    Start = SM->getLocForStartOfFile(SM->getMainFileID());
  }
  SourceLocation at(unsigned Offset) { return Start.getLocWithOffset(Offset); }
  CharSourceRange chars(unsigned Begin, unsigned End) {
    return CharSourceRange::getCharRange(at(Begin), at(End));
  }
  std::string apply(const EditSet &Edits) {
    return appliedEdits(Source, Edits.finalize());
  }

  std::unique_ptr<ASTUnit> AST;
  const SourceManager *SM = nullptr;
  SourceLocation Start;
};

unsigned offsetOf(llvm::StringRef Needle) {
  return llvm::StringRef(Source).find(Needle);
}

} // namespace

TEST_F(EditSetTest, ReplaceAndInsert) {
  EditSet Edits(*SM);
  unsigned One = offsetOf("1;");
  ASSERT_FALSE(bool(Edits.replace(chars(One, One + 1), "42")));
  ASSERT_FALSE(bool(Edits.insertBefore(at(offsetOf("  p[0]")), "  // hi\n")));
  EXPECT_EQ(apply(Edits), "#define TWICE(x) ((x) + (x))\n"
                          "__global__ void k(int *p) {\n"
                          "  // hi\n"
                          "  p[0] = 42;\n"
                          "  p[1] = TWICE(2);\n"
                          "}\n");
}

TEST_F(EditSetTest, ConflictIsAnError) {
  EditSet Edits(*SM);
  unsigned One = offsetOf("1;");
  ASSERT_FALSE(bool(Edits.replace(chars(One, One + 2), "2;")));
  llvm::Error E = Edits.replace(chars(One + 1, One + 2), ",");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("conflicting edits"),
            std::string::npos);
}

TEST_F(EditSetTest, MacroExpansionCannotBeEdited) {
  EditSet Edits(*SM);
  // The '+' of TWICE(2) exists only inside the macro's expansion.
  auto Matches = ast_matchers::match(
      ast_matchers::binaryOperator(ast_matchers::isExpansionInMainFile(),
                                   ast_matchers::hasOperatorName("+"))
          .bind("plus"),
      AST->getASTContext());
  ASSERT_EQ(Matches.size(), 1u);
  const auto *Plus = Matches[0].getNodeAs<BinaryOperator>("plus");
  llvm::Error E = Edits.replace(
      CharSourceRange::getTokenRange(Plus->getOperatorLoc()), "-");
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "cannot edit code produced by a macro expansion");
}

TEST_F(EditSetTest, DefinitionsAreEmittedOnceAndSorted) {
  EditSet Edits(*SM);
  SourceLocation Kernel = at(offsetOf("__global__"));
  ASSERT_FALSE(bool(Edits.addDefinition("b", "// b\n", Kernel)));
  ASSERT_FALSE(bool(Edits.addDefinition("a", "// a\n", Kernel)));
  ASSERT_FALSE(bool(Edits.addDefinition("b", "// b\n", Kernel)));
  EXPECT_EQ(apply(Edits), "#define TWICE(x) ((x) + (x))\n// a\n// b\n"
                          "__global__ void k(int *p) {\n"
                          "  p[0] = 1;\n"
                          "  p[1] = TWICE(2);\n"
                          "}\n");
  llvm::Error E = Edits.addDefinition("a", "// other\n", Kernel);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "two different definitions generated for 'a'");
}

TEST_F(EditSetTest, RemoveLinesTakesTheNewlineUnlessTheLineHoldsMore) {
  unsigned Line = offsetOf("  p[0]");
  auto Removed = [&](unsigned From, unsigned To) {
    EditSet Edits(*SM);
    EXPECT_FALSE(bool(Edits.removeLines(at(Line + From), at(Line + To))));
    return apply(Edits);
  };
  const std::string Head = "#define TWICE(x) ((x) + (x))\n"
                           "__global__ void k(int *p) {\n";
  // `p[0] = 1;`: its whole line goes.
  EXPECT_EQ(Removed(2, 11), Head + "  p[1] = TWICE(2);\n}\n");
  // `p[0] = 1` with its `;` left on the line: only the range goes.
  EXPECT_EQ(Removed(2, 10), Head + "  ;\n  p[1] = TWICE(2);\n}\n");
}
