//===- StencilAccess.cpp - Neighbour offsets of stencil kernels -----------===//
//
// The analysis runs in steps, each of which may refuse:
//  1. scan the body: assignments to locals, loops, calls, memory accesses;
//  2. check that nothing has side effects beyond one store;
//  3. evaluate every address to (root array, subscript polynomials);
//  4. find the single output store; fold threadIdx/blockIdx pairs in every
//     index into coordinate symbols (x, y, z) using the store's definition
//     of a coordinate;
//  5. for every read at a coordinate-dependent index, expand the loops that
//     enclose it and express its distance from the store in strides;
//  6. attribute a weight to every read and extract the store's guard.
//
//===----------------------------------------------------------------------===//

#include "analysis/StencilAccess.h"
#include "analysis/CudaBuiltins.h"

#include "analysis/AffineExpr.h"
#include "analysis/KernelAccess.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <memory>
#include <set>

using namespace clang;

namespace cuda_rewrite {

static constexpr unsigned NumDims = 3;
static const char *const DimNames[NumDims] = {"x", "y", "z"};

static std::string quote(llvm::StringRef Name) {
  return "'" + Name.str() + "'";
}

//===----------------------------------------------------------------------===//
// Symbols of index polynomials
//===----------------------------------------------------------------------===//

namespace {

enum class SymKind {
  Coord,     ///< A thread coordinate: threadIdx.d + blockIdx.d * K_d.
  ThreadIdx, ///< Before folding into coordinates.
  BlockIdx,
  BlockDim,
  GridDim,
  Value,   ///< A scalar that does not change: parameter, global, p.field.
  LoopVar, ///< The variable of a loop with constant bounds.
  /// `(t + 4) / 2`, `k % 3`: an operation that is not a polynomial, on
  /// operands that depend only on loop variables. Its value is known once
  /// the loop variables are.
  Derived,
  /// Q of a periodic border `(c + k) % M` = c + k + M * Q: how many periods
  /// the wrap moves (-1, 0 or 1), with Dim c's dimension and Operands {M}.
  Wrap,
};

struct SymbolInfo {
  SymbolInfo(SymKind Kind, unsigned Dim, std::string Name)
      : Kind(Kind), Dim(Dim), Name(std::move(Name)) {}

  SymKind Kind;
  unsigned Dim = 0;
  std::string Name;
  /// Derived: Operands[0] Op Operands[1].
  BinaryOperatorKind Op = BO_Div;
  std::vector<AffineExpr> Operands;
};

/// Gives symbols numbers. The built-in ones have fixed numbers, coordinates
/// first, so that printed polynomials read "y*W + x".
class SymbolTable {
public:
  SymbolTable() {
    for (SymKind K : {SymKind::Coord, SymKind::ThreadIdx, SymKind::BlockIdx,
                      SymKind::BlockDim, SymKind::GridDim})
      for (unsigned D = 0; D != NumDims; ++D)
        Infos.push_back({K, D, builtinName(K, D)});
  }

  SymbolId builtin(SymKind K, unsigned Dim) const {
    return static_cast<unsigned>(K) * NumDims + Dim;
  }
  SymbolId coord(unsigned Dim) const { return builtin(SymKind::Coord, Dim); }

  /// The symbol for (Key, SubKey), created on first use.
  SymbolId named(SymKind K, const void *Key, const void *SubKey,
                 std::string Name) {
    auto [It, New] = Keys.try_emplace({Key, SubKey}, Infos.size());
    if (New)
      Infos.push_back({K, 0, std::move(Name)});
    return It->second;
  }

  SymbolId derived(const Expr *Key, BinaryOperatorKind Op, AffineExpr L,
                   AffineExpr R, std::string Name) {
    SymbolId S = named(SymKind::Derived, Key, nullptr, std::move(Name));
    Infos[S].Op = Op;
    Infos[S].Operands = {std::move(L), std::move(R)};
    return S;
  }

  SymbolId wrap(const Expr *Key, unsigned Dim, AffineExpr Period,
                std::string Name) {
    SymbolId S = named(SymKind::Wrap, Key, nullptr, std::move(Name));
    Infos[S].Dim = Dim;
    Infos[S].Operands = {std::move(Period)};
    return S;
  }

  const SymbolInfo &info(SymbolId S) const { return Infos[S]; }
  std::string name(SymbolId S) const { return Infos[S].Name; }
  bool isThreadVarying(SymbolId S) const {
    SymKind K = Infos[S].Kind;
    return K == SymKind::ThreadIdx || K == SymKind::BlockIdx;
  }
  bool isCoord(SymbolId S) const { return Infos[S].Kind == SymKind::Coord; }
  bool isLoopVar(SymbolId S) const { return Infos[S].Kind == SymKind::LoopVar; }
  bool isDerived(SymbolId S) const { return Infos[S].Kind == SymKind::Derived; }
  bool isWrap(SymbolId S) const { return Infos[S].Kind == SymKind::Wrap; }
  /// A loop variable, or a value computed from loop variables.
  bool variesWithLoops(SymbolId S) const {
    return isLoopVar(S) || isDerived(S);
  }
  /// Whether \p P depends on \p Loop, directly or through derived symbols.
  bool dependsOn(const AffineExpr &P, SymbolId Loop) const {
    return P.mentionsAny([&](SymbolId S) {
      return S == Loop ||
             (isDerived(S) &&
              llvm::any_of(Infos[S].Operands, [&](const AffineExpr &O) {
                return dependsOn(O, Loop);
              }));
    });
  }

private:
  static std::string builtinName(SymKind K, unsigned D) {
    switch (K) {
    case SymKind::Coord:
      return DimNames[D];
    case SymKind::ThreadIdx:
      return std::string("threadIdx.") + DimNames[D];
    case SymKind::BlockIdx:
      return std::string("blockIdx.") + DimNames[D];
    case SymKind::BlockDim:
      return std::string("blockDim.") + DimNames[D];
    default:
      return std::string("gridDim.") + DimNames[D];
    }
  }

  std::vector<SymbolInfo> Infos;
  std::map<std::pair<const void *, const void *>, SymbolId> Keys;
};

} // namespace

//===----------------------------------------------------------------------===//
// Small AST helpers
//===----------------------------------------------------------------------===//

/// threadIdx.x and friends (CudaBuiltins.h), as this analysis's symbols.
static std::optional<std::pair<SymKind, unsigned>>
builtinSymbol(const Expr *E) {
  auto Builtin = cudaBuiltin(E);
  if (!Builtin)
    return std::nullopt;
  static const SymKind Kind[] = {SymKind::ThreadIdx, SymKind::BlockIdx,
                                 SymKind::BlockDim, SymKind::GridDim};
  return std::make_pair(Kind[unsigned(Builtin->first)], Builtin->second);
}

/// An lvalue that names memory through a pointer or array: `p[i]`, `*p`,
/// `p->f`. Array-typed intermediates (`a[y]` of `float a[H][W]`) are parts
/// of a larger access and are not accesses themselves.
static bool isAccessExpr(const Expr *E) {
  if (E->getType()->isArrayType())
    return false;
  if (isa<ArraySubscriptExpr>(E))
    return true;
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    return UO->getOpcode() == UO_Deref;
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return ME->isArrow();
  return false;
}

static bool isInSystemHeader(const Decl *D) {
  return D->getASTContext().getSourceManager().isInSystemHeader(
      D->getLocation());
}

/// The CUDA load intrinsics, `__ldg(p)` reads *p.
static bool isLoadIntrinsic(const FunctionDecl *FD) {
  static const llvm::StringSet<> Names = {"__ldg",  "__ldca", "__ldcg",
                                          "__ldcs", "__ldlu", "__ldcv"};
  return FD && FD->getIdentifier() && isInSystemHeader(FD) &&
         Names.contains(FD->getNameAsString()) && FD->getNumParams() == 1;
}

static bool isLoadIntrinsicCall(const Stmt *S) {
  const auto *Call = dyn_cast<CallExpr>(S);
  return Call && isLoadIntrinsic(Call->getDirectCallee());
}

/// fma(a, b, c) = a * b + c, for weights.
static bool isFmaCall(const CallExpr *Call) {
  static const llvm::StringSet<> Names = {
      "fmaf",      "fma",      "__fmaf_rn", "__fmaf_rz", "__fmaf_ru",
      "__fmaf_rd", "__fma_rn", "__fma_rz",  "__fma_ru",  "__fma_rd"};
  const FunctionDecl *FD = Call->getDirectCallee();
  return FD && FD->getIdentifier() && Names.contains(FD->getNameAsString()) &&
         Call->getNumArgs() == 3;
}

/// The children of S, seeing only the syntactic form of pseudo-objects
/// (whose semantic form repeats the operands and calls property getters).
static llvm::SmallVector<const Stmt *, 4> syntacticChildren(const Stmt *S) {
  llvm::SmallVector<const Stmt *, 4> Result;
  if (const auto *POE = dyn_cast<PseudoObjectExpr>(S)) {
    Result.push_back(POE->getSyntacticForm());
    return Result;
  }
  for (const Stmt *Child : S->children())
    if (Child)
      Result.push_back(Child);
  return Result;
}

namespace {

/// Visits the body in source order, seeing pseudo-objects syntactically.
template <typename Derived>
struct SyntacticVisitor : RecursiveASTVisitor<Derived> {
  bool TraversePseudoObjectExpr(PseudoObjectExpr *E) {
    return RecursiveASTVisitor<Derived>::TraverseStmt(E->getSyntacticForm());
  }
  // Lambdas are refused; their bodies are not part of the kernel's flow.
  bool TraverseLambdaExpr(LambdaExpr *E) {
    return static_cast<Derived *>(this)->WalkUpFromLambdaExpr(E);
  }
};

} // namespace

static std::string formatNumber(double V) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%g", V);
  return S;
}

static const char *opSpelling(BinaryOperatorKind Op) {
  return BinaryOperator::getOpcodeStr(Op).data();
}

static BinaryOperatorKind negateComparison(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_LT:
    return BO_GE;
  case BO_LE:
    return BO_GT;
  case BO_GT:
    return BO_LE;
  case BO_GE:
    return BO_LT;
  case BO_EQ:
    return BO_NE;
  default:
    return BO_EQ;
  }
}

/// a Op b  <=>  b Op' a.
static BinaryOperatorKind swapComparison(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_LT:
    return BO_GT;
  case BO_LE:
    return BO_GE;
  case BO_GT:
    return BO_LT;
  case BO_GE:
    return BO_LE;
  default:
    return Op;
  }
}

//===----------------------------------------------------------------------===//
// What the analysis collects
//===----------------------------------------------------------------------===//

namespace {

/// Why a called function is not allowed; SideEffect is false when it only
/// reads memory the offsets would not see.
struct Impurity {
  std::string Why;
  bool SideEffect = true;
};

/// Why something could not be analysed.
struct Failure {
  std::string Why;
  SourceLocation Loc;
  bool DataDependent = false;
};

/// A for loop; canonical when it runs a variable over constant bounds.
struct LoopInfo {
  const ForStmt *For = nullptr;
  const VarDecl *Var = nullptr;
  bool Canonical = false;
  std::string Why; ///< Why it is not canonical.
  int64_t First = 0;
  int64_t Step = 1;
  uint64_t Trips = 0;
  SymbolId Sym = 0;

  int64_t value(uint64_t I) const { return First + int64_t(I) * Step; }
};

enum class Usage { None, Read, Write, ReadWrite };

/// Where an array lives; only ThreadLocal arrays may be written freely.
enum class MemoryKind { Global, Constant, Shared, ThreadLocal };

/// An element address: the array (a pointer parameter or an array variable)
/// and one polynomial per subscript, outermost first.
struct Address {
  const VarDecl *Root = nullptr;
  llvm::SmallVector<AffineExpr, 3> Subs;
};

struct Access {
  const Expr *E = nullptr; ///< The lvalue, or a load intrinsic call.
  Usage U = Usage::Read;
  /// The array, known even when an index is not (null if not).
  const VarDecl *Root = nullptr;
  std::optional<Address> Addr;
  Failure Fail; ///< When Addr is not set.
};

/// An index split into the stride of each coordinate and the rest.
struct Layout {
  llvm::SmallVector<std::array<AffineExpr, NumDims>, 3> Strides;
  llvm::SmallVector<AffineExpr, 3> Rest;

  bool sameStrides(const Layout &O) const {
    if (Strides.size() != O.Strides.size())
      return false;
    for (size_t K = 0; K != Strides.size(); ++K)
      for (unsigned D = 0; D != NumDims; ++D)
        if (Strides[K][D] != O.Strides[K][D])
          return false;
    return true;
  }
  bool usesDim(unsigned D) const {
    return llvm::any_of(Strides, [D](auto &S) { return !S[D].isZero(); });
  }
};

/// A weight before loop variables in filter subscripts are substituted.
struct WeightTemplate {
  StencilCoefficient::Kind K = StencilCoefficient::Literal;
  double Scale = 1.0;
  const ValueDecl *Source = nullptr;
  std::string SourceName;
  std::optional<double> Value;
  llvm::SmallVector<AffineExpr, 2> FilterSubs;
};

} // namespace

static WeightTemplate unknownWeight() {
  WeightTemplate W;
  W.K = StencilCoefficient::Unknown;
  return W;
}

static WeightTemplate literalWeight(double V) {
  WeightTemplate W;
  W.Scale = V;
  return W;
}

/// A product of weights stays understood when at most one factor is not a
/// literal.
static WeightTemplate multiply(const WeightTemplate &A,
                               const WeightTemplate &B) {
  if (A.K == StencilCoefficient::Unknown || B.K == StencilCoefficient::Unknown)
    return unknownWeight();
  if (A.K == StencilCoefficient::Literal) {
    WeightTemplate R = B;
    R.Scale *= A.Scale;
    return R;
  }
  if (B.K == StencilCoefficient::Literal) {
    WeightTemplate R = A;
    R.Scale *= B.Scale;
    return R;
  }
  return unknownWeight();
}

namespace {

/// A bound on an output coordinate with its limit as a polynomial; an
/// inequality also as the half-line it leaves: coordinate < Limit (IsUpper)
/// or coordinate >= Limit, in the output's coordinates.
struct LimitedBound {
  CoordinateBound Bound;
  bool IsInequality = false;
  bool IsUpper = false;
  AffineExpr Limit;
};

/// The `?:`s that make reads zero borders (StencilPoint::When).
using TernarySet = llvm::SmallPtrSet<const ConditionalOperator *, 4>;

/// Where the value of a read ends up.
struct Sink {
  enum Kind { None, Store, Accumulator } K = None;
  const VarDecl *Acc = nullptr;
  const Stmt *Via = nullptr; ///< The assignment or declaration.
};

//===----------------------------------------------------------------------===//
// The analysis
//===----------------------------------------------------------------------===//

class StencilAnalyzer {
public:
  explicit StencilAnalyzer(const FunctionDecl &Kernel)
      : Kernel(Kernel), Ctx(Kernel.getASTContext()),
        SM(Ctx.getSourceManager()) {
    Shape.Index32 = true; // Until an index of another type is seen.
  }

  StencilResult run();

private:
  // Refusal: the first one wins.
  bool refuse(SourceLocation Loc, std::string Why);
  bool refuse(const Failure &F) { return refuse(F.Loc, F.Why); }
  bool failed() const { return !Refusal.empty(); }

  // Step 1: scanning.
  bool checkKernel();
  bool scanBody();
  void analyzeLoops();
  LoopInfo analyzeLoop(const ForStmt *For);
  void computeTaint();
  bool exprLoads(const Stmt *S, llvm::SmallPtrSetImpl<const VarDecl *> &Seen);

  // Step 2: side effects.
  bool checkCalls();
  std::optional<std::string> callProblem(const CallExpr *Call, unsigned Depth);
  std::optional<Impurity> functionImpurity(const FunctionDecl *FD,
                                           unsigned Depth);
  bool checkGlobalWrites();

  // Step 3: addresses and integer values.
  std::optional<AffineExpr> evalInt(const Expr *E);
  std::optional<AffineExpr> evalIntLValue(const Expr *E);
  std::optional<AffineExpr> evalBinary(const BinaryOperator *BO);
  std::optional<AffineExpr> evalVar(const VarDecl *V, const Expr *Ref);
  std::optional<int64_t> constantValue(const VarDecl *V);
  std::optional<Address> evalAddress(const Expr *E);
  std::optional<Address> evalLValue(const Expr *E);
  void noteIndexType(const Expr *Index);
  const VarDecl *rootOf(const Expr *E, unsigned Depth = 0) const;
  std::nullopt_t fail(const Stmt *S, std::string Why,
                      bool DataDependent = false);
  void classifyAccesses();
  Usage usageOf(const Expr *Access) const;
  MemoryKind memoryKind(const VarDecl *Root) const;

  // Step 4: store and coordinates.
  bool findStore();
  void learnBlockFactors();
  bool isLinearThreadIndex(const AffineExpr &P, AffineExpr &Factor) const;
  std::optional<AffineExpr> wrappedCoordinate(const BinaryOperator *BO,
                                              const AffineExpr &L,
                                              const AffineExpr &Period,
                                              bool &Recognized);
  bool stripWraps(const Access &Read, Layout &L,
                  std::array<std::optional<AffineExpr>, NumDims> &Wraps);
  void checkPeriodicBorders();
  void writtenEdges(std::array<std::vector<AffineExpr>, NumDims> &Ends,
                    std::array<std::vector<AffineExpr>, NumDims> &Starts) const;
  std::optional<AffineExpr> splitCoordinate(const BinaryOperator *BO,
                                            const AffineExpr &Linear,
                                            const AffineExpr &Factor,
                                            const AffineExpr &Divisor);
  std::optional<AffineExpr> fold(const AffineExpr &P, const Expr *Where);
  std::optional<Layout> layoutOf(const Address &A, const Expr *Where);
  bool analyzeStoreLayout();

  // Step 5: reads and offsets.
  bool checkInputs();
  bool expandReads();
  bool expandRead(const Access &Read, const Layout &L);
  std::optional<StencilOffset>
  solveOffset(const Layout &Read, const llvm::SmallVector<AffineExpr, 3> &Rest,
              const Expr *Where);
  std::optional<std::array<int64_t, NumDims>>
  decompose(const AffineExpr &D, const std::array<AffineExpr, NumDims> &Strides,
            std::array<std::optional<int64_t>, NumDims> &Known);
  std::vector<const LoopInfo *> enclosingLoops(const Stmt *S, bool &InOtherLoop,
                                               std::string &OtherLoop) const;
  bool isConditionalRead(const Expr *Read, const TernarySet &Masks) const;
  std::optional<std::vector<LimitedBound>> zeroBorderMask(const Expr *Read,
                                                          TernarySet &Masks);
  bool isZero(const Expr *E);

  // Step 6: weights and guard.
  WeightTemplate weightOf(const Expr *Read, const TernarySet &Masks);
  std::pair<WeightTemplate, Sink> walkToSink(const Expr *From,
                                             const TernarySet *Masks = nullptr);
  WeightTemplate classifyFactor(const Expr *E, unsigned Depth = 0);
  WeightTemplate accumulatorWeight(const VarDecl *V, unsigned Depth);
  using TapValues = std::vector<std::pair<SymbolId, int64_t>>;
  AffineExpr bindTaps(const AffineExpr &P, const TapValues &Taps) const;
  StencilCoefficient instantiate(const WeightTemplate &W,
                                 const TapValues &Taps);
  void extractGuard();
  void addGuardConjuncts(const Expr *Cond, bool Negated);
  bool conjunctBounds(const Expr *Cond, bool Negated,
                      std::vector<LimitedBound> &Out);
  std::optional<AffineExpr> linearLimitOf(const BinaryOperator *Cmp,
                                          bool Negated);
  std::optional<AffineExpr> foldedDifference(const BinaryOperator *Cmp);
  void checkZeroBorders();
  std::string
  zeroBorderProblem(std::array<std::optional<AffineExpr>, NumDims> &Upper,
                    std::array<std::optional<AffineExpr>, NumDims> &Lower);

  // Step 7: what code generation needs.
  bool portable(const AffineExpr &P) const;
  void noteCodegenProblem(std::string Why);
  ArrayIndexing indexingOf(const VarDecl *Array, const Layout &L,
                           const llvm::SmallVector<AffineExpr, 3> &Rest);
  void recordInputIndexing(const VarDecl *Input, const Layout &L,
                           const llvm::SmallVector<AffineExpr, 3> &Rest,
                           const StencilOffset &Off);
  void recordOutputIndexing();
  bool containsInputRead(const Stmt *S, std::set<const VarDecl *> &Seen) const;
  std::optional<std::string> readFreeTerm(const Expr *E,
                                          std::set<const VarDecl *> &Seen);
  std::optional<LimitedBound> boundOf(const BinaryOperator *Cmp, bool Negated);
  std::string sourceText(const Stmt *S) const;

  const Stmt *parent(const Stmt *S) const { return Parents->getParent(S); }
  bool isAncestor(const Stmt *Ancestor, const Stmt *S) const;
  std::string symName(SymbolId S) const { return Syms.name(S); }
  std::string polyText(const AffineExpr &P) const {
    return P.toString([this](SymbolId S) { return symName(S); });
  }

  const FunctionDecl &Kernel;
  const FunctionDecl *Def = nullptr; ///< The definition of Kernel.
  ASTContext &Ctx;
  const SourceManager &SM;
  const Stmt *Body = nullptr;
  std::unique_ptr<ParentMap> Parents;
  SymbolTable Syms;

  // Step 1.
  std::map<const VarDecl *, llvm::SmallVector<const Expr *, 2>> Mods;
  std::map<const VarDecl *, llvm::SmallVector<const Expr *, 2>> AssignedValues;
  std::map<const VarDecl *, llvm::SmallVector<const DeclRefExpr *, 4>> VarReads;
  std::set<const VarDecl *> Tainted;
  std::vector<const ForStmt *> ForLoops;
  std::vector<const CallExpr *> Calls;
  std::vector<const Expr *> AccessExprs;
  std::map<const VarDecl *, LoopInfo> Loops;

  // Step 3.
  std::map<const VarDecl *, std::pair<std::optional<AffineExpr>, Failure>>
      VarValues;
  std::set<const VarDecl *> Evaluating;
  Failure LastFail;
  std::vector<Access> Accesses;
  std::map<const FunctionDecl *, std::optional<Impurity>> PureMemo;

  // Step 4.
  const Access *Store = nullptr;
  Layout StoreLayout;
  std::array<std::optional<AffineExpr>, NumDims> BlockFactor;
  std::array<int64_t, NumDims> StoreOrigin = {0, 0, 0};
  /// The linear thread index the coordinates are split from, and by what.
  struct SplitIndex {
    AffineExpr Linear, Divisor;
  };
  std::optional<SplitIndex> Split;
  /// Layouts are being computed: a split found now comes too late.
  bool CoordinatesFixed = false;
  /// The guard's bounds on the linear index (`idx < n * n`): L < each.
  std::vector<AffineExpr> SplitLimits;
  /// StoreOrigin is exact: the output index has no other constant part.
  bool StoreOriginExact = false;

  // Step 6.
  std::map<const VarDecl *, WeightTemplate> AccWeights;
  /// The reads that gave points, and each input's base (Rest at offset 0).
  std::set<const Expr *> InputReads;
  std::map<const VarDecl *, llvm::SmallVector<AffineExpr, 3>> InputBases;
  std::set<const VarDecl *> AccInProgress;
  /// The guard's bounds, and each point's zero-border mask (parallel to
  /// Shape.Points).
  std::vector<LimitedBound> GuardBounds;
  std::vector<std::vector<LimitedBound>> PointMasks;
  /// Each point's periodic borders: the period along each coordinate its
  /// read wraps (parallel to Shape.Points).
  std::vector<std::array<std::optional<AffineExpr>, NumDims>> PointWraps;

  StencilShape Shape;
  std::string Refusal;
  SourceLocation RefusalLoc;
};

} // namespace

bool StencilAnalyzer::refuse(SourceLocation Loc, std::string Why) {
  if (Refusal.empty()) {
    Refusal = std::move(Why);
    RefusalLoc = Loc;
  }
  return false;
}

std::nullopt_t StencilAnalyzer::fail(const Stmt *S, std::string Why,
                                     bool DataDependent) {
  LastFail = Failure{std::move(Why), S ? S->getBeginLoc() : SourceLocation(),
                     DataDependent};
  return std::nullopt;
}

bool StencilAnalyzer::isAncestor(const Stmt *Ancestor, const Stmt *S) const {
  for (const Stmt *P = S; P; P = parent(P))
    if (P == Ancestor)
      return true;
  return false;
}

std::string StencilAnalyzer::sourceText(const Stmt *S) const {
  CharSourceRange Range = SM.getExpansionRange(S->getSourceRange());
  return Lexer::getSourceText(Range, SM, Ctx.getLangOpts()).str();
}

//===----------------------------------------------------------------------===//
// Step 1: scanning the body
//===----------------------------------------------------------------------===//

bool StencilAnalyzer::checkKernel() {
  if (!Kernel.hasAttr<CUDAGlobalAttr>())
    return refuse(Kernel.getLocation(), "not a __global__ function");
  if (Kernel.isDependentContext())
    return refuse(Kernel.getLocation(),
                  "template kernel: only instantiations are analysed");
  Def = Kernel.getDefinition();
  if (!Def || !Def->hasBody())
    return refuse(Kernel.getLocation(), "the kernel has no body");
  Body = Def->getBody();
  Parents = std::make_unique<ParentMap>(const_cast<Stmt *>(Body));
  return true;
}

bool StencilAnalyzer::scanBody() {
  struct Scanner : SyntacticVisitor<Scanner> {
    StencilAnalyzer &A;
    explicit Scanner(StencilAnalyzer &A) : A(A) {}

    const VarDecl *namedVar(const Expr *E) {
      const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
      return Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    }
    bool VisitBinaryOperator(BinaryOperator *BO) {
      if (!BO->isAssignmentOp())
        return true;
      if (const VarDecl *V = namedVar(BO->getLHS())) {
        A.Mods[V].push_back(BO);
        A.AssignedValues[V].push_back(BO->getRHS());
      }
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator *UO) {
      if (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf)
        if (const VarDecl *V = namedVar(UO->getSubExpr()))
          if (UO->isIncrementDecrementOp() || !V->getType()->isArrayType())
            A.Mods[V].push_back(UO);
      if (UO->getOpcode() == UO_Deref && isAccessExpr(UO))
        A.AccessExprs.push_back(UO);
      return true;
    }
    bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
      if (isAccessExpr(E))
        A.AccessExprs.push_back(E);
      return true;
    }
    bool VisitMemberExpr(MemberExpr *E) {
      if (isAccessExpr(E))
        A.AccessExprs.push_back(E);
      return true;
    }
    bool VisitDeclRefExpr(DeclRefExpr *E) {
      const auto *V = dyn_cast<VarDecl>(E->getDecl());
      if (!V)
        return true;
      const Stmt *P = A.parent(E);
      while (P && isa<ParenExpr>(P))
        P = A.parent(P);
      const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(P);
      if (Cast && Cast->getCastKind() == CK_LValueToRValue)
        A.VarReads[V].push_back(E);
      return true;
    }
    bool VisitCallExpr(CallExpr *Call) {
      A.Calls.push_back(Call);
      if (isLoadIntrinsic(Call->getDirectCallee()))
        A.AccessExprs.push_back(Call);
      // A variable passed by non-const reference may change.
      if (const FunctionDecl *FD = Call->getDirectCallee())
        for (unsigned I = 0; I < Call->getNumArgs() && I < FD->getNumParams();
             ++I) {
          QualType PT = FD->getParamDecl(I)->getType();
          if (PT->isReferenceType() && !PT->getPointeeType().isConstQualified())
            if (const VarDecl *V = namedVar(Call->getArg(I)))
              A.Mods[V].push_back(Call);
        }
      return true;
    }
    bool VisitDeclStmt(DeclStmt *DS) {
      // `T &r = v;` lets r change v.
      for (const Decl *D : DS->decls())
        if (const auto *R = dyn_cast<VarDecl>(D))
          if (R->getType()->isReferenceType() && R->getInit() &&
              !R->getType()->getPointeeType().isConstQualified())
            if (const VarDecl *V = namedVar(R->getInit()))
              A.Mods[V].push_back(R->getInit());
      return true;
    }
    bool VisitForStmt(ForStmt *For) {
      A.ForLoops.push_back(For);
      return true;
    }
    bool VisitAsmStmt(AsmStmt *S) {
      A.refuse(S->getBeginLoc(), "side effect: inline assembly");
      return true;
    }
    bool VisitCXXNewExpr(CXXNewExpr *E) {
      A.refuse(E->getBeginLoc(), "side effect: operator new");
      return true;
    }
    bool VisitCXXDeleteExpr(CXXDeleteExpr *E) {
      A.refuse(E->getBeginLoc(), "side effect: operator delete");
      return true;
    }
    bool VisitGotoStmt(GotoStmt *S) {
      A.refuse(S->getBeginLoc(), "the kernel uses goto");
      return true;
    }
    bool VisitLambdaExpr(LambdaExpr *E) {
      A.refuse(E->getBeginLoc(), "the kernel defines a lambda");
      return true;
    }
  } S(*this);
  S.TraverseStmt(const_cast<Stmt *>(Body));
  return !failed();
}

/// A loop `for (int i = A; i < B; i += C)` (or <=, ++i, i++, i = i + C)
/// with constant A, B and C > 0 and no other change of i.
LoopInfo StencilAnalyzer::analyzeLoop(const ForStmt *For) {
  LoopInfo L;
  L.For = For;
  const auto *Init = dyn_cast_or_null<DeclStmt>(For->getInit());
  const VarDecl *V = nullptr;
  if (Init && Init->isSingleDecl())
    V = dyn_cast<VarDecl>(Init->getSingleDecl());
  if (!V || !V->getInit() || !V->getType()->isIntegerType()) {
    L.Why = "a loop that does not declare an integer variable";
    return L;
  }
  L.Var = V;
  auto NotConstant = [&]() {
    L.Why = "the bounds of loop " + quote(V->getNameAsString()) +
            " are not constant";
    return L;
  };

  // Step: the only change of V must be the increment, by a constant > 0.
  const Expr *Inc = For->getInc() ? For->getInc()->IgnoreParens() : nullptr;
  auto VMods = Mods.find(V);
  if (!Inc || VMods == Mods.end() || VMods->second.size() != 1 ||
      VMods->second.front() != Inc) {
    L.Why = "loop " + quote(V->getNameAsString()) +
            " changes its variable outside its increment";
    return L;
  }
  std::optional<int64_t> Step;
  if (const auto *UO = dyn_cast<UnaryOperator>(Inc)) {
    if (UO->isIncrementOp())
      Step = 1;
  } else if (const auto *BO = dyn_cast<BinaryOperator>(Inc)) {
    const Expr *Amount = nullptr;
    if (BO->getOpcode() == BO_AddAssign)
      Amount = BO->getRHS();
    else if (BO->getOpcode() == BO_Assign)
      if (const auto *Sum =
              dyn_cast<BinaryOperator>(BO->getRHS()->IgnoreParenImpCasts()))
        if (Sum->getOpcode() == BO_Add) {
          const auto *LRef =
              dyn_cast<DeclRefExpr>(Sum->getLHS()->IgnoreParenImpCasts());
          if (LRef && LRef->getDecl() == V)
            Amount = Sum->getRHS();
        }
    if (Amount)
      if (std::optional<AffineExpr> A = evalInt(Amount))
        Step = A->getConstant();
  }
  if (!Step || *Step <= 0) {
    L.Why = "the step of loop " + quote(V->getNameAsString()) +
            " is not a positive constant";
    return L;
  }

  // Bounds.
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      For->getCond() ? For->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!Cond || !Cond->isComparisonOp())
    return NotConstant();
  BinaryOperatorKind Op = Cond->getOpcode();
  const Expr *Limit = nullptr;
  auto IsV = [V](const Expr *E) {
    const auto *Ref = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return Ref && Ref->getDecl() == V;
  };
  if (IsV(Cond->getLHS())) {
    Limit = Cond->getRHS();
  } else if (IsV(Cond->getRHS())) {
    Limit = Cond->getLHS();
    Op = swapComparison(Op);
  }
  if (!Limit || (Op != BO_LT && Op != BO_LE && Op != BO_NE))
    return NotConstant();
  std::optional<AffineExpr> Lo = evalInt(V->getInit());
  std::optional<AffineExpr> Hi = evalInt(Limit);
  std::optional<int64_t> First = Lo ? Lo->getConstant() : std::nullopt;
  std::optional<int64_t> Bound = Hi ? Hi->getConstant() : std::nullopt;
  if (!First || !Bound)
    return NotConstant();
  // Far beyond MaxStencilOffsets, and safe from overflow below.
  constexpr int64_t Huge = int64_t(1) << 40;
  int64_t F = *First, B = *Bound;
  if (F < -Huge || F > Huge || B < -Huge || B > Huge || *Step > Huge) {
    L.Why =
        "the bounds of loop " + quote(V->getNameAsString()) + " are too large";
    return L;
  }
  // `i != B` only terminates when the steps hit B exactly.
  if (Op == BO_NE && (B < F || (B - F) % *Step != 0))
    return NotConstant();
  int64_t Last = Op == BO_LE ? B : B - 1;
  L.First = F;
  L.Step = *Step;
  L.Trips = Last < F ? 0 : uint64_t(Last - F) / *Step + 1;
  L.Canonical = true;
  L.Sym = Syms.named(SymKind::LoopVar, V, nullptr, V->getNameAsString());
  return L;
}

void StencilAnalyzer::analyzeLoops() {
  // Outer loops come first in source order, so inner bounds that mention
  // an outer variable see it as a loop variable (and are not constant).
  for (const ForStmt *For : ForLoops) {
    LoopInfo L = analyzeLoop(For);
    if (L.Var)
      Loops[L.Var] = L;
  }
}

/// Whether evaluating S reads memory, directly or through a local variable
/// that holds a loaded value.
bool StencilAnalyzer::exprLoads(const Stmt *S,
                                llvm::SmallPtrSetImpl<const VarDecl *> &Seen) {
  if (!S)
    return false;
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(S))
    if (Cast->getCastKind() == CK_LValueToRValue &&
        isAccessExpr(Cast->getSubExpr()->IgnoreParens()))
      return true;
  if (isLoadIntrinsicCall(S))
    return true;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(Ref->getDecl())) {
      if (Tainted.count(V))
        return true;
      if (V->hasLocalStorage() && !Mods.count(V) && Seen.insert(V).second)
        return exprLoads(V->getInit(), Seen);
    }
  for (const Stmt *Child : syntacticChildren(S))
    if (exprLoads(Child, Seen))
      return true;
  return false;
}

void StencilAnalyzer::computeTaint() {
  // A modified local is tainted when any value assigned to it loads; repeat
  // until no new variable is tainted (at most one round per variable).
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const auto &[V, Values] : AssignedValues) {
      if (Tainted.count(V))
        continue;
      llvm::SmallPtrSet<const VarDecl *, 8> Seen;
      bool Loads = exprLoads(V->getInit(), Seen);
      for (const Expr *E : Values)
        Loads = Loads || exprLoads(E, Seen);
      if (Loads)
        Changed = Tainted.insert(V).second;
    }
  }
}

//===----------------------------------------------------------------------===//
// Step 2: side effects
//===----------------------------------------------------------------------===//

/// Why a call is not allowed in a stencil, or nothing.
std::optional<std::string> StencilAnalyzer::callProblem(const CallExpr *Call,
                                                        unsigned Depth) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD)
    return std::string("side effect: indirect call");
  std::string Name = FD->getNameAsString();
  // A trivial copy of a struct value is a plain read.
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD))
    if (M->isTrivial())
      return std::nullopt;
  if (isInSystemHeader(FD) || FD->getBuiltinID() != 0) {
    StringRef N = Name;
    if (N == "printf" || N == "vprintf" || N == "puts")
      return "side effect: calls " + quote(N);
    if (N.starts_with("atomic") || N.starts_with("__atomic") ||
        N.starts_with("__nv_atomic"))
      return "side effect: atomic operation " + quote(N);
    if (N.starts_with("__syncthreads") || N.starts_with("__syncwarp") ||
        N.starts_with("__threadfence") || N.starts_with("__barrier"))
      return "synchronisation: calls " + quote(N);
    if (N.starts_with("__shfl") || N.starts_with("__ballot") ||
        N.starts_with("__any") || N.starts_with("__all") ||
        N.starts_with("__activemask") || N.starts_with("__match") ||
        N.starts_with("__reduce"))
      return "warp-level intrinsic " + quote(N);
    if (N.starts_with("__st") &&
        (N == "__stwb" || N == "__stcg" || N == "__stcs" || N == "__stwt"))
      return "side effect: store intrinsic " + quote(N);
    static const llvm::StringSet<> Impure = {
        "clock",  "clock64", "__globaltimer", "__nanosleep",   "malloc",
        "free",   "__trap",  "__brkpt",       "__assertfail",  "__assert_fail",
        "memcpy", "memset",  "memmove",       "__prof_trigger"};
    if (Impure.contains(N))
      return "side effect: calls " + quote(N);
    if (isLoadIntrinsic(FD))
      return std::nullopt;
    // Math functions take values (or references to const values); one that
    // takes a pointer or reference may write through it (sincosf), which is
    // allowed only into locals.
    for (unsigned I = 0; I < FD->getNumParams() && I < Call->getNumArgs();
         ++I) {
      QualType PT = FD->getParamDecl(I)->getType();
      if (!PT->isPointerType() && !PT->isReferenceType())
        continue;
      if (PT->isReferenceType() && PT->getPointeeType().isConstQualified() &&
          !PT->getPointeeType()->isPointerType())
        continue;
      const Expr *Arg = Call->getArg(I)->IgnoreParenImpCasts();
      if (const auto *AddrOf = dyn_cast<UnaryOperator>(Arg);
          AddrOf && AddrOf->getOpcode() == UO_AddrOf)
        Arg = AddrOf->getSubExpr()->IgnoreParens();
      const auto *Ref = dyn_cast<DeclRefExpr>(Arg);
      const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
      if (!V || !V->hasLocalStorage() || V->hasAttr<CUDASharedAttr>() ||
          V->getType()->isPointerType() || V->getType()->isReferenceType())
        return "side effect: calls " + quote(N) + " with a pointer argument";
    }
    return std::nullopt;
  }
  // A function of this file: allowed when pure and given no pointers into
  // global memory (reads inside it would be invisible to the offsets).
  for (unsigned I = 0; I < FD->getNumParams() && I < Call->getNumArgs(); ++I) {
    QualType PT = FD->getParamDecl(I)->getType();
    if (PT->isPointerType() || PT->isReferenceType())
      return "passes a pointer or reference to " + quote(Name) +
             "; accesses inside called functions are not followed";
  }
  if (std::optional<Impurity> Why = functionImpurity(FD, Depth + 1))
    return (Why->SideEffect ? "side effect: calls " : "calls ") + quote(Name) +
           ", which " + Why->Why;
  return std::nullopt;
}

/// Why a function of this file may not be called from a stencil, or
/// nothing: it must not write outside its locals, call such functions, or
/// read memory other than its local arrays (the offsets of such reads would
/// be invisible).
std::optional<Impurity>
StencilAnalyzer::functionImpurity(const FunctionDecl *FD, unsigned Depth) {
  const FunctionDecl *Def = FD->getDefinition();
  if (!Def || !Def->hasBody())
    return Impurity{"has no visible body", true};
  if (Depth > 8)
    return Impurity{"calls functions nested too deeply", true};
  auto Found = PureMemo.find(Def);
  if (Found != PureMemo.end())
    return Found->second;
  // A recursive call sees "impure" while the function is being checked.
  PureMemo[Def] = Impurity{"is recursive", true};

  struct Checker : SyntacticVisitor<Checker> {
    StencilAnalyzer &A;
    unsigned Depth;
    std::optional<Impurity> Why;
    Checker(StencilAnalyzer &A, unsigned Depth) : A(A), Depth(Depth) {}

    /// The variable at the bottom of an lvalue: `g` in `g[i].f = ...`.
    static const VarDecl *baseVar(const Expr *E) {
      while (true) {
        E = E->IgnoreParenImpCasts();
        if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
          E = ASE->getBase();
        else if (const auto *ME = dyn_cast<MemberExpr>(E))
          E = ME->getBase();
        else if (const auto *UO = dyn_cast<UnaryOperator>(E);
                 UO && UO->getOpcode() == UO_Deref)
          E = UO->getSubExpr();
        else
          break;
      }
      const auto *Ref = dyn_cast<DeclRefExpr>(E);
      return Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    }
    static bool isLocal(const VarDecl *V) {
      return V && V->hasLocalStorage() && !V->hasAttr<CUDASharedAttr>();
    }
    /// Locals, by-value parameters and local arrays may be written.
    void checkWrite(const Expr *Target) {
      const VarDecl *V = baseVar(Target);
      if (V && !isLocal(V))
        Why = Impurity{"writes " + quote(V->getNameAsString()), true};
      else if (!V || (!isa<DeclRefExpr>(Target->IgnoreParenImpCasts()) &&
                      !V->getType()->isArrayType()))
        Why = Impurity{"writes memory through a pointer", true};
    }
    /// Only local arrays may be read.
    void checkAccess(const Expr *E) {
      if (Why || !isAccessExpr(E))
        return;
      const VarDecl *V = baseVar(E);
      if (isLocal(V) && V->getType()->isArrayType())
        return;
      Why = Impurity{"reads " +
                         (V ? quote(V->getNameAsString())
                            : std::string("memory through a pointer")) +
                         "; accesses inside called functions are not "
                         "followed",
                     false};
    }
    bool VisitBinaryOperator(BinaryOperator *BO) {
      if (BO->isAssignmentOp() && !Why)
        checkWrite(BO->getLHS());
      return !Why;
    }
    bool VisitUnaryOperator(UnaryOperator *UO) {
      if (UO->isIncrementDecrementOp() && !Why)
        checkWrite(UO->getSubExpr());
      checkAccess(UO);
      return !Why;
    }
    bool VisitArraySubscriptExpr(ArraySubscriptExpr *E) {
      checkAccess(E);
      return !Why;
    }
    bool VisitMemberExpr(MemberExpr *E) {
      checkAccess(E);
      return !Why;
    }
    bool VisitCallExpr(CallExpr *Call) {
      if (Why)
        return false;
      if (std::optional<std::string> P = A.callProblem(Call, Depth)) {
        const FunctionDecl *Callee = Call->getDirectCallee();
        Why = Impurity{
            "calls " +
                quote(Callee ? Callee->getNameAsString() : "a function") +
                " (" + *P + ")",
            true};
      }
      return !Why;
    }
    bool VisitAsmStmt(AsmStmt *) {
      Why = Impurity{"uses inline assembly", true};
      return false;
    }
  } C(*this, Depth);
  C.TraverseStmt(Def->getBody());
  PureMemo[Def] = C.Why;
  return C.Why;
}

bool StencilAnalyzer::checkCalls() {
  for (const CallExpr *Call : Calls)
    if (std::optional<std::string> Why = callProblem(Call, 0))
      return refuse(Call->getBeginLoc(), *Why);
  return true;
}

/// Stores to scalar variables outside the thread (a __device__ counter).
bool StencilAnalyzer::checkGlobalWrites() {
  // The first in source order, so that the reason does not depend on
  // pointer values.
  const Expr *First = nullptr;
  const VarDecl *FirstVar = nullptr;
  for (const auto &[V, Exprs] : Mods) {
    if (V->hasLocalStorage() && !V->hasAttr<CUDASharedAttr>())
      continue;
    for (const Expr *E : Exprs)
      if (!First || SM.isBeforeInTranslationUnit(E->getBeginLoc(),
                                                 First->getBeginLoc())) {
        First = E;
        FirstVar = V;
      }
  }
  if (!First)
    return true;
  const char *What = FirstVar->hasAttr<CUDASharedAttr>()
                         ? "__shared__ variable "
                         : "global variable ";
  return refuse(First->getBeginLoc(), std::string("side effect: writes the ") +
                                          What +
                                          quote(FirstVar->getNameAsString()));
}

//===----------------------------------------------------------------------===//
// Step 3: integer values and addresses
//===----------------------------------------------------------------------===//

std::optional<int64_t> StencilAnalyzer::constantValue(const VarDecl *V) {
  if (!V->getType()->isIntegralOrEnumerationType())
    return std::nullopt;
  if (!V->isConstexpr() && !V->getType().isConstQualified())
    return std::nullopt;
  const VarDecl *Def = nullptr;
  const Expr *Init = V->getAnyInitializer(Def);
  Expr::EvalResult R;
  if (!Init || Init->isValueDependent() || !Init->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

std::optional<AffineExpr> StencilAnalyzer::evalInt(const Expr *E) {
  // Pins take the expression with its parentheses: they may be all of a
  // macro's body (`#define OFF (-1)`), which only the macro's name spells.
  const Expr *Written = E;
  E = E->IgnoreParens();
  if (E->isValueDependent() || E->isTypeDependent())
    return fail(E, "the index depends on a template parameter");
  if (auto Builtin = builtinSymbol(E))
    return AffineExpr::symbol(Syms.builtin(Builtin->first, Builtin->second));
  // Literals, sizeof, constexpr calls, enumerators, const variables.
  Expr::EvalResult R;
  if (E->getType()->isIntegralOrEnumerationType() && E->EvaluateAsInt(R, Ctx) &&
      R.Val.getInt().getSignificantBits() <= 64) {
    if (!Shape.Pins.pin(Written, Ctx))
      return fail(E, Shape.Pins.why());
    return AffineExpr::constant(R.Val.getInt().getExtValue());
  }
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    switch (Cast->getCastKind()) {
    case CK_LValueToRValue:
      return evalIntLValue(Cast->getSubExpr());
    case CK_IntegralCast:
    case CK_NoOp:
      return evalInt(Cast->getSubExpr());
    default:
      return fail(E, "the index converts a non-integer value: " +
                         quote(sourceText(E)));
    }
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E))
    return evalBinary(BO);
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() == UO_Minus || UO->getOpcode() == UO_Plus) {
      std::optional<AffineExpr> Sub = evalInt(UO->getSubExpr());
      if (!Sub)
        return std::nullopt;
      return UO->getOpcode() == UO_Minus ? -*Sub : *Sub;
    }
  }
  if (isAccessExpr(E) || isLoadIntrinsicCall(E))
    return fail(E, "the index depends on a value loaded from memory", true);
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    return fail(E, "the index calls " +
                       quote(FD ? FD->getNameAsString() : "a function"));
  }
  if (isa<ConditionalOperator>(E))
    return fail(E, "the index uses '?:'");
  return fail(E, "the index is not a polynomial: " + quote(sourceText(E)));
}

std::optional<AffineExpr> StencilAnalyzer::evalIntLValue(const Expr *E) {
  E = E->IgnoreParens();
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E))
    if (const auto *V = dyn_cast<VarDecl>(Ref->getDecl()))
      return evalVar(V, Ref);
  // `p.W` for a struct parameter passed by value.
  if (const auto *ME = dyn_cast<MemberExpr>(E); ME && !ME->isArrow())
    if (const auto *Ref = dyn_cast<DeclRefExpr>(ME->getBase()->IgnoreParens()))
      if (const auto *P = dyn_cast<ParmVarDecl>(Ref->getDecl());
          P && !Mods.count(P))
        return AffineExpr::symbol(
            Syms.named(SymKind::Value, P, ME->getMemberDecl(),
                       P->getNameAsString() + "." +
                           ME->getMemberDecl()->getNameAsString()));
  if (isAccessExpr(E))
    return fail(E, "the index depends on a value loaded from memory", true);
  return fail(E, "the index reads " + quote(sourceText(E)) +
                     ", which the analysis does not follow");
}

std::optional<AffineExpr> StencilAnalyzer::evalVar(const VarDecl *V,
                                                   const Expr *Ref) {
  auto Loop = Loops.find(V);
  if (Loop != Loops.end()) {
    if (Loop->second.Canonical)
      return AffineExpr::symbol(Loop->second.Sym);
    return fail(Ref, Loop->second.Why);
  }
  if (std::optional<int64_t> C = constantValue(V)) {
    if (!Shape.Pins.pin(Ref, Ctx))
      return fail(Ref, Shape.Pins.why());
    return AffineExpr::constant(*C);
  }
  std::string Name = quote(V->getNameAsString());
  if (isa<ParmVarDecl>(V)) {
    if (Mods.count(V))
      return fail(Ref, "the index uses parameter " + Name +
                           ", which the kernel changes");
    return AffineExpr::symbol(
        Syms.named(SymKind::Value, V, nullptr, V->getNameAsString()));
  }
  if (!V->hasLocalStorage()) {
    // A __constant__ or __device__ scalar: the kernel does not write it
    // (checkGlobalWrites), so it is fixed during the kernel.
    if (!V->getType()->isIntegralOrEnumerationType())
      return fail(Ref, "the index uses " + Name);
    return AffineExpr::symbol(
        Syms.named(SymKind::Value, V, nullptr, V->getNameAsString()));
  }
  if (Mods.count(V)) {
    if (Tainted.count(V))
      return fail(Ref,
                  "the index depends on " + Name +
                      ", which holds a value loaded from memory",
                  true);
    return fail(Ref, "the index uses " + Name +
                         ", which changes after its initialisation");
  }
  if (!V->getInit())
    return fail(Ref, "the index uses " + Name + ", which has no initialiser");
  // A variable assigned once is its initialiser.
  auto Known = VarValues.find(V);
  if (Known != VarValues.end()) {
    if (!Known->second.first)
      LastFail = Known->second.second;
    return Known->second.first;
  }
  if (!Evaluating.insert(V).second)
    return fail(Ref, "the index uses " + Name + " in its own definition");
  std::optional<AffineExpr> Value = evalInt(V->getInit());
  Evaluating.erase(V);
  VarValues[V] = {Value, Value ? Failure() : LastFail};
  return Value;
}

std::optional<AffineExpr>
StencilAnalyzer::evalBinary(const BinaryOperator *BO) {
  BinaryOperatorKind Op = BO->getOpcode();
  if (Op != BO_Add && Op != BO_Sub && Op != BO_Mul && Op != BO_Div &&
      Op != BO_Rem && Op != BO_Shl && Op != BO_Shr && Op != BO_And &&
      Op != BO_Or && Op != BO_Xor)
    return fail(BO, std::string("the index uses '") + opSpelling(Op) + "'");
  std::optional<AffineExpr> L = evalInt(BO->getLHS());
  if (!L)
    return std::nullopt;
  std::optional<AffineExpr> R = evalInt(BO->getRHS());
  if (!R)
    return std::nullopt;
  switch (Op) {
  case BO_Add:
    return *L + *R;
  case BO_Sub:
    return *L - *R;
  case BO_Mul:
    return *L * *R;
  default:
    break;
  }
  // `idx % n` and `idx / n` of the linear thread index are the coordinates
  // x and y.
  if (Op == BO_Div || Op == BO_Rem) {
    AffineExpr Factor;
    if (isLinearThreadIndex(*L, Factor))
      return splitCoordinate(BO, *L, Factor, *R);
  }
  if (Op == BO_Rem) {
    bool Recognized = false;
    std::optional<AffineExpr> Wrapped =
        wrappedCoordinate(BO, *L, *R, Recognized);
    if (Recognized)
      return Wrapped;
  }
  // `x << 1` is x * 2; the other operators only fold constants (the whole
  // expression was not constant, or evalInt would have folded it), or are
  // evaluated per loop iteration when only loop variables occur.
  std::optional<int64_t> RC = R->getConstant();
  if (Op == BO_Shl && RC && *RC >= 0 && *RC < 62)
    return *L * (int64_t(1) << *RC);
  auto OnlyLoops = [this](const AffineExpr &P) {
    return !P.mentionsAny(
        [this](SymbolId S) { return !Syms.variesWithLoops(S); });
  };
  if (OnlyLoops(*L) && OnlyLoops(*R))
    return AffineExpr::symbol(
        Syms.derived(BO, Op, *L, *R, "(" + sourceText(BO) + ")"));
  return fail(
      BO, std::string("the index uses '") + opSpelling(Op) +
              "' on values that are not constants: " + quote(sourceText(BO)));
}

/// The address a pointer-valued expression holds. Subscripts count elements
/// of the root; pointer arithmetic moves the innermost subscript.
std::optional<Address> StencilAnalyzer::evalAddress(const Expr *E) {
  E = E->IgnoreParens();
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    const Expr *Sub = Cast->getSubExpr();
    switch (Cast->getCastKind()) {
    case CK_LValueToRValue: {
      // The value of a pointer variable.
      const auto *Ref = dyn_cast<DeclRefExpr>(Sub->IgnoreParens());
      const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
      if (!V)
        return fail(E, "the address is a pointer loaded from memory", true);
      std::string Name = quote(V->getNameAsString());
      if (Mods.count(V))
        return fail(E, "pointer " + Name + " changes after its initialisation");
      if (isa<ParmVarDecl>(V) || !V->hasLocalStorage()) {
        Address A;
        A.Root = V;
        A.Subs.push_back(AffineExpr());
        return A;
      }
      if (!V->getInit())
        return fail(E, "pointer " + Name + " has no initialiser");
      return evalAddress(V->getInit());
    }
    case CK_ArrayToPointerDecay: {
      std::optional<Address> A = evalLValue(Sub);
      if (A)
        A->Subs.push_back(AffineExpr());
      return A;
    }
    case CK_NoOp:
    case CK_BitCast: {
      QualType From = Sub->getType(), To = Cast->getType();
      if (From->isPointerType() && To->isPointerType() &&
          !Ctx.hasSameUnqualifiedType(From->getPointeeType(),
                                      To->getPointeeType()))
        return fail(E, "the pointer is cast from " + quote(From.getAsString()) +
                           " to " + quote(To.getAsString()));
      return evalAddress(Sub);
    }
    default:
      return fail(E, "the address uses a conversion the analysis does not "
                     "follow: " +
                         quote(sourceText(E)));
    }
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub) {
      bool PtrLeft = BO->getLHS()->getType()->isPointerType();
      const Expr *Ptr = PtrLeft ? BO->getLHS() : BO->getRHS();
      const Expr *Offset = PtrLeft ? BO->getRHS() : BO->getLHS();
      noteIndexType(Offset);
      std::optional<Address> A = evalAddress(Ptr);
      if (!A)
        return std::nullopt;
      std::optional<AffineExpr> I = evalInt(Offset);
      if (!I)
        return std::nullopt;
      A->Subs.back() =
          BO->getOpcode() == BO_Add ? A->Subs.back() + *I : A->Subs.back() - *I;
      return A;
    }
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    if (UO->getOpcode() == UO_AddrOf)
      return evalLValue(UO->getSubExpr());
  if (isa<ConditionalOperator>(E))
    return fail(E, "the pointer is chosen by '?:'");
  return fail(E, "the analysis does not follow the pointer " +
                     quote(sourceText(E)));
}

/// Clears Shape.Index32 unless \p Index is a signed integer of at most 32
/// bits (after promotion: int).
void StencilAnalyzer::noteIndexType(const Expr *Index) {
  QualType T = Index->getType();
  if (!T->isSignedIntegerType() || Ctx.getTypeSize(T) > 32)
    Shape.Index32 = false;
}

/// The address of an lvalue: an element, or an array that will decay.
std::optional<Address> StencilAnalyzer::evalLValue(const Expr *E) {
  E = E->IgnoreParens();
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E)) {
    noteIndexType(ASE->getIdx());
    std::optional<Address> A = evalAddress(ASE->getBase());
    if (!A)
      return std::nullopt;
    std::optional<AffineExpr> I = evalInt(ASE->getIdx());
    if (!I)
      return std::nullopt;
    A->Subs.back() = A->Subs.back() + *I;
    return A;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    if (UO->getOpcode() == UO_Deref)
      return evalAddress(UO->getSubExpr());
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
    if (V && V->getType()->isArrayType()) {
      Address A;
      A.Root = V;
      return A;
    }
    // `float &r = in[i];` is in[i].
    if (V && V->getType()->isReferenceType() && V->getInit() && !Mods.count(V))
      return evalLValue(V->getInit());
  }
  if (isa<MemberExpr>(E))
    return fail(E, "the access goes through a struct member: " +
                       quote(sourceText(E)));
  return fail(E, "the analysis does not follow the access " +
                     quote(sourceText(E)));
}

/// The array an access or pointer refers to, without evaluating indices:
/// a store into a thread-local array is harmless whatever its index.
const VarDecl *StencilAnalyzer::rootOf(const Expr *E, unsigned Depth) const {
  if (Depth > 16)
    return nullptr;
  E = E->IgnoreParens();
  if (const auto *Call = dyn_cast<CallExpr>(E))
    return isLoadIntrinsic(Call->getDirectCallee())
               ? rootOf(Call->getArg(0), Depth + 1)
               : nullptr;
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    if (Cast->getCastKind() != CK_LValueToRValue)
      return rootOf(Cast->getSubExpr(), Depth + 1);
    const auto *Ref = dyn_cast<DeclRefExpr>(Cast->getSubExpr()->IgnoreParens());
    const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    if (!V || !V->getType()->isPointerType())
      return nullptr;
    if (isa<ParmVarDecl>(V) || !V->hasLocalStorage())
      return V;
    return Mods.count(V) || !V->getInit() ? nullptr
                                          : rootOf(V->getInit(), Depth + 1);
  }
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return rootOf(ASE->getBase(), Depth + 1);
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    return UO->getOpcode() == UO_Deref || UO->getOpcode() == UO_AddrOf
               ? rootOf(UO->getSubExpr(), Depth + 1)
               : nullptr;
  if (const auto *BO = dyn_cast<BinaryOperator>(E))
    return BO->isAdditiveOp()
               ? rootOf(BO->getLHS()->getType()->isPointerType() ? BO->getLHS()
                                                                 : BO->getRHS(),
                        Depth + 1)
               : nullptr;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
    if (V && V->getType()->isArrayType())
      return V;
    if (V && V->getType()->isReferenceType() && V->getInit() && !Mods.count(V))
      return rootOf(V->getInit(), Depth + 1);
  }
  return nullptr;
}

MemoryKind StencilAnalyzer::memoryKind(const VarDecl *Root) const {
  if (Root->hasAttr<CUDASharedAttr>())
    return MemoryKind::Shared;
  if (Root->hasAttr<CUDAConstantAttr>())
    return MemoryKind::Constant;
  if (isa<ParmVarDecl>(Root) || !Root->hasLocalStorage())
    return MemoryKind::Global;
  return MemoryKind::ThreadLocal;
}

/// Whether the lvalue \p E, a child of the call or declaration \p P,
/// initialises a reference to const.
static bool isBoundToConstReference(const Stmt *E, const Stmt *P) {
  QualType Bound;
  if (const auto *DS = dyn_cast<DeclStmt>(P)) {
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D); V && V->getInit() == E)
        Bound = V->getType();
  } else if (const auto *Call = dyn_cast<CallExpr>(P)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    for (unsigned I = 0; FD && I < Call->getNumArgs(); ++I)
      if (Call->getArg(I) == E && I < FD->getNumParams())
        Bound = FD->getParamDecl(I)->getType();
  }
  return !Bound.isNull() && Bound->isReferenceType() &&
         Bound->getPointeeType().isConstQualified();
}

/// Whether an access reads, writes or both, from the expression around it.
Usage StencilAnalyzer::usageOf(const Expr *Access) const {
  if (isLoadIntrinsicCall(Access))
    return Usage::Read;
  const Stmt *Cur = Access;
  while (const Stmt *P = parent(Cur)) {
    // A member of a struct element is part of the element.
    if (isa<ParenExpr>(P) ||
        (isa<MemberExpr>(P) && !cast<MemberExpr>(P)->isArrow())) {
      Cur = P;
      continue;
    }
    if (const auto *Cast = dyn_cast<ImplicitCastExpr>(P)) {
      if (Cast->getCastKind() == CK_NoOp) {
        Cur = P;
        continue;
      }
      return Cast->getCastKind() == CK_LValueToRValue ? Usage::Read
                                                      : Usage::None;
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
      if (BO->getLHS() == Cur && BO->getOpcode() == BO_Assign)
        return Usage::Write;
      if (BO->getLHS() == Cur && BO->isCompoundAssignmentOp())
        return Usage::ReadWrite;
      return Usage::Read;
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(P)) {
      if (UO->isIncrementDecrementOp())
        return Usage::ReadWrite;
      // An address computation; the accesses through it are seen there.
      if (UO->getOpcode() == UO_AddrOf)
        return Usage::None;
      return Usage::Read;
    }
    if (isa<UnaryExprOrTypeTraitExpr>(P))
      return Usage::None;
    // Bound to a reference (`const T &r = a[i]`, a call argument): read
    // when the reference is, and written through it unless it is const.
    if (isa<CallExpr, DeclStmt>(P))
      return isBoundToConstReference(Cur, P) ? Usage::Read : Usage::ReadWrite;
    return Usage::Read;
  }
  return Usage::None;
}

void StencilAnalyzer::classifyAccesses() {
  for (const Expr *E : AccessExprs) {
    Access A;
    A.E = E;
    A.U = usageOf(E);
    if (A.U == Usage::None)
      continue;
    if (const auto *Call = dyn_cast<CallExpr>(E))
      A.Addr = evalAddress(Call->getArg(0));
    else
      A.Addr = evalLValue(E);
    if (!A.Addr)
      A.Fail = LastFail;
    A.Root = A.Addr ? A.Addr->Root : rootOf(E);
    Accesses.push_back(std::move(A));
  }
}

//===----------------------------------------------------------------------===//
// Step 4: the store and the thread coordinates
//===----------------------------------------------------------------------===//

bool StencilAnalyzer::findStore() {
  std::vector<const Access *> Stores;
  for (const Access &A : Accesses) {
    if (A.U != Usage::Write && A.U != Usage::ReadWrite)
      continue;
    if (!A.Root) {
      Failure F = A.Fail;
      F.Why = "cannot tell where a store writes: " + F.Why;
      return refuse(F);
    }
    MemoryKind K = memoryKind(A.Root);
    if (K == MemoryKind::ThreadLocal)
      continue;
    if (K == MemoryKind::Shared)
      return refuse(A.E->getBeginLoc(),
                    "writes __shared__ memory " +
                        quote(A.Root->getNameAsString()) +
                        " (shared-memory tiled kernels are not supported)");
    Stores.push_back(&A);
  }
  if (Stores.empty())
    return refuse(Kernel.getLocation(), "no store to global memory");
  const VarDecl *Out = Stores.front()->Root;
  std::string Name = quote(Out->getNameAsString());
  for (const Access *S : Stores)
    if (S->Root != Out)
      return refuse(S->E->getBeginLoc(), "more than one output: " + Name +
                                             " and " +
                                             quote(S->Root->getNameAsString()));
  if (Stores.size() > 1)
    return refuse(Stores[1]->E->getBeginLoc(),
                  "output " + Name + " is written at " +
                      std::to_string(Stores.size()) + " places");
  Store = Stores.front();
  if (Store->U == Usage::ReadWrite)
    return refuse(Store->E->getBeginLoc(),
                  "in-place update: the store to " + Name + " also reads it");
  for (const Stmt *P = parent(Store->E); P; P = parent(P))
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(P))
      return refuse(Store->E->getBeginLoc(),
                    "the store to " + Name + " is inside a loop");
  if (!Store->Addr) {
    if (Store->Fail.DataDependent)
      return refuse(Store->Fail.Loc,
                    "data-dependent offset: " + Store->Fail.Why);
    return refuse(Store->Fail);
  }
  return true;
}

/// K_d in `coordinate = threadIdx.d + blockIdx.d * K_d`, usually
/// blockDim.d, learned from the first index or variable that has the pair.
void StencilAnalyzer::learnBlockFactors() {
  if (Split)
    return; // The split's factor is the only one.
  std::vector<AffineExpr> Candidates;
  for (const AffineExpr &S : Store->Addr->Subs)
    Candidates.push_back(S);
  for (const Access &A : Accesses)
    if (A.Addr)
      for (const AffineExpr &S : A.Addr->Subs)
        Candidates.push_back(S);
  for (unsigned D = 0; D != NumDims; ++D) {
    SymbolId T = Syms.builtin(SymKind::ThreadIdx, D);
    SymbolId B = Syms.builtin(SymKind::BlockIdx, D);
    for (const AffineExpr &P : Candidates) {
      std::optional<AffineExpr> TC = P.linearCoefficient(T);
      std::optional<AffineExpr> BC = P.linearCoefficient(B);
      if (!TC || !BC || TC->isZero() || BC->isZero())
        continue;
      if (std::optional<AffineExpr> K = BC->divideExactly(*TC)) {
        BlockFactor[D] = *K;
        break;
      }
    }
  }
}

/// Whether \p P is blockIdx.x * Factor + threadIdx.x, with Factor fixed
/// for the launch: the thread's number along x.
bool StencilAnalyzer::isLinearThreadIndex(const AffineExpr &P,
                                          AffineExpr &Factor) const {
  SymbolId T = Syms.builtin(SymKind::ThreadIdx, 0);
  SymbolId B = Syms.builtin(SymKind::BlockIdx, 0);
  std::optional<AffineExpr> TC = P.linearCoefficient(T);
  std::optional<AffineExpr> BC = P.linearCoefficient(B);
  if (!TC || !BC || *TC != AffineExpr::constant(1) || BC->isZero() ||
      !P.withoutSymbol(T).withoutSymbol(B).isZero())
    return false;
  if (BC->mentionsAny([this](SymbolId S) {
        return Syms.isThreadVarying(S) || Syms.isCoord(S) ||
               Syms.variesWithLoops(S);
      }))
    return false;
  Factor = *BC;
  return true;
}

/// x = L % Divisor (Op %) or y = L / Divisor (Op /) of the linear thread
/// index L: the kernel numbers its points in rows of Divisor. One split per
/// kernel.
std::optional<AffineExpr> StencilAnalyzer::splitCoordinate(
    const BinaryOperator *BO, const AffineExpr &Linear,
    const AffineExpr &Factor, const AffineExpr &Divisor) {
  std::string By = quote(sourceText(BO->getRHS()));
  if (!portable(Divisor))
    return fail(BO, "the thread index is split by " + By +
                        ", which is not fixed for the launch");
  if (std::optional<int64_t> C = Divisor.getConstant(); C && *C <= 0)
    return fail(BO, "the thread index is split by " + By +
                        ", which is not positive");
  if (!Split && CoordinatesFixed)
    return fail(BO, "the thread index is split by " + By +
                        " only where the indices do not use the split");
  if (Split && (Split->Linear != Linear || Split->Divisor != Divisor))
    return fail(BO, "the thread index is split two ways: by " +
                        quote(polyText(Split->Divisor)) + " and by " + By);
  if (BlockFactor[0] && *BlockFactor[0] != Factor)
    return fail(BO, "the thread index steps by two block factors");
  Split = SplitIndex{Linear, Divisor};
  BlockFactor[0] = Factor;
  return AffineExpr::symbol(Syms.coord(BO->getOpcode() == BO_Rem ? 0 : 1));
}

/// A periodic border: `(c + k) % M` of a coordinate c (its symbol, or
/// threadIdx.d + blockIdx.d * K) plus a constant k and a multiple of M
/// that keeps it from being negative (`(x + 1) % W`, `(W + x - 1) % W`).
/// Where c lies in [0, M) (checkPeriodicBorders) that is c + k wrapped
/// into [0, M); the value is c + k + M * Q, with Q a symbol of its own that
/// stripWraps takes out of the read's index. Recognized is false where the
/// operands have another form.
std::optional<AffineExpr>
StencilAnalyzer::wrappedCoordinate(const BinaryOperator *BO,
                                   const AffineExpr &L,
                                   const AffineExpr &Period, bool &Recognized) {
  Recognized = false;
  auto Fixed = [this](const AffineExpr &P) {
    return !P.mentionsAny(
        [this](SymbolId S) { return Syms.info(S).Kind != SymKind::Value; });
  };
  if (!Fixed(Period) || Period.isZero())
    return std::nullopt;
  for (unsigned D = 0; D != NumDims; ++D) {
    AffineExpr Coord = AffineExpr::symbol(Syms.coord(D));
    if (L.linearCoefficient(Syms.coord(D)) != AffineExpr::constant(1)) {
      SymbolId T = Syms.builtin(SymKind::ThreadIdx, D);
      SymbolId B = Syms.builtin(SymKind::BlockIdx, D);
      std::optional<AffineExpr> BC = L.linearCoefficient(B);
      if (L.linearCoefficient(T) != AffineExpr::constant(1) || !BC ||
          BC->isZero() || BC->mentionsAny([this](SymbolId S) {
            return Syms.isThreadVarying(S) || Syms.isCoord(S) ||
                   Syms.variesWithLoops(S) || Syms.isWrap(S);
          }))
        continue;
      Coord = AffineExpr::symbol(T) + *BC * AffineExpr::symbol(B);
    }
    AffineExpr Shift = L - Coord;
    if (!Fixed(Shift))
      continue;
    Recognized = true;
    std::string Text = quote(sourceText(BO));
    int64_t K = Shift.constantTerm();
    int64_t Periods = 0;
    if (AffineExpr More = Shift - AffineExpr::constant(K); !More.isZero()) {
      std::optional<AffineExpr> Q = More.divideExactly(Period);
      if (!Q || !Q->getConstant())
        return fail(BO, Text + " adds to " + DimNames[D] +
                            " what is neither a number nor a multiple of " +
                            quote(polyText(Period)));
      Periods = *Q->getConstant();
    }
    if (Periods < 0 || (K < 0 && Periods == 0))
      return fail(BO, Text + " may take the remainder of a negative number, "
                             "which does not wrap");
    SymbolId Q = Syms.wrap(BO, D, Period, "(" + sourceText(BO) + ")");
    return Coord + AffineExpr::constant(K) + Period * AffineExpr::symbol(Q);
  }
  return std::nullopt;
}

/// Rewrites threadIdx.d + blockIdx.d * K_d (times any stride) into the
/// coordinate symbol; fails when thread-varying symbols remain otherwise.
/// Where the coordinates are split from the linear index L, L is x +
/// Divisor * y.
std::optional<AffineExpr> StencilAnalyzer::fold(const AffineExpr &P,
                                                const Expr *Where) {
  AffineExpr R = P;
  if (Split) {
    SymbolId T = Syms.builtin(SymKind::ThreadIdx, 0);
    for (unsigned D = 1; D != NumDims; ++D)
      if (R.mentions(Syms.builtin(SymKind::ThreadIdx, D)) ||
          R.mentions(Syms.builtin(SymKind::BlockIdx, D)))
        return fail(Where, std::string("the index uses threadIdx.") +
                               DimNames[D] + " or blockIdx." + DimNames[D] +
                               " beside a thread index split into x and y");
    std::optional<AffineExpr> Stride = R.linearCoefficient(T);
    if (!Stride)
      return fail(Where, "the index is not affine in threadIdx.x");
    if (!Stride->isZero())
      R = R.withoutSymbol(T) +
          *Stride * (AffineExpr::symbol(Syms.coord(0)) +
                     Split->Divisor * AffineExpr::symbol(Syms.coord(1))) -
          *Stride * *BlockFactor[0] *
              AffineExpr::symbol(Syms.builtin(SymKind::BlockIdx, 0));
  }
  for (unsigned D = 0; D != NumDims && !Split; ++D) {
    SymbolId T = Syms.builtin(SymKind::ThreadIdx, D);
    std::optional<AffineExpr> Stride = R.linearCoefficient(T);
    if (!Stride)
      return fail(Where, "the index is not affine in threadIdx." +
                             std::string(DimNames[D]));
    if (Stride->isZero())
      continue;
    R = R.withoutSymbol(T) + *Stride * AffineExpr::symbol(Syms.coord(D));
    if (BlockFactor[D])
      R = R - *Stride * *BlockFactor[D] *
                  AffineExpr::symbol(Syms.builtin(SymKind::BlockIdx, D));
  }
  if (R.overflowed())
    return fail(Where, "the index overflows 64-bit arithmetic");
  if (R.mentionsAny([this](SymbolId S) { return Syms.isThreadVarying(S); }))
    return fail(Where, "the index is not affine in the thread coordinates: " +
                           quote(polyText(R)));
  return R;
}

/// Splits each subscript into coordinate strides and the rest; strides
/// must not depend on coordinates or loop variables.
std::optional<Layout> StencilAnalyzer::layoutOf(const Address &A,
                                                const Expr *Where) {
  Layout L;
  for (const AffineExpr &Sub : A.Subs) {
    std::optional<AffineExpr> F = fold(Sub, Where);
    if (!F)
      return std::nullopt;
    std::array<AffineExpr, NumDims> Strides;
    AffineExpr Rest = *F;
    for (unsigned D = 0; D != NumDims; ++D) {
      SymbolId C = Syms.coord(D);
      std::optional<AffineExpr> S = F->linearCoefficient(C);
      auto Bad = [this](SymbolId T) {
        return Syms.isCoord(T) || Syms.variesWithLoops(T);
      };
      if (!S || S->mentionsAny(Bad))
        return fail(Where, "the index is not affine in the thread "
                           "coordinates: " +
                               quote(polyText(*F)));
      Strides[D] = *S;
      Rest = Rest.withoutSymbol(C);
    }
    L.Strides.push_back(Strides);
    L.Rest.push_back(Rest);
  }
  return L;
}

bool StencilAnalyzer::analyzeStoreLayout() {
  CoordinatesFixed = true;
  learnBlockFactors();
  std::optional<Layout> L = layoutOf(*Store->Addr, Store->E);
  if (!L)
    return refuse(LastFail);
  StoreLayout = *L;
  for (unsigned D = 0; D != NumDims; ++D)
    Shape.UsesDim[D] = StoreLayout.usesDim(D);
  Shape.Rank = llvm::count(Shape.UsesDim, true);
  std::string Name = quote(Store->Addr->Root->getNameAsString());
  if (Shape.Rank == 0)
    return refuse(Store->E->getBeginLoc(),
                  "no thread coordinates: the index of " + Name +
                      " does not depend on threadIdx");
  for (const AffineExpr &R : StoreLayout.Rest) {
    if (R.mentionsAny([this](SymbolId S) { return Syms.variesWithLoops(S); }))
      return refuse(Store->E->getBeginLoc(),
                    "the index of " + Name + " uses a loop variable");
    if (R.mentionsAny([this](SymbolId S) { return Syms.isWrap(S); }))
      return refuse(Store->E->getBeginLoc(),
                    "the index of " + Name + " wraps a coordinate with '%'");
  }
  // Where the stored point lies relative to the coordinates, when the rest
  // is a constant multiple of the strides (x = ... + 1 gives 1); used for
  // inputs with other strides and for the guard's bounds.
  std::array<std::optional<int64_t>, NumDims> Known;
  bool Exact = true;
  for (size_t K = 0; K != StoreLayout.Rest.size(); ++K)
    if (!decompose(StoreLayout.Rest[K], StoreLayout.Strides[K], Known))
      Exact = false;
  if (Exact) {
    for (unsigned D = 0; D != NumDims; ++D)
      StoreOrigin[D] = Known[D].value_or(0);
    StoreOriginExact = true;
  }
  for (unsigned D = 0; D != NumDims; ++D) {
    if (!Shape.UsesDim[D])
      continue;
    std::string S;
    if (StoreLayout.Strides.size() == 1) {
      S = polyText(StoreLayout.Strides[0][D]);
    } else {
      for (size_t K = 0; K != StoreLayout.Strides.size(); ++K) {
        const AffineExpr &St = StoreLayout.Strides[K][D];
        if (St.isZero())
          continue;
        S += (S.empty() ? "" : " + ") + ("[" + std::to_string(K) + "]");
        if (St != AffineExpr::constant(1))
          S += "*" + polyText(St);
      }
    }
    Shape.OutputStrides[D] = S;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Step 5: reads and their offsets
//===----------------------------------------------------------------------===//

/// Solves D = sum(off_d * Strides[d]) for the dimensions not yet Known,
/// taking strides by decreasing leading monomial (H*W, then W, then 1).
/// Strides with the same leading monomial (constant strides, 1 and 512)
/// divide with rounding to the nearest, so that |dx| < 512 / 2. Known gives
/// dimensions solved in an earlier subscript; they must agree.
std::optional<std::array<int64_t, NumDims>>
StencilAnalyzer::decompose(const AffineExpr &D,
                           const std::array<AffineExpr, NumDims> &Strides,
                           std::array<std::optional<int64_t>, NumDims> &Known) {
  AffineExpr Rem = D;
  std::vector<unsigned> Order;
  for (unsigned Dim = 0; Dim != NumDims; ++Dim) {
    if (Strides[Dim].isZero())
      continue;
    if (Known[Dim])
      Rem = Rem - Strides[Dim] * *Known[Dim];
    else
      Order.push_back(Dim);
  }
  auto Key = [&](unsigned Dim) {
    const Monomial &M = Strides[Dim].leadingMonomial();
    int64_t C = Strides[Dim].coefficient(M);
    return std::make_tuple(M.size(), M, C < 0 ? -C : C);
  };
  llvm::stable_sort(Order,
                    [&](unsigned A, unsigned B) { return Key(A) > Key(B); });
  for (size_t I = 0; I != Order.size(); ++I) {
    unsigned Dim = Order[I];
    const Monomial &M = Strides[Dim].leadingMonomial();
    int64_t C = Strides[Dim].coefficient(M);
    int64_t V = Rem.coefficient(M);
    bool Shared =
        I + 1 < Order.size() && Strides[Order[I + 1]].leadingMonomial() == M;
    int64_t Off;
    if (Shared) {
      // Nearest multiple; a tie is ambiguous.
      int64_t Q = V / C, R = V % C;
      if (2 * (R < 0 ? -R : R) > (C < 0 ? -C : C))
        Q += ((R < 0) == (C < 0)) ? 1 : -1;
      R = V - Q * C;
      if (2 * (R < 0 ? -R : R) == (C < 0 ? -C : C))
        return std::nullopt;
      Off = Q;
    } else {
      if (V % C != 0)
        return std::nullopt;
      Off = V / C;
    }
    Known[Dim] = Off;
    Rem = Rem - Strides[Dim] * Off;
  }
  if (!Rem.isZero())
    return std::nullopt;
  std::array<int64_t, NumDims> Result = {0, 0, 0};
  for (unsigned Dim = 0; Dim != NumDims; ++Dim)
    Result[Dim] = Known[Dim].value_or(0);
  return Result;
}

/// The offset of a read whose loop variables are substituted (Rest), from
/// the store.
std::optional<StencilOffset>
StencilAnalyzer::solveOffset(const Layout &Read,
                             const llvm::SmallVector<AffineExpr, 3> &Rest,
                             const Expr *Where) {
  std::array<std::optional<int64_t>, NumDims> Known;
  std::array<int64_t, NumDims> Off = {0, 0, 0};
  if (Read.sameStrides(StoreLayout)) {
    // Same layout: the difference of the rests is the offset in strides.
    for (size_t K = 0; K != Rest.size(); ++K) {
      AffineExpr Diff = Rest[K] - StoreLayout.Rest[K];
      std::optional<std::array<int64_t, NumDims>> O =
          decompose(Diff, Read.Strides[K], Known);
      if (!O)
        return fail(Where, "the offset from the output is not a constant "
                           "multiple of the strides: " +
                               quote(polyText(Diff)));
      Off = *O;
    }
  } else {
    // Other strides: both positions must be exact multiples of their own
    // strides (no base offsets the analysis cannot relate).
    if (!StoreOriginExact)
      return fail(Where, "the input is indexed with other strides than the "
                         "output, whose index has a non-constant base");
    for (size_t K = 0; K != Rest.size(); ++K) {
      std::optional<std::array<int64_t, NumDims>> O =
          decompose(Rest[K], Read.Strides[K], Known);
      if (!O)
        return fail(Where, "the input is indexed with other strides than "
                           "the output, and its position is not a constant "
                           "multiple of them: " +
                               quote(polyText(Rest[K])));
      Off = *O;
    }
    for (unsigned D = 0; D != NumDims; ++D)
      Off[D] -= StoreOrigin[D];
  }
  return StencilOffset{Off[0], Off[1], Off[2]};
}

/// The canonical loops around S, outermost first. InOtherLoop reports a
/// loop without constant bounds around S.
std::vector<const LoopInfo *>
StencilAnalyzer::enclosingLoops(const Stmt *S, bool &InOtherLoop,
                                std::string &OtherLoop) const {
  std::vector<const LoopInfo *> Result;
  InOtherLoop = false;
  const Stmt *Child = S;
  for (const Stmt *P = parent(S); P; Child = P, P = parent(P)) {
    if (const auto *For = dyn_cast<ForStmt>(P)) {
      if (Child != For->getBody())
        continue;
      const LoopInfo *L = nullptr;
      for (const auto &[V, Info] : Loops)
        if (Info.For == For)
          L = &Info;
      if (L && L->Canonical) {
        Result.push_back(L);
      } else if (!InOtherLoop) {
        InOtherLoop = true;
        OtherLoop = L ? L->Why : "a for loop without an integer variable";
      }
    } else if (isa<WhileStmt, DoStmt, CXXForRangeStmt>(P) && !InOtherLoop) {
      InOtherLoop = true;
      OtherLoop = isa<DoStmt>(P)      ? "a do loop"
                  : isa<WhileStmt>(P) ? "a while loop"
                                      : "a range-based for loop";
    }
  }
  std::reverse(Result.begin(), Result.end());
  return Result;
}

/// Whether \p E is a zero (`0`, `0.0f`, a macro that is 0, pinned).
bool StencilAnalyzer::isZero(const Expr *E) {
  Expr::EvalResult R;
  if (E->isValueDependent() || !E->EvaluateAsRValue(R, Ctx))
    return false;
  bool Zero = (R.Val.isFloat() && R.Val.getFloat().isZero()) ||
              (R.Val.isInt() && R.Val.getInt().isZero());
  return Zero && Shape.Pins.pin(E, Ctx);
}

/// A zero border: where every `?:` on the way from \p Read to the statement
/// that holds it has 0 as its other branch (`(x < W - 1) ? in[p + 1] : 0`)
/// and a condition that bounds output coordinates, the bounds under which
/// the read happens; those `?:`s go into \p Masks. None where a `?:` is of
/// another form.
std::optional<std::vector<LimitedBound>>
StencilAnalyzer::zeroBorderMask(const Expr *Read, TernarySet &Masks) {
  std::vector<LimitedBound> When;
  const Stmt *Child = Read;
  for (const Stmt *P = parent(Read); P && isa<Expr>(P);
       Child = P, P = parent(P)) {
    const auto *CO = dyn_cast<ConditionalOperator>(P);
    if (!CO || Child == CO->getCond())
      continue;
    bool InFalse = Child == CO->getFalseExpr();
    if (!isZero(InFalse ? CO->getTrueExpr() : CO->getFalseExpr()) ||
        !conjunctBounds(CO->getCond(), InFalse, When))
      return std::nullopt;
    Masks.insert(CO);
  }
  return When;
}

/// A read that may not happen when the store does: under `?:` (but those
/// of \p Masks, whose other branch is a zero border), `&&`, `||`, an `if`
/// that does not also guard the store, or in a loop with `continue` or
/// `break`.
bool StencilAnalyzer::isConditionalRead(const Expr *Read,
                                        const TernarySet &Masks) const {
  const Stmt *Child = Read;
  for (const Stmt *P = parent(Read); P; Child = P, P = parent(P)) {
    if (const auto *If = dyn_cast<IfStmt>(P)) {
      if (Child != If->getCond() && !isAncestor(If, Store->E))
        return true;
    } else if (const auto *CO = dyn_cast<ConditionalOperator>(P)) {
      if (Child != CO->getCond() && !Masks.count(CO))
        return true;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
      if (BO->isLogicalOp() && Child == BO->getRHS())
        return true;
    } else if (const auto *For = dyn_cast<ForStmt>(P)) {
      if (Child != For->getBody())
        continue;
      struct JumpFinder : RecursiveASTVisitor<JumpFinder> {
        bool Found = false;
        bool VisitContinueStmt(ContinueStmt *) { return !(Found = true); }
        bool VisitBreakStmt(BreakStmt *) { return !(Found = true); }
        bool VisitReturnStmt(ReturnStmt *) { return !(Found = true); }
      } J;
      J.TraverseStmt(const_cast<Stmt *>(For->getBody()));
      if (J.Found)
        return true;
    }
  }
  return false;
}

bool StencilAnalyzer::checkInputs() {
  const VarDecl *Out = Store->Addr->Root;
  std::vector<ParamAccess> ParamUse = analyzeKernelParamAccess(*Def);
  for (const Access &A : Accesses) {
    if (&A == Store || A.U == Usage::None)
      continue;
    if (A.Root && memoryKind(A.Root) == MemoryKind::ThreadLocal)
      continue;
    if (!A.Addr) {
      if (A.Fail.DataDependent)
        return refuse(A.Fail.Loc, "data-dependent offset: " + A.Fail.Why);
      return refuse(A.Fail);
    }
    if (A.Addr->Root == Out)
      return refuse(A.E->getBeginLoc(),
                    "in-place update: " + quote(Out->getNameAsString()) +
                        " is both read and written");
  }
  // Through calls or escapes the output may still be read; an input may
  // be written.
  if (const auto *P = dyn_cast<ParmVarDecl>(Out))
    if (const ParamAccess *PA = findParamAccess(ParamUse, P)) {
      if (PA->Escapes)
        return refuse(PA->EscapeLoc, "output " + quote(Out->getNameAsString()) +
                                         " escapes: " + PA->EscapeReason);
      if (PA->Read)
        return refuse(Store->E->getBeginLoc(),
                      "in-place update: " + quote(Out->getNameAsString()) +
                          " is both read and written");
    }
  for (const ParamAccess &PA : ParamUse)
    if (PA.Param != Out && PA.Written)
      return refuse(PA.Escapes ? PA.EscapeLoc : PA.Param->getLocation(),
                    "input " + quote(PA.Param->getNameAsString()) +
                        (PA.Escapes ? " escapes: " + PA.EscapeReason
                                    : std::string(" is also written")));
  return true;
}

bool StencilAnalyzer::expandReads() {
  for (const Access &A : Accesses) {
    if (&A == Store || A.U != Usage::Read || !A.Addr ||
        memoryKind(A.Addr->Root) == MemoryKind::ThreadLocal)
      continue;
    std::optional<Layout> L = layoutOf(*A.Addr, A.E);
    if (!L)
      return refuse(LastFail);
    bool ThreadDependent = false;
    for (unsigned D = 0; D != NumDims; ++D)
      ThreadDependent |= L->usesDim(D);
    // A read at a thread-independent index is a coefficient or a filter
    // element; it has no offset.
    if (!ThreadDependent)
      continue;
    if (!expandRead(A, *L))
      return false;
  }
  if (Shape.Offsets.empty())
    return refuse(Store->E->getBeginLoc(),
                  "no input is read at an offset from the thread's "
                  "coordinates");
  return true;
}

/// Takes the periodic borders' wraps (wrappedCoordinate) out of a read's
/// index, each of which must move the index by whole periods of the
/// coordinate it wraps (`(x + 1) % W` at x's stride, `((y + 1) % H) * W` at
/// y's); \p Wraps gets the period of each coordinate the read wraps.
bool StencilAnalyzer::stripWraps(
    const Access &Read, Layout &L,
    std::array<std::optional<AffineExpr>, NumDims> &Wraps) {
  std::string Name = quote(Read.Addr->Root->getNameAsString());
  for (size_t K = 0; K != L.Rest.size(); ++K) {
    std::set<SymbolId> Found;
    for (const auto &Term : L.Rest[K].terms())
      for (SymbolId S : Term.first)
        if (Syms.isWrap(S))
          Found.insert(S);
    for (SymbolId Q : Found) {
      const SymbolInfo &Info = Syms.info(Q);
      const AffineExpr &Period = Info.Operands[0];
      std::optional<AffineExpr> Moves = L.Rest[K].linearCoefficient(Q);
      if (!Moves || *Moves != Period * L.Strides[K][Info.Dim])
        return refuse(Read.E->getBeginLoc(), "the index of " + Name +
                                                 " wraps " + Info.Name +
                                                 " at another stride than " +
                                                 DimNames[Info.Dim] + "'s");
      if (Wraps[Info.Dim] && *Wraps[Info.Dim] != Period)
        return refuse(Read.E->getBeginLoc(),
                      "the index of " + Name + " wraps " + DimNames[Info.Dim] +
                          " by two periods");
      Wraps[Info.Dim] = Period;
      L.Rest[K] = L.Rest[K].withoutSymbol(Q);
    }
  }
  return true;
}

/// Adds the points of one read, one per combination of the values of the
/// loop variables it depends on.
bool StencilAnalyzer::expandRead(const Access &Read, const Layout &Index) {
  std::string Name = quote(Read.Addr->Root->getNameAsString());
  Layout L = Index;
  std::array<std::optional<AffineExpr>, NumDims> Wraps;
  if (!stripWraps(Read, L, Wraps))
    return false;
  for (unsigned D = 0; D != NumDims; ++D)
    if (L.usesDim(D) && !Shape.UsesDim[D])
      return refuse(Read.E->getBeginLoc(),
                    "the index of " + Name + " uses coordinate " + DimNames[D] +
                        ", which the output index does not");
  bool InOtherLoop;
  std::string OtherLoop;
  std::vector<const LoopInfo *> Around =
      enclosingLoops(Read.E, InOtherLoop, OtherLoop);
  // A loop that is not canonical repeats the read an unknown number of
  // times; its reason names the loop ("the bounds of loop 'i' are not
  // constant") or the kind of loop ("a while loop").
  if (InOtherLoop)
    return refuse(Read.E->getBeginLoc(),
                  StringRef(OtherLoop).starts_with("a ")
                      ? "the read of " + Name + " is inside " + OtherLoop
                      : OtherLoop);
  TernarySet Masks;
  std::optional<std::vector<LimitedBound>> Mask = zeroBorderMask(Read.E, Masks);
  if (!Mask)
    Masks.clear();
  WeightTemplate W = weightOf(Read.E, Masks);
  // Loops whose variable the read uses are expanded; the others repeat the
  // same read, which multiplies its weight.
  std::vector<const LoopInfo *> Expand;
  for (const LoopInfo *Loop : Around) {
    auto Uses = [&](const AffineExpr &R) {
      return Syms.dependsOn(R, Loop->Sym);
    };
    bool Used = llvm::any_of(L.Rest, Uses) || llvm::any_of(W.FilterSubs, Uses);
    if (Used)
      Expand.push_back(Loop);
    else
      W.Scale *= double(Loop->Trips);
  }
  uint64_t Count = 1;
  for (const LoopInfo *Loop : Expand) {
    Count *= std::max<uint64_t>(Loop->Trips, 1);
    if (Loop->Trips == 0)
      return true; // The loop never runs.
    if (Count + Shape.Points.size() > MaxStencilOffsets)
      return refuse(Read.E->getBeginLoc(),
                    "too many offsets: more than " +
                        std::to_string(MaxStencilOffsets) +
                        " after expanding the loops");
  }
  bool Conditional = isConditionalRead(Read.E, Masks);
  // Odometer over the loop counters, innermost fastest.
  std::vector<uint64_t> Counter(Expand.size(), 0);
  for (uint64_t N = 0; N != Count; ++N) {
    TapValues Taps;
    for (size_t I = 0; I != Expand.size(); ++I)
      Taps.push_back({Expand[I]->Sym, Expand[I]->value(Counter[I])});
    llvm::SmallVector<AffineExpr, 3> Rest;
    for (const AffineExpr &R : L.Rest)
      Rest.push_back(bindTaps(R, Taps));
    for (const AffineExpr &R : Rest)
      if (R.mentionsAny([this](SymbolId S) { return Syms.variesWithLoops(S); }))
        return refuse(Read.E->getBeginLoc(), "the index of " + Name +
                                                 " has no value for taps " +
                                                 quote(polyText(R)));
    std::optional<StencilOffset> Off = solveOffset(L, Rest, Read.E);
    if (!Off)
      return refuse(LastFail);
    for (unsigned D = 0; D != NumDims; ++D)
      if (Off->get(D) > MaxStencilRadius || Off->get(D) < -MaxStencilRadius)
        return refuse(Read.E->getBeginLoc(),
                      "a read of " + Name + " is more than " +
                          std::to_string(MaxStencilRadius) +
                          " points away from the output");
    recordInputIndexing(Read.Addr->Root, L, Rest, *Off);
    InputReads.insert(Read.E);
    StencilPoint P;
    P.Offset = *Off;
    P.Input = Read.Addr->Root;
    P.Weight = instantiate(W, Taps);
    P.Conditional = Conditional;
    P.Loc = Read.E->getBeginLoc();
    Shape.Points.push_back(P);
    PointMasks.push_back(Mask ? *Mask : std::vector<LimitedBound>());
    PointWraps.push_back(Wraps);
    if (!llvm::is_contained(Shape.Offsets, *Off))
      Shape.Offsets.push_back(*Off);
    if (!llvm::is_contained(Shape.Inputs, P.Input))
      Shape.Inputs.push_back(P.Input);
    for (size_t I = Expand.size(); I-- > 0;) {
      if (++Counter[I] < Expand[I]->Trips)
        break;
      Counter[I] = 0;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Step 6: weights
//===----------------------------------------------------------------------===//

/// What a factor next to a read is: a literal, a constant, a parameter, a
/// filter element.
WeightTemplate StencilAnalyzer::classifyFactor(const Expr *E, unsigned Depth) {
  const Expr *Written = E; // Pinned with its parentheses (evalInt).
  E = E->IgnoreParenImpCasts();
  if (Depth > 8)
    return unknownWeight();
  while (const auto *Cast = dyn_cast<ExplicitCastExpr>(E)) {
    if (!Cast->getType()->isArithmeticType())
      return unknownWeight();
    E = Cast->getSubExpr()->IgnoreParenImpCasts();
  }
  if (E->isValueDependent())
    return unknownWeight();
  // A literal, or arithmetic on literals (`1.0f / 9`).
  Expr::EvalResult R;
  if (!isa<DeclRefExpr>(E) && E->EvaluateAsRValue(R, Ctx) &&
      (R.Val.isFloat() || R.Val.isInt())) {
    if (!Shape.Pins.pin(Written, Ctx))
      return unknownWeight();
    if (R.Val.isFloat())
      return literalWeight(R.Val.getFloat().convertToDouble());
    return literalWeight(double(R.Val.getInt().getExtValue()));
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->getOpcode() == UO_Minus)
      return multiply(literalWeight(-1),
                      classifyFactor(UO->getSubExpr(), Depth + 1));
    if (UO->getOpcode() == UO_Plus)
      return classifyFactor(UO->getSubExpr(), Depth + 1);
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->getOpcode() == BO_Mul)
      return multiply(classifyFactor(BO->getLHS(), Depth + 1),
                      classifyFactor(BO->getRHS(), Depth + 1));
    if (BO->getOpcode() == BO_Div) {
      WeightTemplate D = classifyFactor(BO->getRHS(), Depth + 1);
      if (D.K == StencilCoefficient::Literal && D.Scale != 0)
        return multiply(classifyFactor(BO->getLHS(), Depth + 1),
                        literalWeight(1.0 / D.Scale));
    }
    return unknownWeight();
  }
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
    if (!V || !V->getType()->isArithmeticType())
      return unknownWeight();
    WeightTemplate W;
    W.Source = V;
    W.SourceName = V->getNameAsString();
    if (isa<ParmVarDecl>(V)) {
      if (Mods.count(V))
        return unknownWeight();
      W.K = StencilCoefficient::Parameter;
      return W;
    }
    bool Fixed = V->isConstexpr() || V->getType().isConstQualified();
    if (Fixed || V->hasAttr<CUDAConstantAttr>()) {
      W.K = StencilCoefficient::Constant;
      const VarDecl *Def = nullptr;
      const Expr *Init = V->getAnyInitializer(Def);
      Expr::EvalResult IR;
      if (Fixed && Init && !Init->isValueDependent() &&
          Init->EvaluateAsRValue(IR, Ctx) && Shape.Pins.pin(Ref, Ctx)) {
        if (IR.Val.isFloat())
          W.Value = IR.Val.getFloat().convertToDouble();
        else if (IR.Val.isInt())
          W.Value = double(IR.Val.getInt().getExtValue());
      }
      if (Fixed || !V->hasLocalStorage())
        return W;
    }
    // A local assigned once is its initialiser (`float w = f[i];`).
    if (V->hasLocalStorage() && !Mods.count(V) && V->getInit())
      return classifyFactor(V->getInit(), Depth + 1);
    return unknownWeight();
  }
  // An element of a filter array, at an index that does not depend on the
  // thread.
  if (isAccessExpr(E) || isLoadIntrinsicCall(E)) {
    std::optional<Address> A = isa<CallExpr>(E)
                                   ? evalAddress(cast<CallExpr>(E)->getArg(0))
                                   : evalLValue(E);
    if (!A || memoryKind(A->Root) == MemoryKind::ThreadLocal ||
        memoryKind(A->Root) == MemoryKind::Shared)
      return unknownWeight();
    WeightTemplate W;
    W.K = StencilCoefficient::FilterElement;
    W.Source = A->Root;
    W.SourceName = A->Root->getNameAsString();
    for (const AffineExpr &S : A->Subs) {
      std::optional<AffineExpr> F = fold(S, E);
      if (!F || F->mentionsAny([this](SymbolId T) { return Syms.isCoord(T); }))
        return unknownWeight(); // Not a filter: it moves with the thread.
      W.FilterSubs.push_back(*F);
    }
    // A pointer parameter is one flat subscript after the implicit 0.
    return W;
  }
  return unknownWeight();
}

/// A conversion that keeps sums and products: to a floating type, or to an
/// integer type at least as wide (truncation is not linear).
static bool isLinearCast(const CastExpr *Cast, const ASTContext &Ctx) {
  if (Cast->getCastKind() == CK_LValueToRValue ||
      Cast->getCastKind() == CK_NoOp)
    return true;
  QualType To = Cast->getType(), From = Cast->getSubExpr()->getType();
  if (!To->isArithmeticType() || !From->isArithmeticType())
    return false;
  if (To->isRealFloatingType())
    return true;
  return To->isIntegerType() && From->isIntegerType() &&
         Ctx.getTypeSize(To) >= Ctx.getTypeSize(From);
}

/// Follows the value of \p From upwards through +, -, * and fma to the
/// variable or store it ends in, multiplying the factors met on the way.
std::pair<WeightTemplate, Sink>
StencilAnalyzer::walkToSink(const Expr *From, const TernarySet *Masks) {
  WeightTemplate W = literalWeight(1);
  const Stmt *Cur = From;
  auto Stop = [&]() { return std::make_pair(unknownWeight(), Sink()); };
  while (const Stmt *P = parent(Cur)) {
    // A zero border's `?:` passes the read on unscaled (its mask is the
    // point's When).
    const auto *CO = dyn_cast<ConditionalOperator>(P);
    if (isa<ParenExpr>(P) || (CO && Masks && Masks->count(CO))) {
      Cur = P;
      continue;
    }
    if (const auto *Cast = dyn_cast<CastExpr>(P)) {
      if (!isLinearCast(Cast, Ctx))
        return Stop();
      Cur = P;
      continue;
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(P)) {
      if (UO->getOpcode() == UO_Minus)
        W.Scale = -W.Scale;
      else if (UO->getOpcode() != UO_Plus)
        return Stop();
      Cur = P;
      continue;
    }
    if (const auto *Call = dyn_cast<CallExpr>(P)) {
      if (!isFmaCall(Call))
        return Stop();
      if (Call->getArg(2) != Cur)
        W = multiply(
            W, classifyFactor(Call->getArg(Call->getArg(0) == Cur ? 1 : 0)));
      Cur = P;
      continue;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(P)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D); V && V->getInit() == Cur)
          return {W, Sink{Sink::Accumulator, V, DS}};
      return Stop();
    }
    const auto *BO = dyn_cast<BinaryOperator>(P);
    if (!BO)
      return Stop();
    bool IsRHS = BO->getRHS() == Cur;
    const Expr *Other = IsRHS ? BO->getLHS() : BO->getRHS();
    switch (BO->getOpcode()) {
    case BO_Add:
      break;
    case BO_Sub:
      if (IsRHS)
        W.Scale = -W.Scale;
      break;
    case BO_Mul:
      W = multiply(W, classifyFactor(Other));
      break;
    case BO_Div: {
      WeightTemplate D = classifyFactor(Other);
      if (IsRHS || D.K != StencilCoefficient::Literal || D.Scale == 0)
        return Stop();
      W.Scale /= D.Scale;
      break;
    }
    case BO_Assign:
    case BO_AddAssign:
    case BO_SubAssign: {
      if (!IsRHS)
        return Stop();
      if (BO->getOpcode() == BO_SubAssign)
        W.Scale = -W.Scale;
      const Expr *LHS = BO->getLHS()->IgnoreParenImpCasts();
      if (LHS == Store->E->IgnoreParenImpCasts())
        return {W, Sink{Sink::Store, nullptr, BO}};
      if (const auto *Ref = dyn_cast<DeclRefExpr>(LHS))
        if (const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
            V && V->hasLocalStorage())
          return {W, Sink{Sink::Accumulator, V, BO}};
      return Stop();
    }
    default:
      return Stop();
    }
    if (W.K == StencilCoefficient::Unknown)
      return Stop();
    Cur = P;
  }
  return Stop();
}

/// The weight with which a local accumulator reaches the output: it must
/// be initialised once, grow only by `+=`, `-=` or `v = v + ...`, and flow
/// to the store (or another accumulator) from exactly one place.
WeightTemplate StencilAnalyzer::accumulatorWeight(const VarDecl *V,
                                                  unsigned Depth) {
  auto Found = AccWeights.find(V);
  if (Found != AccWeights.end())
    return Found->second;
  if (Depth > 8 || !V->getInit() ||
      !V->getType().getNonReferenceType()->isArithmeticType() ||
      !AccInProgress.insert(V).second)
    return unknownWeight();
  WeightTemplate Result = unknownWeight();
  std::set<const Stmt *> SelfUpdates;
  const DeclRefExpr *Outflow = nullptr;
  std::pair<WeightTemplate, Sink> Flow;
  bool Ok = true;
  static const llvm::SmallVector<const DeclRefExpr *, 4> NoReads;
  auto Reads = VarReads.find(V);
  for (const DeclRefExpr *Use :
       Reads == VarReads.end() ? NoReads : Reads->second) {
    std::pair<WeightTemplate, Sink> Path = walkToSink(Use);
    if (Path.second.K == Sink::Accumulator && Path.second.Acc == V) {
      const WeightTemplate &PW = Path.first;
      Ok &= PW.K == StencilCoefficient::Literal && PW.Scale == 1.0;
      SelfUpdates.insert(Path.second.Via);
      continue;
    }
    Ok &= !Outflow;
    Outflow = Use;
    Flow = Path;
  }
  auto VMods = Mods.find(V);
  for (const Expr *Mod : VMods == Mods.end()
                             ? llvm::SmallVector<const Expr *, 2>()
                             : VMods->second) {
    const auto *BO = dyn_cast<BinaryOperator>(Mod);
    bool Accumulates = BO && (BO->getOpcode() == BO_AddAssign ||
                              BO->getOpcode() == BO_SubAssign);
    Ok &= Accumulates ||
          (BO && BO->getOpcode() == BO_Assign && SelfUpdates.count(BO));
  }
  if (Ok && Outflow) {
    if (Flow.second.K == Sink::Store)
      Result = Flow.first;
    else if (Flow.second.K == Sink::Accumulator)
      Result =
          multiply(Flow.first, accumulatorWeight(Flow.second.Acc, Depth + 1));
  }
  AccInProgress.erase(V);
  AccWeights[V] = Result;
  return Result;
}

WeightTemplate StencilAnalyzer::weightOf(const Expr *Read,
                                         const TernarySet &Masks) {
  std::pair<WeightTemplate, Sink> Path = walkToSink(Read, &Masks);
  switch (Path.second.K) {
  case Sink::Store:
    return Path.first;
  case Sink::Accumulator:
    return multiply(Path.first, accumulatorWeight(Path.second.Acc, 0));
  case Sink::None:
    break;
  }
  return unknownWeight();
}

/// One integer operation of a derived symbol, with C's semantics; null for
/// division by zero and shifts out of range.
static std::optional<int64_t> applyOp(BinaryOperatorKind Op, int64_t L,
                                      int64_t R) {
  switch (Op) {
  case BO_Div:
    return R == 0 || (L == INT64_MIN && R == -1) ? std::nullopt
                                                 : std::optional(L / R);
  case BO_Rem:
    return R == 0 || (L == INT64_MIN && R == -1) ? std::nullopt
                                                 : std::optional(L % R);
  case BO_Shl:
    return R < 0 || R > 62 || L < 0 ? std::nullopt : std::optional(L << R);
  case BO_Shr:
    return R < 0 || R > 62 ? std::nullopt : std::optional(L >> R);
  case BO_And:
    return L & R;
  case BO_Or:
    return L | R;
  case BO_Xor:
    return L ^ R;
  default:
    return std::nullopt;
  }
}

/// Substitutes the loop variables' values into \p P and computes the
/// derived symbols that then have constant operands.
AffineExpr StencilAnalyzer::bindTaps(const AffineExpr &P,
                                     const TapValues &Taps) const {
  AffineExpr R = P;
  for (const auto &[Sym, Value] : Taps)
    R = R.substitute(Sym, AffineExpr::constant(Value));
  std::set<SymbolId> Derived;
  for (const auto &[M, C] : R.terms())
    for (SymbolId S : M)
      if (Syms.isDerived(S))
        Derived.insert(S);
  for (SymbolId S : Derived) {
    const SymbolInfo &Info = Syms.info(S);
    std::optional<int64_t> L = bindTaps(Info.Operands[0], Taps).getConstant();
    std::optional<int64_t> Rv = bindTaps(Info.Operands[1], Taps).getConstant();
    if (!L || !Rv)
      continue;
    if (std::optional<int64_t> V = applyOp(Info.Op, *L, *Rv))
      R = R.substitute(S, AffineExpr::constant(*V));
  }
  return R;
}

StencilCoefficient StencilAnalyzer::instantiate(const WeightTemplate &W,
                                                const TapValues &Taps) {
  StencilCoefficient C;
  C.K = W.K;
  C.Scale = W.Scale;
  C.Source = W.Source;
  C.SourceName = W.SourceName;
  C.Value = W.Value;
  if (W.K != StencilCoefficient::FilterElement)
    return C;
  for (const AffineExpr &S : W.FilterSubs) {
    std::optional<int64_t> V = bindTaps(S, Taps).getConstant();
    if (!V) {
      C.FilterIndex.clear();
      return C;
    }
    C.FilterIndex.push_back(*V);
  }
  return C;
}

//===----------------------------------------------------------------------===//
// Step 6: the guard
//===----------------------------------------------------------------------===//

/// A - B of a comparison `A op B`, in coordinates.
std::optional<AffineExpr>
StencilAnalyzer::foldedDifference(const BinaryOperator *Cmp) {
  std::optional<AffineExpr> L = evalInt(Cmp->getLHS());
  std::optional<AffineExpr> R = L ? evalInt(Cmp->getRHS()) : std::nullopt;
  if (!L || !R)
    return std::nullopt;
  return fold(*L - *R, Cmp);
}

/// `A op B` as a bound on one output coordinate, when one side is that
/// coordinate plus a constant and the other does not depend on the thread.
std::optional<LimitedBound> StencilAnalyzer::boundOf(const BinaryOperator *Cmp,
                                                     bool Negated) {
  std::optional<AffineExpr> Diff = foldedDifference(Cmp);
  if (!Diff)
    return std::nullopt;
  // Diff = a * coord_d + rest with a = +-1.
  std::optional<unsigned> Dim;
  int64_t A = 0;
  for (unsigned D = 0; D != NumDims; ++D) {
    std::optional<AffineExpr> C = Diff->linearCoefficient(Syms.coord(D));
    if (!C || C->isZero())
      continue;
    std::optional<int64_t> K = C->getConstant();
    if (Dim || !K || (*K != 1 && *K != -1))
      return std::nullopt;
    Dim = D;
    A = *K;
  }
  if (!Dim || !Shape.UsesDim[*Dim])
    return std::nullopt;
  AffineExpr Rest = Diff->withoutSymbol(Syms.coord(*Dim));
  if (Rest.mentionsAny([this](SymbolId S) {
        return Syms.isCoord(S) || Syms.variesWithLoops(S) || Syms.isWrap(S);
      }))
    return std::nullopt;
  BinaryOperatorKind Op = Cmp->getOpcode();
  if (Negated)
    Op = negateComparison(Op);
  // a*X + rest op 0  =>  X op' -rest/a; the output coordinate is X + origin.
  if (A < 0)
    Op = swapComparison(Op);
  AffineExpr Limit =
      (A < 0 ? Rest : -Rest) + AffineExpr::constant(StoreOrigin[*Dim]);
  CoordinateBound B;
  B.Dim = *Dim;
  B.Op = Op;
  if (!portable(Limit))
    noteCodegenProblem("the guard compares " + std::string(DimNames[*Dim]) +
                       " with " + quote(polyText(Limit)) +
                       ", which depends on the launch");
  B.Limit = polyText(Limit);
  B.LimitValue = Limit.getConstant();
  LimitedBound LB{B, true, false, Limit};
  switch (Op) {
  case BO_LT:
    LB.IsUpper = true;
    break;
  case BO_LE:
    LB.IsUpper = true;
    LB.Limit = Limit + AffineExpr::constant(1);
    break;
  case BO_GT:
    LB.Limit = Limit + AffineExpr::constant(1);
    break;
  case BO_GE:
    break;
  default:
    LB.IsInequality = false;
  }
  return LB;
}

/// `A op B` as `L < Limit` on the linear index L the coordinates are split
/// from (`idx < n * n`, `idx >= N` negated).
std::optional<AffineExpr>
StencilAnalyzer::linearLimitOf(const BinaryOperator *Cmp, bool Negated) {
  if (!Split)
    return std::nullopt;
  std::optional<AffineExpr> Diff = foldedDifference(Cmp);
  if (!Diff)
    return std::nullopt;
  // Diff = a * (x + Divisor * y) + rest with a = +-1.
  std::optional<AffineExpr> CX = Diff->linearCoefficient(Syms.coord(0));
  std::optional<int64_t> A = CX ? CX->getConstant() : std::nullopt;
  if (!A || (*A != 1 && *A != -1))
    return std::nullopt;
  AffineExpr Rest =
      *Diff - (AffineExpr::symbol(Syms.coord(0)) +
               Split->Divisor * AffineExpr::symbol(Syms.coord(1))) *
                  *A;
  if (Rest.overflowed() || Rest.mentionsAny([this](SymbolId S) {
        return Syms.isCoord(S) || Syms.variesWithLoops(S) || Syms.isWrap(S);
      }))
    return std::nullopt;
  BinaryOperatorKind Op = Cmp->getOpcode();
  if (Negated)
    Op = negateComparison(Op);
  if (*A < 0)
    Op = swapComparison(Op);
  // L op -rest/a.
  AffineExpr Limit = *A < 0 ? Rest : -Rest;
  if (Op == BO_LE)
    return Limit + AffineExpr::constant(1);
  if (Op == BO_LT)
    return Limit;
  return std::nullopt;
}

/// The conjuncts of \p Cond (negated with \p Negated) as bounds on the
/// output coordinates, when every conjunct is one.
bool StencilAnalyzer::conjunctBounds(const Expr *Cond, bool Negated,
                                     std::vector<LimitedBound> &Out) {
  Cond = Cond->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return conjunctBounds(UO->getSubExpr(), !Negated, Out);
  const auto *BO = dyn_cast<BinaryOperator>(Cond);
  if (!BO)
    return false;
  // a && b, or !(a || b) = !a && !b.
  if (BO->getOpcode() == (Negated ? BO_LOr : BO_LAnd))
    return conjunctBounds(BO->getLHS(), Negated, Out) &&
           conjunctBounds(BO->getRHS(), Negated, Out);
  if (!BO->isComparisonOp() || BO->getOpcode() == BO_Cmp)
    return false;
  std::optional<LimitedBound> B = boundOf(BO, Negated);
  if (!B)
    return false;
  Out.push_back(*B);
  return true;
}

void StencilAnalyzer::addGuardConjuncts(const Expr *Cond, bool Negated) {
  Cond = Cond->IgnoreParenImpCasts();
  if (const auto *UO = dyn_cast<UnaryOperator>(Cond);
      UO && UO->getOpcode() == UO_LNot)
    return addGuardConjuncts(UO->getSubExpr(), !Negated);
  if (const auto *BO = dyn_cast<BinaryOperator>(Cond)) {
    // a && b, or !(a || b) = !a && !b.
    if (BO->getOpcode() == (Negated ? BO_LOr : BO_LAnd)) {
      addGuardConjuncts(BO->getLHS(), Negated);
      addGuardConjuncts(BO->getRHS(), Negated);
      return;
    }
    if (BO->isComparisonOp() && BO->getOpcode() != BO_Cmp) {
      if (std::optional<LimitedBound> B = boundOf(BO, Negated)) {
        Shape.Bounds.push_back(B->Bound);
        GuardBounds.push_back(*B);
        return;
      }
      if (std::optional<AffineExpr> Limit = linearLimitOf(BO, Negated)) {
        SplitLimits.push_back(*Limit);
        return;
      }
    }
  }
  Shape.GuardIsSimple = false;
}

/// The if-conditions around the store and the early returns before it.
void StencilAnalyzer::extractGuard() {
  std::vector<std::pair<const Expr *, bool>> Conds; // (condition, negated)
  const Stmt *Child = Store->E;
  for (const Stmt *P = parent(Child); P; Child = P, P = parent(P)) {
    if (const auto *If = dyn_cast<IfStmt>(P)) {
      if (Child == If->getThen())
        Conds.push_back({If->getCond(), false});
      else if (Child == If->getElse())
        Conds.push_back({If->getCond(), true});
    } else if (const auto *CS = dyn_cast<CompoundStmt>(P)) {
      // `if (c) return;` before the store.
      for (const Stmt *S : CS->body()) {
        if (S == Child)
          break;
        const auto *If = dyn_cast<IfStmt>(S);
        if (!If || If->getElse() || If->hasInitStorage() || If->hasVarStorage())
          continue;
        const Stmt *Then = If->getThen();
        if (const auto *Block = dyn_cast<CompoundStmt>(Then))
          Then = Block->size() == 1 ? Block->body_front() : nullptr;
        if (Then && isa<ReturnStmt>(Then))
          Conds.push_back({If->getCond(), true});
      }
    } else if (isa<ConditionalOperator, SwitchStmt>(P)) {
      Shape.GuardIsSimple = false;
    }
  }
  llvm::stable_sort(Conds, [this](auto &A, auto &B) {
    return SM.isBeforeInTranslationUnit(A.first->getBeginLoc(),
                                        B.first->getBeginLoc());
  });
  for (const auto &[Cond, Negated] : Conds) {
    std::string Text = sourceText(Cond);
    const auto *BO = dyn_cast<BinaryOperator>(Cond->IgnoreImpCasts());
    bool NeedsParens =
        Negated || (Conds.size() > 1 && BO && BO->getOpcode() == BO_LOr);
    if (NeedsParens)
      Text = "(" + Text + ")";
    if (Negated)
      Text = "!" + Text;
    Shape.Guard += (Shape.Guard.empty() ? "" : " && ") + Text;
    addGuardConjuncts(Cond, Negated);
  }
}

/// Zero borders (StencilPoint::When): a masked tap reads 0 where its mask
/// fails. The systolic kernel takes those zeros from its register cache,
/// which holds 0 at the points the original never reads. So each mask must
/// cut its tap at an edge of the written points (`x < W - 1` for a tap at
/// x + 1 where x < W bounds the output), and every tap that reaches past
/// that edge must be cut there too: then no read of the original lies
/// beyond the edge, and all that lies beyond it is what masked taps read.
void StencilAnalyzer::checkZeroBorders() {
  if (llvm::all_of(PointMasks, [](const auto &M) { return M.empty(); }))
    return;
  std::array<std::optional<AffineExpr>, NumDims> Upper, Lower;
  std::string Problem = zeroBorderProblem(Upper, Lower);
  for (size_t I = 0; I != Shape.Points.size(); ++I) {
    if (!Problem.empty() && !PointMasks[I].empty())
      Shape.Points[I].Conditional = true;
    if (Problem.empty())
      for (const LimitedBound &B : PointMasks[I])
        Shape.Points[I].When.push_back(B.Bound);
  }
  if (!Problem.empty())
    return noteCodegenProblem(Problem);
  for (unsigned D = 0; D != NumDims; ++D)
    for (const auto &[Edge, Op] :
         {std::pair(Upper[D], BO_LT), std::pair(Lower[D], BO_GE)}) {
      if (!Edge)
        continue;
      if (!portable(*Edge))
        noteCodegenProblem("the zero border at " + quote(polyText(*Edge)) +
                           " depends on the launch");
      Shape.ReadLimits.push_back(
          CoordinateBound{D, Op, polyText(*Edge), Edge->getConstant()});
    }
}

/// Where the written points end (in output coordinates, coordinate plus
/// origin): \p Ends bounds them from above (coordinate < each), \p Starts
/// from below: the guard's bounds, the coordinates' start, the split's rows.
void StencilAnalyzer::writtenEdges(
    std::array<std::vector<AffineExpr>, NumDims> &Ends,
    std::array<std::vector<AffineExpr>, NumDims> &Starts) const {
  for (const LimitedBound &B : GuardBounds)
    if (B.IsInequality)
      (B.IsUpper ? Ends : Starts)[B.Bound.Dim].push_back(B.Limit);
  for (unsigned D = 0; D != NumDims; ++D)
    Starts[D].push_back(AffineExpr::constant(StoreOrigin[D]));
  if (Split) {
    Ends[0].push_back(Split->Divisor + AffineExpr::constant(StoreOrigin[0]));
    for (const AffineExpr &L : SplitLimits)
      if (std::optional<AffineExpr> Rows = L.divideExactly(Split->Divisor))
        Ends[1].push_back(*Rows + AffineExpr::constant(StoreOrigin[1]));
  }
}

/// Periodic borders (wrappedCoordinate): every read that moves along a
/// wrapped coordinate wraps it by the same period, and no zero border
/// masks it. The wrap is the offset only where the coordinate lies in
/// [0, period): with no origin along it, the written points' edge there
/// (PeriodBoundsPoints), or the launcher's check.
void StencilAnalyzer::checkPeriodicBorders() {
  std::array<std::optional<AffineExpr>, NumDims> Period;
  for (const auto &Wraps : PointWraps)
    for (unsigned D = 0; D != NumDims; ++D) {
      if (!Wraps[D])
        continue;
      if (Period[D] && *Period[D] != *Wraps[D])
        return noteCodegenProblem(std::string("the reads wrap ") + DimNames[D] +
                                  " by two periods");
      Period[D] = Wraps[D];
    }
  std::array<std::vector<AffineExpr>, NumDims> Ends, Starts;
  writtenEdges(Ends, Starts);
  for (unsigned D = 0; D != NumDims; ++D) {
    if (!Period[D])
      continue;
    std::string Axis = DimNames[D];
    if (StoreOrigin[D] != 0)
      return noteCodegenProblem("the reads wrap " + Axis +
                                ", which the output index offsets");
    for (size_t I = 0; I != Shape.Points.size(); ++I) {
      if (Shape.Points[I].Offset.get(D) != 0 && !PointWraps[I][D])
        return noteCodegenProblem(
            "a read moves along " + Axis + " without wrapping it by " +
            quote(polyText(*Period[D])) + " as the others do");
      for (const LimitedBound &B : PointMasks[I])
        if (B.Bound.Dim == D)
          return noteCodegenProblem("a zero border masks " + Axis +
                                    ", which the reads wrap");
    }
    Shape.Periods[D] = polyText(*Period[D]);
    Shape.PeriodBoundsPoints[D] = llvm::is_contained(Ends[D], *Period[D]);
  }
}

/// Why the masked reads are no zero borders (checkZeroBorders), or ""; the
/// borders' edges go into \p Upper and \p Lower.
std::string StencilAnalyzer::zeroBorderProblem(
    std::array<std::optional<AffineExpr>, NumDims> &Upper,
    std::array<std::optional<AffineExpr>, NumDims> &Lower) {
  std::array<std::vector<AffineExpr>, NumDims> Ends, Starts;
  writtenEdges(Ends, Starts);
  auto Where = [this](const StencilOffset &O) {
    std::string P;
    for (unsigned D = 0; D != NumDims; ++D)
      if (Shape.UsesDim[D])
        P += (P.empty() ? "" : ",") + std::to_string(O.get(D));
    return "the read at offset (" + P + ")";
  };
  for (size_t I = 0; I != Shape.Points.size(); ++I)
    for (const LimitedBound &B : PointMasks[I]) {
      unsigned D = B.Bound.Dim;
      int64_t O = Shape.Points[I].Offset.get(D);
      std::string Why = Where(Shape.Points[I].Offset) + " is 0 where '" +
                        B.Bound.describe() + "' fails, ";
      if (!B.IsInequality || (B.IsUpper ? O <= 0 : O >= 0))
        return Why + "which does not cut it where it reaches past the "
                     "written points";
      AffineExpr Edge = B.Limit + AffineExpr::constant(O);
      if (!llvm::is_contained(B.IsUpper ? Ends[D] : Starts[D], Edge))
        return Why + "which is not where the written points end";
      std::optional<AffineExpr> &Pad = B.IsUpper ? Upper[D] : Lower[D];
      if (Pad && *Pad != Edge)
        return Why + "another edge than the other masks'";
      Pad = Edge;
    }
  for (size_t I = 0; I != Shape.Points.size(); ++I)
    for (unsigned D = 0; D != NumDims; ++D)
      for (bool IsUpper : {true, false}) {
        const std::optional<AffineExpr> &Pad = IsUpper ? Upper[D] : Lower[D];
        int64_t O = Shape.Points[I].Offset.get(D);
        if (!Pad || (IsUpper ? O <= 0 : O >= 0))
          continue;
        if (llvm::none_of(PointMasks[I], [&](const LimitedBound &B) {
              return B.Bound.Dim == D && B.IsInequality &&
                     B.IsUpper == IsUpper &&
                     B.Limit + AffineExpr::constant(O) == *Pad;
            }))
          return Where(Shape.Points[I].Offset) +
                 " reaches past the zero border at " + DimNames[D] +
                 (IsUpper ? " < " : " >= ") + polyText(*Pad) + " with no mask";
      }
  return "";
}

//===----------------------------------------------------------------------===//
// Step 7: what code generation needs
//===----------------------------------------------------------------------===//

/// Whether \p P names only values a new kernel has too: parameters, globals
/// and numbers (not threadIdx, blockDim or loop variables).
bool StencilAnalyzer::portable(const AffineExpr &P) const {
  return !P.overflowed() && !P.mentionsAny([this](SymbolId S) {
    return Syms.info(S).Kind != SymKind::Value;
  });
}

void StencilAnalyzer::noteCodegenProblem(std::string Why) {
  if (Shape.CodegenProblem.empty())
    Shape.CodegenProblem = std::move(Why);
}

ArrayIndexing
StencilAnalyzer::indexingOf(const VarDecl *Array, const Layout &L,
                            const llvm::SmallVector<AffineExpr, 3> &Rest) {
  ArrayIndexing I;
  I.Array = Array;
  std::string Name = quote(Array->getNameAsString());
  for (size_t K = 0; K != L.Strides.size(); ++K) {
    std::array<std::string, 3> Strides;
    for (unsigned D = 0; D != NumDims; ++D) {
      const AffineExpr &S = L.Strides[K][D];
      if (!portable(S))
        noteCodegenProblem("the index of " + Name + " multiplies " +
                           DimNames[D] + " by " + quote(polyText(S)) +
                           ", which depends on the launch");
      if (!S.isZero())
        Strides[D] = polyText(S);
    }
    if (!portable(Rest[K]))
      noteCodegenProblem("the index of " + Name + " adds " +
                         quote(polyText(Rest[K])) +
                         ", which depends on the launch");
    I.Strides.push_back(Strides);
    I.Rest.push_back(polyText(Rest[K]));
  }
  return I;
}

/// The first read of an input fixes its base; every other read must agree,
/// so that one register cache (one address per point) serves all of them.
void StencilAnalyzer::recordInputIndexing(
    const VarDecl *Input, const Layout &L,
    const llvm::SmallVector<AffineExpr, 3> &Rest, const StencilOffset &Off) {
  llvm::SmallVector<AffineExpr, 3> Base;
  for (size_t K = 0; K != Rest.size(); ++K) {
    AffineExpr B = Rest[K];
    for (unsigned D = 0; D != NumDims; ++D)
      B = B - L.Strides[K][D] * Off.get(D);
    Base.push_back(B);
  }
  auto [It, New] = InputBases.try_emplace(Input, Base);
  if (New) {
    Shape.Indexing.push_back(indexingOf(Input, L, Base));
    return;
  }
  const ArrayIndexing *Known = nullptr;
  for (const ArrayIndexing &I : Shape.Indexing)
    if (I.Array == Input)
      Known = &I;
  ArrayIndexing Now = indexingOf(Input, L, Base);
  if (It->second != Base || !Known || Known->Strides != Now.Strides)
    noteCodegenProblem("input " + quote(Input->getNameAsString()) +
                       " is read with two different layouts");
}

void StencilAnalyzer::recordOutputIndexing() {
  // The output goes first; inputs were recorded while expanding reads.
  Shape.Indexing.insert(
      Shape.Indexing.begin(),
      indexingOf(Store->Addr->Root, StoreLayout, StoreLayout.Rest));
  for (unsigned D = 0; D != NumDims; ++D) {
    Shape.Origin[D] = StoreOrigin[D];
    if (!Shape.UsesDim[D] || (Split && D != 0))
      continue;
    if (!BlockFactor[D]) {
      noteCodegenProblem(std::string("coordinate ") + DimNames[D] +
                         " is not blockIdx." + DimNames[D] +
                         " * K + threadIdx." + DimNames[D]);
      continue;
    }
    const AffineExpr &K = *BlockFactor[D];
    bool IsBlockDim =
        K == AffineExpr::symbol(Syms.builtin(SymKind::BlockDim, D));
    if (!IsBlockDim && !K.getConstant())
      noteCodegenProblem(std::string("coordinate ") + DimNames[D] +
                         " steps by " + quote(polyText(K)) +
                         " per block, neither blockDim." + DimNames[D] +
                         " nor a constant");
    Shape.BlockFactor[D] = polyText(K);
  }
}

/// Whether \p S reads an input at an offset, directly or through locals.
bool StencilAnalyzer::containsInputRead(const Stmt *S,
                                        std::set<const VarDecl *> &Seen) const {
  if (!S)
    return false;
  if (const auto *E = dyn_cast<Expr>(S))
    if (InputReads.count(E->IgnoreParens()))
      return true;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
        V && V->hasLocalStorage() && Seen.insert(V).second) {
      if (containsInputRead(V->getInit(), Seen))
        return true;
      auto Values = AssignedValues.find(V);
      if (Values != AssignedValues.end())
        for (const Expr *Value : Values->second)
          if (containsInputRead(Value, Seen))
            return true;
    }
  for (const Stmt *Child : syntacticChildren(S))
    if (containsInputRead(Child, Seen))
      return true;
  return false;
}

/// A term added to the stored value that reads no input. Follows the
/// additive structure (+, -, casts, fma's addend, accumulators' updates);
/// a factor (`w * in[i]`) is no term. Other shapes carry Unknown weights,
/// which code generation refuses anyway.
std::optional<std::string>
StencilAnalyzer::readFreeTerm(const Expr *E, std::set<const VarDecl *> &Seen) {
  const Expr *Written = E; // Pinned with its parentheses (evalInt).
  E = E->IgnoreParens();
  std::set<const VarDecl *> ReadSeen;
  if (!containsInputRead(E, ReadSeen)) {
    Expr::EvalResult R;
    bool Zero = E->EvaluateAsRValue(R, Ctx) &&
                ((R.Val.isFloat() && R.Val.getFloat().isZero()) ||
                 (R.Val.isInt() && R.Val.getInt().isZero()));
    // A zero that another build may define otherwise (`+ BIAS`) is dropped
    // only with a pin.
    if (Zero && Shape.Pins.pin(Written, Ctx))
      return std::nullopt;
    return sourceText(E);
  }
  if (InputReads.count(E))
    return std::nullopt;
  if (const auto *Cast = dyn_cast<CastExpr>(E)) {
    if (const auto *Ref =
            dyn_cast<DeclRefExpr>(Cast->getSubExpr()->IgnoreParens()))
      if (const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
          V && V->hasLocalStorage()) {
        if (!Seen.insert(V).second)
          return std::nullopt;
        if (V->getInit())
          if (auto T = readFreeTerm(V->getInit(), Seen))
            return T;
        auto Values = AssignedValues.find(V);
        if (Values != AssignedValues.end())
          for (const Expr *Value : Values->second)
            if (auto T = readFreeTerm(Value, Seen))
              return T;
        return std::nullopt;
      }
    return readFreeTerm(Cast->getSubExpr(), Seen);
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    return readFreeTerm(UO->getSubExpr(), Seen);
  auto ReadingSide = [&](const Expr *A, const Expr *B) -> const Expr * {
    std::set<const VarDecl *> S1, S2;
    bool InA = containsInputRead(A, S1), InB = containsInputRead(B, S2);
    return InA && !InB ? A : InB && !InA ? B : nullptr;
  };
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->getOpcode() == BO_Add || BO->getOpcode() == BO_Sub) {
      if (auto T = readFreeTerm(BO->getLHS(), Seen))
        return T;
      return readFreeTerm(BO->getRHS(), Seen);
    }
    if (BO->getOpcode() == BO_Mul || BO->getOpcode() == BO_Div)
      if (const Expr *Side = ReadingSide(BO->getLHS(), BO->getRHS()))
        return readFreeTerm(Side, Seen);
    return std::nullopt;
  }
  if (const auto *Call = dyn_cast<CallExpr>(E); Call && isFmaCall(Call)) {
    if (auto T = readFreeTerm(Call->getArg(2), Seen))
      return T;
    if (const Expr *Side = ReadingSide(Call->getArg(0), Call->getArg(1)))
      return readFreeTerm(Side, Seen);
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Putting it together
//===----------------------------------------------------------------------===//

StencilResult StencilAnalyzer::run() {
  bool Ok = checkKernel() && scanBody();
  if (Ok) {
    computeTaint();
    analyzeLoops();
    Ok = checkCalls() && checkGlobalWrites();
  }
  if (Ok) {
    classifyAccesses();
    Ok = findStore() && analyzeStoreLayout() && checkInputs() && expandReads();
  }
  StencilResult Result;
  if (!Ok) {
    Result.Refusal = Refusal;
    Result.Loc = RefusalLoc;
    return Result;
  }
  extractGuard();
  checkZeroBorders();
  checkPeriodicBorders();
  recordOutputIndexing();
  if (Split) {
    Shape.Split = LinearSplit{polyText(Split->Divisor), {}};
    for (const AffineExpr &L : SplitLimits) {
      if (!portable(L))
        noteCodegenProblem("the guard bounds the thread index by " +
                           quote(polyText(L)) +
                           ", which depends on the launch");
      Shape.Split->Limits.push_back(polyText(L));
    }
  }
  {
    std::set<const VarDecl *> Seen;
    const auto *Assign = dyn_cast_or_null<BinaryOperator>(parent(Store->E));
    if (Assign && Assign->getOpcode() == BO_Assign)
      if (std::optional<std::string> Term =
              readFreeTerm(Assign->getRHS(), Seen))
        Shape.ReadFreeTerm = *Term;
  }

  const VarDecl *Out = Store->Addr->Root;
  Shape.Kernel = &Kernel;
  Shape.Output = Out;
  Shape.StoreLoc = Store->E->getBeginLoc();
  QualType T = Out->getType();
  if (T->isPointerType())
    T = T->getPointeeType();
  T = QualType(T->getBaseElementTypeUnsafe(), 0);
  Shape.ElementType = T.getUnqualifiedType().getAsString();
  if (T->isSpecificBuiltinType(BuiltinType::Float))
    Shape.Element = ElementKind::Float;
  else if (T->isSpecificBuiltinType(BuiltinType::Double))
    Shape.Element = ElementKind::Double;
  // Distinct arrays never overlap; pointers do unless all are __restrict__.
  auto Restricted = [](const ValueDecl *V) {
    return !V->getType()->isPointerType() || V->getType().isRestrictQualified();
  };
  Shape.NoAlias = Restricted(Out) && llvm::all_of(Shape.Inputs, Restricted);
  Result.Shape = std::move(Shape);
  return Result;
}

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

std::string StencilCoefficient::describe() const {
  std::string Prefix = Scale == 1.0    ? ""
                       : Scale == -1.0 ? "-"
                                       : formatNumber(Scale) + "*";
  switch (K) {
  case Literal:
    return formatNumber(Scale);
  case Constant:
  case Parameter:
    return Prefix + SourceName;
  case FilterElement: {
    std::string S = Prefix + SourceName;
    if (FilterIndex.empty())
      return S + "[?]";
    for (int64_t I : FilterIndex)
      S += "[" + std::to_string(I) + "]";
    return S;
  }
  case Unknown:
    break;
  }
  return "?";
}

std::string CoordinateBound::describe() const {
  return std::string(DimNames[Dim]) + " " + opSpelling(Op) + " " + Limit;
}

std::string
ArrayIndexing::element(const std::array<std::string, 3> &Coordinates) const {
  std::string Text = Array->getNameAsString();
  for (size_t K = 0; K != Strides.size(); ++K) {
    std::string Sub;
    for (unsigned D = 0; D != NumDims; ++D) {
      if (Strides[K][D].empty())
        continue;
      const std::string &S = Strides[K][D];
      bool Simple = llvm::all_of(
          S, [](char C) { return llvm::isAlnum(C) || C == '_' || C == '.'; });
      std::string Term = S == "1" ? Coordinates[D]
                         : Simple ? S + " * " + Coordinates[D]
                                  : "(" + S + ") * " + Coordinates[D];
      Sub += (Sub.empty() ? "" : " + ") + Term;
    }
    if (Rest[K] != "0")
      Sub += (Sub.empty() ? "" : " + ") + ("(" + Rest[K] + ")");
    Text += "[" + (Sub.empty() ? "0" : Sub) + "]";
  }
  return Text;
}

int64_t StencilShape::radius() const {
  int64_t R = 0;
  for (const StencilOffset &O : Offsets)
    for (unsigned D = 0; D != NumDims; ++D)
      R = std::max(R, O.get(D) < 0 ? -O.get(D) : O.get(D));
  return R;
}

StencilResult analyzeStencil(const FunctionDecl &Kernel) {
  return StencilAnalyzer(Kernel).run();
}

namespace {

/// The extent of the offsets in one dimension.
struct Extent {
  int64_t Min = 0;
  int64_t Max = 0;
  uint64_t size() const { return uint64_t(Max - Min) + 1; }
};

static std::string shapeName(const StencilShape &S, std::vector<unsigned> &Dims,
                             bool &ListPoints) {
  std::array<Extent, NumDims> Ext;
  for (unsigned D : Dims) {
    Ext[D].Min = Ext[D].Max = S.Offsets.front().get(D);
    for (const StencilOffset &O : S.Offsets) {
      Ext[D].Min = std::min(Ext[D].Min, O.get(D));
      Ext[D].Max = std::max(Ext[D].Max, O.get(D));
    }
  }
  uint64_t BoxSize = 1;
  for (unsigned D : Dims)
    BoxSize *= Ext[D].size();
  bool Symmetric = llvm::all_of(Dims, [&](unsigned D) {
    return Ext[D].Min == -Ext[D].Max && Ext[D].Max == Ext[Dims[0]].Max;
  });
  std::string Radius = " radius " + std::to_string(S.radius());
  // Offsets are distinct, so a full count inside the extents is the box.
  if (BoxSize == S.Offsets.size()) {
    if (Symmetric)
      return "box" + Radius;
    std::string Sizes, Ranges;
    for (unsigned D : Dims) {
      Sizes += (Sizes.empty() ? "" : "x") + std::to_string(Ext[D].size());
      Ranges += std::string(Ranges.empty() ? "" : ", ") + DimNames[D] + " " +
                std::to_string(Ext[D].Min) + ".." + std::to_string(Ext[D].Max);
    }
    return "box " + Sizes + " (" + Ranges + ")";
  }
  // A star: the centre and full arms [-r, r] on every axis.
  bool OnAxes = llvm::all_of(S.Offsets, [&](const StencilOffset &O) {
    return llvm::count_if(Dims, [&](unsigned D) { return O.get(D) != 0; }) <= 1;
  });
  uint64_t StarSize = 1;
  for (unsigned D : Dims)
    StarSize += Ext[D].size() - 1;
  if (OnAxes && Symmetric && StarSize == S.Offsets.size())
    return "star" + Radius;
  ListPoints = true;
  return "irregular" + Radius;
}

} // namespace

std::string describeOffsets(const StencilShape &S) {
  std::vector<unsigned> Dims;
  for (unsigned D = 0; D != NumDims; ++D)
    if (S.UsesDim[D])
      Dims.push_back(D);
  if (S.Offsets.empty() || Dims.empty())
    return "no offsets";
  constexpr size_t MaxListed = 27;
  bool Irregular = false;
  std::string Out = std::to_string(Dims.size()) + "D " +
                    shapeName(S, Dims, Irregular) + ": " +
                    std::to_string(S.Offsets.size()) +
                    (S.Offsets.size() == 1 ? " point" : " points");
  if (S.Offsets.size() <= MaxListed || Irregular) {
    size_t N = 0;
    for (const StencilOffset &O : S.Offsets) {
      if (N++ == MaxListed) {
        Out += " ...";
        break;
      }
      std::string P;
      for (unsigned D : Dims)
        P += (P.empty() ? "" : ",") + std::to_string(O.get(D));
      Out += " (" + P + ")";
    }
  }
  Out += " into " + S.Output->getNameAsString() + " from ";
  for (size_t I = 0; I != S.Inputs.size(); ++I)
    Out += (I ? ", " : "") + S.Inputs[I]->getNameAsString();
  if (S.Split)
    Out += "; x and y split from the thread index by " + S.Split->Divisor;
  for (unsigned D = 0; D != NumDims; ++D)
    if (!S.Periods[D].empty())
      Out += std::string("; periodic in ") + DimNames[D] + " (period " +
             S.Periods[D] + ")";
  if (!S.ReadLimits.empty()) {
    std::vector<std::string> Edges;
    for (const CoordinateBound &B : S.ReadLimits)
      Edges.push_back(B.describe());
    Out +=
        "; zero borders: reads outside " + llvm::join(Edges, ", ") + " give 0";
  }
  return Out;
}

} // namespace cuda_rewrite
