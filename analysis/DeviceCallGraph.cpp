//===- DeviceCallGraph.cpp - What device code can reach -------------------===//

#include "analysis/DeviceCallGraph.h"
#include "analysis/FunctionTrackingVisitor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

/// Callee -> the functions whose bodies call or launch it.
using CallerMap = llvm::DenseMap<const FunctionDecl *,
                                 llvm::SmallVector<const FunctionDecl *, 4>>;

class CallerCollector : public FunctionTrackingVisitor<CallerCollector> {
public:
  bool shouldVisitTemplateInstantiations() const { return true; }

  /// Covers kernel launches too: CUDAKernelCallExpr is a CallExpr.
  bool VisitCallExpr(CallExpr *Call) {
    const FunctionDecl *Caller = currentFunction();
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (Caller && Callee)
      Callers[Callee->getCanonicalDecl()].push_back(Caller->getCanonicalDecl());
    return true;
  }

  CallerMap Callers;
};

} // namespace

llvm::DenseSet<const FunctionDecl *>
functionsReaching(ASTContext &Ctx,
                  const llvm::DenseSet<const FunctionDecl *> &Targets) {
  CallerCollector Collector;
  Collector.TraverseAST(Ctx);
  llvm::DenseSet<const FunctionDecl *> Reaching(Targets.begin(), Targets.end());
  llvm::SmallVector<const FunctionDecl *, 16> Work(Targets.begin(),
                                                   Targets.end());
  while (!Work.empty()) {
    const FunctionDecl *F = Work.pop_back_val();
    auto It = Collector.Callers.find(F);
    if (It == Collector.Callers.end())
      continue;
    for (const FunctionDecl *Caller : It->second)
      if (Reaching.insert(Caller).second)
        Work.push_back(Caller);
  }
  return Reaching;
}

} // namespace cuda_rewrite
