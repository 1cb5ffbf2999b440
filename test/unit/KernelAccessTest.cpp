//===- KernelAccessTest.cpp - Reads, writes and escapes of parameters -----===//

#include "analysis/KernelAccess.h"
#include "test/unit/CudaTestParse.h"

#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace cuda_rewrite::test;

namespace {

/// "R", "W", "RW", "E" (escape) or "-" for each parameter the analysis
/// lists, e.g. "in:R out:W", for compact expectations.
std::string accessSummary(llvm::StringRef Code, llvm::StringRef Kernel) {
  std::unique_ptr<clang::ASTUnit> AST = parseCuda(Code);
  if (!AST)
    return "<parse error>";
  const clang::FunctionDecl *F = findFunction(*AST, Kernel);
  if (!F)
    return "<no kernel>";
  std::string Out;
  for (const ParamAccess &PA : analyzeKernelParamAccess(*F)) {
    if (PA.Escapes) {
      EXPECT_TRUE(PA.Read && PA.Written) << "an escape must count as both";
    }
    std::string Mode = PA.Escapes              ? "E"
                       : PA.Read && PA.Written ? "RW"
                       : PA.Read               ? "R"
                       : PA.Written            ? "W"
                                               : "-";
    Out += (Out.empty() ? "" : " ") + PA.Param->getNameAsString() + ":" + Mode;
  }
  return Out;
}

/// The escape reason of parameter \p Param.
std::string escapeReason(llvm::StringRef Code, llvm::StringRef Kernel,
                         llvm::StringRef Param) {
  std::unique_ptr<clang::ASTUnit> AST = parseCuda(Code);
  if (!AST)
    return "<parse error>";
  const clang::FunctionDecl *F = findFunction(*AST, Kernel);
  if (!F)
    return "<no kernel>";
  for (const ParamAccess &PA : analyzeKernelParamAccess(*F))
    if (PA.Param->getName() == Param)
      return PA.Escapes ? PA.EscapeReason : "<no escape>";
  return "<no such parameter>";
}

TEST(KernelAccessTest, SubscriptReadAndWrite) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *in, float *out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = 2.0f * in[i];
    })",
                          "k"),
            "in:R out:W");
}

TEST(KernelAccessTest, ScalarParametersAreNotListed) {
  EXPECT_EQ(accessSummary(R"(
    struct P { int n; };
    __global__ void k(int n, float a, P p, float *out) { out[0] = a * n; })",
                          "k"),
            "out:W");
}

TEST(KernelAccessTest, UnusedPointerIsNeither) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *unused, float *out) { out[0] = 1.0f; })",
                          "k"),
            "unused:- out:W");
}

TEST(KernelAccessTest, DerefAndPointerArithmetic) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *a, float *b, float *c, int i) {
      *(b + i) = *a;
      *(c + i + 1) += 1.0f;
    })",
                          "k"),
            "a:R b:W c:RW");
}

TEST(KernelAccessTest, CompoundAssignmentAndIncrementAreReadWrite) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, int *b, int *c) {
      a[threadIdx.x] *= 2.0f;
      b[0]++;
      --c[1];
    })",
                          "k"),
            "a:RW b:RW c:RW");
}

TEST(KernelAccessTest, LocalPointerAlias) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *in, float *out, int W) {
      int y = blockIdx.y;
      const float *row = in + y * W;
      float *q = out + y * W;
      q[threadIdx.x] = row[threadIdx.x];
    })",
                          "k"),
            "in:R out:W");
}

TEST(KernelAccessTest, AliasAssignedLaterAndChained) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, float *b, const float *c) {
      float *p;
      p = a;
      float *q = p + 4;
      q[0] = c[0];
    })",
                          "k"),
            "a:W b:- c:R");
}

TEST(KernelAccessTest, AliasThroughConditionalPointsToBoth) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, float *b, bool s) {
      float *p = s ? a : b;
      p[threadIdx.x] = 0.0f;
    })",
                          "k"),
            "a:W b:W");
}

TEST(KernelAccessTest, ReferenceAlias) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, const float *b) {
      float &r = a[threadIdx.x];
      const float &s = b[threadIdx.x];
      r = s;
    })",
                          "k"),
            "a:W b:R");
}

TEST(KernelAccessTest, AddressOfElementReadThroughLdg) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *in, float *out) {
      out[threadIdx.x] = __ldg(&in[threadIdx.x]) + __ldg(in + 1);
    })",
                          "k"),
            "in:R out:W");
}

TEST(KernelAccessTest, AtomicIsReadAndWrite) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const int *keys, int *hist, float *sum) {
      atomicAdd(&hist[keys[threadIdx.x]], 1);
      atomicAdd(sum, 1.0f);
    })",
                          "k"),
            "keys:R hist:RW sum:RW");
}

TEST(KernelAccessTest, PointerPassedToUnknownFunctionEscapes) {
  const char *Code = R"(
    __device__ void sink(float *p);
    __global__ void k(float *a, const float *b) {
      sink(a);
      float x = b[0];
      (void)x;
    })";
  EXPECT_EQ(accessSummary(Code, "k"), "a:E b:R");
  EXPECT_EQ(escapeReason(Code, "k", "a"),
            "passed to 'sink', whose body is not available");
}

TEST(KernelAccessTest, PointerStoredToMemoryEscapes) {
  const char *Code = R"(
    __device__ float *saved;
    __global__ void k(float *a) { saved = a + 1; })";
  EXPECT_EQ(accessSummary(Code, "k"), "a:E");
  EXPECT_EQ(escapeReason(Code, "k", "a"), "stored to memory");
}

TEST(KernelAccessTest, PointerConvertedToIntegerEscapes) {
  const char *Code = R"(
    __global__ void k(float *a, unsigned long long *out) {
      out[0] = (unsigned long long)a;
    })";
  EXPECT_EQ(accessSummary(Code, "k"), "a:E out:W");
  EXPECT_EQ(escapeReason(Code, "k", "a"), "converted to a non-pointer type");
}

TEST(KernelAccessTest, AddressOfPointerVariableEscapes) {
  const char *Code = R"(
    __device__ void set(float **pp);
    __global__ void k(float *a) {
      float **pp = &a;
      (void)pp;
    })";
  EXPECT_EQ(accessSummary(Code, "k"), "a:E");
  EXPECT_EQ(escapeReason(Code, "k", "a"),
            "the address of the pointer is taken");
}

TEST(KernelAccessTest, AliasThatEscapesMakesParameterEscape) {
  EXPECT_EQ(accessSummary(R"(
    __device__ void sink(const float *p);
    __global__ void k(const float *a) {
      const float *p = a + 1;
      sink(p);
    })",
                          "k"),
            "a:E");
}

TEST(KernelAccessTest, ComparisonsAndNullChecksAreNoAccess) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, float *b, int *flag) {
      if (a != nullptr && a < b && !b) flag[0] = 1;
    })",
                          "k"),
            "a:- b:- flag:W");
}

TEST(KernelAccessTest, FollowsDeviceFunctionDefinedInFile) {
  EXPECT_EQ(accessSummary(R"(
    __device__ float load(const float *p, int i) { return p[i]; }
    __device__ void store(float *p, int i, float v) { p[i] = v; }
    __device__ void bump(float &r) { r += 1.0f; }
    __global__ void k(const float *in, float *out, float *acc) {
      store(out, threadIdx.x, load(in, threadIdx.x));
      bump(acc[threadIdx.x]);
    })",
                          "k"),
            "in:R out:W acc:RW");
}

TEST(KernelAccessTest, NestedDeviceCallsAndEscapeInsideCallee) {
  const char *Code = R"(
    __device__ float *keep;
    __device__ void inner(float *p) { keep = p; }
    __device__ void outer(float *p) { inner(p + 1); }
    __global__ void k(float *a) { outer(a); })";
  EXPECT_EQ(accessSummary(Code, "k"), "a:E");
  EXPECT_EQ(escapeReason(Code, "k", "a"),
            "passed to 'outer', where it is passed to 'inner', where it is "
            "stored to memory");
}

TEST(KernelAccessTest, RecursiveDeviceFunctionEscapes) {
  const char *Code = R"(
    __device__ float walk(const float *p, int n) {
      return n == 0 ? p[0] : walk(p + 1, n - 1);
    }
    __global__ void k(const float *a, float *out) { out[0] = walk(a, 4); })";
  EXPECT_EQ(accessSummary(Code, "k"), "a:E out:W");
}

TEST(KernelAccessTest, StoreAndLoadIntrinsics) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *in, float *out) {
      __stwt(out + threadIdx.x, __ldcs(in + threadIdx.x));
    })",
                          "k"),
            "in:R out:W");
}

TEST(KernelAccessTest, PrintfArgumentEscapes) {
  EXPECT_EQ(accessSummary(R"(
    #include <cstdio>
    __global__ void k(const char *msg) { printf("%s\n", msg); })",
                          "k"),
            "msg:E");
}

TEST(KernelAccessTest, TwoDimensionalArrayParameter) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float in[][64], float (*out)[64]) {
      out[threadIdx.y][threadIdx.x] = in[threadIdx.y][threadIdx.x + 1];
    })",
                          "k"),
            "in:R out:W");
}

TEST(KernelAccessTest, StructElementMembers) {
  EXPECT_EQ(accessSummary(R"(
    struct Cell { float v; float w; };
    __global__ void k(const Cell *in, Cell *out) {
      out[threadIdx.x].v = in[threadIdx.x].w;
      out[threadIdx.x + 1] = in[0];
      in->v > 0 ? (void)0 : (void)0;
    })",
                          "k"),
            "in:R out:W");
}

TEST(KernelAccessTest, PointerToPointerTableIsOnlyRead) {
  // Writing through a pointer loaded from the table writes other memory,
  // not the table itself.
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float **rows, float v) { rows[blockIdx.x][threadIdx.x] = v; })",
                          "k"),
            "rows:R");
}

TEST(KernelAccessTest, ReassignedParameterKeepsItsMemory) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, const float *b, int n) {
      for (int i = 0; i < n; ++i) { *a = b[i]; a += 1; }
      a = a - n;
    })",
                          "k"),
            "a:W b:R");
}

TEST(KernelAccessTest, ParameterCopiedIntoAnotherParameter) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, float *b) {
      b = a;
      b[0] = 1.0f;
    })",
                          "k"),
            "a:W b:W");
}

TEST(KernelAccessTest, SizeofIsNoAccess) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(float *a, int *n) { n[0] = sizeof(a[0]) + sizeof(*a); })",
                          "k"),
            "a:- n:W");
}

TEST(KernelAccessTest, MathOutputPointersAreWrites) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *x, float *s, float *c) {
      sincosf(x[threadIdx.x], &s[threadIdx.x], c + threadIdx.x);
    })",
                          "k"),
            "x:R s:W c:W");
}

TEST(KernelAccessTest, FunctionWithoutBodyEscapesEverything) {
  std::unique_ptr<clang::ASTUnit> AST = parseCuda(R"(
    __global__ void k(float *a, int n);
    void host() {})");
  ASSERT_TRUE(AST);
  const clang::FunctionDecl *K = nullptr;
  for (const clang::Decl *D :
       AST->getASTContext().getTranslationUnitDecl()->decls())
    if (const auto *F = llvm::dyn_cast<clang::FunctionDecl>(D))
      if (F->getNameAsString() == "k")
        K = F;
  ASSERT_TRUE(K);
  std::vector<ParamAccess> Access = analyzeKernelParamAccess(*K);
  ASSERT_EQ(Access.size(), 1u);
  EXPECT_TRUE(Access[0].Escapes && Access[0].Read && Access[0].Written);
  EXPECT_EQ(Access[0].EscapeReason, "the function has no body");
}

TEST(KernelAccessTest, EscapeLocationPointsAtTheUse) {
  std::unique_ptr<clang::ASTUnit> AST = parseCuda(R"(
    __device__ void sink(float *p);
    __global__ void k(float *a) {
      a[0] = 1.0f;
      sink(a);
    })");
  ASSERT_TRUE(AST);
  const clang::FunctionDecl *F = findFunction(*AST, "k");
  ASSERT_TRUE(F);
  std::vector<ParamAccess> Access = analyzeKernelParamAccess(*F);
  ASSERT_EQ(Access.size(), 1u);
  const clang::SourceManager &SM = AST->getSourceManager();
  EXPECT_EQ(SM.getPresumedLineNumber(Access[0].EscapeLoc), 5u);
  EXPECT_EQ(findParamAccess(Access, F->getParamDecl(0)), &Access[0]);
}

TEST(KernelAccessTest, ConstReferenceToSystemFunctionIsRead) {
  EXPECT_EQ(accessSummary(R"(
    #include <algorithm>
    __global__ void k(const float *a, const float *b, float *out) {
      out[threadIdx.x] = std::min(a[threadIdx.x], b[threadIdx.x]);
    })",
                          "k"),
            "a:R b:R out:W");
}

TEST(KernelAccessTest, TemplatePatternIsConservativeInstantiationIsPrecise) {
  std::unique_ptr<clang::ASTUnit> AST = parseCuda(R"(
    template <typename T>
    __global__ void k(const T *in, T *out) {
      out[threadIdx.x] = in[threadIdx.x] + T(1);
    }
    template __global__ void k<float>(const float *, float *);
  )");
  ASSERT_TRUE(AST);
  const clang::FunctionDecl *Pattern = findFunction(*AST, "k");
  ASSERT_TRUE(Pattern && Pattern->getDescribedFunctionTemplate());
  // In the pattern, `in[i] + T(1)` has no implicit load to see: escape.
  std::vector<ParamAccess> P = analyzeKernelParamAccess(*Pattern);
  ASSERT_EQ(P.size(), 2u);
  EXPECT_TRUE(P[0].Escapes);
  EXPECT_TRUE(P[1].Written);
  const clang::FunctionDecl *Spec =
      *Pattern->getDescribedFunctionTemplate()->spec_begin();
  std::vector<ParamAccess> S = analyzeKernelParamAccess(*Spec);
  ASSERT_EQ(S.size(), 2u);
  EXPECT_TRUE(S[0].Read && !S[0].Written && !S[0].Escapes);
  EXPECT_TRUE(!S[1].Read && S[1].Written && !S[1].Escapes);
}

TEST(KernelAccessTest, LambdaCaptureEscapes) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *in, float *out) {
      auto get = [=](int i) { return in[i]; };
      out[threadIdx.x] = get(threadIdx.x);
    })",
                          "k"),
            "in:E out:W");
}

TEST(KernelAccessTest, DeviceMemcpyAndMemset) {
  EXPECT_EQ(accessSummary(R"(
    __global__ void k(const float *in, float *out, int *flags) {
      memcpy(out + threadIdx.x, in + threadIdx.x, sizeof(float));
      memset(flags, 0, 4);
    })",
                          "k"),
            "in:R out:W flags:W");
}

} // namespace
