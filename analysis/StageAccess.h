//===- StageAccess.h - Where an image stage reads its inputs ----*- C++ -*-===//
//
// A stage of an image pipeline (samples/fuse/) writes the point of its own
// coordinates and reads its inputs near them: at constant offsets, clamped
// to the image, or at scaled coordinates (2x for downsampling, x / 2 for
// upsampling). The fuse pass (PolyMage-GPU, issue 6) needs those reads as
// numbers to align producer and consumer tiles. This analysis finds them:
// for every load of a pointer parameter, each coordinate read as
//
//   clamp((Scale * coord + Add) / Divisor + Offset, Lo, Hi)
//
// (C division, truncating; the clamp optional), where coord is the thread's
// coordinate along the same axis, given by the kernel's prologue
// (`int x = blockIdx.x * blockDim.x + threadIdx.x;`, `int c = blockIdx.z;`).
// The index is split into x, y and z parts by the strides its coordinates
// are multiplied by (`(c * H + y) * W + x`). A clamp is a call of a
// function whose body is `v < lo ? lo : v > hi ? hi : v` (image::clamp).
//
// It does not look at guards or at what is computed from the values: the
// pass checks those. A kernel whose reads or writes do not fit is refused
// with the reason and where.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_STAGEACCESS_H
#define CUDA_REWRITE_ANALYSIS_STAGEACCESS_H

#include "analysis/ConfigPins.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// A value of the form `param + k` (or `k`, with a null Param): how the
/// fuse pass compares bounds across stages, through the launches'
/// arguments.
struct ParamPlusConstant {
  const clang::ParmVarDecl *Param = nullptr;
  int64_t Constant = 0;
};

/// One coordinate of a read (see the file comment).
struct CoordinateRead {
  unsigned Axis = 0; ///< The thread coordinate it follows: 0 x, 1 y, 2 z.
  int64_t Scale = 1; ///< 0: a fixed index, Offset.
  int64_t Add = 0, Divisor = 1, Offset = 0;
  bool Clamped = false;
  std::string Lo, Hi; ///< The clamp's bounds as written.
  /// The clamp's bounds as a parameter plus a constant (a null parameter:
  /// the constant alone), where they have that form.
  std::optional<ParamPlusConstant> LoValue, HiValue;
  std::string ClampFunction; ///< The clamp's callee as written.
  const clang::CallExpr *ClampCall = nullptr; ///< The clamp itself.
};

struct StageRead {
  const clang::ParmVarDecl *Buffer = nullptr;
  /// x, then y, then z if the index has a plane part.
  std::vector<CoordinateRead> Coordinates;
  clang::SourceLocation Loc;
  /// What the y and z parts of the index are multiplied by, as products of
  /// names (`W`; `H * W`), empty where the index has no such part. Two
  /// accesses with the same strides (through the launches' arguments) and
  /// coordinates name the same element.
  std::vector<const clang::ValueDecl *> RowStride, PlaneStride;
};

/// A bound of the points a stage writes, from its guards: Lower ones say
/// coord >= Limit + Add, upper ones coord < Limit + Add.
struct StageBound {
  unsigned Axis = 0;
  bool Upper = false;
  std::string Limit; ///< As written.
  int64_t Add = 0;
  /// Limit as `param + k`, where it has that form.
  std::optional<ParamPlusConstant> LimitValue;
};

/// How the prologue computes a coordinate.
enum class CoordinateForm {
  Absent,
  Global,     ///< blockIdx.d * blockDim.d + threadIdx.d
  BlockIndex, ///< blockIdx.d alone (a channel)
};

struct StageAccess {
  /// From `if (x >= W || ...) return;` and `if (x < W && ...) { ... }` at
  /// the top of the body; none along an axis means the launch's extent.
  std::vector<StageBound> Bounds;
  std::vector<StageRead> Reads;
  /// The buffers written at the thread's own point.
  std::vector<const clang::ParmVarDecl *> Writes;
  /// Every store, as a StageRead of its own point (for the strides).
  std::vector<StageRead> Stores;
  /// The variables holding x, y, z (null where absent) and their forms.
  const clang::VarDecl *CoordinateVar[3] = {nullptr, nullptr, nullptr};
  CoordinateForm Form[3] = {CoordinateForm::Absent, CoordinateForm::Absent,
                            CoordinateForm::Absent};
  /// The constants folded into Reads, Stores and Bounds that another build
  /// may define otherwise (macros, named constants): the fused code pins
  /// them (analysis/ConfigPins.h).
  ConfigPins Pins;
  std::string Refusal; ///< Empty when the kernel fits.
  clang::SourceLocation RefusalLoc;
  explicit operator bool() const { return Refusal.empty(); }
};

StageAccess analyzeStageAccess(const clang::FunctionDecl &Kernel);

/// How far, along one axis of the buffer, a consumer's point reaches into
/// it: the read coordinate is (Num * c) / Den plus an offset in [Lo, Hi],
/// c the consumer's coordinate along ConsumerAxis (Num 0: a fixed index,
/// Lo). The offsets cover the rounding of divisions (either way, as C
/// truncates), so the range is safe for tiling, if not tight.
struct AxisDependence {
  unsigned ConsumerAxis = 0;
  int64_t Num = 1, Den = 1;
  int64_t Lo = 0, Hi = 0;
  bool Clamped = false; ///< Some read is clamped (at the borders only).
};

/// The dependence of a consumer on one buffer, per axis of the buffer, from
/// its reads of it (readsAlong); nullopt, with \p Why, where two reads
/// follow an axis at different scales or from different coordinates.
std::optional<std::vector<AxisDependence>>
dependenceOf(const std::vector<StageRead> &Reads, std::string &Why);

/// "x: 2x + [-2, 2], y: y / 2 + [-1, 2] (clamped)".
std::string describeDependence(const std::vector<AxisDependence> &Axes);

/// "x in [1, W - 1), y < H": the points the stage writes.
std::string describeStageDomain(const StageAccess &Access);

/// "in[clamp(x - 1, 0, W - 1), y]", "in[2x - 2, (y + 1) / 2 - 1, c]".
std::string describeStageRead(const StageRead &Read);

} // namespace cuda_rewrite

#endif
