//===- FuseCostModel.h - Algorithm 2's cost of a fused group ----*- C++ -*-===//
//
// The cost function of PolyMage-GPU (section 6, Algorithm 2;
// docs/references.md) and the dynamic-programming fusion (DP-Fusion, the
// paper's ref. [14]) that uses it, over plain data: the fuse pass fills
// CostStage from its FuseGroup (regions, inlining, element types) and the
// GpuSpec, so this library knows nothing of the AST and is tested on hand-made
// groups.
//
// A fused kernel runs one overlapped tile per warp: the warp's output tile
// is 32 * ColumnsPerLane columns by Rows rows, Warps warps per block stacked
// along y. Each non-inlined stage is computed over its region around the
// tile (RegionLo <= 0 <= RegionHi); one with an on-chip tile keeps the
// region in shared memory, or with hybrid tiling (section 5) keeps its
// rightmost whole 32-column chunks in registers. An inlined stage has no
// tile: its readers recompute it at each point they read.
//
// The cost is line 35's weighted sum of seven terms, each normalised so
// that the weights are comparable across groups and images (see CostTerms).
// Where the paper's text is garbled or does not fit this code generator,
// FuseCostModel.cpp says what it does instead, term by term.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSECOSTMODEL_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSECOSTMODEL_H

#include "gpu/GpuSpec.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One global buffer a stage reads (an input of the group).
struct CostRead {
  unsigned ElementBytes = 4;
  /// The constant offsets read around the point: columns [XLo, XHi] and
  /// rows [YLo, YHi] (a 3x3 window is -1..1 on both).
  int64_t XLo = 0, XHi = 0;
  int64_t YLo = 0, YHi = 0;
  /// Points of the buffer per point of the reader along x and y (2 for a
  /// downsampling read at 2x + k, 0.5 for an upsampling one at x / 2).
  double XScale = 1, YScale = 1;
};

/// One stage of a group, in the group's order.
struct CostStage {
  std::string Name;
  /// Around the warp's output tile: computed over columns
  /// [x0 + RegionLo[0], x0 + TileW + RegionHi[0]) and likewise for rows.
  /// For an inlined stage, the points where it is evaluated (its global
  /// reads' footprint); its cost comes from its readers instead.
  int64_t RegionLo[2] = {0, 0}, RegionHi[2] = {0, 0};
  /// The stage's scale relative to the output tile (FuseStage::Scale): its
  /// region spans ScaleNum * TileW / ScaleDen points plus the halo, which
  /// must be whole.
  int64_t ScaleNum[2] = {1, 1}, ScaleDen[2] = {1, 1};
  bool Inlined = false;
  /// Inlined stages: how many times each point of a reader evaluates it.
  unsigned ReadsPerReaderPoint = 1;
  /// Inlined stages: the indices in the group of the stages that read it
  /// (later stages only); empty means the next stage.
  std::vector<unsigned> Readers;
  /// Bytes per point of its on-chip tiles (all of its outputs kept on
  /// chip); > 0: it has a tile.
  unsigned TileElementBytes = 0;
  bool HybridEligible = true; ///< Its tile may go partly to registers.
  std::vector<CostRead> GlobalReads;
  /// Bytes stored to global memory per output point (0: on chip only).
  /// Stores cover the warp's output tile, not the region.
  unsigned GlobalStoreBytes = 0;
  /// Instructions per point: a proxy for the paper's TIMEPERITER.
  double WorkPerPoint = 1;
  unsigned Registers = 16; ///< Registers per thread of the stage alone.
  /// Constant tables the block copies to shared memory once
  /// (StagedTables.h), in bytes: shared memory per block, and loads and
  /// stores per block that the block's warps share.
  uint64_t StagedTableBytes = 0;
};

/// One candidate of the argmin over tile sizes, block sizes and the
/// fraction of each tile kept in registers.
struct CostConfig {
  unsigned ColumnsPerLane = 1, Rows = 8, Warps = 4;
  /// Hybrid tiling: split along x (SplitAxis 0), the rightmost
  /// round(ColumnsPerLane * f) 32-column chunks of each eligible tile live
  /// in registers; split along y (1), its last round(Rows * f) rows. f > 0
  /// must keep at least one chunk or row.
  double RegisterFraction = 0;
  unsigned SplitAxis = 0;
  /// The global-memory transaction size: 32 (L2 sectors, what Hopper's
  /// DRAM traffic is made of) or 128 (L1 lines).
  unsigned TransactionBytes = 32;

  unsigned tileWidth() const { return 32 * ColumnsPerLane; }
  /// The register chunks per tile split along x: round(ColumnsPerLane * f).
  unsigned registerChunks() const;
  /// The register rows per region split along y: round(Rows * f).
  unsigned registerRows() const;
};

/// The image the group computes; Width or Height 0 means unknown at
/// compile time (the terms are then those of one interior tile and the
/// load-imbalance term is 0).
struct ImageExtent {
  int64_t Width = 0, Height = 0, Planes = 1;
  bool known() const { return Width > 0 && Height > 0 && Planes > 0; }
};

/// w1..w7 of line 35, in CostTerms' order.
struct CostWeights {
  double W[7] = {0, 0, 0, 0, 0, 0, 0};
  /// Placeholders until a GPU calibration replaces them
  /// (bench/experiments/fuse_calibrate.py prints a new initializer).
  static CostWeights defaults();
};

/// The seven terms of line 35, before weighting, and what led to them.
struct CostTerms {
  /// t1: global-memory transactions (of TransactionBytes) per output point
  /// of the image, loads and stores, edge tiles counted whole.
  double GlobalTransactions = 0;
  double OneMinusOccupancy = 0; ///< t2: 1 - resident warps / max warps.
  /// t3: memory time over compute time for one warp tile (the paper's
  /// achieved-occupancy proxy): above 1, warps mostly wait on memory.
  double MemOverCompute = 0;
  double UnallocatedShared = 0; ///< t4: of the SM, all resident blocks.
  double UnusedRegisters = 0;   ///< t5: of the SM, all resident warps.
  /// t6: work computed per tile over the work of computing each stage once
  /// per output point, minus 1 (the redundant fraction; inlined
  /// recomputation included, weighted by WorkPerPoint).
  double OverlapFraction = 0;
  /// t7: the share of block slots idle over all waves, from the last,
  /// partly filled wave (0 when the extent is unknown).
  double ExtraBlocks = 0;

  double Total = 0; ///< The weighted sum; +inf when infeasible.
  bool Feasible = false;
  std::string Why; ///< Why it is infeasible.

  // The figures behind the terms, for remarks and the calibration.
  uint64_t SharedBytesPerWarp = 0, SharedBytesPerBlock = 0;
  unsigned RegistersPerThread = 0;     ///< Before allocation rounding.
  unsigned BlocksPerSm = 0;            ///< Resident blocks per SM.
  double Occupancy = 0;                ///< Resident warps / max warps per SM.
  uint64_t WarpTiles = 0, Blocks = 0;  ///< 0 when the extent is unknown.
  double TransactionsPerTile = 0;      ///< Per warp tile.
  double ComputedWorkPerTile = 0;      ///< Sum of WorkPerPoint * points.
  double MemTime = 0, ComputeTime = 0; ///< Seconds, per warp tile.

  static constexpr unsigned NumTerms = 7;
  /// t1..t7 in line 35's order (the calibration's CSV columns).
  std::array<double, NumTerms> terms() const;
  static llvm::StringRef termName(unsigned I);
};

/// Algorithm 2: the cost of computing \p Stages as one fused kernel with
/// \p Config on \p Spec. Infeasible (Total = +inf, Why set) when a block's
/// shared memory exceeds \p SharedLimitPerBlock (0: the spec's opt-in
/// limit), a thread needs more registers than the spec allows, or the
/// configuration is malformed.
CostTerms estimateGroupCost(const std::vector<CostStage> &Stages,
                            const ImageExtent &Extent, const CostConfig &Config,
                            const GpuSpec &Spec, const CostWeights &Weights,
                            uint64_t SharedLimitPerBlock = 0);

struct CostChoice {
  CostConfig Config;
  CostTerms Terms;
};

/// The feasible candidate of least Total (the earlier one on ties), or
/// none if no candidate is feasible.
std::optional<CostChoice>
chooseConfig(const std::vector<CostStage> &Stages, const ImageExtent &Extent,
             const GpuSpec &Spec, const CostWeights &Weights,
             const std::vector<CostConfig> &Candidates,
             uint64_t SharedLimitPerBlock = 0);

/// ColumnsPerLane in {1, 2, 4} x Rows in {1, 2, 4, 8, 16, 32} x Warps in
/// {2, 4, 8} x RegisterFraction in {0} (or {0, 0.5, 1} split along x and
/// then y with \p AllowHybrid, where f keeps a whole number >= 1 of chunks
/// or rows), in that nesting order, fraction innermost.
std::vector<CostConfig> defaultCandidates(bool AllowHybrid);

/// A run of consecutive stages [Begin, End) fused into one kernel.
struct FusionSegment {
  unsigned Begin = 0, End = 0;
  double Cost = 0;
};

/// DP-Fusion for a chain: the partition of [0, NumStages) into consecutive
/// segments of least summed cost. \p GroupCost(Begin, End) is nullopt for
/// an illegal group; a single stage is always a segment (cost +inf if
/// GroupCost refuses it). Calls GroupCost at most once per (Begin, End).
/// On ties the partition with the longer last segment wins.
std::vector<FusionSegment>
dpFusion(unsigned NumStages,
         llvm::function_ref<std::optional<double>(unsigned Begin, unsigned End)>
             GroupCost);

/// One line for remarks: "tile 64x8, 4 warps, registers 0.5: cost 3.12
/// (transactions/pt 0.41, occupancy 0.75, ...)".
std::string describeCost(const CostChoice &Choice);

} // namespace cuda_rewrite

#endif
