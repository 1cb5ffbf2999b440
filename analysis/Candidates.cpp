//===- Candidates.cpp - Everything a pass could rewrite -------------------===//

#include "analysis/Candidates.h"
#include "analysis/MainFile.h"

#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

CandidateFinder::CandidateFinder(ASTContext &Ctx,
                                 ArrayRef<AttachedPragma> Pragmas,
                                 const CudaArchRegions &ArchRegions)
    : Ctx(Ctx), SM(Ctx.getSourceManager()), Pragmas(Pragmas),
      ArchRegions(ArchRegions), Launches(findLaunchSites(Ctx)) {}

Candidate &CandidateFinder::add(const CandidateKind &Kind, SourceLocation Loc) {
  Candidate C;
  C.Kind = &Kind;
  C.Loc = SM.getExpansionLoc(Loc);
  // A candidate in an included file sorts at the main file's #include.
  SourceLocation InMain = mainFileLocation(SM, C.Loc);
  C.Offset = SM.getFileOffset(InMain.isValid() ? InMain : C.Loc);
  C.UnderCudaArch = InMain == C.Loc && ArchRegions.contains(C.Offset);
  if (C.UnderCudaArch)
    C.Flags.push_back("under __CUDA_ARCH__ conditional");
  Result.push_back(std::move(C));
  return Result.back();
}

const PragmaDirective *
CandidateFinder::annotation(const DirectiveSpec &Directive, const Decl *F,
                            const Stmt *S) const {
  for (const AttachedPragma &P : Pragmas) {
    if (!P.Directive->is(Directive))
      continue;
    if (F && P.targetFunction() &&
        P.targetFunction()->getCanonicalDecl() == F->getCanonicalDecl())
      return P.Directive;
    if (S && P.TargetStmt && contains(P.TargetStmt, S))
      return P.Directive;
  }
  return nullptr;
}

bool CandidateFinder::contains(const Stmt *Outer, const Stmt *Inner) const {
  SourceRange O = Outer->getSourceRange(), I = Inner->getSourceRange();
  auto Off = [&](SourceLocation L) {
    return SM.getFileOffset(SM.getExpansionLoc(L));
  };
  return Off(O.getBegin()) <= Off(I.getBegin()) &&
         Off(I.getEnd()) <= Off(O.getEnd());
}

/// The kernels with a body in the main file, and with \p Included in the
/// project files it includes too.
static std::vector<const FunctionDecl *> kernelsWithBodies(ASTContext &Ctx,
                                                           bool Included) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    bool Included;
    std::vector<const FunctionDecl *> Kernels;
    Finder(const SourceManager &SM, bool Included)
        : SM(SM), Included(Included) {}
    bool VisitFunctionDecl(FunctionDecl *F) {
      if (!F->hasAttr<CUDAGlobalAttr>() || !F->doesThisDeclarationHaveABody())
        return true;
      SourceLocation Loc = SM.getExpansionLoc(F->getLocation());
      if (SM.isWrittenInMainFile(Loc) ||
          (Included && Loc.isValid() && !SM.isInSystemHeader(Loc) &&
           SM.getFileEntryRefForID(SM.getFileID(Loc))))
        Kernels.push_back(F);
      return true;
    }
  } Finder(Ctx.getSourceManager(), Included);
  Finder.TraverseAST(Ctx);
  return Finder.Kernels;
}

std::vector<const FunctionDecl *> CandidateFinder::mainFileKernels() const {
  return kernelsWithBodies(Ctx, /*Included=*/false);
}

std::vector<const FunctionDecl *> CandidateFinder::projectKernels() const {
  return kernelsWithBodies(Ctx, /*Included=*/true);
}

std::vector<Candidate> CandidateFinder::take() {
  llvm::stable_sort(Result, [](const Candidate &A, const Candidate &B) {
    return A.Offset < B.Offset;
  });
  return std::move(Result);
}

bool mainFileHasCudaCode(ASTContext &Ctx) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    bool Found = false;
    explicit Finder(const SourceManager &SM) : SM(SM) {}
    bool inMainFile(const Decl *D) const {
      return SM.isWrittenInMainFile(SM.getExpansionLoc(D->getLocation()));
    }
    bool VisitFunctionDecl(FunctionDecl *F) {
      if (inMainFile(F) &&
          (F->hasAttr<CUDAGlobalAttr>() || F->hasAttr<CUDADeviceAttr>()))
        Found = true;
      return !Found;
    }
    bool VisitVarDecl(VarDecl *V) {
      if (inMainFile(V) &&
          (V->hasAttr<CUDADeviceAttr>() || V->hasAttr<CUDAConstantAttr>() ||
           V->hasAttr<CUDASharedAttr>()))
        Found = true;
      return !Found;
    }
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *Call) {
      if (SM.isWrittenInMainFile(SM.getExpansionLoc(Call->getBeginLoc())))
        Found = true;
      return !Found;
    }
  } Finder(Ctx.getSourceManager());
  Finder.TraverseAST(Ctx);
  return Finder.Found;
}

} // namespace cuda_rewrite
