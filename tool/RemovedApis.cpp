//===- RemovedApis.cpp - CUDA runtime functions CUDA 13 removed -----------===//

#include "tool/RemovedApis.h"
#include "rewriters/common/EditSet.h"
#include "tool/ParsePrelude.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>

using namespace clang;

namespace cuda_rewrite {

namespace {

struct RemovedDeclaration {
  RemovedApi Api;
  /// The declaration as CUDA 12 had it, for the prelude.
  llvm::StringLiteral Declaration;
};

// CUDA 12's declarations (cuda_runtime_api.h) of what CUDA 13.0 removed.
const RemovedDeclaration Removed[] = {
    {{"cudaThreadSynchronize", "cudaDeviceSynchronize", true},
     "cudaError_t cudaThreadSynchronize(void);"},
    {{"cudaThreadExit", "cudaDeviceReset", true},
     "cudaError_t cudaThreadExit(void);"},
    {{"cudaThreadSetLimit", "cudaDeviceSetLimit", true},
     "cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value);"},
    {{"cudaThreadGetLimit", "cudaDeviceGetLimit", true},
     "cudaError_t cudaThreadGetLimit(size_t *pValue, enum cudaLimit limit);"},
    {{"cudaThreadSetCacheConfig", "cudaDeviceSetCacheConfig", true},
     "cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache cacheConfig);"},
    {{"cudaThreadGetCacheConfig", "cudaDeviceGetCacheConfig", true},
     "cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache "
     "*pCacheConfig);"},
    {{"cudaConfigureCall", "cudaLaunchKernel", false},
     "cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, size_t "
     "sharedMem = 0, cudaStream_t stream = 0);"},
    {{"cudaSetupArgument", "cudaLaunchKernel", false},
     "cudaError_t cudaSetupArgument(const void *arg, size_t size, size_t "
     "offset);"},
};

/// The uses of the prelude's removed functions outside system headers.
class RemovedUses : public RecursiveASTVisitor<RemovedUses> {
public:
  explicit RemovedUses(const SourceManager &SM) : SM(SM) {}

  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    const auto *F = dyn_cast<FunctionDecl>(Ref->getDecl());
    if (!F || !F->getIdentifier())
      return true;
    // A program that defines the function itself calls its own.
    if (F->isDefined() ||
        SM.getFilename(SM.getSpellingLoc(F->getLocation())) != ParsePreludePath)
      return true;
    const auto *Api = llvm::find_if(removedApis(), [&](const RemovedApi &A) {
      return A.Name == F->getName();
    });
    SourceLocation Loc = SM.getSpellingLoc(Ref->getLocation());
    if (Api != removedApis().end() && !SM.isInSystemHeader(Loc))
      Uses.push_back({Api, Loc});
    return true;
  }

  struct Use {
    const RemovedApi *Api;
    SourceLocation Loc; ///< Where the name is spelled.
  };
  std::vector<Use> Uses;

private:
  const SourceManager &SM;
};

} // namespace

llvm::ArrayRef<RemovedApi> removedApis() {
  static const std::vector<RemovedApi> Apis = [] {
    std::vector<RemovedApi> A;
    for (const RemovedDeclaration &R : Removed)
      A.push_back(R.Api);
    return A;
  }();
  return Apis;
}

std::string removedApiDeclarations() {
  std::string Text = "#if defined(__cplusplus) && defined(CUDART_VERSION) && "
                     "CUDART_VERSION >= 13000\n";
  for (const RemovedDeclaration &R : Removed)
    Text += "extern __host__ " + R.Declaration.str() + "\n";
  return Text + "#endif\n";
}

bool reportRemovedApis(ASTContext &Ctx, EditSet *Fix, bool Remarks) {
  SourceManager &SM = Ctx.getSourceManager();
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  RemovedUses Finder(SM);
  Finder.TraverseAST(Ctx);
  // In source order, once per spelling (a macro's body names it once
  // however often the macro is used).
  auto Before = [&](const RemovedUses::Use &A, const RemovedUses::Use &B) {
    return SM.isBeforeInTranslationUnit(A.Loc, B.Loc);
  };
  llvm::sort(Finder.Uses, Before);
  Finder.Uses.erase(
      std::unique(Finder.Uses.begin(), Finder.Uses.end(),
                  [](const RemovedUses::Use &A, const RemovedUses::Use &B) {
                    return A.Loc == B.Loc;
                  }),
      Finder.Uses.end());
  bool Errors = false;
  for (const RemovedUses::Use &U : Finder.Uses) {
    const RemovedApi &Api = *U.Api;
    CharSourceRange Name = CharSourceRange::getCharRange(
        U.Loc, U.Loc.getLocWithOffset(Api.Name.size()));
    if (Fix && Api.Rename && SM.isWrittenInMainFile(U.Loc)) {
      if (llvm::Error E = Fix->replace(Name, Api.Replacement)) {
        llvm::consumeError(std::move(E));
      } else {
        if (Remarks)
          Diags.Report(U.Loc, Diags.getCustomDiagID(
                                  DiagnosticsEngine::Remark,
                                  "replaced '%0', which CUDA 13 removed, "
                                  "with '%1' [--fix-removed-apis]"))
              << Api.Name << Api.Replacement;
        continue;
      }
    }
    Errors = true;
    if (Api.Rename)
      Diags.Report(
          U.Loc, Diags.getCustomDiagID(DiagnosticsEngine::Error,
                                       "'%0' was removed in CUDA 13: call '%1' "
                                       "(--fix-removed-apis replaces it)"))
          << Api.Name << Api.Replacement
          << FixItHint::CreateReplacement(Name, Api.Replacement);
    else
      Diags.Report(U.Loc, Diags.getCustomDiagID(
                              DiagnosticsEngine::Error,
                              "'%0' was removed in CUDA 13: launch with "
                              "'%1' or <<<...>>> instead"))
          << Api.Name << Api.Replacement;
  }
  return Errors;
}

} // namespace cuda_rewrite
