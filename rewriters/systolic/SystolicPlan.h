//===- SystolicPlan.h - What an SSAM kernel computes, or why not -*- C++
//-*-===//
//
// Turns a stencil's analysis (analysis/StencilAccess.h) into what the
// generated kernel needs: the taps with their weights as C++ expressions,
// the box of points the original kernel writes, and which input points it
// reads (the generated kernel loads only those, so it touches no memory the
// original did not). Everything the SSAM form cannot reproduce exactly is a
// refusal with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICPLAN_H
#define CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICPLAN_H

#include "analysis/Refusal.h"
#include "analysis/StencilAccess.h"
#include "rewriters/systolic/SystolicModel.h"
#include "clang/AST/ASTContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One term of a tap's weight, held as what it is rather than as text, so
/// that code generation names the staged filter and knows the user's names
/// it must not shadow without reading them back out of a string.
struct WeightTerm {
  enum Kind {
    Number,        ///< Value, a literal of the element type.
    Variable,      ///< Scale * Name (a parameter or named constant).
    ArrayElement,  ///< Scale * Name[Index...] (a filter array).
    StagedElement, ///< Scale * the staged filter's copy [Index[0]].
  } K = Number;
  /// Number's value, else the factor in front of the value.
  double Value = 1.0;
  /// Variable's or ArrayElement's name, as the source spells it.
  std::string Name;
  /// Converted to the element type (a variable of another type; every
  /// array element, as a filter of any type may be read).
  bool Cast = false;
  std::vector<int64_t> Index;
};

/// A tap's weight: the sum of its terms (points read twice are added).
using WeightExpr = std::vector<WeightTerm>;

/// \p Weight as a C++ expression of the element type \p ElementType
/// (\p IsDouble: double, else float), \p StagedName naming the staged
/// filter's copy (asked for only when a term reads it).
std::string weightText(const WeightExpr &Weight, llvm::StringRef ElementType,
                       bool IsDouble,
                       llvm::function_ref<std::string()> StagedName);

/// One offset with its total weight (points read twice are added).
struct SystolicTap {
  std::array<int64_t, 3> Offset = {0, 0, 0};
  WeightExpr Weight;
  /// The tap is one element of a filter array with one subscript:
  /// its index and the factor in front of it.
  std::optional<int64_t> FilterIndex;
  double FilterScale = 1.0;
};

/// A full box of taps whose weights are Source[Base + sum_d Stride[d] *
/// offset_d] * Scale: the generated code loops over the filter (SSAM,
/// Listing 1) instead of spelling out every tap.
struct FilterLoop {
  /// The array's name, as the source spells it; none for the staged
  /// filter's copy.
  std::optional<std::string> Array;
  int64_t Base = 0;
  std::array<int64_t, 3> Stride = {0, 0, 0};
  double Scale = 1.0;
};

/// Points along x whose loads feed some output: x - dx in the written range
/// for dx in [First, Last].
struct TapRun {
  int64_t First = 0, Last = 0;

  friend bool operator==(const TapRun &A, const TapRun &B) {
    return A.First == B.First && A.Last == B.Last;
  }
};

/// The reads at offsets dz in [Z.First, Z.Last], dy in [Y.First, Y.Last],
/// and dx in one of XRuns: the loads of a point are needed when it lies
/// within one such group's reach of the written box.
struct ReadGroup {
  TapRun Z, Y;
  std::vector<TapRun> XRuns;
};

/// A filter array read through a pointer, copied to shared memory first
/// (SSAM section 4.6): the elements [First, Last] it reads.
struct StagedFilter {
  std::string Name;
  std::string ElementType;
  int64_t First = 0, Last = 0;
};

/// One bound of the written box in coordinates (before the output's
/// origin): coordinate >= Lower or coordinate < Upper, as source text.
struct BoxBound {
  unsigned Dim = 0;
  bool IsLower = true;
  std::string Value;
  std::optional<int64_t> Constant; ///< When the limit is a number.
};

/// The largest launch extent, and constant bound, of a kernel that indexes
/// with int (SystolicPlan::Index32); a larger launch runs the original
/// kernel. Half of int's range, so that a tile past the end (a grid-stride
/// step of up to 65535 tiles) cannot overflow.
constexpr int64_t MaxIndex32Extent = int64_t(1) << 30;

struct SystolicPlan {
  const clang::FunctionDecl *Kernel = nullptr;
  unsigned Rank = 2;
  std::string ElementType;
  bool IsDouble = false;
  /// Offset range per dimension (x, y, z); z is [0, 0] in 2D.
  std::array<TapRun, 3> Range;
  /// Sorted by x, then z, then y: the order the partial sums visit them.
  std::vector<SystolicTap> Taps;
  std::vector<ReadGroup> Reads;
  std::vector<BoxBound> Bounds;
  /// Zero borders (StencilShape::ReadLimits): the original reads no input
  /// point beyond these, and the kernel loads none, so the masked taps take
  /// 0 from the cache there.
  std::vector<BoxBound> ReadLimits;
  /// The coordinates are split from one linear thread index; the launch's
  /// extents come from its threads (StencilShape::Split).
  std::optional<LinearSplit> Split;
  /// Periodic borders (StencilShape::Periods): the kernel loads the input
  /// at coordinates wrapped into [0, period) along these.
  std::array<std::string, 3> Periods;
  std::array<bool, 3> PeriodBoundsPoints = {false, false, false};
  /// An instantiation of a template kernel: its template arguments as the
  /// generated specializations name them (`<1, float>`), and the template's
  /// parameter list for the primary templates (`template <int R, typename
  /// T>`). Empty for a kernel that is no template.
  std::string TemplateArgs, TemplateHead;
  std::optional<StagedFilter> Filter;
  std::optional<FilterLoop> Loop;
  ArrayIndexing Output, Input;
  /// K_d of `coordinate = blockIdx.d * K_d + threadIdx.d`: "blockDim.x" or a
  /// number (then the launch must use blocks of K_d threads along d).
  std::array<std::string, 3> BlockFactor;
  /// The original computes every index in int (StencilShape::Index32) and
  /// no constant bound is near int's limit: the kernel indexes with int,
  /// which saves the 64-bit multiplies of every row's address (about 12% of
  /// the time of a 2D 5-point stencil on an H200).
  bool Index32 = false;
  SystolicGeometry Geometry;

  unsigned columns() const {
    return unsigned(Range[0].Last - Range[0].First + 1);
  }
  unsigned rows() const { return unsigned(Range[1].Last - Range[1].First + 1); }
  unsigned planes() const {
    return unsigned(Range[2].Last - Range[2].First + 1);
  }
};

using SystolicPlanResult = PlanOrRefusal<SystolicPlan>;

/// The plan for \p Shape, or why the SSAM form would not compute exactly
/// what the kernel does.
SystolicPlanResult planSystolic(const StencilShape &Shape);

/// The shortest decimal spelling of \p V that reads back exactly as a float
/// (\p AsFloat) or a double, with an `f` suffix for float.
std::string exactLiteral(double V, bool AsFloat);

} // namespace cuda_rewrite

#endif
