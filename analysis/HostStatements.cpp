//===- HostStatements.cpp - Host statements between fusable launches ------===//

#include "analysis/HostStatements.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringSet.h"
#include <vector>

using namespace clang;

namespace cuda_rewrite {

namespace {

/// The variables and members \p E's value comes from: the declarations
/// named in it, members included (`img.w` gives `img` and `w`).
void namedDecls(const Stmt *E, std::set<const ValueDecl *> &Out) {
  if (!E)
    return;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
    Out.insert(Ref->getDecl());
  else if (const auto *Member = dyn_cast<MemberExpr>(E))
    Out.insert(Member->getMemberDecl());
  for (const Stmt *Child : E->children())
    namedDecls(Child, Out);
}

/// Whether a value of type \p T holds or leads to memory a kernel may use.
bool leadsToMemory(QualType T) {
  T = T.getNonReferenceType();
  return T->isPointerType() || T->isArrayType() || T->isRecordType();
}

/// A pointer to numbers (or void): the kind of pointer a device buffer is.
/// Pointers to plain `char` (strings) and to structs (FILE, timeval) are
/// not.
bool pointsToNumbers(QualType T) {
  const auto *Pointer = T.getNonReferenceType()->getAs<PointerType>();
  if (!Pointer)
    return false;
  QualType Pointee = Pointer->getPointeeType().getUnqualifiedType();
  if (Pointee->isSpecificBuiltinType(BuiltinType::Char_S) ||
      Pointee->isSpecificBuiltinType(BuiltinType::Char_U))
    return false;
  return Pointee->isArithmeticType() || Pointee->isVoidType() ||
         Pointee->isPointerType();
}

/// The address of a local variable that holds no pointer (`&ms`): memory
/// on the host's stack, never a kernel's.
bool isAddressOfLocalValue(const Expr *E) {
  E = E->IgnoreParenCasts();
  const auto *Addr = dyn_cast<UnaryOperator>(E);
  if (!Addr || Addr->getOpcode() != UO_AddrOf)
    return false;
  const auto *Ref = dyn_cast<DeclRefExpr>(Addr->getSubExpr()->IgnoreParens());
  const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  return Var && Var->hasLocalStorage() && !Var->getType()->isPointerType();
}

/// CUDA runtime functions that touch no memory a kernel uses: errors,
/// synchronization, events, device queries. Any other `cuda*` or `cu*`
/// call may copy, set, free or map memory.
bool touchesNoKernelMemory(llvm::StringRef Name) {
  static const llvm::StringSet<> Benign = {
      "cudaGetLastError",        "cudaPeekAtLastError",
      "cudaGetErrorString",      "cudaGetErrorName",
      "cudaDeviceSynchronize",   "cudaThreadSynchronize",
      "cudaStreamSynchronize",   "cudaEventSynchronize",
      "cudaEventCreate",         "cudaEventCreateWithFlags",
      "cudaEventRecord",         "cudaEventRecordWithFlags",
      "cudaEventElapsedTime",    "cudaEventQuery",
      "cudaEventDestroy",        "cudaStreamQuery",
      "cudaGetDevice",           "cudaGetDeviceCount",
      "cudaGetDeviceProperties", "cudaDeviceGetAttribute",
      "cudaMemGetInfo",          "cudaProfilerStart",
      "cudaProfilerStop",        "cudaDriverGetVersion",
      "cudaRuntimeGetVersion",   "cudaFuncGetAttributes"};
  return Benign.contains(Name);
}

bool isCudaApi(llvm::StringRef Name) { return Name.starts_with("cu"); }

/// A function of CUDA's libraries, which work on device memory through
/// objects as well as pointers (thrust::fill of a device_vector, CUB's
/// algorithms, NCCL, NPP): thrust, cub and cuda (libcu++) namespaces, and
/// the C libraries' prefixes.
bool inCudaLibrary(const FunctionDecl &F) {
  for (const DeclContext *DC = F.getDeclContext(); DC; DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC))
      if (NS->getName() == "thrust" || NS->getName() == "cub" ||
          NS->getName() == "cuda")
        return true;
  llvm::StringRef Name = F.getIdentifier() ? F.getName() : "";
  return Name.starts_with("nccl") || Name.starts_with("npp") ||
         Name.starts_with("nvjpeg");
}

/// Walks a statement, and the bodies of the functions it calls, for the
/// first reason it must keep its place (the file comment of the header).
class PlaceKeeper : public RecursiveASTVisitor<PlaceKeeper> {
public:
  PlaceKeeper(const LaunchUses &Uses, ASTContext &Ctx)
      : Uses(Uses), SM(Ctx.getSourceManager()) {}

  std::string check(const Stmt &S) {
    TraverseStmt(const_cast<Stmt *>(&S));
    return Why;
  }

  bool shouldVisitImplicitCode() const { return true; }

  // Leaving the statement: the launches after it would not run where they
  // did. Inside a called function a return only ends that function.
  bool VisitReturnStmt(ReturnStmt *) {
    return Depth > 0 || fail("returns from the function");
  }
  bool VisitGotoStmt(GotoStmt *) { return fail("jumps with goto"); }
  bool VisitCXXThrowExpr(CXXThrowExpr *) {
    return Depth > 0 || fail("throws an exception");
  }
  bool VisitBreakStmt(BreakStmt *) {
    return Depth > 0 || Loops > 0 || fail("breaks out of a loop");
  }
  bool VisitContinueStmt(ContinueStmt *) {
    return Depth > 0 || Loops > 0 || fail("continues a loop");
  }
  bool VisitAsmStmt(AsmStmt *) { return fail("holds inline assembly"); }
  bool VisitVarDecl(VarDecl *Var) {
    return !Uses.Read.count(Var) || fail("declares '" + Var->getNameAsString() +
                                         "', which a launch reads");
  }

#define CUDA_REWRITE_LOOP(CLASS)                                               \
  bool Traverse##CLASS(CLASS *S) {                                             \
    ++Loops;                                                                   \
    bool Go = RecursiveASTVisitor::Traverse##CLASS(S);                         \
    --Loops;                                                                   \
    return Go;                                                                 \
  }
  CUDA_REWRITE_LOOP(ForStmt)
  CUDA_REWRITE_LOOP(WhileStmt)
  CUDA_REWRITE_LOOP(DoStmt)
  CUDA_REWRITE_LOOP(CXXForRangeStmt)
  CUDA_REWRITE_LOOP(SwitchStmt)
#undef CUDA_REWRITE_LOOP

  bool VisitDeclRefExpr(DeclRefExpr *Ref) { return named(Ref->getDecl()); }
  bool VisitMemberExpr(MemberExpr *Member) {
    return named(Member->getMemberDecl());
  }

  bool VisitUnaryOperator(UnaryOperator *Op) {
    if (Op->getOpcode() == UO_Deref &&
        pointsToNumbers(Op->getSubExpr()->getType()))
      return fail("reads or writes memory through a pointer");
    if (Op->isIncrementDecrementOp() || Op->getOpcode() == UO_AddrOf)
      return written(Op->getSubExpr());
    return true;
  }
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *Subscript) {
    // A local array is host memory; a pointer may hold a kernel's.
    if (pointsToNumbers(Subscript->getBase()->IgnoreParenImpCasts()->getType()))
      return fail("reads or writes memory through a pointer");
    return true;
  }
  bool VisitBinaryOperator(BinaryOperator *Op) {
    return !Op->isAssignmentOp() || written(Op->getLHS());
  }
  bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *Call) {
    return !Call->isAssignmentOp() || Call->getNumArgs() == 0 ||
           written(Call->getArg(0));
  }

  bool VisitCallExpr(CallExpr *Call) {
    if (isa<CUDAKernelCallExpr>(Call))
      return fail("launches a kernel");
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee)
      return fail("calls through a pointer to a function");
    if (const auto *Method = dyn_cast<CXXMethodDecl>(Callee)) {
      if (Method->isVirtual())
        return fail("calls virtual '" + Method->getNameAsString() + "'");
      if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call))
        if (!Method->isConst() && !Method->isStatic() &&
            !written(Member->getImplicitObjectArgument()))
          return false;
    }
    for (unsigned I = 0; I != Call->getNumArgs() && I < Callee->getNumParams();
         ++I) {
      QualType Param = Callee->getParamDecl(I)->getType();
      if (Param->isReferenceType() &&
          !Param.getNonReferenceType().isConstQualified() &&
          !written(Call->getArg(I)))
        return false;
    }
    return called(*Callee, {Call->getArgs(), Call->getNumArgs()});
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *Construct) {
    return called(*Construct->getConstructor(),
                  {Construct->getArgs(), Construct->getNumArgs()});
  }

private:
  bool fail(const std::string &Reason) {
    if (Why.empty())
      Why = Reason;
    return false;
  }

  bool named(const ValueDecl *D) {
    if (Uses.Memory.count(D))
      return fail("names '" + D->getNameAsString() +
                  "', which the launches pass to their kernels");
    return true;
  }

  /// \p E is assigned, incremented or has its address taken.
  bool written(const Expr *E) {
    std::set<const ValueDecl *> Named;
    namedDecls(E, Named);
    for (const ValueDecl *D : Named)
      if (Uses.Read.count(D))
        return fail("changes '" + D->getNameAsString() +
                    "', which a launch reads");
    return true;
  }

  /// A call of \p Callee: a library function may take no pointer to
  /// numbers (other than a local's address), a CUDA API must be on the
  /// list, and the project's own functions are read through.
  bool called(const FunctionDecl &Callee, llvm::ArrayRef<const Expr *> Args) {
    llvm::StringRef Name =
        Callee.getIdentifier() ? Callee.getName() : llvm::StringRef();
    bool System =
        SM.isInSystemHeader(Callee.getLocation()) || Callee.getBuiltinID() != 0;
    if (isCudaApi(Name) && (System || !Callee.hasBody()))
      return touchesNoKernelMemory(Name) ||
             fail("calls '" + Name.str() +
                  "', which may touch the launches' memory");
    if (inCudaLibrary(Callee))
      return fail("calls '" + Callee.getQualifiedNameAsString() +
                  "', which may touch the launches' memory");
    if (System) {
      for (const Expr *Arg : Args)
        if (pointsToNumbers(Arg->getType()) && !isAddressOfLocalValue(Arg))
          return fail("passes a pointer to '" + Callee.getNameAsString() +
                      "', which may touch the launches' memory");
      return true;
    }
    const FunctionDecl *Definition = Callee.getDefinition();
    if (!Definition || !Definition->hasBody())
      return fail("calls '" + Callee.getNameAsString() +
                  "', whose body is not visible");
    if (!Entered.insert(Definition).second)
      return true; // Being read or read already.
    if (Depth >= kMaxDepth)
      return fail("calls '" + Callee.getNameAsString() + "' " +
                  std::to_string(kMaxDepth) +
                  " calls deep, further than the analysis reads");
    ++Depth;
    bool Go = TraverseStmt(Definition->getBody());
    if (const auto *Constructor = dyn_cast<CXXConstructorDecl>(Definition))
      for (const CXXCtorInitializer *Init : Constructor->inits())
        Go = Go && TraverseStmt(Init->getInit());
    --Depth;
    return Go;
  }

  static constexpr unsigned kMaxDepth = 4;
  const LaunchUses &Uses;
  const SourceManager &SM;
  std::string Why;
  unsigned Depth = 0, Loops = 0;
  std::set<const FunctionDecl *> Entered;
};

} // namespace

void LaunchUses::add(const CUDAKernelCallExpr &Launch) {
  for (const Expr *Arg : Launch.arguments()) {
    std::set<const ValueDecl *> Named;
    namedDecls(Arg, Named);
    for (const ValueDecl *D : Named) {
      Read.insert(D);
      if (leadsToMemory(D->getType()))
        Memory.insert(D);
    }
  }
  namedDecls(Launch.getConfig(), Read);
}

} // namespace cuda_rewrite

namespace cuda_rewrite {

std::string whyStatementKeepsItsPlace(const Stmt &S, const LaunchUses &Uses,
                                      ASTContext &Ctx) {
  return PlaceKeeper(Uses, Ctx).check(S);
}

} // namespace cuda_rewrite
