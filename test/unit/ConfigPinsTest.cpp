#include "analysis/ConfigPins.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

/// The pins of the initializer of `Name` (the element \p Element of a braced
/// one), or "refused: <why>".
std::string pinsOf(llvm::StringRef Code, llvm::StringRef Name,
                   int Element = -1, bool Inside = false) {
  auto AST = parseCuda(Code);
  if (!AST)
    return "no parse";
  for (const clang::Decl *D :
       AST->getASTContext().getTranslationUnitDecl()->decls()) {
    const auto *V = llvm::dyn_cast<clang::VarDecl>(D);
    if (!V || V->getName() != Name)
      continue;
    const clang::Expr *Init = V->getInit();
    if (Element >= 0)
      Init = llvm::cast<clang::InitListExpr>(Init->IgnoreImplicit())
                 ->getInit(Element);
    if (Inside)
      Init = Init->IgnoreParenImpCasts();
    ConfigPins Pins;
    if (!Pins.pin(Init, AST->getASTContext()))
      return "refused: " + Pins.why();
    return Pins.staticAsserts();
  }
  return "no variable";
}

} // namespace

TEST(ConfigPins, MacroOfOneValueIsPinnedByName) {
  EXPECT_EQ(pinsOf("#define N 1024\nconstexpr int n = N;", "n"),
            "static_assert((N) == 1024, \"cuda-rewrite: rewritten for N == "
            "1024; rerun cuda-rewrite for this configuration\");\n");
}

// difftest systolic seed 4, p358: the parentheses were stripped first and the
// literal inside them pinned against itself, true under every -D.
TEST(ConfigPins, ParenthesizedMacroIsPinnedByName) {
  std::string Pins =
      pinsOf("#define W (-0.296875f)\nconstexpr float w = W;", "w");
  EXPECT_NE(Pins.find("static_assert((W) == -0x1.3p-2f,"), std::string::npos)
      << Pins;
  EXPECT_EQ(Pins.find("((-0.296875f))"), std::string::npos) << Pins;
}

// difftest systolic seed 33, p3: a weight `W * in[..]` reached the pin
// with its parentheses stripped by the analysis; what they enclose is all
// of the body but them, so the macro's name spells it.
TEST(ConfigPins, InsideTheParenthesesOfAMacroIsPinnedByName) {
  std::string Pins = pinsOf("#define W ( -0.296875f )\nconstexpr float w = W;",
                            "w", -1, /*Inside=*/true);
  EXPECT_NE(Pins.find("static_assert((W) == -0x1.3p-2f,"), std::string::npos)
      << Pins;
  EXPECT_EQ(pinsOf("#define N ((64))\nconstexpr int n = N;", "n", -1,
                   /*Inside=*/true)
                .find("static_assert((N) == 64,"),
            0u);
}

TEST(ConfigPins, MacroNamingAParenthesizedMacroIsPinnedByTheOuterName) {
  std::string Pins =
      pinsOf("#define B (2.0f)\n#define A B\nconstexpr float a = A;", "a");
  EXPECT_NE(Pins.find("static_assert((A) == 0x1p1f,"), std::string::npos)
      << Pins;
}

TEST(ConfigPins, PartOfAnObjectLikeMacroIsRefused) {
  std::string Pins =
      pinsOf("#define WS {0.5f, 0.25f}\nconstexpr float ws[2] = WS;", "ws", 1);
  EXPECT_EQ(Pins.rfind("refused: a value comes through a macro", 0), 0u)
      << Pins;
}

TEST(ConfigPins, LiteralsWrittenInPlaceNeedNoPin) {
  EXPECT_EQ(pinsOf("constexpr float w = (-0.5f);", "w"), "");
  EXPECT_EQ(
      pinsOf("#define TWICE(x) ((x) * 2)\nconstexpr int t = TWICE(3);", "t"),
      "");
}
