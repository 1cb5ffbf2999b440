#include "analysis/Pragmas.h"
#include "test/unit/CudaTestParse.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace cuda_rewrite;

namespace {

/// What attachPragmas made of a source, as strings that outlive the AST.
struct Attachment {
  std::string Directive; ///< PragmaDirective::spelling()
  std::string Target;    ///< "decl <name>" or "stmt <class> in <function>"
};

std::vector<Attachment> attach(const std::string &Code, unsigned &Errors) {
  std::vector<Attachment> Out;
  Errors = 0;
  test::parseCudaWithPragmas(
      Code, [&](ASTContext &Ctx, const std::vector<AttachedPragma> &Attached) {
        for (const AttachedPragma &P : Attached) {
          Attachment Att{P.Directive->spelling(), ""};
          if (const auto *ND = dyn_cast_or_null<NamedDecl>(P.TargetDecl))
            Att.Target = "decl " + ND->getNameAsString();
          else if (P.TargetStmt)
            Att.Target = std::string("stmt ") +
                         P.TargetStmt->getStmtClassName() + " in " +
                         P.EnclosingFunction->getNameAsString();
          Out.push_back(Att);
        }
        Errors = Ctx.getDiagnostics().getNumErrors();
      });
  return Out;
}

} // namespace

TEST(Pragmas, AttachesToDeclarationsAndStatements) {
  unsigned Errors;
  std::vector<Attachment> A = attach(R"cu(
__global__ void child(int *p) {}
#pragma cuda_rewrite systolic p(4) block(128)
__global__ void stencil(const float *in, float *out) {}
__global__ void parent(int *p) {
  p[0] = 1;
  // Comments between the pragma and its statement are fine.
#pragma cuda_rewrite aggregate granularity(warp)
  // here
  if (p) child<<<1, 1>>>(p);
}
#pragma cuda_rewrite stage threads(2)
__device__ void st(int item, int rank) {}
void host(int *p) {
#pragma cuda_rewrite fuse tile(8, 8) hybrid(0.5)
  {
    child<<<1, 1>>>(p);
    child<<<1, 1>>>(p);
  }
}
)cu",
                                     Errors);
  EXPECT_EQ(Errors, 0u);
  ASSERT_EQ(A.size(), 4u);
  EXPECT_EQ(A[0].Directive, "systolic p(4) block(128)");
  EXPECT_EQ(A[0].Target, "decl stencil");
  EXPECT_EQ(A[1].Directive, "aggregate granularity(warp)");
  EXPECT_EQ(A[1].Target, "stmt IfStmt in parent");
  EXPECT_EQ(A[2].Directive, "stage threads(2)");
  EXPECT_EQ(A[2].Target, "decl st");
  EXPECT_EQ(A[3].Directive, "fuse tile(8, 8) hybrid(0.5)");
  EXPECT_EQ(A[3].Target, "stmt CompoundStmt in host");
}

TEST(Pragmas, TemplateKernelIsATarget) {
  unsigned Errors;
  std::vector<Attachment> A = attach(R"cu(
#pragma cuda_rewrite promote aggregate(8) overlap
template <typename T> __global__ void walk(T *p, int d) {
  if (d > 0) walk<<<1, 1>>>(p, d - 1);
}
)cu",
                                     Errors);
  EXPECT_EQ(Errors, 0u);
  ASSERT_EQ(A.size(), 1u);
  EXPECT_EQ(A[0].Directive, "promote aggregate(8) overlap");
  EXPECT_EQ(A[0].Target, "decl walk");
}

TEST(Pragmas, WrongTargetsAreErrorsAndDropped) {
  unsigned Errors;
  std::vector<Attachment> A = attach(R"cu(
__global__ void k(int *p) {}
void host(int *p) {
#pragma cuda_rewrite aggregate
  k<<<1, 1>>>(p);
}
#pragma cuda_rewrite systolic
int x;
#pragma cuda_rewrite pipeline model(fine)
void h() {}
)cu",
                                     Errors);
  EXPECT_EQ(Errors, 3u);
  EXPECT_TRUE(A.empty());
}

TEST(Pragmas, SpellingRoundTrips) {
  unsigned Errors;
  std::vector<Attachment> A = attach(R"cu(
__global__ void k(int *p) {}
void host(int *p) {
#pragma cuda_rewrite pipeline model(hybrid) config("tune.json")
  k<<<1, 1>>>(p);
}
)cu",
                                     Errors);
  ASSERT_EQ(A.size(), 1u);
  EXPECT_EQ(A[0].Directive, "pipeline model(hybrid) config(tune.json)");
}

// Values no kernel can take are errors at the pragma, which is then dropped;
// the edges of each range are accepted.
TEST(Pragmas, ClauseValuesOutOfRangeAreErrors) {
  auto ErrorsOf = [](const std::string &Pragma) {
    unsigned Errors;
    std::vector<Attachment> A =
        attach(Pragma + "\n__global__ void k(float *p) {}\n", Errors);
    EXPECT_EQ(A.size(), Errors ? 0u : 1u) << Pragma;
    return Errors;
  };
  for (const char *Bad : {"#pragma cuda_rewrite systolic p(65)",
                          "#pragma cuda_rewrite systolic p(1000000)",
                          "#pragma cuda_rewrite systolic block(7)",
                          "#pragma cuda_rewrite systolic block(2048)",
                          "#pragma cuda_rewrite systolic vector(3)",
                          "#pragma cuda_rewrite systolic vector(8)",
                          "#pragma cuda_rewrite promote aggregate(65536)",
                          "#pragma cuda_rewrite stage threads(3)",
                          "#pragma cuda_rewrite stage threads(512)"})
    EXPECT_EQ(ErrorsOf(Bad), 1u) << Bad;
  for (const char *Good : {"#pragma cuda_rewrite systolic p(64) block(1024)",
                           "#pragma cuda_rewrite systolic p(1) block(32)",
                           "#pragma cuda_rewrite systolic vector(4)",
                           "#pragma cuda_rewrite promote aggregate(65535)"})
    EXPECT_EQ(ErrorsOf(Good), 0u) << Good;
}
