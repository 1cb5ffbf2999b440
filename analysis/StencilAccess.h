//===- StencilAccess.h - Neighbour offsets of stencil kernels ---*- C++ -*-===//
//
// The systolic rewrite (SSAM sections 3-4, docs/references.md) needs, for a
// kernel in which each thread computes one output point: which input arrays
// it reads at which constant offsets from its own point, with which weights,
// under which guard, and which single array it writes at its own point.
//
// A thread's point is given by its coordinates, computed from threadIdx,
// blockIdx and blockDim (`int x = blockIdx.x * blockDim.x + threadIdx.x;`).
// Index expressions are normalised to polynomials (analysis/AffineExpr.h);
// an offset is what separates a read from the output store, in units of the
// strides the store gives each coordinate (1, W, H*W; or the subscripts of a
// multi-dimensional array). Loops over filter taps with constant bounds are
// expanded. Anything the analysis cannot prove gives a refusal with a reason.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_STENCILACCESS_H
#define CUDA_REWRITE_ANALYSIS_STENCILACCESS_H

#include "analysis/ConfigPins.h"
#include "clang/AST/Decl.h"
#include "clang/AST/OperationKinds.h"
#include "clang/Basic/SourceLocation.h"
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// An offset in thread coordinates: DX along the dimension of threadIdx.x,
/// DY along threadIdx.y, DZ along threadIdx.z.
struct StencilOffset {
  int64_t DX = 0;
  int64_t DY = 0;
  int64_t DZ = 0;

  int64_t get(unsigned Dim) const { return Dim == 0 ? DX : Dim == 1 ? DY : DZ; }
  friend bool operator==(const StencilOffset &A, const StencilOffset &B) {
    return A.DX == B.DX && A.DY == B.DY && A.DZ == B.DZ;
  }
  friend bool operator!=(const StencilOffset &A, const StencilOffset &B) {
    return !(A == B);
  }
};

/// Where the weight of one read comes from. The weight is Scale times the
/// source's value (Scale alone for a Literal). Weights describe outputs that
/// are sums of reads times factors, possibly through local accumulators
/// (`s += w[i] * in[...]; out[c] = s / 9;`); a term without reads (a bias)
/// is not represented, and a read used in any other way (`in[a] * in[b]`,
/// `fmaxf(in[a], 0)`, a `?:`) has an Unknown weight.
struct StencilCoefficient {
  enum Kind {
    Literal,       ///< A number written in the code, or a product of them.
    Constant,      ///< A const/constexpr/__constant__ scalar variable.
    Parameter,     ///< A scalar kernel parameter.
    FilterElement, ///< An element of a filter array (parameter or
                   ///< __constant__ array).
    Unknown,       ///< Not a linear weight the analysis understands.
  };
  Kind K = Unknown;
  /// The product of the literal factors and signs on the way from the read
  /// to the output (1 for `sum += in[i]`, -4 for `-4 * in[i]`).
  double Scale = 1.0;
  /// Constant, Parameter, FilterElement: the variable or array.
  const clang::ValueDecl *Source = nullptr;
  std::string SourceName;
  /// Constant: the value, when it is fixed at compile time (const and
  /// constexpr variables; a __constant__ variable can be set by the host).
  std::optional<double> Value;
  /// FilterElement: the constant subscripts, outermost first; empty when
  /// the index is not a constant.
  std::vector<int64_t> FilterIndex;

  /// E.g. "0.25", "-c", "2*c", "w[2][0]", "w[?]", "?".
  std::string describe() const;
};

/// One conjunct of the guard as a bound on an output coordinate:
/// `coordinate(Dim) Op Limit`, where the coordinate is the one the output
/// index uses (for `out[y*W + x]` with `x = ... + threadIdx.x + 1`, x itself;
/// when the output index has a base that is not a multiple of the strides,
/// `out[y*W + x + base]`, the thread's blockIdx * blockDim + threadIdx).
struct CoordinateBound {
  unsigned Dim = 0; ///< 0 = x, 1 = y, 2 = z.
  clang::BinaryOperatorKind Op = clang::BO_LT;
  std::string Limit;                 ///< E.g. "W - 1".
  std::optional<int64_t> LimitValue; ///< When the limit is a constant.

  std::string describe() const; ///< E.g. "x < W - 1".
};

/// One read of an input at one offset (one tap of an expanded loop).
struct StencilPoint {
  StencilOffset Offset;
  const clang::ValueDecl *Input = nullptr;
  StencilCoefficient Weight;
  /// The read is under a condition that does not guard the output store
  /// (a `?:` or an `if` inside the body), so it may not happen.
  bool Conditional = false;
  /// The read happens where these bounds on the output coordinates hold and
  /// gives 0 elsewhere (`(x < W - 1) ? in[p + 1] : 0`): a tap of a zero
  /// border (StencilShape::ReadLimits). Empty for a read with no such `?:`.
  std::vector<CoordinateBound> When;
  clang::SourceLocation Loc;
};

/// How the coordinates come from one linear thread index when the kernel
/// splits it (`int i = idx % n, j = idx / n;`): x = L % Divisor and
/// y = L / Divisor, where L = blockIdx.x * BlockFactor[0] + threadIdx.x.
struct LinearSplit {
  std::string Divisor; ///< E.g. "n", over the kernel's parameters.
  /// The guard's bounds on L itself, as `L < Limit` (`idx < n * n`).
  std::vector<std::string> Limits;
};

enum class ElementKind { Float, Double, Other };

/// How an array's index is formed from the thread's coordinates, as source
/// text that generated code can use: subscript K (outermost first; one for a
/// flat index) is sum over d of Strides[K][d] * coordinate_d, plus Rest[K].
/// A coordinate is threadIdx.d + blockIdx.d * BlockFactor[d], before the
/// output's origin is added. For an input, Rest is where offset 0 lies.
struct ArrayIndexing {
  const clang::ValueDecl *Array = nullptr;
  std::vector<std::array<std::string, 3>> Strides; ///< "" where zero.
  std::vector<std::string> Rest;

  /// The element at the coordinates given as expressions, e.g.
  /// "in[(W) * (row) + (col)]".
  std::string element(const std::array<std::string, 3> &Coordinates) const;
};

struct StencilShape {
  const clang::FunctionDecl *Kernel = nullptr;
  /// The thread dimensions the output index uses (x, y, z).
  std::array<bool, 3> UsesDim = {false, false, false};
  unsigned Rank = 0; ///< How many of UsesDim are set.
  /// The distinct offsets, in order of first appearance (source order, loops
  /// expanded outermost first).
  std::vector<StencilOffset> Offsets;
  /// Every read with its weight; an offset read twice appears twice.
  std::vector<StencilPoint> Points;
  const clang::ValueDecl *Output = nullptr;
  /// The arrays read at thread-dependent indices, in order of first read.
  std::vector<const clang::ValueDecl *> Inputs;
  clang::SourceLocation StoreLoc;
  /// The stride of each used coordinate in the output's flattened index
  /// ("1", "W", "H*W"); for a multi-dimensional array, the subscript it
  /// indexes ("[1]"). Empty for unused dimensions.
  std::array<std::string, 3> OutputStrides;
  ElementKind Element = ElementKind::Other;
  std::string ElementType; ///< The output's element type as written.
  /// Every input and the output are __restrict__ pointers (or arrays that
  /// are distinct variables), so the caller promises they do not overlap.
  bool NoAlias = false;
  /// The conditions that must hold for the store to run, as source text
  /// joined by " && " (`if` conditions around it, `!(c)` for each early
  /// `if (c) return;`); empty when the store always runs.
  std::string Guard;
  /// The conjuncts of Guard that compare an output coordinate with a value
  /// that does not depend on the thread.
  std::vector<CoordinateBound> Bounds;
  /// Guard is exactly the conjunction of Bounds (and Split's Limits).
  bool GuardIsSimple = true;
  /// Set when the coordinates are split from one linear thread index.
  std::optional<LinearSplit> Split;
  /// Zero borders: the original reads no input point beyond these bounds
  /// (on the read point's coordinates, in the output's: coordinate plus
  /// origin), and each tap that would reach beyond them gives 0 there
  /// (StencilPoint::When). Empty when no read is masked.
  std::vector<CoordinateBound> ReadLimits;
  /// Periodic borders: where set, the reads along that coordinate wrap into
  /// [0, Period) (`in[y * W + (x + 1) % W]`), so they are correct offsets
  /// only for points whose coordinate lies in [0, Period): the guard or the
  /// split bounds the written points by it (PeriodBoundsPoints), or the
  /// launcher must check that the launch's extent does not pass it.
  std::array<std::string, 3> Periods;
  std::array<bool, 3> PeriodBoundsPoints = {false, false, false};

  // What code generation needs beyond the offsets (the systolic pass).
  /// K_d of each used coordinate, "blockDim.x" or a number.
  std::array<std::string, 3> BlockFactor;
  /// The stored point is the coordinate plus Origin (`x = ... + 1` gives 1).
  std::array<int64_t, 3> Origin = {0, 0, 0};
  /// The output's indexing, then each input's (in the order of Inputs).
  std::vector<ArrayIndexing> Indexing;
  /// Why Indexing, BlockFactor or the Bounds' limits cannot be used in a new
  /// kernel (an input read with two different bases, a limit that depends
  /// on blockDim); empty when they can.
  std::string CodegenProblem;
  /// Every subscript and pointer offset the kernel evaluates is a signed
  /// integer of at most 32 bits, so the original computes each index it
  /// uses in int, and a kernel that reads and writes the same points may too.
  bool Index32 = false;
  /// A term of the stored value that reads no input (`+ 1.0f`, `+ bias`):
  /// the weights then do not describe the whole value. Empty when none.
  std::string ReadFreeTerm;
  /// The values this shape was computed for that come from macros or named
  /// constants (strides, offsets, bounds, weights, loop trips): generated
  /// code pins them with static_asserts, so another build fails to compile
  /// rather than run a rewrite made for other values.
  ConfigPins Pins;

  /// The largest |offset| over all dimensions.
  int64_t radius() const;
};

/// The outcome of analyzeStencil: a shape, or why there is none.
struct StencilResult {
  std::optional<StencilShape> Shape;
  std::string Refusal;       ///< Set when Shape is not.
  clang::SourceLocation Loc; ///< What the refusal is about.

  explicit operator bool() const { return Shape.has_value(); }
};

/// Most offsets a kernel may have after loop expansion; beyond it the
/// analysis refuses rather than enumerating.
constexpr size_t MaxStencilOffsets = 4096;
/// Largest |offset| in any dimension; a read farther away is no neighbour.
constexpr int64_t MaxStencilRadius = 4096;

/// Analyses a __global__ function with a body.
StencilResult analyzeStencil(const clang::FunctionDecl &Kernel);

/// One line for --list, e.g. "2D star radius 1: 5 points (0,0) (-1,0)
/// (1,0) (0,-1) (0,1) into out from in". Shapes: "star" (points on the axes
/// through the centre), "box" (a full rectangle), otherwise "irregular".
std::string describeOffsets(const StencilShape &Shape);

} // namespace cuda_rewrite

#endif
