//===- Candidates.cpp - Everything a pass could rewrite -------------------===//

#include "analysis/Candidates.h"
#include "analysis/StageAccess.h"
#include "analysis/StageChains.h"
#include "analysis/StageGraph.h"
#include "analysis/StencilAccess.h"
#include <set>

#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

StringRef candidateKindName(CandidateKind Kind) {
  switch (Kind) {
  case CandidateKind::DeviceLaunch:
    return "device-launch";
  case CandidateKind::RecursiveKernel:
    return "recursive-kernel";
  case CandidateKind::Stencil:
    return "stencil";
  case CandidateKind::StageChain:
    return "stage-chain";
  case CandidateKind::PipelineStage:
    return "pipeline-stage";
  case CandidateKind::PipelineEntry:
    return "pipeline-entry";
  }
  llvm_unreachable("all kinds handled");
}

namespace {

/// Builds the list; one method per kind of candidate.
class CandidateCollector {
public:
  CandidateCollector(ASTContext &Ctx, ArrayRef<AttachedPragma> Pragmas,
                     const CudaArchRegions &ArchRegions)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Pragmas(Pragmas),
        ArchRegions(ArchRegions) {}

  std::vector<Candidate> collect() {
    std::vector<LaunchSite> Launches = findLaunchSites(Ctx);
    addDeviceLaunches(Launches);
    addRecursiveKernels(Launches);
    addStencils();
    addStageChains();
    addPipelineCandidates();
    llvm::stable_sort(Result, [](const Candidate &A, const Candidate &B) {
      return std::tie(A.Offset, A.Kind) < std::tie(B.Offset, B.Kind);
    });
    return std::move(Result);
  }

private:
  Candidate &add(CandidateKind Kind, SourceLocation Loc) {
    Candidate C;
    C.Kind = Kind;
    C.Loc = SM.getExpansionLoc(Loc);
    C.Offset = SM.getFileOffset(C.Loc);
    C.UnderCudaArch = ArchRegions.contains(C.Offset);
    if (C.UnderCudaArch)
      C.Flags.push_back("under __CUDA_ARCH__ conditional");
    Result.push_back(std::move(C));
    return Result.back();
  }

  /// The pragma of kind \p Kind whose target is \p F, or whose target
  /// statement contains \p S.
  const PragmaDirective *annotation(DirectiveKind Kind, const Decl *F,
                                    const Stmt *S = nullptr) const {
    for (const AttachedPragma &P : Pragmas) {
      if (P.Directive->Kind != Kind)
        continue;
      if (F && P.targetFunction() &&
          P.targetFunction()->getCanonicalDecl() == F->getCanonicalDecl())
        return P.Directive;
      if (S && P.TargetStmt && contains(P.TargetStmt, S))
        return P.Directive;
    }
    return nullptr;
  }

  bool contains(const Stmt *Outer, const Stmt *Inner) const {
    SourceRange O = Outer->getSourceRange(), I = Inner->getSourceRange();
    auto Off = [&](SourceLocation L) {
      return SM.getFileOffset(SM.getExpansionLoc(L));
    };
    return Off(O.getBegin()) <= Off(I.getBegin()) &&
           Off(I.getEnd()) <= Off(O.getEnd());
  }

  void addDeviceLaunches(ArrayRef<LaunchSite> Launches) {
    for (const LaunchSite &L : Launches) {
      if (!L.FromDevice)
        continue;
      Candidate &C = add(CandidateKind::DeviceLaunch, L.Call->getBeginLoc());
      C.Description =
          "'" + L.CalleeName + "' launched from " +
          (L.Enclosing->hasAttr<CUDAGlobalAttr>() ? "kernel"
                                                  : "device function") +
          " '" + L.Enclosing->getNameAsString() + "'";
      if (L.FromHostDevice)
        C.Flags.push_back("in __host__ __device__ function");
      if (L.InBranch)
        C.Flags.push_back("in branch");
      if (L.InLoop)
        C.Flags.push_back("in loop");
      if (L.InMacro)
        C.Flags.push_back("in macro");
      if (L.InTemplate)
        C.Flags.push_back("in template");
      C.InMacro = L.InMacro;
      C.InTemplate = L.InTemplate;
      C.Function = L.Enclosing;
      C.Statement = L.Call;
      C.Annotation = annotation(DirectiveKind::Aggregate, L.Enclosing, L.Call);
    }
  }

  void addRecursiveKernels(ArrayRef<LaunchSite> Launches) {
    SmallPtrSet<const FunctionDecl *, 8> Seen;
    for (const LaunchSite &L : Launches) {
      if (!L.FromDevice || !L.Callee || !L.Enclosing ||
          L.Callee->getCanonicalDecl() != L.Enclosing->getCanonicalDecl() ||
          !Seen.insert(L.Enclosing).second)
        continue;
      Candidate &C =
          add(CandidateKind::RecursiveKernel, L.Enclosing->getLocation());
      C.Description =
          "kernel '" + L.Enclosing->getNameAsString() + "' launches itself";
      C.Function = L.Enclosing;
      C.Annotation = annotation(DirectiveKind::Promote, L.Enclosing);
    }
  }

  /// Kernels with a stencil shape (a point-wise map, radius 0, is none);
  /// an annotated kernel without one is listed too, with the reason, since
  /// the user asked for its rewrite.
  void addStencils() {
    for (const FunctionDecl *Kernel : mainFileKernels()) {
      StencilResult Analysis = analyzeStencil(*Kernel);
      if (Analysis && Analysis.Shape->radius() == 0) {
        Analysis.Shape.reset();
        Analysis.Refusal = "every read is at offset 0: a point-wise map, "
                           "not a stencil";
      }
      const PragmaDirective *Pragma =
          annotation(DirectiveKind::Systolic, Kernel);
      if (!Analysis && !Pragma)
        continue;
      Candidate &C = add(CandidateKind::Stencil, Kernel->getLocation());
      C.Function = Kernel;
      C.Annotation = Pragma;
      C.Description = "kernel '" + Kernel->getNameAsString() + "': " +
                      (Analysis ? describeOffsets(*Analysis.Shape)
                                : "no stencil shape: " + Analysis.Refusal);
    }
  }

  /// A block under `#pragma cuda_rewrite fuse` is one candidate, described
  /// by its stage graph (a DAG: the chains in it are not listed apart);
  /// elsewhere, each chain of launches that feed each other is one.
  void addStageChains() {
    std::set<const Stmt *> Annotated;
    for (const AttachedPragma &P : Pragmas) {
      const auto *Block = dyn_cast_or_null<CompoundStmt>(P.TargetStmt);
      if (P.Directive->Kind != DirectiveKind::Fuse || !Block ||
          !P.EnclosingFunction)
        continue;
      StageGraph Graph = buildStageGraph(*Block, *P.EnclosingFunction, Ctx);
      if (Graph.Stages.empty())
        continue;
      Annotated.insert(Block);
      Candidate &C = add(CandidateKind::StageChain,
                         Graph.Stages.front().Launch->getBeginLoc());
      C.Description = describeStageGraph(Graph);
      C.Flags = Graph.Problems;
      // Stages whose reads are not yet in a form fusion can align.
      std::set<const FunctionDecl *> Seen;
      for (const StageGraph::Stage &S : Graph.Stages) {
        const FunctionDecl *K = S.Launch->getDirectCallee();
        if (!K || !K->getDefinition() || !Seen.insert(K).second)
          continue;
        StageAccess Access = analyzeStageAccess(*K->getDefinition());
        if (!Access)
          C.Flags.push_back("stage '" + K->getNameAsString() +
                            "': " + Access.Refusal);
      }
      C.Function = P.EnclosingFunction;
      C.Statement = Block;
      C.Annotation = P.Directive;
    }
    for (const StageChain &Chain : findStageChains(Ctx)) {
      if (Annotated.count(Chain.Block))
        continue;
      Candidate &C =
          add(CandidateKind::StageChain, Chain.Launches.front()->getBeginLoc());
      C.Description = describeStageChain(Chain);
      C.Function = Chain.Enclosing;
      C.Statement = Chain.Block;
      C.Annotation =
          annotation(DirectiveKind::Fuse, nullptr, Chain.Launches.front());
    }
  }

  void addPipelineCandidates() {
    for (const AttachedPragma &P : Pragmas) {
      if (P.Directive->Kind == DirectiveKind::Stage) {
        const FunctionDecl *F = P.targetFunction();
        Candidate &C = add(CandidateKind::PipelineStage, F->getLocation());
        C.Description = "__device__ stage '" + F->getNameAsString() + "'";
        C.Function = F;
        C.Annotation = P.Directive;
      } else if (P.Directive->Kind == DirectiveKind::Pipeline) {
        Candidate &C =
            add(CandidateKind::PipelineEntry, P.TargetStmt->getBeginLoc());
        C.Description = "pipeline launched from '" +
                        P.EnclosingFunction->getNameAsString() + "'";
        C.Function = P.EnclosingFunction;
        C.Statement = P.TargetStmt;
        C.Annotation = P.Directive;
      }
    }
  }

  std::vector<const FunctionDecl *> mainFileKernels() const {
    struct Finder : RecursiveASTVisitor<Finder> {
      const SourceManager &SM;
      std::vector<const FunctionDecl *> Kernels;
      explicit Finder(const SourceManager &SM) : SM(SM) {}
      bool VisitFunctionDecl(FunctionDecl *F) {
        if (F->hasAttr<CUDAGlobalAttr>() && F->doesThisDeclarationHaveABody() &&
            SM.isWrittenInMainFile(SM.getExpansionLoc(F->getLocation())))
          Kernels.push_back(F);
        return true;
      }
    } Finder(SM);
    Finder.TraverseAST(Ctx);
    return Finder.Kernels;
  }

  ASTContext &Ctx;
  const SourceManager &SM;
  ArrayRef<AttachedPragma> Pragmas;
  const CudaArchRegions &ArchRegions;
  std::vector<Candidate> Result;
};

} // namespace

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

std::vector<Candidate> collectCandidates(ASTContext &Ctx,
                                         ArrayRef<AttachedPragma> Pragmas,
                                         const CudaArchRegions &ArchRegions) {
  return CandidateCollector(Ctx, Pragmas, ArchRegions).collect();
}

} // namespace cuda_rewrite
