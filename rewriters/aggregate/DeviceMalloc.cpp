//===- DeviceMalloc.cpp - Aggregating device-side cudaMalloc --------------===//

#include "rewriters/aggregate/DeviceMalloc.h"
#include "rewriters/aggregate/AggregatePass.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

bool isCallTo(const CallExpr &Call, StringRef Name) {
  const FunctionDecl *Callee = Call.getDirectCallee();
  return Callee && Callee->getIdentifier() && Callee->getName() == Name;
}

/// Calls in device code of the main file, in source order.
struct DeviceCalls : RecursiveASTVisitor<DeviceCalls> {
  explicit DeviceCalls(const SourceManager &SM) : SM(SM) {}

  bool TraverseFunctionDecl(FunctionDecl *F) {
    if (!F->hasAttr<CUDAGlobalAttr>() && !F->hasAttr<CUDADeviceAttr>())
      return true;
    return RecursiveASTVisitor::TraverseFunctionDecl(F);
  }
  bool VisitCallExpr(CallExpr *Call) {
    if (SM.isWrittenInMainFile(SM.getExpansionLoc(Call->getBeginLoc())))
      Calls.push_back(Call);
    return true;
  }

  const SourceManager &SM;
  std::vector<const CallExpr *> Calls;
};

/// The first device-side cudaFree or free in the main file, or null.
const CallExpr *firstDeviceFree(ASTContext &Ctx) {
  DeviceCalls Finder(Ctx.getSourceManager());
  Finder.TraverseDecl(Ctx.getTranslationUnitDecl());
  for (const CallExpr *Call : Finder.Calls)
    if (isCallTo(*Call, "cudaFree") || isCallTo(*Call, "free"))
      return Call;
  return nullptr;
}

/// The cudaMalloc calls in a function's body.
struct MallocCalls : RecursiveASTVisitor<MallocCalls> {
  bool VisitCallExpr(CallExpr *Call) {
    if (isCallTo(*Call, "cudaMalloc"))
      Calls.push_back(Call);
    return true;
  }
  std::vector<const CallExpr *> Calls;
};

struct Returns : RecursiveASTVisitor<Returns> {
  bool VisitReturnStmt(ReturnStmt *Return) {
    Found.push_back(Return);
    return true;
  }
  std::vector<const ReturnStmt *> Found;
};

/// Why not every thread of the block reaches \p Call, or "".
std::string whyNotBlockWide(ASTContext &Ctx, const CallExpr &Call,
                            const FunctionDecl &Parent) {
  const SourceManager &SM = Ctx.getSourceManager();
  DynTypedNode Node = DynTypedNode::create(Call);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty() || Parents[0].get<FunctionDecl>())
      break;
    Node = Parents[0];
    if (Node.get<IfStmt>() || Node.get<SwitchStmt>() ||
        Node.get<ConditionalOperator>() ||
        Node.get<BinaryConditionalOperator>())
      return "it is under a condition";
    if (Node.get<ForStmt>() || Node.get<WhileStmt>() || Node.get<DoStmt>() ||
        Node.get<CXXForRangeStmt>())
      return "it is in a loop";
    if (const auto *Logical = Node.get<BinaryOperator>())
      if (Logical->isLogicalOp())
        return "it is an operand of && or ||";
  }
  Returns Before;
  Before.TraverseStmt(Parent.getBody());
  for (const ReturnStmt *Return : Before.Found)
    if (SM.isBeforeInTranslationUnit(Return->getBeginLoc(), Call.getBeginLoc()))
      return "the kernel may return before it";
  return "";
}

} // namespace

bool aggregateDeviceMallocs(PassContext &Context, const FunctionDecl &Parent,
                            MallocScope Scope) {
  ASTContext &Ctx = Context.Ctx;
  const SourceManager &SM = Ctx.getSourceManager();
  MallocCalls Mallocs;
  Mallocs.TraverseStmt(Parent.getBody());
  if (Mallocs.Calls.empty())
    return true;
  const CallExpr *Free = firstDeviceFree(Ctx);
  for (const CallExpr *Call : Mallocs.Calls) {
    SourceLocation Loc = Call->getBeginLoc();
    if (Free) {
      Context.Remark.refusedPart(
          Loc, AggregatePass::Name,
          "device-side cudaMalloc not aggregated: this file frees device "
          "memory (line " +
              std::to_string(SM.getExpansionLineNumber(Free->getBeginLoc())) +
              "), and the parts of an aggregated allocation cannot be "
              "freed one by one");
      continue;
    }
    const Expr *Callee = Call->getCallee()->IgnoreImpCasts();
    if (Callee->getBeginLoc().isMacroID() || Callee->getEndLoc().isMacroID()) {
      Context.Remark.refusedPart(
          Loc, AggregatePass::Name,
          "device-side cudaMalloc not aggregated: the call "
          "is written in a macro");
      continue;
    }
    std::string WhyNotBlock =
        Scope == MallocScope::Block
            ? whyNotBlockWide(Ctx, *Call, Parent)
            : std::string("its launches are aggregated at warp granularity, "
                          "or it also runs as an aggregated child");
    bool Block = WhyNotBlock.empty();
    if (Error E = Context.Edits.replace(
            CharSourceRange::getTokenRange(Callee->getSourceRange()),
            Block ? "cuda_rewrite::aggregatedMallocBlock"
                  : "cuda_rewrite::aggregatedMallocWarp")) {
      DiagnosticsEngine &Diags = Ctx.getDiagnostics();
      Diags.Report(
          Loc, Diags.getCustomDiagID(DiagnosticsEngine::Error, "aggregate: %0"))
          << toString(std::move(E));
      return false;
    }
    Context.Remark.appliedPart(
        Loc, AggregatePass::Name,
        Block ? std::string("device-side cudaMalloc aggregated at block "
                            "granularity: one heap allocation per block")
              : "device-side cudaMalloc aggregated at warp granularity: one "
                "heap allocation for the lanes that reach it together (not "
                "block granularity: " +
                    WhyNotBlock + ")");
  }
  return true;
}

} // namespace cuda_rewrite
