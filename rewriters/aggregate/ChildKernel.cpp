//===- ChildKernel.cpp - Can a child kernel be aggregated? ----------------===//

#include "rewriters/aggregate/ChildKernel.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

/// blockIdx, blockDim, gridDim or threadIdx (clang declares them with types
/// named __cuda_builtin_*_t).
StringRef builtinName(const ValueDecl *D) {
  const auto *Var = dyn_cast<VarDecl>(D);
  if (!Var)
    return "";
  const CXXRecordDecl *Record = Var->getType()->getAsCXXRecordDecl();
  if (!Record || !Record->getName().starts_with("__cuda_builtin_"))
    return "";
  return Var->getName();
}

bool isBarrier(const FunctionDecl *F) {
  // Operators and conversions have no identifier (getName() asserts).
  StringRef Name = F->getIdentifier() ? F->getName() : "";
  return Name == "__syncthreads" || Name.starts_with("__syncthreads_") ||
         Name == "__barrier_sync";
}

bool inCooperativeGroups(const FunctionDecl *F) {
  for (const DeclContext *DC = F->getDeclContext(); DC; DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC))
      if (NS->getName() == "cooperative_groups")
        return true;
  return false;
}

/// Walks the child's body and, transitively, the bodies of the user
/// functions it calls.
class ChildScanner : public RecursiveASTVisitor<ChildScanner> {
public:
  explicit ChildScanner(ChildKernelInfo &Info) : Info(Info) {}

  void scanBody(const FunctionDecl &F, bool IsChild) {
    if (!Visited.insert(&F).second || !F.hasBody())
      return;
    bool Saved = InChild;
    InChild = IsChild;
    const FunctionDecl *SavedFn = Current;
    Current = &F;
    TraverseStmt(F.getBody());
    InChild = Saved;
    Current = SavedFn;
  }

  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    StringRef Name = builtinName(Ref->getDecl());
    if (Name.empty())
      return true;
    if (!InChild) {
      // threadIdx and blockDim are the original launch's wherever every
      // aggregated block has the original block's shape (the pass checks
      // the launches); blockIdx and gridDim never are.
      if (Name == "threadIdx" || Name == "blockDim") {
        if (Info.HelperReadsBlockShape.empty())
          Info.HelperReadsBlockShape = "calls '" + Current->getNameAsString() +
                                       "', which reads " + Name.str() +
                                       " itself";
        return true;
      }
      refuse("calls '" + Current->getNameAsString() + "', which reads " +
             Name.str() +
             " itself: it would see the aggregated launch's value, not the "
             "original one");
      return false;
    }
    Info.UsesBlockIdx |= Name == "blockIdx";
    Info.UsesBlockDim |= Name == "blockDim";
    Info.UsesGridDim |= Name == "gridDim";
    Info.UsesThreadIdx |= Name == "threadIdx";
    return true;
  }

  bool VisitVarDecl(VarDecl *Var) {
    Info.UsesSharedMemory |= Var->hasAttr<CUDASharedAttr>();
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *) {
    // The child's own launches (recursion, or a chain of annotated
    // kernels) are aggregated with it if the pass rewrites them at block or
    // kernel granularity; launches hidden in helper functions are not.
    if (InChild) {
      Info.LaunchesKernels = true;
      return true;
    }
    refuse("calls '" + Current->getNameAsString() +
           "', which launches kernels itself; aggregating launches made in "
           "helper functions is not supported");
    return false;
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *) {
    refuse("inline assembly in the child may read the block and thread "
           "indices directly");
    return false;
  }

  bool VisitCallExpr(CallExpr *Call) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee)
      return true;
    if (isBarrier(Callee)) {
      Info.HasBarriers = true;
      return true;
    }
    if (inCooperativeGroups(Callee)) {
      refuse("the child uses cooperative groups, whose block and grid "
             "groups are the aggregated launch's");
      return false;
    }
    // User code is followed; the toolkit's own functions read no built-ins
    // that the shadowing would miss.
    const SourceManager &SM = Callee->getASTContext().getSourceManager();
    if (Callee->hasBody() && !SM.isInSystemHeader(Callee->getLocation()))
      scanBody(*Callee->getDefinition(), /*IsChild=*/false);
    return !Info.Refused;
  }

private:
  void refuse(const std::string &Reason) {
    if (!Info.Refused)
      Info.Refused = Refusal{Reason, {}};
  }

  ChildKernelInfo &Info;
  llvm::SmallPtrSet<const FunctionDecl *, 8> Visited;
  const FunctionDecl *Current = nullptr;
  bool InChild = true;
};

} // namespace

ChildKernelInfo analyzeChildKernel(const FunctionDecl &Child) {
  ChildKernelInfo Info;
  if (Child.isTemplated() || Child.isTemplateInstantiation()) {
    Info.Refused = Refusal{"the child kernel is a template", {}};
    return Info;
  }
  const FunctionDecl *Definition = Child.getDefinition();
  if (!Definition) {
    Info.Refused =
        Refusal{"the child kernel's definition is not in this file", {}};
    return Info;
  }
  for (const ParmVarDecl *Param : Definition->parameters())
    if (Param->hasDefaultArg()) {
      Info.Refused = Refusal{"the child kernel has default arguments",
                             Param->getLocation()};
      return Info;
    }
  ChildScanner(Info).scanBody(*Definition, /*IsChild=*/true);
  return Info;
}

} // namespace cuda_rewrite
