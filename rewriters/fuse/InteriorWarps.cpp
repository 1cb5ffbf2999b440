//===- InteriorWarps.cpp - Fused kernels' interior warps ------------------===//

#include "rewriters/fuse/InteriorWarps.h"
#include "llvm/ADT/STLExtras.h"
#include <map>
#include <tuple>

using namespace clang;

namespace cuda_rewrite {

std::string readCoordinate(const CoordinateRead &C, const std::string &V) {
  if (C.Scale == 1 && C.Divisor == 1)
    return plusConstant(V, C.Offset + C.Add);
  // V is a name or parenthesized; Scale * V / Divisor divides the
  // product.
  std::string Text = C.Scale == 1 ? V : std::to_string(C.Scale) + " * " + V;
  if (C.Add != 0)
    Text = "(" + plusConstant(Text, C.Add) + ")";
  if (C.Divisor != 1)
    Text += " / " + std::to_string(C.Divisor);
  return plusConstant(Text, C.Offset);
}

std::set<const CallExpr *> clampsInteriorWarpsSkip(const FuseGroup &G) {
  std::set<const CallExpr *> Unclamped;
  for (const FuseStage &S : G.Stages)
    for (const StageRead &R : S.Access.Reads)
      for (const CoordinateRead &C : R.Coordinates) {
        auto Mappable = [&](const std::optional<ParamPlusConstant> &V) {
          return V && (!V->Param ||
                       V->Param->getFunctionScopeIndex() < S.ArgText.size());
        };
        if (C.Clamped && C.ClampCall && C.Axis < 2 && Mappable(C.LoValue) &&
            Mappable(C.HiValue))
          Unclamped.insert(C.ClampCall);
      }
  return Unclamped;
}

std::optional<std::vector<std::string>>
interiorConditions(const FuseGroup &G, const FuseTile &T,
                   const std::set<const CallExpr *> &Unclamped,
                   BoundText Bound) {
  // `origin + offset op limit`, keeping per (origin, op, limit) only the
  // offset that implies the others.
  std::vector<std::tuple<std::string, std::string, std::string>> Keys;
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> Offset;
  auto Add = [&](const std::string &Origin, int64_t K, const std::string &Op,
                 const std::string &Limit) {
    auto Key = std::make_tuple(Origin, Op, Limit);
    auto [It, New] = Offset.try_emplace(Key, K);
    if (New)
      Keys.push_back(Key);
    else
      It->second =
          Op == ">=" ? std::min(It->second, K) : std::max(It->second, K);
  };
  // Conditions on scaled reads, which do not combine that way.
  std::vector<std::string> Scaled;
  for (const FuseStage &S : G.Stages) {
    if (!S.Needed)
      continue;
    for (unsigned D : {0u, 1u}) {
      std::string Origin = scaledOrigin(S, D, D ? "y0" : "x0");
      int64_t Extent = regionExtent(S, D, D ? T.Rows : T.width());
      int64_t First = S.RegionLo[D], Last = First + Extent - 1;
      // An inlined stage has no loop and no guards (its readers read only
      // points it writes): only its clamps matter. A stage of another
      // grid than the last's has guards that bound it instead of the
      // launch (FusePlan).
      if (!S.Inlined) {
        Add(Origin, First, ">=", "0");
        if (S.Grid == 0)
          Add(Origin, Last, "<", D ? "extentY" : "extentX");
      }
      for (const StageBound &B : S.Access.Bounds) {
        if (B.Axis != D || S.Inlined)
          continue;
        std::optional<std::string> L = Bound(S, B.LimitValue);
        if (!L)
          return std::nullopt;
        std::string Limit = plusConstant(*L, B.Add);
        if (B.Upper)
          Add(Origin, Last, "<", Limit);
        else
          Add(Origin, First, ">=", Limit);
      }
      for (const StageRead &R : S.Access.Reads)
        for (const CoordinateRead &C : R.Coordinates) {
          if (C.Axis != D || !Unclamped.count(C.ClampCall))
            continue;
          if (C.Scale == 1 && C.Divisor == 1) {
            int64_t K = C.Offset + C.Add;
            Add(Origin, First + K, ">=", *Bound(S, C.LoValue));
            Add(Origin, Last + K, "<=", *Bound(S, C.HiValue));
            continue;
          }
          // The read's coordinate grows with the point's: its values at
          // the region's ends bound the others.
          for (auto [End, Op, Limit] :
               {std::make_tuple(First, ">=", *Bound(S, C.LoValue)),
                std::make_tuple(Last, "<=", *Bound(S, C.HiValue))}) {
            std::string Point = plusConstant(Origin, End);
            if (Point.find(' ') != std::string::npos)
              Point = "(" + Point + ")";
            if (C.Divisor == 1) {
              // Linear: reads that differ by a constant combine.
              Add(std::to_string(C.Scale) + " * " + Point, C.Add + C.Offset, Op,
                  Limit);
              continue;
            }
            std::string Text =
                readCoordinate(C, Point) + " " + Op + " " + Limit;
            if (!llvm::is_contained(Scaled, Text))
              Scaled.push_back(Text);
          }
        }
    }
  }
  std::vector<std::string> Conditions;
  for (const auto &Key : Keys)
    Conditions.push_back(plusConstant(std::get<0>(Key), Offset[Key]) + " " +
                         std::get<1>(Key) + " " + std::get<2>(Key));
  Conditions.insert(Conditions.end(), Scaled.begin(), Scaled.end());
  return Conditions;
}

} // namespace cuda_rewrite
