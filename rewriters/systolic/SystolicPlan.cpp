//===- SystolicPlan.cpp - What an SSAM kernel computes, or why not --------===//

#include "rewriters/systolic/SystolicPlan.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

using namespace clang;

namespace cuda_rewrite {

static const char *const DimNames[3] = {"x", "y", "z"};

std::string exactLiteral(double V, bool AsFloat) {
  char Buffer[64];
  for (int Digits = 1; Digits <= 17; ++Digits) {
    std::snprintf(Buffer, sizeof(Buffer), "%.*g", Digits, V);
    bool Exact = AsFloat ? std::strtof(Buffer, nullptr) == float(V)
                         : std::strtod(Buffer, nullptr) == V;
    if (Exact)
      break;
  }
  std::string Text = Buffer;
  if (Text.find_first_of(".en") == std::string::npos)
    Text += ".0";
  return AsFloat ? Text + "f" : Text;
}

/// One term: a literal, or a scaled value (`-c`, `0.5f * float(w[2])`).
static std::string termText(const WeightTerm &T, llvm::StringRef ElementType,
                            bool IsDouble,
                            llvm::function_ref<std::string()> StagedName) {
  if (T.K == WeightTerm::Number)
    return exactLiteral(T.Value, !IsDouble);
  std::string Text = T.K == WeightTerm::StagedElement ? StagedName() : T.Name;
  for (int64_t I : T.Index)
    Text += "[" + std::to_string(I) + "]";
  if (T.Cast)
    Text = ElementType.str() + "(" + Text + ")";
  if (T.Value == 1.0)
    return Text;
  if (T.Value == -1.0)
    return "-" + Text;
  return exactLiteral(T.Value, !IsDouble) + " * " + Text;
}

std::string weightText(const WeightExpr &Weight, llvm::StringRef ElementType,
                       bool IsDouble,
                       llvm::function_ref<std::string()> StagedName) {
  std::vector<std::string> Terms;
  for (const WeightTerm &T : Weight)
    Terms.push_back(termText(T, ElementType, IsDouble, StagedName));
  return llvm::join(Terms, " + ");
}

namespace {

class Planner {
public:
  explicit Planner(const StencilShape &Shape) : Shape(Shape) {}

  SystolicPlanResult run() {
    SystolicPlanResult R;
    if (!checkShape() || !checkGuard() || !planTaps()) {
      R.Refused.Reason = Refusal;
      return R;
    }
    planReads();
    Plan.Geometry.Columns = Plan.columns();
    Plan.Geometry.Rows = Plan.rows();
    Plan.Geometry.Planes = Plan.planes();
    Plan.Geometry.Rank = Plan.Rank;
    Plan.Geometry.Taps = unsigned(Plan.Taps.size());
    Plan.Geometry.ElementBytes = Plan.IsDouble ? 8 : 4;
    Plan.Geometry.WeightsInRegisters =
        llvm::any_of(Shape.Points, [](const StencilPoint &P) {
          return P.Weight.K == StencilCoefficient::FilterElement;
        });
    Plan.Geometry.FilterLoop = Plan.Loop.has_value();
    Plan.Geometry.Left = unsigned(std::max<int64_t>(0, -Plan.Range[0].First));
    Plan.Geometry.Right = unsigned(std::max<int64_t>(0, Plan.Range[0].Last));
    auto Side = llvm::find_if(
        Plan.Taps, [](const SystolicTap &T) { return T.Offset[0] != 0; });
    Plan.Geometry.SideTapsInOneRow =
        llvm::all_of(Plan.Taps, [&](const SystolicTap &T) {
          return T.Offset[0] == 0 || T.Offset[1] == Side->Offset[1];
        });
    Plan.Geometry.ContiguousRows =
        hasContiguousRows(Plan.Input) && hasContiguousRows(Plan.Output);
    Plan.Geometry.PointLoads =
        !Plan.ReadLimits.empty() ||
        llvm::any_of(Plan.Periods,
                     [](const std::string &P) { return !P.empty(); });
    R.Plan = std::move(Plan);
    return R;
  }

private:
  /// The array is a parameter (the launcher can test the address it is
  /// given) indexed with x at unit stride in its last subscript only.
  static bool hasContiguousRows(const ArrayIndexing &A) {
    if (!llvm::isa_and_nonnull<clang::ParmVarDecl>(A.Array) ||
        A.Strides.empty() || A.Strides.back()[0] != "1")
      return false;
    return llvm::all_of(llvm::drop_end(A.Strides),
                        [](const auto &S) { return S[0].empty(); });
  }

  bool refuse(std::string Why) {
    Refusal = std::move(Why);
    return false;
  }

  bool checkShape() {
    Plan.Kernel = Shape.Kernel;
    const auto &U = Shape.UsesDim;
    if (!(U[0] && U[1]))
      return refuse(Shape.Rank == 1
                        ? "a 1-D stencil; the systolic kernel needs rows "
                          "(y) to cache in registers and columns (x) across "
                          "lanes"
                        : "the output index does not use both x and y");
    Plan.Rank = U[2] ? 3 : 2;
    if (Shape.Element == ElementKind::Other)
      return refuse("the element type '" + Shape.ElementType +
                    "' is neither float nor double");
    Plan.IsDouble = Shape.Element == ElementKind::Double;
    Plan.ElementType = Shape.ElementType;
    if (Shape.Inputs.size() != 1)
      return refuse("reads " + std::to_string(Shape.Inputs.size()) +
                    " inputs at offsets; the systolic kernel caches one");
    QualType In = Shape.Inputs.front()->getType();
    In = In->isPointerType() ? In->getPointeeType() : In;
    QualType Out = Shape.Output->getType();
    Out = Out->isPointerType() ? Out->getPointeeType() : Out;
    const Type *InElem = In->getBaseElementTypeUnsafe();
    const Type *OutElem = Out->getBaseElementTypeUnsafe();
    if (InElem->getCanonicalTypeUnqualified() !=
        OutElem->getCanonicalTypeUnqualified())
      return refuse("the input's element type differs from the output's");
    if (!Shape.CodegenProblem.empty())
      return refuse(Shape.CodegenProblem);
    if (!Shape.ReadFreeTerm.empty())
      return refuse("the stored value adds '" + Shape.ReadFreeTerm +
                    "', which reads no input; only weighted sums of reads "
                    "become partial sums");
    if (Shape.Indexing.size() != 2)
      return refuse("the input's indexing is unknown");
    Plan.BlockFactor = Shape.BlockFactor;
    Plan.Index32 = Shape.Index32;
    Plan.Output = Shape.Indexing[0];
    Plan.Input = Shape.Indexing[1];
    for (const ArrayIndexing *I : {&Plan.Output, &Plan.Input}) {
      bool UnitX = I->Strides.back()[0] == "1";
      for (size_t K = 0; K + 1 < I->Strides.size(); ++K)
        UnitX &= I->Strides[K][0].empty();
      if (!UnitX)
        return refuse("x is not the unit-stride coordinate of '" +
                      I->Array->getNameAsString() +
                      "'; a warp's 32 lanes would not load one row "
                      "segment");
    }
    return true;
  }

  bool checkGuard() {
    if (!Shape.GuardIsSimple)
      return refuse("the store's guard '" + Shape.Guard +
                    "' is not only bounds on the coordinates");
    Plan.Split = Shape.Split;
    for (const CoordinateBound &B : Shape.Bounds) {
      std::optional<BoxBound> Box = boxBound(B);
      if (!Box)
        return refuse("the guard bounds " + std::string(DimNames[B.Dim]) +
                      " with '" + B.describe() + "', not an inequality");
      Plan.Bounds.push_back(*Box);
    }
    for (const CoordinateBound &B : Shape.ReadLimits)
      Plan.ReadLimits.push_back(*boxBound(B));
    Plan.Periods = Shape.Periods;
    Plan.PeriodBoundsPoints = Shape.PeriodBoundsPoints;
    // The 3D kernels' plane loads take neither border yet (no test has run
    // them: the generators write 2D ones).
    if (Plan.Rank == 3 && !Plan.ReadLimits.empty())
      return refuse("zero borders in a 3D stencil: the plane-by-plane kernel "
                    "is not generated for them yet");
    if (Plan.Rank == 3 && llvm::any_of(Plan.Periods, [](const std::string &P) {
          return !P.empty();
        }))
      return refuse("periodic borders in a 3D stencil: the plane-by-plane "
                    "kernel does not wrap its loads");
    return true;
  }

  /// \p B as a bound of the box in coordinates (before the output's
  /// origin); none for a bound that is not an inequality.
  std::optional<BoxBound> boxBound(const CoordinateBound &B) {
    // In coordinates: coordinate + origin op limit.
    BoxBound Box;
    Box.Dim = B.Dim;
    int64_t Adjust = 0;
    switch (B.Op) {
    case BO_LT:
      Box.IsLower = false;
      break;
    case BO_LE:
      Box.IsLower = false;
      Adjust = 1;
      break;
    case BO_GT:
      Adjust = 1;
      break;
    case BO_GE:
      break;
    default:
      return std::nullopt;
    }
    Adjust -= Shape.Origin[B.Dim];
    if (B.LimitValue)
      Box.Constant = *B.LimitValue + Adjust;
    if (Box.Constant && std::llabs(*Box.Constant) > MaxIndex32Extent)
      Plan.Index32 = false;
    Box.Value = "(long long)(" + B.Limit + ")";
    if (Adjust)
      Box.Value +=
          (Adjust > 0 ? " + " : " - ") + std::to_string(std::llabs(Adjust));
    return Box;
  }

  /// The weight of one point as a term, or a refusal.
  std::optional<WeightTerm> weightTerm(const StencilPoint &P) {
    const StencilCoefficient &W = P.Weight;
    auto Local = [](const ValueDecl *D) {
      const auto *V = dyn_cast_or_null<VarDecl>(D);
      return V && V->hasLocalStorage() && !isa<ParmVarDecl>(V);
    };
    WeightTerm T;
    T.Value = W.Scale;
    switch (W.K) {
    case StencilCoefficient::Literal:
      return T;
    case StencilCoefficient::Constant:
      if (Local(W.Source)) {
        if (!W.Value)
          break;
        T.Value = W.Scale * *W.Value;
        return T;
      }
      [[fallthrough]];
    case StencilCoefficient::Parameter:
      T.K = WeightTerm::Variable;
      T.Name = W.SourceName;
      T.Cast = !hasElementType(W);
      return T;
    case StencilCoefficient::FilterElement:
      if (W.FilterIndex.empty() || Local(W.Source))
        break;
      if (isStaged(W)) {
        T.K = WeightTerm::StagedElement;
        T.Index = {W.FilterIndex[0] - Plan.Filter->First};
      } else {
        T.K = WeightTerm::ArrayElement;
        T.Name = W.SourceName;
        T.Index = W.FilterIndex;
        T.Cast = true;
      }
      return T;
    case StencilCoefficient::Unknown:
      break;
    }
    return std::nullopt;
  }

  /// Whether the weight's variable has the element type (else it is
  /// converted).
  bool hasElementType(const StencilCoefficient &W) const {
    QualType T =
        W.Source ? W.Source->getType().getNonReferenceType() : QualType();
    return !T.isNull() &&
           T->isSpecificBuiltinType(Plan.IsDouble ? BuiltinType::Double
                                                  : BuiltinType::Float);
  }

  /// A filter read through a pointer parameter, one subscript.
  static bool isPointerFilter(const StencilCoefficient &W) {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(W.Source);
    return W.K == StencilCoefficient::FilterElement && P &&
           P->getType()->isPointerType() && W.FilterIndex.size() == 1;
  }
  bool isStaged(const StencilCoefficient &W) const {
    return Plan.Filter && isPointerFilter(W) &&
           W.SourceName == Plan.Filter->Name;
  }

  void planFilterStaging() {
    for (const StencilPoint &P : Shape.Points) {
      const StencilCoefficient &W = P.Weight;
      if (!isPointerFilter(W))
        continue;
      if (!Plan.Filter) {
        StagedFilter F;
        F.Name = W.SourceName;
        QualType T = W.Source->getType()->getPointeeType();
        F.ElementType = T.getUnqualifiedType().getAsString();
        F.First = F.Last = W.FilterIndex[0];
        Plan.Filter = F;
      }
      if (W.SourceName == Plan.Filter->Name) {
        Plan.Filter->First = std::min(Plan.Filter->First, W.FilterIndex[0]);
        Plan.Filter->Last = std::max(Plan.Filter->Last, W.FilterIndex[0]);
      }
    }
  }

  bool planTaps() {
    planFilterStaging();
    std::map<std::array<int64_t, 3>, WeightExpr> Weights;
    std::map<std::array<int64_t, 3>, FilterTap> FilterTaps;
    for (unsigned D = 0; D != 3; ++D)
      Plan.Range[D] = {INT64_MAX, INT64_MIN};
    for (const StencilPoint &P : Shape.Points) {
      std::array<int64_t, 3> O = {P.Offset.DX, P.Offset.DY, P.Offset.DZ};
      std::string Where =
          "(" + std::to_string(O[0]) + "," + std::to_string(O[1]) +
          (Plan.Rank == 3 ? "," + std::to_string(O[2]) : "") + ")";
      if (P.Conditional)
        return refuse("the read at offset " + Where +
                      " happens only under a condition inside the kernel");
      std::optional<WeightTerm> W = weightTerm(P);
      if (!W)
        return refuse("the read at offset " + Where + " has weight '" +
                      P.Weight.describe() +
                      "', not a constant, parameter or filter element");
      WeightExpr &Sum = Weights[O];
      bool Repeated = !Sum.empty();
      Sum.push_back(*W);
      // A tap that is exactly one filter element can be looped over.
      const StencilCoefficient &C = P.Weight;
      if (C.K == StencilCoefficient::FilterElement && C.FilterIndex.size() == 1)
        FilterTaps[O] = {
            C.FilterIndex[0] - (isStaged(C) ? Plan.Filter->First : 0), C.Scale,
            isStaged(C) ? std::nullopt
                        : std::optional<std::string>(C.SourceName)};
      if (Repeated)
        FilterTaps.erase(O);
      for (unsigned D = 0; D != 3; ++D) {
        Plan.Range[D].First = std::min(Plan.Range[D].First, O[D]);
        Plan.Range[D].Last = std::max(Plan.Range[D].Last, O[D]);
      }
    }
    if (Plan.columns() > 32)
      return refuse("the stencil spans " + std::to_string(Plan.columns()) +
                    " columns; a warp has 32 lanes");
    for (auto &[O, W] : Weights) {
      SystolicTap T{O, W, std::nullopt, 1.0};
      auto F = FilterTaps.find(O);
      if (F != FilterTaps.end()) {
        T.FilterIndex = F->second.Index;
        T.FilterScale = F->second.Scale;
      }
      Plan.Taps.push_back(T);
    }
    planFilterLoop(FilterTaps);
    // Partial sums run over x (the column), then z, then y.
    llvm::sort(Plan.Taps, [](const SystolicTap &A, const SystolicTap &B) {
      return std::tie(A.Offset[0], A.Offset[2], A.Offset[1]) <
             std::tie(B.Offset[0], B.Offset[2], B.Offset[1]);
    });
    return true;
  }

  struct FilterTap {
    int64_t Index;
    double Scale;
    std::optional<std::string> Array; ///< None: the staged filter.
  };

  /// Loops over the filter when the taps fill their box and every weight is
  /// the same array at an index affine in the offset.
  void planFilterLoop(const std::map<std::array<int64_t, 3>, FilterTap> &F) {
    size_t Box = size_t(Plan.columns()) * Plan.rows() * Plan.planes();
    if (F.size() != Plan.Taps.size() || F.size() != Box || F.empty())
      return;
    const auto &[O0, T0] = *F.begin(); // The box's first corner.
    FilterLoop L;
    L.Array = T0.Array;
    L.Scale = T0.Scale;
    for (unsigned D = 0; D != 3; ++D) {
      if (Plan.Range[D].First == Plan.Range[D].Last)
        continue;
      std::array<int64_t, 3> Next = O0;
      ++Next[D];
      auto It = F.find(Next);
      if (It == F.end())
        return;
      L.Stride[D] = It->second.Index - T0.Index;
    }
    L.Base = T0.Index;
    for (unsigned D = 0; D != 3; ++D)
      L.Base -= L.Stride[D] * O0[D];
    for (const auto &[O, T] : F) {
      int64_t Want = L.Base;
      for (unsigned D = 0; D != 3; ++D)
        Want += L.Stride[D] * O[D];
      if (T.Index != Want || T.Scale != L.Scale || T.Array != L.Array)
        return;
    }
    Plan.Loop = L;
  }

  /// Groups rows (dz, dy) by the runs of dx they read, merging neighbours
  /// with the same runs: a box is one group, a star two or three.
  void planReads() {
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> Columns;
    for (const SystolicTap &T : Plan.Taps)
      Columns[{T.Offset[2], T.Offset[1]}].push_back(T.Offset[0]);
    auto RunsOf = [](std::vector<int64_t> Xs) {
      llvm::sort(Xs);
      std::vector<TapRun> Runs;
      for (int64_t X : Xs)
        if (!Runs.empty() && Runs.back().Last + 1 >= X)
          Runs.back().Last = X;
        else
          Runs.push_back({X, X});
      return Runs;
    };
    std::vector<ReadGroup> Rows;
    for (auto &[ZY, Xs] : Columns) {
      std::vector<TapRun> Runs = RunsOf(Xs);
      if (!Rows.empty() && Rows.back().Z.First == ZY.first &&
          Rows.back().Y.Last + 1 == ZY.second && Rows.back().XRuns == Runs) {
        Rows.back().Y.Last = ZY.second;
        continue;
      }
      Rows.push_back({{ZY.first, ZY.first}, {ZY.second, ZY.second}, Runs});
    }
    // Whole planes with the same rows merge along z.
    for (const ReadGroup &G : Rows) {
      bool Merged = false;
      for (ReadGroup &P : Plan.Reads)
        if (P.Z.Last + 1 == G.Z.First && P.Y.First == G.Y.First &&
            P.Y.Last == G.Y.Last && P.XRuns == G.XRuns &&
            planeHasOneGroup(Rows, P.Z.Last) &&
            planeHasOneGroup(Rows, G.Z.First)) {
          P.Z.Last = G.Z.First;
          Merged = true;
          break;
        }
      if (!Merged)
        Plan.Reads.push_back(G);
    }
  }

  static bool planeHasOneGroup(const std::vector<ReadGroup> &Rows, int64_t Z) {
    return llvm::count_if(
               Rows, [Z](const ReadGroup &G) { return G.Z.First == Z; }) == 1;
  }

  const StencilShape &Shape;
  SystolicPlan Plan;
  std::string Refusal;
};

} // namespace

SystolicPlanResult planSystolic(const StencilShape &Shape) {
  return Planner(Shape).run();
}

} // namespace cuda_rewrite
