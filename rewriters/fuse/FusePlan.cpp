//===- FusePlan.cpp - Which stages of a fuse block run together -----------===//

#include "rewriters/fuse/FusePlan.h"
#include "analysis/CudaBuiltins.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/fuse/FuseCostModel.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/CharInfo.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <climits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

using namespace clang;

namespace cuda_rewrite {

namespace {

const char *const AxisName[] = {"x", "y", "z"};

//===-- What a stage's body may do ----------------------------------------===//

/// Finds what a stage's body (or a function it calls) does that the fused
/// kernel could not repeat at another thread or several times: built-ins
/// other than in the coordinates' declarations, barriers, warp
/// primitives, atomics, shared memory, device-side launches.
class BodyCheck : public RecursiveASTVisitor<BodyCheck> {
public:
  explicit BodyCheck(const StageAccess &Access) : Access(Access) {}

  bool TraverseVarDecl(VarDecl *V) {
    if (llvm::is_contained(Access.CoordinateVar, V))
      return true; // The prologue: the fused kernel supplies the value.
    if (V->hasAttr<CUDASharedAttr>())
      note("it declares shared memory ('" + V->getNameAsString() + "')");
    // A pointer or reference could write memory StageAccess does not see.
    if (!isa<ParmVarDecl>(V) &&
        (V->getType()->isPointerType() || V->getType()->isReferenceType()))
      note("it declares a pointer or reference ('" + V->getNameAsString() +
           "')");
    return RecursiveASTVisitor::TraverseVarDecl(V);
  }

  /// Stores go to a buffer parameter's element (StageAccess checks which)
  /// or to a local variable; anything else writes memory the plan does not
  /// see.
  bool VisitBinaryOperator(BinaryOperator *BO) {
    if (BO->isAssignmentOp())
      checkStoreTo(BO->getLHS());
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator *UO) {
    if (UO->isIncrementDecrementOp())
      checkStoreTo(UO->getSubExpr());
    return true;
  }

  void checkStoreTo(const Expr *LHS) {
    LHS = LHS->IgnoreParenImpCasts();
    if (const auto *Ref = dyn_cast<DeclRefExpr>(LHS)) {
      const auto *V = dyn_cast<VarDecl>(Ref->getDecl());
      if (V && V->hasLocalStorage() && !V->getType()->isReferenceType())
        return;
    }
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(LHS))
      if (const auto *Ref =
              dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts()))
        if (isa<ParmVarDecl>(Ref->getDecl()) && InKernel)
          return;
    note("it writes memory other than its buffers' elements and its locals");
  }

  bool VisitExpr(Expr *E) {
    if (cudaBuiltin(E))
      note("it reads a thread or block index outside its coordinates' "
           "declarations");
    return true;
  }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *) {
    note("it launches a kernel");
    return true;
  }

  bool VisitCallExpr(CallExpr *Call) {
    const FunctionDecl *F = Call->getDirectCallee();
    if (!F) {
      note("it calls a function through a pointer");
      return true;
    }
    // Pointers and references passed on could be written through.
    for (unsigned I = 0; I != Call->getNumArgs(); ++I) {
      bool ByReference = I < F->getNumParams() &&
                         F->getParamDecl(I)->getType()->isReferenceType();
      if (ByReference || Call->getArg(I)->getType()->isPointerType()) {
        note("it passes a pointer or reference to '" + F->getNameAsString() +
             "'");
        return true;
      }
    }
    llvm::StringRef Name = F->getIdentifier() ? F->getName() : "";
    if (Name.starts_with("__sync") || Name.starts_with("__shfl") ||
        Name.starts_with("__ballot") || Name.starts_with("__activemask") ||
        Name.starts_with("__any") || Name.starts_with("__all") ||
        Name.starts_with("__match") || Name.starts_with("__reduce") ||
        Name.starts_with("atomic") || Name.starts_with("__nanosleep")) {
      note("it calls '" + Name.str() + "'");
      return true;
    }
    if (F->hasBody() && Visited.insert(F->getCanonicalDecl()).second &&
        !F->getASTContext().getSourceManager().isInSystemHeader(
            F->getLocation())) {
      bool Was = InKernel;
      InKernel = false; // A callee's parameters are not the buffers.
      TraverseStmt(F->getDefinition()->getBody());
      InKernel = Was;
    }
    return true;
  }

  std::string Why;

private:
  void note(std::string Reason) {
    if (Why.empty())
      Why = std::move(Reason);
  }

  const StageAccess &Access;
  std::set<const FunctionDecl *> Visited;
  bool InKernel = true;
};

//===-- Bounds ------------------------------------------------------------===//

bool sameArg(const HostBound &A, const HostBound &B) {
  return A.Arg == B.Arg && A.LaunchExtent == B.LaunchExtent;
}

/// A / B rounded down (B > 0).
int64_t floorDiv(int64_t A, int64_t B) {
  return A >= 0 ? A / B : -((-A + B - 1) / B);
}

/// Some bound of \p Of along the same argument satisfies \p Holds.
template <typename Pred>
bool anyBound(const std::vector<HostBound> &Of, const HostBound &Like,
              Pred Holds) {
  return llvm::any_of(Of, [&](const HostBound &B) {
    return sameArg(B, Like) && Holds(B.Constant);
  });
}

/// Whether every point a read reaches along one axis lies in the
/// producer's domain (see FusePlan.h), with [KLo, KHi] the offsets the
/// read reaches from the consumer's point, and the clamp's bounds (both
/// inclusive) where it is clamped.
bool readInDomain(int64_t KLo, int64_t KHi, const AxisDomain &Consumer,
                  const AxisDomain &Producer,
                  const std::optional<HostBound> &ClampLo,
                  const std::optional<HostBound> &ClampHi) {
  for (const HostBound &P : Producer.Lower) {
    bool ByConsumer = anyBound(
        Consumer.Lower, P, [&](int64_t C) { return C + KLo >= P.Constant; });
    bool ByClamp =
        ClampLo && sameArg(*ClampLo, P) && ClampLo->Constant >= P.Constant;
    if (!ByConsumer && !ByClamp)
      return false;
  }
  for (const HostBound &P : Producer.Upper) {
    bool ByConsumer = anyBound(
        Consumer.Upper, P, [&](int64_t C) { return C + KHi <= P.Constant; });
    bool ByClamp =
        ClampHi && sameArg(*ClampHi, P) && ClampHi->Constant + 1 <= P.Constant;
    if (!ByConsumer && !ByClamp)
      return false;
  }
  return true;
}

//===-- Building the plan -------------------------------------------------===//

class Planner {
public:
  Planner(const StageGraph &Graph, ASTContext &Ctx, GroupCostFn GroupCost)
      : Graph(Graph), Ctx(Ctx), GroupCost(GroupCost) {}

  FusePlan run() {
    unsigned N = unsigned(Graph.Stages.size());
    Fusable.resize(N);
    Whys.resize(N);
    for (unsigned I = 0; I != N; ++I)
      Fusable[I] = stage(I, Whys[I]);
    // Without a cost, the launch order's fewest kernels: the calibration
    // measures the model's terms against those fixed groups.
    std::vector<std::vector<unsigned>> Orders = {launchOrder()};
    if (GroupCost) {
      Orders.push_back(levelOrder(Graph));
      Orders.push_back(consumersNextOrder(Graph));
    }
    std::optional<FusePlan> Best;
    double BestCost = 0;
    for (const std::vector<unsigned> &Order : Orders) {
      if (Best && llvm::is_contained(Tried, Order))
        continue;
      Tried.push_back(Order);
      double Cost = 0;
      FusePlan P = planInOrder(Order, Cost);
      // Another order must be cheaper by more than rounding to win.
      if (!Best || Cost < BestCost - 1e-9 * std::abs(BestCost)) {
        Best = std::move(P);
        BestCost = Cost;
      }
    }
    llvm::sort(Best->Unfused, [](const UnfusedStage &A, const UnfusedStage &B) {
      return A.Index < B.Index;
    });
    return std::move(*Best);
  }

private:
  /// The most stages DP-Fusion puts in one group (the samples' largest
  /// useful groups have about 20).
  static constexpr unsigned kMaxGroupStages = 24;

  /// The stages in the order they are launched.
  std::vector<unsigned> launchOrder() const {
    std::vector<unsigned> Order(Graph.Stages.size());
    std::iota(Order.begin(), Order.end(), 0u);
    return Order;
  }

  /// DP-Fusion (PolyMage-GPU section 6) over \p Order, a topological order
  /// of the stage graph: the partition into consecutive groups of least
  /// summed cost (without a cost, the fewest kernels); a stage alone stays
  /// its launch. Then stages left alone join the group they read from
  /// where they can (hoistIntoGroups). \p Cost receives the plan's cost.
  FusePlan planInOrder(const std::vector<unsigned> &Order, double &Cost) {
    FusePlan P;
    std::map<std::pair<unsigned, unsigned>, FuseGroup> Groups;
    auto SegmentCost = [&](unsigned Begin,
                           unsigned End) -> std::optional<double> {
      if (End - Begin == 1)
        return singleCost(Order[Begin]);
      if (End - Begin > kMaxGroupStages)
        return std::nullopt;
      std::vector<FuseStage> Stages;
      for (unsigned I = Begin; I != End; ++I) {
        if (!Fusable[Order[I]])
          return std::nullopt;
        Stages.push_back(*Fusable[Order[I]]);
      }
      std::string Unused;
      std::optional<FuseGroup> G = group(std::move(Stages), Unused);
      if (!G)
        return std::nullopt;
      std::optional<double> C = GroupCost ? GroupCost(*G) : 1.0;
      if (C)
        Groups.emplace(std::make_pair(Begin, End), std::move(*G));
      return C;
    };
    std::vector<FusionSegment> Segments =
        dpFusion(unsigned(Order.size()), SegmentCost);
    for (const FusionSegment &Seg : Segments) {
      if (Seg.End - Seg.Begin == 1)
        P.Unfused.push_back(
            {Order[Seg.Begin], whyAlone(Order, Segments, Seg.Begin)});
      else
        P.Groups.push_back(std::move(Groups.at({Seg.Begin, Seg.End})));
    }
    std::vector<unsigned> Moved = Order;
    moveIntoGroups(P, Moved);
    Cost = 0;
    for (const FuseGroup &G : P.Groups)
      Cost += GroupCost ? GroupCost(G).value_or(0) : 1.0;
    for (const UnfusedStage &U : P.Unfused)
      Cost += singleCost(U.Index);
    P.Schedule = schedule(P, Moved);
    return P;
  }

  /// What a stage costs as its own launch: its cost as a group of one, the
  /// same in every order (0 where the model has none: a stage that cannot
  /// be fused runs alone in every plan).
  double singleCost(unsigned I) {
    if (!GroupCost)
      return 1.0;
    if (!Fusable[I])
      return 0;
    auto [It, New] = SingleCosts.try_emplace(I, 0.0);
    if (New) {
      std::string Unused;
      if (std::optional<FuseGroup> G = group({*Fusable[I]}, Unused))
        It->second = GroupCost(*G).value_or(0);
    }
    return It->second;
  }

  /// Why the stage at \p At of \p Order stays alone: its own reason, or
  /// why it cannot join the segment of \p Segments before or after it, or
  /// that joining one costs more.
  std::string whyAlone(const std::vector<unsigned> &Order,
                       const std::vector<FusionSegment> &Segments,
                       unsigned At) {
    unsigned I = Order[At];
    if (!Fusable[I])
      return Whys[I];
    // The stages of the segment around \p Pos, all fusable, or none.
    auto Around = [&](unsigned Pos) {
      std::vector<FuseStage> Stages;
      for (const FusionSegment &Seg : Segments)
        if (Seg.Begin <= Pos && Pos < Seg.End)
          for (unsigned J = Seg.Begin; J != Seg.End; ++J) {
            if (!Fusable[Order[J]])
              return std::vector<FuseStage>();
            Stages.push_back(*Fusable[Order[J]]);
          }
      return Stages;
    };
    std::vector<FuseStage> Before = At > 0 ? Around(At - 1)
                                           : std::vector<FuseStage>(),
                           After = At + 1 < Order.size()
                                       ? Around(At + 1)
                                       : std::vector<FuseStage>();
    std::string WhyBefore, WhyAfter;
    if (!Before.empty()) {
      Before.push_back(*Fusable[I]);
      if (group(Before, WhyBefore))
        return joiningCostsMore();
    }
    if (!After.empty()) {
      After.insert(After.begin(), *Fusable[I]);
      if (group(After, WhyAfter))
        return joiningCostsMore();
    }
    if (!After.empty())
      return (After.size() == 2 ? "the next stage cannot join it: "
                                : "the stages after it cannot join it: ") +
             WhyAfter;
    if (!Before.empty())
      return "it cannot join the stages before it: " + WhyBefore;
    return "no neighbouring stage to fuse it with";
  }

  std::string joiningCostsMore() const {
    return GroupCost ? "the cost model finds it cheaper as a kernel of its "
                       "own than fused with its neighbours"
                     : "fusing it with its neighbours saves no kernel";
  }

  /// The plan's groups and launches in the order they run: that of their
  /// stages in \p Order, where each group's stages are consecutive.
  static std::vector<FuseStep> schedule(const FusePlan &P,
                                        const std::vector<unsigned> &Order) {
    std::map<unsigned, FuseStep> StepOf;
    for (unsigned G = 0; G != P.Groups.size(); ++G)
      for (const FuseStage &S : P.Groups[G].Stages)
        StepOf[S.Index] = FuseStep{true, G};
    for (const UnfusedStage &U : P.Unfused)
      StepOf[U.Index] = FuseStep{false, U.Index};
    std::vector<FuseStep> Steps;
    for (unsigned I : Order) {
      const FuseStep &Step = StepOf.at(I);
      if (Steps.empty() || Steps.back().IsGroup != Step.IsGroup ||
          Steps.back().Index != Step.Index)
        Steps.push_back(Step);
    }
    return Steps;
  }

  /// PolyMage groups stages over their DAG, not one order of it: a stage
  /// left alone joins the group that produces what it reads, at its end
  /// (pyramid's blendLaplacian, launched after every up level), or the
  /// group that reads what it produces, at its start, where it depends on
  /// no stage placed in between, nor any stage in between on it
  /// (StageGraph's edges of any kind); then moving it there changes nothing
  /// another launch sees. \p Order, which keeps every group's stages
  /// consecutive, follows each move, so that later moves see where the
  /// earlier ones put the stages. With a cost, only where the joined group
  /// costs no more than the two apart.
  void moveIntoGroups(FusePlan &P, std::vector<unsigned> &Order) {
    for (auto It = P.Unfused.begin(); It != P.Unfused.end();) {
      if (join(P, It->Index, Order, /*AtEnd=*/true) ||
          join(P, It->Index, Order, /*AtEnd=*/false))
        It = P.Unfused.erase(It);
      else
        ++It;
    }
  }

  /// Moves stage \p U into the group that produces what it reads (\p AtEnd)
  /// or that reads what it produces, if that is legal and no dearer.
  bool join(FusePlan &P, unsigned U, std::vector<unsigned> &Order, bool AtEnd) {
    if (!Fusable[U])
      return false;
    std::vector<unsigned> Position(Order.size());
    for (unsigned I = 0; I != Order.size(); ++I)
      Position[Order[I]] = I;
    auto Span = [&](const FuseGroup &G) {
      unsigned First = UINT_MAX, Last = 0;
      for (const FuseStage &S : G.Stages) {
        First = std::min(First, Position[S.Index]);
        Last = std::max(Last, Position[S.Index]);
      }
      return std::make_pair(First, Last);
    };
    // The nearest group on the chosen side with a flow edge to (from) U.
    FuseGroup *Target = nullptr;
    unsigned Nearest = 0;
    for (FuseGroup &G : P.Groups) {
      auto [First, Last] = Span(G);
      if (AtEnd ? Last > Position[U] : First < Position[U])
        continue;
      for (const FuseStage &S : G.Stages)
        for (const StageGraph::Edge &E : Graph.Edges) {
          bool Flows = E.Kind == StageGraph::Order::Flow &&
                       (AtEnd ? E.From == S.Index && E.To == U
                              : E.From == U && E.To == S.Index);
          unsigned Distance = AtEnd ? Position[U] - Position[S.Index]
                                    : Position[S.Index] - Position[U];
          if (Flows && (!Target || Distance < Nearest)) {
            Target = &G;
            Nearest = Distance;
          }
        }
    }
    if (!Target)
      return false;
    auto [First, Last] = Span(*Target);
    // Nothing placed between may be ordered with U.
    for (const StageGraph::Edge &E : Graph.Edges) {
      unsigned Other = E.To == U ? E.From : E.From == U ? E.To : U;
      if (Other == U)
        continue;
      unsigned At = Position[Other];
      if (AtEnd ? At > Last && At < Position[U]
                : At < First && At > Position[U])
        return false;
    }
    std::vector<FuseStage> Trial = Target->Stages;
    if (AtEnd)
      Trial.push_back(*Fusable[U]);
    else
      Trial.insert(Trial.begin(), *Fusable[U]);
    std::string Why;
    std::optional<FuseGroup> Joined = group(Trial, Why);
    if (!Joined)
      return false;
    if (GroupCost) {
      std::optional<double> Both = GroupCost(*Joined),
                            Apart = GroupCost(*Target);
      if (!Both || (Apart && *Both > *Apart + singleCost(U)))
        return false;
    }
    *Target = std::move(*Joined);
    Order.erase(Order.begin() + Position[U]);
    // Positions past U's old place moved back by one.
    unsigned Where = AtEnd ? Last + 1 : First - 1;
    Order.insert(Order.begin() + Where, U);
    return true;
  }

  /// Stage \p I as the fused kernel would compute it, or why it cannot be.
  std::optional<FuseStage> stage(unsigned I, std::string &Why) {
    FuseStage S;
    S.Index = I;
    S.Launch = Graph.Stages[I].Launch;
    const FunctionDecl *K = S.Launch->getDirectCallee();
    if (!K || !K->getDefinition() || !K->getDefinition()->hasBody()) {
      Why = "its kernel's body is not visible here";
      return std::nullopt;
    }
    S.Kernel = K->getDefinition();
    // Its body is copied next to the enclosing function: names it uses
    // unqualified must mean the same there.
    if (!S.Kernel->getDeclContext()->getRedeclContext()->isTranslationUnit()) {
      Why = "its kernel is declared in a namespace or class";
      return std::nullopt;
    }
    if (S.Kernel->isTemplateInstantiation() || S.Kernel->isTemplated()) {
      Why = "its kernel is a template";
      return std::nullopt;
    }
    S.Access = analyzeStageAccess(*S.Kernel);
    if (!S.Access) {
      Why = S.Access.Refusal;
      return std::nullopt;
    }
    for (unsigned D : {0u, 1u})
      if (S.Access.Form[D] != CoordinateForm::Global) {
        Why = std::string("its ") + AxisName[D] +
              " coordinate is not blockIdx * blockDim + threadIdx";
        return std::nullopt;
      }
    BodyCheck Check(S.Access);
    Check.TraverseStmt(S.Kernel->getBody());
    if (!Check.Why.empty()) {
      Why = Check.Why;
      return std::nullopt;
    }
    const CallExpr *Config = S.Launch->getConfig();
    if (Config->getNumArgs() > 2 && !isZero(Config->getArg(2))) {
      Why = "it is launched with dynamic shared memory";
      return std::nullopt;
    }
    // The launcher evaluates the grid, block and stream once, the fallback
    // again.
    for (unsigned I = 0; I != Config->getNumArgs(); ++I)
      if (!evaluatesOnlyItsValue(Config->getArg(I))) {
        Why = "its launch configuration ('" +
              sourceText(Ctx, Config->getArg(I)->getSourceRange()) +
              "') may have side effects";
        return std::nullopt;
      }
    for (unsigned P = 0; P != S.Kernel->getNumParams(); ++P) {
      if (P >= S.Launch->getNumArgs()) {
        Why = "its launch passes fewer arguments than the kernel takes";
        return std::nullopt;
      }
      const ParmVarDecl *Param = S.Kernel->getParamDecl(P);
      const Expr *Arg = S.Launch->getArg(P);
      if (Param->getName().empty()) {
        Why = "parameter " + std::to_string(P + 1) + " has no name";
        return std::nullopt;
      }
      // The launcher evaluates each argument once, and the fallback again:
      // only arguments without side effects may be shared that way.
      if (Arg->HasSideEffects(Ctx)) {
        Why = "argument " + std::to_string(P + 1) + " ('" +
              sourceText(Ctx, Arg->getSourceRange()) +
              "') may have side effects";
        return std::nullopt;
      }
      if (Param->getType()->isPointerType() && !namesBuffer(Arg)) {
        Why = "argument " + std::to_string(P + 1) +
              " is a pointer expression, not a buffer's name";
        return std::nullopt;
      }
      S.ArgText.push_back(sourceText(Ctx, Arg->getSourceRange()));
    }
    if (!domain(S, Why))
      return std::nullopt;
    return S;
  }

  bool isZero(const Expr *E) const {
    Expr::EvalResult R;
    return !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) &&
           R.Val.getInt() == 0;
  }

  static bool namesBuffer(const Expr *Arg) {
    Arg = Arg->IgnoreParenImpCasts();
    if (const auto *Cast = dyn_cast<ExplicitCastExpr>(Arg))
      Arg = Cast->getSubExpr()->IgnoreParenImpCasts();
    return isa<DeclRefExpr>(Arg) || isa<MemberExpr>(Arg);
  }

  /// A `param + k` of stage \p S in host terms.
  std::optional<HostBound> host(const FuseStage &S,
                                const std::optional<ParamPlusConstant> &V) {
    if (!V)
      return std::nullopt;
    HostBound B;
    B.Constant = V->Constant;
    if (V->Param) {
      unsigned I = V->Param->getFunctionScopeIndex();
      if (I >= S.ArgText.size())
        return std::nullopt;
      B.Arg = S.ArgText[I];
    }
    return B;
  }

  /// The stage's domain from its guards (see AxisDomain).
  bool domain(FuseStage &S, std::string &Why) {
    for (unsigned D : {0u, 1u}) {
      S.Domain[D].Lower.push_back({"", 0}); // Global coordinates are >= 0.
      bool HasUpper = false;
      for (const StageBound &B : S.Access.Bounds) {
        if (B.Axis != D)
          continue;
        std::optional<HostBound> H = host(S, B.LimitValue);
        if (!H) {
          Why = "its guard's bound '" + B.Limit +
                "' is not a parameter plus a constant";
          return false;
        }
        H->Constant += B.Add;
        (B.Upper ? S.Domain[D].Upper : S.Domain[D].Lower).push_back(*H);
        HasUpper |= B.Upper;
      }
      if (!HasUpper)
        S.Domain[D].Upper.push_back({"", 0, /*LaunchExtent=*/true});
    }
    for (const StageBound &B : S.Access.Bounds)
      if (B.Axis == 2) {
        Why = "it guards its z coordinate";
        return false;
      }
    return true;
  }

  /// Argument \p I of a launch's configuration as written ("0" where it is
  /// left out: the default stream, as an explicit 0 is).
  static std::string configText(const FuseStage &S, unsigned I,
                                ASTContext &Ctx) {
    const CallExpr *Config = S.Launch->getConfig();
    if (I >= Config->getNumArgs() || isa<CXXDefaultArgExpr>(Config->getArg(I)))
      return "0";
    return sourceText(Ctx, Config->getArg(I)->getSourceRange());
  }

  /// The block and stream of a launch, as written.
  static std::string blockAndStream(const FuseStage &S, ASTContext &Ctx) {
    return configText(S, 1, Ctx) + ";" + configText(S, 3, Ctx);
  }

  /// A stride's names as host arguments, sorted by their text; nullopt if
  /// one is neither a parameter nor a local constant computed from
  /// parameters (camera's `const int W2 = W / 2;`), which is then its value
  /// over the host arguments and \p Derived is set.
  static std::optional<std::vector<HostExpr>>
  hostStride(const FuseStage &S, const std::vector<const ValueDecl *> &Names,
             bool *Derived = nullptr) {
    std::vector<HostExpr> Factors;
    for (const ValueDecl *N : Names) {
      if (const auto *P = dyn_cast_or_null<ParmVarDecl>(N)) {
        if (P->getFunctionScopeIndex() >= S.ArgText.size())
          return std::nullopt;
        Factors.push_back(
            HostExpr::argument(S.ArgText[P->getFunctionScopeIndex()]));
        continue;
      }
      std::optional<HostExpr> Value = localValue(S, N, 0);
      if (!Value || !Derived)
        return std::nullopt;
      *Derived = true;
      Factors.push_back(*Value);
    }
    llvm::sort(Factors, [](const HostExpr &A, const HostExpr &B) {
      return A.describe() < B.describe();
    });
    return Factors;
  }

  /// A local `const` integer of \p S initialized from parameters, integer
  /// constants and other such locals with + - * / % and shifts, over the
  /// host arguments (`(W / 2)`); nullopt otherwise.
  static std::optional<HostExpr>
  localValue(const FuseStage &S, const ValueDecl *N, unsigned Depth) {
    const auto *V = dyn_cast_or_null<VarDecl>(N);
    if (!V || Depth > 4 || !V->isLocalVarDecl() ||
        !V->getType().isConstQualified() || !V->getType()->isIntegerType() ||
        !V->getInit())
      return std::nullopt;
    return hostValue(S, V->getInit(), Depth + 1);
  }

  static std::optional<HostExpr> hostValue(const FuseStage &S, const Expr *E,
                                           unsigned Depth) {
    E = E->IgnoreParenImpCasts();
    // A literal from a macro would be the macro's value in this build only.
    if (const auto *L = dyn_cast<IntegerLiteral>(E);
        L && !L->getBeginLoc().isMacroID())
      return HostExpr::constant(L->getValue().getSExtValue());
    if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
      if (const auto *P = dyn_cast<ParmVarDecl>(Ref->getDecl())) {
        if (P->getFunctionScopeIndex() >= S.ArgText.size() ||
            !P->getType()->isIntegerType())
          return std::nullopt;
        return HostExpr::argument(S.ArgText[P->getFunctionScopeIndex()]);
      }
      return localValue(S, Ref->getDecl(), Depth);
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      switch (BO->getOpcode()) {
      case BO_Add:
      case BO_Sub:
      case BO_Mul:
      case BO_Div:
      case BO_Rem:
      case BO_Shl:
      case BO_Shr:
        break;
      default:
        return std::nullopt;
      }
      std::optional<HostExpr> L = hostValue(S, BO->getLHS(), Depth),
                              R = hostValue(S, BO->getRHS(), Depth);
      if (!L || !R)
        return std::nullopt;
      return HostExpr::parens(HostExpr::binary(*L, BO->getOpcodeStr(), *R));
    }
    return std::nullopt;
  }

  /// `a`, `a * b`, `(W / 2) * H`: a stride's product.
  static HostExpr strideProduct(const std::vector<HostExpr> &Factors) {
    if (Factors.size() == 1)
      return Factors.front();
    HostExpr Product = HostExpr::parens(Factors.front());
    for (const HostExpr &F : llvm::drop_begin(Factors))
      Product = HostExpr::binary(Product, "*", HostExpr::parens(F));
    return Product;
  }

  /// The parameters of \p S the host argument \p Arg is passed to.
  static std::vector<const ParmVarDecl *> paramsFor(const FuseStage &S,
                                                    const ValueDecl *Buffer) {
    std::vector<const ParmVarDecl *> Params;
    for (unsigned P = 0; P != S.Kernel->getNumParams(); ++P) {
      const Expr *Arg = S.Launch->getArg(P)->IgnoreParenImpCasts();
      if (const auto *Cast = dyn_cast<ExplicitCastExpr>(Arg))
        Arg = Cast->getSubExpr()->IgnoreParenImpCasts();
      const ValueDecl *D = nullptr;
      if (const auto *Ref = dyn_cast<DeclRefExpr>(Arg))
        D = Ref->getDecl();
      else if (const auto *M = dyn_cast<MemberExpr>(Arg))
        D = M->getMemberDecl();
      if (D == Buffer)
        Params.push_back(S.Kernel->getParamDecl(P));
    }
    return Params;
  }

  /// Whether \p Consumer's reads of \p Buffer can come from \p Producer's
  /// on-chip tile; widens the producer's region by them.
  bool onChipReads(FuseStage &Producer, const FuseStage &Consumer,
                   const ValueDecl *Buffer,
                   std::vector<RelationCheck> &Relations, std::string &Why) {
    std::string Name = Buffer->getNameAsString();
    std::vector<const ParmVarDecl *> Out = paramsFor(Producer, Buffer);
    const StageRead *Store = nullptr;
    for (const StageRead &W : Producer.Access.Stores)
      if (llvm::is_contained(Out, W.Buffer))
        Store = &W;
    if (!Store) {
      Why = "no store to '" + Name + "' found";
      return false;
    }
    auto StoreRow = hostStride(Producer, Store->RowStride);
    auto StorePlane = hostStride(Producer, Store->PlaneStride);
    if (!StoreRow || !StorePlane || StoreRow->size() != 1) {
      Why = "the stride of '" + Name +
            "' is not a kernel parameter, so its rows cannot be compared";
      return false;
    }
    // Distinct points of the producer are distinct elements: its rows are
    // no longer than the row stride (and it has no more rows than a plane
    // holds).
    if (!anyBound(Producer.Domain[0].Upper, {StoreRow->front().Argument, 0},
                  [](int64_t C) { return C <= 0; })) {
      Why = "'" + Name + "' is not provably written only within its rows";
      return false;
    }
    if (!StorePlane->empty()) {
      std::vector<HostExpr> Rows = *StorePlane;
      auto It = llvm::find(Rows, StoreRow->front());
      if (Rows.size() != 2 || It == Rows.end()) {
        Why = "the plane stride of '" + Name + "' is not rows times columns";
        return false;
      }
      Rows.erase(It);
      if (!anyBound(Producer.Domain[1].Upper, {Rows.front().Argument, 0},
                    [](int64_t C) { return C <= 0; })) {
        Why = "'" + Name + "' is not provably written only within its planes";
        return false;
      }
    }
    std::vector<const ParmVarDecl *> In = paramsFor(Consumer, Buffer);
    for (const StageRead &R : Consumer.Access.Reads) {
      if (!llvm::is_contained(In, R.Buffer))
        continue;
      // A stride the consumer computes from its parameters names the
      // same rows where its value equals the producer's, which the
      // launcher checks.
      bool Derived = false;
      auto Row = hostStride(Consumer, R.RowStride, &Derived);
      auto Plane = hostStride(Consumer, R.PlaneStride, &Derived);
      bool Same = Row == StoreRow && Plane == StorePlane;
      if (R.Coordinates.size() != Store->Coordinates.size() || !Row || !Plane ||
          (!Same && (!Derived || Row->empty() != StoreRow->empty() ||
                     Plane->empty() != StorePlane->empty()))) {
        Why = "'" + R.Buffer->getNameAsString() +
              "' is read with another "
              "layout than its producer writes";
        return false;
      }
      if (!Same) {
        Relations.push_back(
            {strideProduct(*Row), "==", strideProduct(*StoreRow)});
        if (!Plane->empty())
          Relations.push_back(
              {strideProduct(*Plane), "==", strideProduct(*StorePlane)});
      }
      for (unsigned D = 0; D != R.Coordinates.size(); ++D) {
        const CoordinateRead &C = R.Coordinates[D];
        if (C.Axis != D || C.Scale < 1 || C.Divisor < 1) {
          Why = "'" + R.Buffer->getNameAsString() +
                "' is read at a transposed or fixed coordinate";
          return false;
        }
        bool Scaled = C.Scale != 1 || C.Divisor != 1;
        int64_t K = C.Offset + C.Add;
        if (D == 2) {
          if (Scaled || K != 0 || C.Clamped) {
            Why = "'" + R.Buffer->getNameAsString() +
                  "' is read in another plane";
            return false;
          }
          continue;
        }
        // The producer runs at the consumer's scale times the read's.
        AxisScale Ratio = reduced(Consumer.Scale[D].Num * C.Scale,
                                  Consumer.Scale[D].Den * C.Divisor);
        if (Producer.Scale[D].Num == 0) {
          Producer.Scale[D] = Ratio;
        } else if (!(Producer.Scale[D] == Ratio)) {
          Why = "'" + R.Buffer->getNameAsString() + "' is read at two scales";
          return false;
        }
        if (Scaled) {
          if (!scaledRead(Producer, Consumer, R, D, Relations, Why))
            return false;
          continue;
        }
        std::optional<HostBound> Lo, Hi;
        int64_t KLo = K, KHi = K;
        if (C.Clamped) {
          Lo = host(Consumer, C.LoValue);
          Hi = host(Consumer, C.HiValue);
          const AxisDomain &Own = Consumer.Domain[D];
          bool Inside =
              Lo && Hi &&
              anyBound(Own.Lower, *Lo,
                       [&](int64_t V) { return V >= Lo->Constant; }) &&
              anyBound(Own.Upper, *Hi,
                       [&](int64_t V) { return V - 1 <= Hi->Constant; });
          if (!Inside) {
            Why = "a clamped read of '" + R.Buffer->getNameAsString() +
                  "' is not provably clamped around the reading point";
            return false;
          }
          KLo = std::min<int64_t>(K, 0);
          KHi = std::max<int64_t>(K, 0);
        }
        if (!readInDomain(KLo, KHi, Consumer.Domain[D], Producer.Domain[D], Lo,
                          Hi) &&
            !checkedInDomain(KLo, KHi, Consumer.Domain[D], Producer.Domain[D],
                             Lo, Hi, Relations)) {
          Why = std::string("a read of '") + R.Buffer->getNameAsString() +
                "' along " + AxisName[D] +
                " is not provably inside what its producer writes";
          return false;
        }
        widen(Producer, D, Consumer.RegionLo[D] + KLo,
              Consumer.RegionHi[D] + KHi);
      }
    }
    return true;
  }

  /// readInDomain's proof with the upper bounds it cannot show at compile
  /// time left to the launcher: where the consumer's guard and the
  /// producer's are different launch arguments (camera's sharpen reads
  /// x + 16 below OW of a stage that writes below W: OW - 1 + 16 < W is
  /// checked before the fused launch). Lower bounds must be proved.
  bool checkedInDomain(int64_t KLo, int64_t KHi, const AxisDomain &Consumer,
                       const AxisDomain &Producer,
                       const std::optional<HostBound> &ClampLo,
                       const std::optional<HostBound> &ClampHi,
                       std::vector<RelationCheck> &Relations) {
    AxisDomain Lower = Producer;
    Lower.Upper.clear();
    if (!readInDomain(KLo, KHi, Consumer, Lower, ClampLo, ClampHi))
      return false;
    const HostBound *Last = guardBound(Consumer);
    std::vector<RelationCheck> Needed;
    for (const HostBound &P : Producer.Upper) {
      AxisDomain One;
      One.Upper = {P};
      if (readInDomain(KLo, KHi, Consumer, One, ClampLo, ClampHi))
        continue;
      // The same argument on both sides was compared at compile time; a
      // constant or the launch's extent is no argument to relate.
      if (!Last || Last->Arg.empty() || P.Arg.empty() || Last->Arg == P.Arg)
        return false;
      Needed.push_back({hostValue(*Last, KHi - 1), "<", hostValue(P, 0)});
    }
    Relations.insert(Relations.end(), Needed.begin(), Needed.end());
    return true;
  }

  static AxisScale reduced(int64_t Num, int64_t Den) {
    int64_t G = std::gcd(Num, Den);
    return {Num / G, Den / G};
  }

  static void widen(FuseStage &S, unsigned D, int64_t Lo, int64_t Hi) {
    S.RegionLo[D] = std::min(S.RegionLo[D], Lo);
    S.RegionHi[D] = std::max(S.RegionHi[D], Hi);
  }

  /// The first upper bound of \p Domain that is a launch argument (plus a
  /// constant) or a constant.
  static const HostBound *guardBound(const AxisDomain &Domain) {
    for (const HostBound &B : Domain.Upper)
      if (!B.LaunchExtent)
        return &B;
    return nullptr;
  }

  /// A read at coordinate v(c) = (A * c + B) / Dv + K along \p D (C
  /// division; A, Dv >= 1), c the consumer's coordinate, clamped or not:
  /// widens the producer's region by the points it reaches and proves them
  /// inside what the producer writes, at compile time where the bounds
  /// allow and otherwise by conditions the launcher checks (\p Relations).
  ///
  /// The consumer computes points c >= 0 only (the loops skip the others),
  /// so with B >= 0 the division rounds down; with B < 0 it may round up
  /// by one. Its region starts at a multiple of its scaled tile, which the
  /// producer's scaled tile divides, so the offsets do not depend on the
  /// tile: v over [s * o + Lo, s * (o + T) + Hi) lies in
  /// [s' * o + floor((A * Lo + B) / Dv) + K,
  ///  s' * (o + T) + floor((A * (Hi - 1) + B) / Dv) + K + 1).
  /// A clamped read lies between v(c) and the base point A * c / Dv, which
  /// the launcher checks lies inside the clamp for every point the
  /// consumer computes (PolyMage's levels are ceil(W / 2) wide, so
  /// 2 * (ceil(W / 2) - 1) <= W - 1: no compile-time bound says so).
  bool scaledRead(FuseStage &Producer, const FuseStage &Consumer,
                  const StageRead &R, unsigned D,
                  std::vector<RelationCheck> &Relations, std::string &Why) {
    const CoordinateRead &C = R.Coordinates[D];
    std::string Name = R.Buffer->getNameAsString();
    const int64_t A = C.Scale, B = C.Add, Dv = C.Divisor, K = C.Offset;
    const int64_t CLo = Consumer.RegionLo[D], CHi = Consumer.RegionHi[D];
    int64_t Lo = floorDiv(A * CLo + B, Dv) + K;
    int64_t Hi = floorDiv(A * (CHi - 1) + B, Dv) + K + (B < 0 && Dv > 1) + 1;
    const HostBound *Last = guardBound(Consumer.Domain[D]);
    if (!Last) {
      Why = std::string("'") + Name +
            "' is read at a scaled coordinate along " + AxisName[D] +
            " by a stage with no guard along it";
      return false;
    }
    // v and the base point at the consumer's last point, in host terms.
    HostExpr LastPoint = HostExpr::parens(hostValue(*Last, -1));
    HostExpr Base = scaled(A, LastPoint, 0, Dv, 0);
    HostExpr Value = scaled(A, LastPoint, B, Dv, K);
    const AxisDomain &P = Producer.Domain[D];
    if (C.Clamped) {
      std::optional<HostBound> ClampLo = host(Consumer, C.LoValue),
                               ClampHi = host(Consumer, C.HiValue);
      // The base point of c = 0 is 0: inside a clamp from 0 or below.
      bool BaseAboveLo =
          ClampLo && ClampLo->constant() && ClampLo->Constant <= 0;
      if (!ClampLo || !ClampHi || !BaseAboveLo ||
          !readInDomain(0, 0, AxisDomain(), P, ClampLo, ClampHi)) {
        Why = "a clamped read of '" + Name + "' at a scaled coordinate along " +
              AxisName[D] +
              " is not provably clamped inside what its "
              "producer writes";
        return false;
      }
      Relations.push_back({Base, "<=", hostValue(*ClampHi, 0)});
      Lo = std::min(Lo, floorDiv(A * CLo, Dv));
      Hi = std::max(Hi, floorDiv(A * (CHi - 1), Dv) + 1);
    } else {
      // v is smallest at c = 0 and largest at the consumer's last point.
      int64_t First = B / Dv + K;
      for (const HostBound &L : P.Lower)
        if (!L.constant() || First < L.Constant) {
          Why = "a read of '" + Name + "' at a scaled coordinate along " +
                AxisName[D] +
                " is not provably inside what its producer "
                "writes";
          return false;
        }
      for (const HostBound &U : P.Upper) {
        if (U.LaunchExtent) {
          Why = "'" + Name + "' is read at a scaled coordinate along " +
                AxisName[D] + " but its producer has no guard along it";
          return false;
        }
        Relations.push_back({Value, "<", hostValue(U, 0)});
      }
    }
    widen(Producer, D, Lo, Hi);
    return true;
  }

  /// The bound \p B plus \p Extra: `Arg + k`, or the constant.
  static HostExpr hostValue(const HostBound &B, int64_t Extra) {
    assert(!B.LaunchExtent && "the launch's extent is no host value");
    int64_t K = B.Constant + Extra;
    if (B.Arg.empty())
      return HostExpr::constant(K);
    return HostExpr::plus(HostExpr::argument(B.Arg), K);
  }

  /// `(A * V + B) / Dv + K`, without the parts that are 1 or 0.
  static HostExpr scaled(int64_t A, const HostExpr &V, int64_t B, int64_t Dv,
                         int64_t K) {
    // V is a name or parenthesized; A * V / Dv divides the product.
    HostExpr E = A == 1 ? V : HostExpr::binary(HostExpr::constant(A), "*", V);
    if (B != 0)
      E = HostExpr::parens(HostExpr::plus(E, B));
    if (Dv != 1)
      E = HostExpr::binary(E, "/", HostExpr::constant(Dv));
    return HostExpr::plus(E, K);
  }

  /// Stages \p Stages as one group, or why they cannot be.
  std::optional<FuseGroup> group(std::vector<FuseStage> Stages,
                                 std::string &Why) {
    FuseGroup G;
    std::string Shape = blockAndStream(Stages.front(), Ctx);
    G.Grids.push_back(configText(Stages.back(), 0, Ctx));
    for (FuseStage &S : Stages) {
      if (blockAndStream(S, Ctx) != Shape) {
        Why = "it is launched with another block or stream";
        return std::nullopt;
      }
      std::string Grid = configText(S, 0, Ctx);
      auto It = llvm::find(G.Grids, Grid);
      S.Grid = unsigned(It - G.Grids.begin());
      if (It == G.Grids.end())
        G.Grids.push_back(Grid);
      // The fused kernel knows the last stage's extent only: a stage of
      // another grid must say by its guards which points it computes.
      for (unsigned D : {0u, 1u})
        if (S.Grid != 0 &&
            !llvm::any_of(S.Domain[D].Upper,
                          [](const HostBound &B) { return !B.LaunchExtent; })) {
          Why = std::string("it is launched with another grid than the "
                            "group's last stage and has no guard along ") +
                AxisName[D];
          return std::nullopt;
        }
      for (unsigned D = 0; D != 3; ++D)
        if (S.Access.Form[D] != Stages.front().Access.Form[D]) {
          Why = std::string("its ") + AxisName[D] +
                " coordinate is computed differently";
          return std::nullopt;
        }
    }
    auto InGroup = [&](unsigned GraphIndex) -> std::optional<unsigned> {
      for (unsigned I = 0; I != Stages.size(); ++I)
        if (Stages[I].Index == GraphIndex)
          return I;
      return std::nullopt;
    };
    // Buffers the group writes: who produces them, where they go.
    for (const StageGraph::Buffer &B : Graph.Buffers) {
      std::vector<unsigned> Writers;
      for (unsigned W : B.Writers)
        if (InGroup(W))
          Writers.push_back(*InGroup(W));
      bool ReadInGroup = false, ReadOutside = false;
      for (unsigned R : B.Readers)
        (InGroup(R) ? ReadInGroup : ReadOutside) = true;
      if (Writers.empty())
        continue;
      if (Writers.size() > 1) {
        Why = "two of its stages write '" + B.Decl->getNameAsString() + "'";
        return std::nullopt;
      }
      FuseBuffer F;
      F.Decl = B.Decl;
      F.Producer = Writers.front();
      F.Name = argTextOf(Stages, B.Decl);
      for (const ParmVarDecl *P : paramsFor(Stages[F.Producer], B.Decl))
        F.ElementType =
            P->getType()->getPointeeType().getUnqualifiedType().getAsString(
                Ctx.getPrintingPolicy());
      for (unsigned R : B.Readers)
        if (InGroup(R) && *InGroup(R) <= F.Producer) {
          Why = "'" + F.Name + "' is read before it is written in the group";
          return std::nullopt;
        }
      F.OnChip = ReadInGroup;
      F.Global = B.LiveAfter || ReadOutside || B.Readers.empty();
      G.Written.push_back(F);
    }
    // Regions, from the last stage back: a stage is computed where its
    // consumers read it and on its own tile if it stores to global memory.
    // What an earlier group set goes first: join() passes a group's planned
    // stages, and a stage inlined there (read once per point by a reader
    // stored there) need not be here, where its buffers are new and have
    // tiles (inlinePointwise only ever sets Inlined).
    for (FuseStage &S : Stages) {
      S.RegionLo[0] = S.RegionLo[1] = S.RegionHi[0] = S.RegionHi[1] = 0;
      S.Scale[0] = S.Scale[1] = AxisScale();
      S.Needed = S.NeedsOwn = S.Inlined = false;
    }
    std::vector<RelationCheck> Relations;
    for (unsigned I = Stages.size(); I-- != 0;) {
      FuseStage &S = Stages[I];
      bool Global = false, First = true;
      for (const FuseBuffer &B : G.Written)
        if (B.Producer == I)
          Global |= B.Global;
      S.Needed = Global;
      bool ReadInGroup = false;
      for (const FuseBuffer &B : G.Written) {
        if (B.Producer != I || !B.OnChip)
          continue;
        for (unsigned R : Graph.buffer(B.Decl)->Readers) {
          std::optional<unsigned> C = InGroup(R);
          if (!C || !Stages[*C].Needed)
            continue;
          // The first consumer sets the region (a stored stage's starts
          // as its own tile) and the scale; the others widen the region
          // and must read at the same scale.
          if (First)
            S.Scale[0] = S.Scale[1] = AxisScale{0, 1}; // Set by the reads.
          if (!S.Needed && First) {
            S.RegionLo[0] = S.RegionLo[1] = INT64_MAX / 4;
            S.RegionHi[0] = S.RegionHi[1] = INT64_MIN / 4;
          }
          First = false;
          if (!onChipReads(S, Stages[*C], B.Decl, Relations, Why))
            return std::nullopt;
          S.Needed = ReadInGroup = true;
        }
      }
      for (AxisScale &Sc : S.Scale)
        if (Sc.Num == 0) // Its consumers do not read it along that axis.
          Sc = AxisScale();
      // Only reads relate a stage's points to the warp's tile: a stage of
      // another grid that no stage of the group reads would be computed
      // over the last stage's extent, which need not be its own.
      if (S.Grid != 0 && !ReadInGroup) {
        Why = "it is launched with another grid than the group's last "
              "stage, and no stage of the group reads it";
        return std::nullopt;
      }
      if (Global) {
        for (unsigned D : {0u, 1u}) {
          S.RegionLo[D] = std::min<int64_t>(S.RegionLo[D], 0);
          S.RegionHi[D] = std::max<int64_t>(S.RegionHi[D], 0);
        }
        S.NeedsOwn = S.RegionLo[0] < 0 || S.RegionLo[1] < 0 ||
                     S.RegionHi[0] > 0 || S.RegionHi[1] > 0;
      }
    }
    inlinePointwise(Stages, G);
    // Write after read of a global buffer within the group: another warp
    // may still read what a stage overwrites.
    for (const StageGraph::Edge &E : Graph.Edges)
      if (E.Kind != StageGraph::Order::Flow && InGroup(E.From) &&
          InGroup(E.To)) {
        Why = "'" + E.Buffer->getNameAsString() +
              "' is overwritten after a stage of the group uses it";
        return std::nullopt;
      }
    // What the launcher checks: per grid, axis and argument, the largest
    // bound; for stages that store and have a grid of their own or a
    // scale, that the fused grid reaches their guards.
    std::map<std::tuple<unsigned, unsigned, std::string>, int64_t> Largest;
    for (const FuseStage &S : Stages)
      for (unsigned D : {0u, 1u})
        for (const HostBound &B : S.Domain[D].Upper)
          if (!B.LaunchExtent) {
            auto [It, New] =
                Largest.try_emplace({S.Grid, D, B.Arg}, B.Constant);
            if (!New)
              It->second = std::max(It->second, B.Constant);
          }
    for (const auto &[Key, C] : Largest)
      G.ExtentChecks.push_back(
          {std::get<0>(Key), std::get<1>(Key), {std::get<2>(Key), C}});
    for (unsigned I = 0; I != Stages.size(); ++I) {
      const FuseStage &S = Stages[I];
      bool Stores = llvm::any_of(G.Written, [&](const FuseBuffer &B) {
        return B.Producer == I && B.Global;
      });
      for (unsigned D : {0u, 1u})
        if (Stores && (S.Grid != 0 || !S.Scale[D].unit()))
          G.CoverageChecks.push_back({D, S.Scale[D],
                                      guardBound(S.Domain[D])
                                          ? *guardBound(S.Domain[D])
                                          : S.Domain[D].Upper.front()});
    }
    llvm::sort(Relations, [](const RelationCheck &A, const RelationCheck &B) {
      return A.describe() < B.describe();
    });
    Relations.erase(llvm::unique(Relations), Relations.end());
    G.RelationChecks = std::move(Relations);
    std::set<std::string> Global, Other;
    for (const StageGraph::Buffer &B : Graph.Buffers) {
      bool Used =
          llvm::any_of(B.Readers,
                       [&](unsigned R) { return InGroup(R).has_value(); }) ||
          llvm::any_of(B.Writers,
                       [&](unsigned W) { return InGroup(W).has_value(); });
      if (!Used || B.Fresh)
        continue;
      const FuseBuffer *W = nullptr;
      for (const FuseBuffer &F : G.Written)
        if (F.Decl == B.Decl)
          W = &F;
      (W && W->Global ? Global : Other).insert(argTextOf(Stages, B.Decl));
    }
    G.GlobalWrites.assign(Global.begin(), Global.end());
    G.OtherBuffers.assign(Other.begin(), Other.end());
    G.Stages = std::move(Stages);
    return G;
  }

  /// Marks the stages computed where they are read (FuseStage::Inlined), as
  /// Halide's manual schedules and PolyMage inline: a stage whose value only
  /// the group reads, whose body is guards, declarations and one store, and
  /// which either is read only at its consumers' own points by consumers
  /// that are themselves computed once per point (no recomputation beyond
  /// one per reading stage: Harris's sums, determinant and trace), or is
  /// point-wise and reads no inlined stage (cheap to recompute: Harris's
  /// products, read at nine offsets).
  void inlinePointwise(std::vector<FuseStage> &Stages, FuseGroup &G) {
    auto OnlyOutput = [&](unsigned I) -> FuseBuffer * {
      FuseBuffer *Only = nullptr;
      for (FuseBuffer &B : G.Written)
        if (B.Producer == I) {
          if (Only)
            return nullptr;
          Only = &B;
        }
      return Only && Only->OnChip && !Only->Global ? Only : nullptr;
    };
    auto Candidate = [&](unsigned I) {
      return Stages[I].Needed && OnlyOutput(I) &&
             guardsDeclarationsAndAStore(Stages[I]);
    };
    // Point-wise stages that read no inlined stage, first.
    for (unsigned I = 0; I != Stages.size(); ++I) {
      if (!Candidate(I) || !pointwise(Stages[I]))
        continue;
      bool ReadsInlined = false;
      for (const FuseBuffer &B : G.Written)
        if (B.Inlined && !paramsFor(Stages[I], B.Decl).empty())
          ReadsInlined = true;
      if (ReadsInlined)
        continue;
      Stages[I].Inlined = true;
      OnlyOutput(I)->Inlined = true;
    }
    // Then stages read once per point of readers that are computed once
    // per point themselves, from the last stage back.
    std::vector<bool> OncePerPoint(Stages.size(), false);
    for (unsigned I = Stages.size(); I-- != 0;) {
      if (!Candidate(I))
        continue;
      bool Once = true;
      for (unsigned C = I + 1; C != Stages.size() && Once; ++C) {
        std::vector<const ParmVarDecl *> In =
            paramsFor(Stages[C], OnlyOutput(I)->Decl);
        if (In.empty())
          continue;
        for (const StageRead &R : Stages[C].Access.Reads)
          if (llvm::is_contained(In, R.Buffer) && !atOwnPoint(R))
            Once = false;
        if (Stages[C].Inlined && !OncePerPoint[C])
          Once = false;
      }
      OncePerPoint[I] = Once;
      if (Once) {
        Stages[I].Inlined = true;
        OnlyOutput(I)->Inlined = true;
      }
    }
  }

  /// The read is at the reading point itself.
  static bool atOwnPoint(const StageRead &R) {
    for (unsigned D = 0; D != R.Coordinates.size(); ++D) {
      const CoordinateRead &C = R.Coordinates[D];
      if (C.Scale != 1 || C.Divisor != 1 || C.Axis != D || C.Clamped ||
          C.Offset + C.Add != 0)
        return false;
    }
    return true;
  }

  /// Every read of the stage is at its own point.
  static bool pointwise(const FuseStage &S) {
    return llvm::all_of(S.Access.Reads, atOwnPoint) &&
           S.Access.Stores.size() == 1;
  }

  /// The body is `if (..) return;` guards and declarations, then the one
  /// store, `buf[..] = value;`, last.
  static bool guardsDeclarationsAndAStore(const FuseStage &S) {
    const auto *Body = cast<CompoundStmt>(S.Kernel->getBody());
    if (Body->body_empty())
      return false;
    for (const Stmt *St : Body->body()) {
      if (St == Body->body_back()) {
        const auto *BO = dyn_cast<BinaryOperator>(St);
        return BO && BO->getOpcode() == BO_Assign &&
               isa<ArraySubscriptExpr>(BO->getLHS()->IgnoreParenImpCasts());
      }
      if (isa<DeclStmt>(St))
        continue;
      const auto *If = dyn_cast<IfStmt>(St);
      if (!If || If->getElse())
        return false;
      const Stmt *Then = If->getThen();
      if (const auto *C = dyn_cast<CompoundStmt>(Then); C && C->size() == 1)
        Then = C->body_front();
      if (!isa<ReturnStmt>(Then))
        return false;
    }
    return false;
  }

  /// The host text a stage passes \p Buffer as.
  static std::string argTextOf(const std::vector<FuseStage> &Stages,
                               const ValueDecl *Buffer) {
    for (const FuseStage &S : Stages)
      for (const ParmVarDecl *P : paramsFor(S, Buffer))
        return S.ArgText[P->getFunctionScopeIndex()];
    return Buffer->getNameAsString();
  }

  const StageGraph &Graph;
  ASTContext &Ctx;
  GroupCostFn GroupCost;
  /// Per stage: as the fused kernel computes it, or why it cannot be fused.
  std::vector<std::optional<FuseStage>> Fusable;
  std::vector<std::string> Whys;
  std::map<unsigned, double> SingleCosts;
  std::vector<std::vector<unsigned>> Tried;
};

} // namespace

const FuseBuffer *FuseGroup::bufferPassedAs(const FuseStage &S,
                                            const ParmVarDecl *P) const {
  unsigned I = P->getFunctionScopeIndex();
  if (I >= S.ArgText.size())
    return nullptr;
  for (const FuseBuffer &B : Written)
    if (B.Name == S.ArgText[I])
      return &B;
  return nullptr;
}

static bool evaluatesOnlyItsValue(const Stmt *E, unsigned Depth) {
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *F = Call->getDirectCallee();
    const FunctionDecl *Def = F ? F->getDefinition() : nullptr;
    const auto *Body = Def ? dyn_cast<CompoundStmt>(Def->getBody()) : nullptr;
    const auto *Ret = Body && Body->size() == 1
                          ? dyn_cast<ReturnStmt>(Body->body_front())
                          : nullptr;
    if (!Ret || !Ret->getRetValue() || Depth > 4 ||
        !evaluatesOnlyItsValue(Ret->getRetValue(), Depth + 1))
      return false;
  } else if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    const CXXConstructorDecl *Ctor = Construct->getConstructor();
    if (!Ctor || !(Ctor->isTrivial() || Ctor->isConstexpr()))
      return false;
  } else if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->isAssignmentOp())
      return false;
  } else if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    if (UO->isIncrementDecrementOp())
      return false;
  } else if (const auto *Ex = dyn_cast<Expr>(E)) {
    if (Ex->getType().isVolatileQualified())
      return false;
  }
  return llvm::all_of(E->children(), [&](const Stmt *C) {
    return !C || evaluatesOnlyItsValue(C, Depth);
  });
}

bool evaluatesOnlyItsValue(const Stmt *E) {
  return evaluatesOnlyItsValue(E, 0);
}

std::string plusConstant(const std::string &V, int64_t K) {
  if (K == 0)
    return V;
  return V + (K > 0 ? " + " : " - ") + std::to_string(K < 0 ? -K : K);
}

std::string scaledOrigin(const FuseStage &S, unsigned D,
                         const std::string &Origin) {
  const AxisScale &Sc = S.Scale[D];
  std::string Text =
      Sc.Num == 1 ? Origin : std::to_string(Sc.Num) + " * " + Origin;
  return Sc.Den == 1 ? Text : Text + " / " + std::to_string(Sc.Den);
}

int64_t regionExtent(const FuseStage &S, unsigned D, int64_t TileExtent) {
  const AxisScale &Sc = S.Scale[D];
  if (Sc.Den <= 0 || (Sc.Num * TileExtent) % Sc.Den != 0)
    return -1;
  return Sc.Num * TileExtent / Sc.Den + S.RegionHi[D] - S.RegionLo[D];
}

std::string describeExtentCheck(const ExtentCheck &C) {
  const HostBound &B = C.Bound;
  std::string Bound =
      B.Arg.empty()     ? std::to_string(B.Constant)
      : B.Constant == 0 ? "(" + B.Arg + ")"
                        : "(" + B.Arg + ")" + (B.Constant > 0 ? " + " : " - ") +
                              std::to_string(std::abs(B.Constant));
  return "extent" + (C.Grid ? std::to_string(C.Grid) : std::string()) + "." +
         AxisName[C.Axis] + " >= " + Bound;
}

namespace {

/// Per stage, the stages its edges (of any kind) lead to.
std::vector<std::vector<unsigned>> successors(const StageGraph &Graph) {
  std::vector<std::vector<unsigned>> Next(Graph.Stages.size());
  for (const StageGraph::Edge &E : Graph.Edges)
    Next[E.From].push_back(E.To);
  return Next;
}

} // namespace

std::vector<unsigned> levelOrder(const StageGraph &Graph) {
  std::vector<std::vector<unsigned>> Next = successors(Graph);
  std::vector<unsigned> Height(Next.size(), 0);
  for (unsigned I = unsigned(Next.size()); I-- != 0;)
    for (unsigned To : Next[I])
      Height[I] = std::max(Height[I], Height[To] + 1);
  std::vector<unsigned> Order(Next.size());
  std::iota(Order.begin(), Order.end(), 0u);
  llvm::stable_sort(
      Order, [&](unsigned A, unsigned B) { return Height[A] > Height[B]; });
  return Order;
}

std::vector<unsigned> consumersNextOrder(const StageGraph &Graph) {
  unsigned N = unsigned(Graph.Stages.size());
  std::vector<unsigned> Waiting(N, 0), Placed(N, 0);
  for (const StageGraph::Edge &E : Graph.Edges)
    ++Waiting[E.To];
  std::vector<std::vector<unsigned>> Next = successors(Graph);
  std::vector<unsigned> Order;
  std::vector<bool> Done(N, false);
  while (Order.size() != N) {
    std::optional<unsigned> Pick;
    int PickProducer = -1;
    for (unsigned I = 0; I != N; ++I) {
      if (Done[I] || Waiting[I] != 0)
        continue;
      int Latest = -1; // Where its latest producer placed went.
      for (const StageGraph::Edge &E : Graph.Edges)
        if (E.To == I && E.Kind == StageGraph::Order::Flow)
          Latest = std::max(Latest, int(Placed[E.From]));
      if (!Pick || Latest > PickProducer) {
        Pick = I;
        PickProducer = Latest;
      }
    }
    Placed[*Pick] = unsigned(Order.size());
    Done[*Pick] = true;
    Order.push_back(*Pick);
    for (unsigned To : Next[*Pick])
      --Waiting[To];
  }
  return Order;
}

PlanOrRefusal<FusePlan> planFusion(const StageGraph &Graph, ASTContext &Ctx,
                                   GroupCostFn GroupCost) {
  if (!Graph.Problems.empty())
    return PlanOrRefusal<FusePlan>::refuse(Graph.Problems.front());
  return PlanOrRefusal<FusePlan>::accept(Planner(Graph, Ctx, GroupCost).run());
}

} // namespace cuda_rewrite
