//===- StageAccess.cpp - Where an image stage reads its inputs ------------===//

#include "analysis/StageAccess.h"
#include "analysis/AffineExpr.h"
#include "analysis/CudaBuiltins.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <numeric>
#include <set>

using namespace clang;

namespace cuda_rewrite {

namespace {

// Symbols 0..2 are the thread's x, y, z; 3..5 blockIdx, 6..8 blockDim,
// 9..11 threadIdx (only while reading the prologue); then parameters,
// other opaque values and terms.
constexpr SymbolId CoordSym = 0, BlockIdxSym = 3, BlockDimSym = 6,
                   ThreadIdxSym = 9, FirstFree = 12;

/// A division by a constant or a clamp: not a polynomial, so a symbol of
/// its own, with what it applies to.
struct Term {
  bool IsClamp = false;
  AffineExpr Inner;
  int64_t Divisor = 1;
  const Expr *Lo = nullptr, *Hi = nullptr;
  const Expr *Callee = nullptr;
  const CallExpr *Call = nullptr;
};

/// Whether \p F is `v < lo ? lo : v > hi ? hi : v` on its three parameters.
bool isClampFunction(const FunctionDecl *F) {
  if (!F || F->getNumParams() != 3 || !F->hasBody())
    return false;
  const auto *Body = dyn_cast<CompoundStmt>(F->getDefinition()->getBody());
  if (!Body || Body->size() != 1)
    return false;
  const auto *Ret = dyn_cast<ReturnStmt>(Body->body_front());
  if (!Ret || !Ret->getRetValue())
    return false;
  auto Param = [&](const Expr *E, unsigned I) {
    const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return Ref && Ref->getDecl() == F->getParamDecl(I);
  };
  auto Compare = [&](const Expr *E, BinaryOperatorKind Op, unsigned L,
                     unsigned R) {
    const auto *BO = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
    return BO && BO->getOpcode() == Op && Param(BO->getLHS(), L) &&
           Param(BO->getRHS(), R);
  };
  const auto *Outer =
      dyn_cast<ConditionalOperator>(Ret->getRetValue()->IgnoreParenImpCasts());
  if (!Outer || !Compare(Outer->getCond(), BO_LT, 0, 1) ||
      !Param(Outer->getTrueExpr(), 1))
    return false;
  const auto *Inner = dyn_cast<ConditionalOperator>(
      Outer->getFalseExpr()->IgnoreParenImpCasts());
  return Inner && Compare(Inner->getCond(), BO_GT, 0, 2) &&
         Param(Inner->getTrueExpr(), 2) && Param(Inner->getFalseExpr(), 0);
}

class Analyzer {
public:
  explicit Analyzer(const FunctionDecl &Kernel)
      : Kernel(Kernel), Ctx(Kernel.getASTContext()) {}

  StageAccess run() {
    const Stmt *Body = Kernel.getBody();
    if (!Body) {
      refuse(Kernel.getLocation(), "the kernel has no body here");
      return std::move(Result);
    }
    findModified(Body);
    visit(Body, /*Stored=*/false);
    if (Result)
      findGuards(cast<CompoundStmt>(Body));
    if (Result && Result.Writes.empty())
      refuse(Kernel.getLocation(), "no store at the thread's own point");
    return std::move(Result);
  }

private:
  void refuse(SourceLocation Loc, std::string Why) {
    if (Result.Refusal.empty()) {
      Result.Refusal = std::move(Why);
      Result.RefusalLoc = Loc;
    }
  }

  /// Locals assigned after their declaration (or whose address is taken):
  /// their initializer does not give their value.
  void findModified(const Stmt *S) {
    if (!S)
      return;
    auto Mark = [&](const Expr *E) {
      if (const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
        Modified.insert(Ref->getDecl());
    };
    if (const auto *BO = dyn_cast<BinaryOperator>(S))
      if (BO->isAssignmentOp())
        Mark(BO->getLHS());
    if (const auto *UO = dyn_cast<UnaryOperator>(S))
      if (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf)
        Mark(UO->getSubExpr());
    for (const Stmt *C : S->children())
      findModified(C);
  }

  /// Walks the body: declarations of coordinates, stores, loads.
  void visit(const Stmt *S, bool Stored) {
    if (!S || !Result)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S))
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D))
          noteCoordinate(V);
    if (const auto *BO = dyn_cast<BinaryOperator>(S);
        BO && BO->isAssignmentOp()) {
      const Expr *LHS = BO->getLHS()->IgnoreParenImpCasts();
      if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(LHS)) {
        store(ASE);
        visit(ASE->getIdx(), false);
        if (BO->isCompoundAssignmentOp())
          load(ASE);
      } else {
        visit(LHS, true);
      }
      visit(BO->getRHS(), false);
      return;
    }
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S); ASE && !Stored) {
      load(ASE);
      visit(ASE->getIdx(), false);
      return;
    }
    for (const Stmt *C : S->children())
      visit(C, false);
  }

  /// `int x = blockIdx.x * blockDim.x + threadIdx.x;` (or `blockIdx.z`
  /// alone, for channels: the pass checks that the launch's blocks are one
  /// thread deep there).
  void noteCoordinate(const VarDecl *V) {
    if (!V->getInit() || !V->getType()->isIntegerType() || Modified.count(V))
      return;
    std::optional<AffineExpr> E = eval(V->getInit());
    if (!E)
      return;
    for (unsigned D = 0; D != 3; ++D) {
      AffineExpr Global = AffineExpr::symbol(BlockIdxSym + D) *
                              AffineExpr::symbol(BlockDimSym + D) +
                          AffineExpr::symbol(ThreadIdxSym + D);
      bool IsGlobal = *E == Global;
      if (!IsGlobal && *E != AffineExpr::symbol(BlockIdxSym + D))
        continue;
      Coordinate[V] = D;
      if (!Result.CoordinateVar[D]) {
        Result.CoordinateVar[D] = V;
        Result.Form[D] =
            IsGlobal ? CoordinateForm::Global : CoordinateForm::BlockIndex;
      }
    }
  }

  const ParmVarDecl *bufferOf(const ArraySubscriptExpr *ASE) {
    const auto *Ref =
        dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    return Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
  }

  void store(const ArraySubscriptExpr *ASE) {
    const ParmVarDecl *Buffer = bufferOf(ASE);
    if (!Buffer) {
      refuse(ASE->getExprLoc(), "a store to memory that is not a parameter");
      return;
    }
    std::optional<std::vector<CoordinateRead>> At = coordinates(ASE);
    if (!At)
      return;
    for (unsigned D = 0; D != At->size(); ++D) {
      const CoordinateRead &C = (*At)[D];
      if (C.Axis != D || C.Scale != 1 || C.Divisor != 1 || C.Add || C.Offset ||
          C.Clamped) {
        refuse(ASE->getExprLoc(), "a store to '" + Buffer->getNameAsString() +
                                      "' away from the thread's own point");
        return;
      }
    }
    if (!llvm::is_contained(Result.Writes, Buffer))
      Result.Writes.push_back(Buffer);
    Result.Stores.push_back(
        withStrides({Buffer, *At, ASE->getExprLoc(), {}, {}}));
  }

  /// A `__constant__` or const global array: a small table (weights, a
  /// tone curve), which fusion leaves where it is, whatever the index.
  static bool isTable(const ArraySubscriptExpr *ASE) {
    const Expr *Base = ASE->getBase()->IgnoreParenImpCasts();
    while (const auto *Outer = dyn_cast<ArraySubscriptExpr>(Base))
      Base = Outer->getBase()->IgnoreParenImpCasts(); // table[c][k]
    const auto *Ref = dyn_cast<DeclRefExpr>(Base);
    const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    return V && V->hasGlobalStorage() &&
           (V->hasAttr<CUDAConstantAttr>() || V->getType().isConstQualified());
  }

  void load(const ArraySubscriptExpr *ASE) {
    if (isTable(ASE))
      return;
    const ParmVarDecl *Buffer = bufferOf(ASE);
    if (!Buffer) {
      refuse(ASE->getExprLoc(), "a load from memory that is not a parameter");
      return;
    }
    std::optional<std::vector<CoordinateRead>> At = coordinates(ASE);
    if (!At)
      return;
    Result.Reads.push_back(
        withStrides({Buffer, std::move(*At), ASE->getExprLoc(), {}, {}}));
  }

  /// \p R with the strides coordinates() found for its index.
  StageRead withStrides(StageRead R) {
    R.RowStride = LastStride[0];
    R.PlaneStride = LastStride[1];
    return R;
  }

  //===-- Guards ----------------------------------------------------------===//

  /// Guards at the top of \p Block: `if (..) return;` (the condition says
  /// which points are not written) and `if (..) { .. }` around the rest (it
  /// says which are), nested.
  void findGuards(const CompoundStmt *Block) {
    for (const Stmt *S : Block->body()) {
      const auto *If = dyn_cast<IfStmt>(S);
      if (!If || !Result)
        continue;
      if (If->getElse() || If->getInit() || If->getConditionVariable()) {
        refuse(If->getIfLoc(), "a guard with an else branch or a declaration");
        return;
      }
      const Stmt *Then = If->getThen();
      if (const auto *C = dyn_cast<CompoundStmt>(Then); C && C->size() == 1)
        Then = C->body_front();
      if (isa<ReturnStmt>(Then)) {
        bounds(If->getCond(), /*Skipped=*/true);
      } else {
        bounds(If->getCond(), /*Skipped=*/false);
        if (const auto *C = dyn_cast<CompoundStmt>(If->getThen()))
          findGuards(C);
      }
    }
  }

  /// The bounds a condition states: an `||` of them for a return guard
  /// (\p Skipped), an `&&` for an enclosing one.
  void bounds(const Expr *Cond, bool Skipped) {
    Cond = Cond->IgnoreParenImpCasts();
    if (const auto *BO = dyn_cast<BinaryOperator>(Cond)) {
      if (BO->getOpcode() == (Skipped ? BO_LOr : BO_LAnd)) {
        bounds(BO->getLHS(), Skipped);
        bounds(BO->getRHS(), Skipped);
        return;
      }
      if (BO->isComparisonOp() && BO->getOpcode() != BO_EQ &&
          BO->getOpcode() != BO_NE && bound(BO, Skipped))
        return;
    }
    refuse(Cond->getExprLoc(),
           "a guard that is not a bound on the thread's coordinates");
  }

  /// `coord op limit` (either side), as a bound of the written points.
  bool bound(const BinaryOperator *BO, bool Skipped) {
    BinaryOperatorKind Op = BO->getOpcode();
    const Expr *Coord = BO->getLHS(), *Limit = BO->getRHS();
    std::optional<unsigned> Axis = coordinateOf(Coord);
    if (!Axis) {
      std::swap(Coord, Limit);
      Axis = coordinateOf(Coord);
      Op = BinaryOperator::reverseComparisonOp(Op);
    }
    std::optional<AffineExpr> L = eval(Limit);
    if (!Axis || !L ||
        L->mentionsAny([&](SymbolId S) { return S < 3 || Terms.count(S); }))
      return false;
    // The written points: the condition (enclosing guard) or its negation
    // (return guard).
    if (Skipped)
      Op = BinaryOperator::negateComparisonOp(Op);
    StageBound B;
    B.Axis = *Axis;
    B.Limit = text(Limit);
    B.Upper = Op == BO_LT || Op == BO_LE;
    B.Add = Op == BO_LE || Op == BO_GT ? 1 : 0;
    B.LimitValue = paramPlusConstant(*L);
    Result.Bounds.push_back(B);
    return true;
  }

  /// The coordinate \p E is, exactly.
  std::optional<unsigned> coordinateOf(const Expr *E) {
    std::optional<AffineExpr> V = eval(E);
    for (unsigned D = 0; D != 3; ++D)
      if (V && *V == AffineExpr::symbol(CoordSym + D))
        return D;
    return std::nullopt;
  }

  //===-- Index expressions -----------------------------------------------===//

  std::optional<AffineExpr> eval(const Expr *E) {
    // Pinned with its parentheses: they may be all of a macro's body
    // (`#define OFF (-1)`), which only the macro's name spells.
    const Expr *Written = E;
    E = E->IgnoreParenImpCasts();
    if (const auto *Cast = dyn_cast<ExplicitCastExpr>(E))
      if (Cast->getType()->isIntegerType())
        return eval(Cast->getSubExpr());
    if (auto Builtin = cudaBuiltin(E)) {
      static const SymbolId Base[] = {ThreadIdxSym, BlockIdxSym, BlockDimSym};
      if (Builtin->first == CudaBuiltinVar::GridDim)
        return std::nullopt;
      return AffineExpr::symbol(Base[unsigned(Builtin->first)] +
                                Builtin->second);
    }
    if (!E->isValueDependent()) {
      Expr::EvalResult Constant;
      if (E->EvaluateAsInt(Constant, Ctx)) {
        if (!Result.Pins.pin(Written, Ctx)) {
          refuse(E->getBeginLoc(), Result.Pins.why());
          return std::nullopt;
        }
        return AffineExpr::constant(Constant.Val.getInt().getExtValue());
      }
    }
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
      return evalName(Ref->getDecl());
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      std::optional<AffineExpr> L = eval(BO->getLHS());
      std::optional<AffineExpr> R = eval(BO->getRHS());
      if (!L || !R)
        return std::nullopt;
      switch (BO->getOpcode()) {
      case BO_Add:
        return *L + *R;
      case BO_Sub:
        return *L - *R;
      case BO_Mul:
        return *L * *R;
      case BO_Div:
        if (std::optional<int64_t> D = R->getConstant(); D && *D > 0)
          return term({false, *L, *D, nullptr, nullptr, nullptr, nullptr});
        return std::nullopt;
      default:
        return std::nullopt;
      }
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->getOpcode() == UO_Minus)
        if (std::optional<AffineExpr> V = eval(UO->getSubExpr()))
          return -*V;
      if (UO->getOpcode() == UO_Plus)
        return eval(UO->getSubExpr());
      return std::nullopt;
    }
    if (const auto *Call = dyn_cast<CallExpr>(E))
      if (isClampFunction(Call->getDirectCallee()))
        if (std::optional<AffineExpr> V = eval(Call->getArg(0)))
          return term({true, *V, 1, Call->getArg(1), Call->getArg(2),
                       Call->getCallee(), Call});
    return std::nullopt;
  }

  std::optional<AffineExpr> evalName(const ValueDecl *D) {
    if (const auto *V = dyn_cast<VarDecl>(D)) {
      if (auto It = Coordinate.find(V); It != Coordinate.end())
        return AffineExpr::symbol(CoordSym + It->second);
      if (isa<ParmVarDecl>(V))
        return V->getType()->isIntegerType() && !Modified.count(V)
                   ? std::optional<AffineExpr>(opaque(V))
                   : std::nullopt;
      // A local computed from the coordinates stands for its value; one
      // that is not (`const int W = 2 * W2;`, `const int W2 = W / 2;`) is a
      // name of its own, so that strides keep the factors they are written
      // with.
      if (V->hasLocalStorage() && V->getInit() && !Modified.count(V) &&
          V->getType()->isIntegerType()) {
        std::optional<AffineExpr> Value = eval(V->getInit());
        if (Value && !followsCoordinates(*Value))
          return opaque(V);
        return Value;
      }
    }
    return std::nullopt;
  }

  /// Whether \p E depends on a coordinate, directly or inside a clamp or
  /// division.
  bool followsCoordinates(const AffineExpr &E) const {
    return E.mentionsAny([&](SymbolId S) {
      if (S < 3)
        return true;
      auto It = Terms.find(S);
      return It != Terms.end() && followsCoordinates(It->second.Inner);
    });
  }

  AffineExpr opaque(const ValueDecl *D) {
    auto [It, New] = Opaque.try_emplace(D, Next);
    if (New) {
      Names[Next] = D->getNameAsString();
      ++Next;
    }
    return AffineExpr::symbol(It->second);
  }

  AffineExpr term(Term T) {
    Terms[Next] = std::move(T);
    return AffineExpr::symbol(Next++);
  }

  /// Which coordinate an expression follows: the one coordinate it (or the
  /// term in it) mentions, or none.
  std::optional<unsigned> axisOf(const AffineExpr &E) {
    std::optional<unsigned> Axis;
    bool Mixed = false;
    E.mentionsAny([&](SymbolId S) {
      std::optional<unsigned> A;
      if (S < 3)
        A = S;
      else if (auto T = Terms.find(S); T != Terms.end())
        A = axisOf(T->second.Inner);
      if (A) {
        if (Axis && *Axis != *A)
          Mixed = true;
        Axis = A;
      }
      return false;
    });
    return Mixed ? std::nullopt : Axis;
  }

  /// The index of \p ASE as x, y[, z] reads (see the file comment).
  std::optional<std::vector<CoordinateRead>>
  coordinates(const ArraySubscriptExpr *ASE) {
    std::optional<AffineExpr> Index = eval(ASE->getIdx());
    std::string Name = bufferOf(ASE)->getNameAsString();
    if (!Index || Index->overflowed()) {
      refuse(ASE->getExprLoc(), "the index of '" + Name +
                                    "' is not a sum of scaled, offset or "
                                    "clamped coordinates times strides");
      return std::nullopt;
    }
    // Strides: what multiplies the y and z parts, from the terms that
    // mention those coordinates.
    std::map<unsigned, Monomial> Stride;
    for (const auto &[M, C] : Index->terms()) {
      for (SymbolId S : M) {
        std::optional<unsigned> A =
            S < 3 ? std::optional<unsigned>(S)
                  : (Terms.count(S) ? axisOf(Terms[S].Inner) : std::nullopt);
        if (!A || *A == 0)
          continue;
        Monomial Rest = M;
        Rest.erase(llvm::find(Rest, S));
        if (Stride.count(*A) && Stride[*A] != Rest) {
          refuse(ASE->getExprLoc(), "the index of '" + Name +
                                        "' multiplies one coordinate by two "
                                        "strides");
          return std::nullopt;
        }
        Stride[*A] = Rest;
      }
    }
    // Split the terms: those the plane stride divides, then the row
    // stride's, then the rest (x).
    std::vector<AffineExpr> Part(3);
    auto Contains = [](const Monomial &M, const Monomial &Sub, Monomial &Left) {
      Left = M;
      for (SymbolId S : Sub) {
        auto It = llvm::find(Left, S);
        if (It == Left.end())
          return false;
        Left.erase(It);
      }
      return true;
    };
    for (const auto &[M, C] : Index->terms()) {
      Monomial Left;
      unsigned Into = 0;
      for (unsigned A : {2u, 1u})
        if (Stride.count(A) && !Stride[A].empty() &&
            Contains(M, Stride[A], Left)) {
          Into = A;
          break;
        }
      if (!Into)
        Left = M;
      AffineExpr T = AffineExpr::constant(C);
      for (SymbolId S : Left)
        T = T * AffineExpr::symbol(S);
      Part[Into] = Part[Into] + T;
    }
    // A fixed plane (`(3 * H + y) * W + x`, the alpha plane): terms of the
    // y part that are a product of names alone, all the same product.
    if (!Stride.count(2)) {
      AffineExpr Plane, Row;
      std::optional<Monomial> PlaneStride;
      for (const auto &[M, C] : Part[1].terms()) {
        bool Names = !M.empty() && llvm::none_of(M, [&](SymbolId S) {
          return S < 3 || Terms.count(S);
        });
        AffineExpr T = AffineExpr::constant(C);
        for (SymbolId S : M)
          T = T * AffineExpr::symbol(S);
        if (!Names) {
          Row = Row + T;
        } else if (!PlaneStride || *PlaneStride == M) {
          PlaneStride = M;
          Plane = Plane + AffineExpr::constant(C);
        } else {
          refuse(ASE->getExprLoc(),
                 "the index of '" + Name + "' has two plane strides");
          return std::nullopt;
        }
      }
      if (PlaneStride) {
        Part[1] = Row;
        Part[2] = Plane;
        Stride[2] = *PlaneStride;
      }
    }
    unsigned Dims = Stride.count(2) ? 3 : 2;
    for (unsigned A : {1u, 2u}) {
      std::vector<const ValueDecl *> &Names = LastStride[A - 1];
      Names.clear();
      if (Stride.count(A))
        for (SymbolId S : Stride[A])
          Names.push_back(declOf(S));
    }
    std::vector<CoordinateRead> Result;
    for (unsigned D = 0; D != Dims; ++D) {
      std::optional<CoordinateRead> C = coordinate(Part[D], D);
      if (!C) {
        static const char *const Axis[] = {"x", "y", "z"};
        refuse(ASE->getExprLoc(),
               "the " + std::string(Axis[D]) + " part of the index of '" +
                   Name + "' is not a scaled, offset or clamped coordinate");
        return std::nullopt;
      }
      Result.push_back(*C);
    }
    return Result;
  }

  /// \p E as one coordinate read along \p Default (for a fixed index).
  std::optional<CoordinateRead> coordinate(const AffineExpr &E,
                                           unsigned Default) {
    CoordinateRead C;
    C.Axis = Default;
    C.Offset = E.constantTerm();
    AffineExpr Rest = E - AffineExpr::constant(C.Offset);
    if (Rest.isZero()) {
      C.Scale = 0;
      return C;
    }
    if (Rest.terms().size() != 1)
      return std::nullopt;
    const auto &[M, K] = *Rest.terms().begin();
    if (M.size() != 1)
      return std::nullopt;
    SymbolId S = M.front();
    if (S < 3) {
      C.Axis = S;
      C.Scale = K;
      return C;
    }
    auto T = Terms.find(S);
    if (T == Terms.end() || K != 1)
      return std::nullopt;
    if (!T->second.IsClamp) {
      std::optional<CoordinateRead> Inner = coordinate(T->second.Inner, 0);
      if (!Inner || Inner->Scale == 0 || Inner->Divisor != 1 || Inner->Clamped)
        return std::nullopt;
      C.Axis = Inner->Axis;
      C.Scale = Inner->Scale;
      C.Add = Inner->Offset;
      C.Divisor = T->second.Divisor;
      return C;
    }
    if (C.Offset != 0)
      return std::nullopt; // clamp(..) + k: not one of the forms.
    std::optional<CoordinateRead> Inner = coordinate(T->second.Inner, Default);
    if (!Inner || Inner->Clamped)
      return std::nullopt;
    Inner->Clamped = true;
    Inner->Lo = text(T->second.Lo);
    Inner->Hi = text(T->second.Hi);
    Inner->ClampFunction = text(T->second.Callee);
    Inner->ClampCall = T->second.Call;
    if (std::optional<AffineExpr> Lo = eval(T->second.Lo))
      Inner->LoValue = paramPlusConstant(*Lo);
    if (std::optional<AffineExpr> Hi = eval(T->second.Hi))
      Inner->HiValue = paramPlusConstant(*Hi);
    return Inner;
  }

  /// The name an opaque symbol stands for; null for any other symbol.
  const ValueDecl *declOf(SymbolId S) const {
    for (const auto &[D, Sym] : Opaque)
      if (Sym == S)
        return D;
    return nullptr;
  }

  /// \p E as `param + k` or `k`, if it is one.
  std::optional<ParamPlusConstant> paramPlusConstant(const AffineExpr &E) {
    ParamPlusConstant V;
    V.Constant = E.constantTerm();
    AffineExpr Rest = E - AffineExpr::constant(V.Constant);
    if (Rest.isZero())
      return V;
    if (Rest.terms().size() != 1)
      return std::nullopt;
    const auto &[M, K] = *Rest.terms().begin();
    if (M.size() != 1 || K != 1)
      return std::nullopt;
    if ((V.Param = dyn_cast_or_null<ParmVarDecl>(declOf(M.front()))))
      return V;
    return std::nullopt;
  }

  std::string text(const Expr *E) {
    return Lexer::getSourceText(
               CharSourceRange::getTokenRange(E->getSourceRange()),
               Ctx.getSourceManager(), Ctx.getLangOpts())
        .str();
  }

  const FunctionDecl &Kernel;
  ASTContext &Ctx;
  StageAccess Result;
  std::set<const ValueDecl *> Modified;
  std::map<const VarDecl *, unsigned> Coordinate;
  std::map<const ValueDecl *, SymbolId> Opaque;
  std::map<SymbolId, std::string> Names;
  std::map<SymbolId, Term> Terms;
  SymbolId Next = FirstFree;
  /// The row and plane strides of the index coordinates() read last.
  std::vector<const ValueDecl *> LastStride[2];
};

} // namespace

StageAccess analyzeStageAccess(const FunctionDecl &Kernel) {
  return Analyzer(Kernel).run();
}

namespace {

int64_t floorDiv(int64_t A, int64_t B) {
  return A / B - (A % B != 0 && (A < 0) != (B < 0));
}
int64_t ceilDiv(int64_t A, int64_t B) { return -floorDiv(-A, B); }

/// One coordinate read as an axis dependence.
AxisDependence dependence(const CoordinateRead &C) {
  AxisDependence D;
  D.ConsumerAxis = C.Axis;
  D.Clamped = C.Clamped;
  if (C.Scale == 0) {
    D.Num = 0;
    D.Lo = D.Hi = C.Offset;
    return D;
  }
  int64_t G = std::gcd(C.Scale < 0 ? -C.Scale : C.Scale, C.Divisor);
  D.Num = C.Scale / G;
  D.Den = C.Divisor / G;
  // trunc((S c + A) / Dv) lies within (Dv - 1) / Dv of (S c + A) / Dv.
  int64_t Dv = C.Divisor;
  D.Lo = floorDiv(C.Add - (Dv - 1), Dv) + C.Offset;
  D.Hi = ceilDiv(C.Add + (Dv - 1), Dv) + C.Offset;
  return D;
}

} // namespace

std::optional<std::vector<AxisDependence>>
dependenceOf(const std::vector<StageRead> &Reads, std::string &Why) {
  std::vector<AxisDependence> Axes;
  static const char *const Axis[] = {"x", "y", "z"};
  for (const StageRead &R : Reads) {
    if (Axes.empty())
      Axes.resize(R.Coordinates.size());
    if (R.Coordinates.size() != Axes.size()) {
      Why = "reads of '" + R.Buffer->getNameAsString() +
            "' with and without a plane index";
      return std::nullopt;
    }
    bool First = &R == &Reads.front();
    for (unsigned A = 0; A != Axes.size(); ++A) {
      AxisDependence D = dependence(R.Coordinates[A]);
      AxisDependence &Seen = Axes[A];
      if (First) {
        Seen = D;
        continue;
      }
      if ((D.Num == 0) != (Seen.Num == 0)) {
        Why = "reads of '" + R.Buffer->getNameAsString() +
              "' both fixed and following a coordinate along " + Axis[A];
        return std::nullopt;
      }
      if (D.Num != 0 && (D.Num != Seen.Num || D.Den != Seen.Den ||
                         D.ConsumerAxis != Seen.ConsumerAxis)) {
        Why = "reads of '" + R.Buffer->getNameAsString() + "' follow " +
              Axis[A] + " at two scales or from two coordinates";
        return std::nullopt;
      }
      Seen.Lo = std::min(Seen.Lo, D.Lo);
      Seen.Hi = std::max(Seen.Hi, D.Hi);
      Seen.Clamped = Seen.Clamped || D.Clamped;
    }
  }
  return Axes;
}

std::string describeDependence(const std::vector<AxisDependence> &Axes) {
  static const char *const Axis[] = {"x", "y", "z"};
  std::vector<std::string> Parts;
  for (unsigned A = 0; A != Axes.size(); ++A) {
    const AxisDependence &D = Axes[A];
    std::string S = std::string(Axis[A]) + ": ";
    if (D.Num == 0) {
      S += D.Lo == D.Hi
               ? std::to_string(D.Lo)
               : "[" + std::to_string(D.Lo) + ", " + std::to_string(D.Hi) + "]";
    } else {
      S += (D.Num == 1 ? "" : std::to_string(D.Num)) + Axis[D.ConsumerAxis];
      if (D.Den != 1)
        S += " / " + std::to_string(D.Den);
      S += " + [" + std::to_string(D.Lo) + ", " + std::to_string(D.Hi) + "]";
    }
    if (D.Clamped)
      S += " (clamped)";
    Parts.push_back(S);
  }
  return llvm::join(Parts, ", ");
}

std::string describeStageDomain(const StageAccess &Access) {
  static const char *const Axis[] = {"x", "y", "z"};
  std::vector<std::string> Parts;
  for (unsigned D = 0; D != 3; ++D) {
    std::vector<std::string> Lo, Hi;
    for (const StageBound &B : Access.Bounds)
      if (B.Axis == D)
        (B.Upper ? Hi : Lo)
            .push_back(B.Limit + (B.Add ? " + " + std::to_string(B.Add) : ""));
    if (Lo.empty() && Hi.empty())
      continue;
    std::string S = Axis[D];
    if (!Lo.empty())
      S = (Lo.size() == 1 ? Lo[0] : "max(" + llvm::join(Lo, ", ") + ")") +
          " <= " + S;
    if (!Hi.empty())
      S += " < " +
           (Hi.size() == 1 ? Hi[0] : "min(" + llvm::join(Hi, ", ") + ")");
    Parts.push_back(S);
  }
  return Parts.empty() ? "the launch's extent" : llvm::join(Parts, ", ");
}

std::string describeStageRead(const StageRead &Read) {
  static const char *const Axis[] = {"x", "y", "z"};
  std::vector<std::string> Parts;
  for (const CoordinateRead &C : Read.Coordinates) {
    std::string S;
    if (C.Scale == 0) {
      S = std::to_string(C.Offset);
    } else {
      std::string Coord = (C.Scale == 1    ? ""
                           : C.Scale == -1 ? "-"
                                           : std::to_string(C.Scale)) +
                          Axis[C.Axis];
      if (C.Divisor != 1)
        Coord = (C.Add ? "(" + Coord + (C.Add > 0 ? " + " : " - ") +
                             std::to_string(std::abs(C.Add)) + ")"
                       : Coord) +
                " / " + std::to_string(C.Divisor);
      S = Coord + (C.Offset > 0   ? " + " + std::to_string(C.Offset)
                   : C.Offset < 0 ? " - " + std::to_string(-C.Offset)
                                  : "");
    }
    if (C.Clamped)
      S = "clamp(" + S + ", " + C.Lo + ", " + C.Hi + ")";
    Parts.push_back(S);
  }
  return Read.Buffer->getNameAsString() + "[" + llvm::join(Parts, ", ") + "]";
}

} // namespace cuda_rewrite
