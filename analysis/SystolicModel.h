//===- SystolicModel.h - Choosing P and the block size for SSAM -*- C++ -*-===//
//
// An SSAM kernel (seed 002, section 4) caches C = P + N - 1 input rows per
// thread and shifts partial sums across M columns of lanes, so each warp
// loads a 32 x C window to produce (32 - (M - 1)) x P outputs. The paper's
// halo model (section 5.3) measures the redundant part of that window,
//   HR = (S*C - (S - (M-1)) * P) / (S*C),  S = 32,
// which falls as P grows. In 2D, registers (C values, two per double) bound
// P from above, since a thread that spills its cache to local memory loses
// the point of it: the model takes the largest P whose estimated registers
// keep at least half the SM's threads resident (enough loads in flight to
// cover DRAM latency on the H100/H200; the GPU spec gives the register
// file). In 3D a warp streams along z and keeps one plane of C rows per z
// offset, so registers grow Window times faster; the model takes the
// smallest P whose halo is at most half of the loads. Blocks have the
// paper's 128 threads (4 warps: small blocks tile narrow domains evenly).
// Both rules were checked by a sweep of P on an H200 (bench/RESULTS.md).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_SYSTOLICMODEL_H
#define CUDA_REWRITE_ANALYSIS_SYSTOLICMODEL_H

#include <optional>
#include <string>

namespace cuda_rewrite {

struct GpuSpec;

/// What the model needs to know of a stencil.
struct SystolicGeometry {
  unsigned Columns = 1; ///< M: distinct x offsets, min to max.
  unsigned Rows = 1;    ///< N: distinct y offsets, min to max.
  unsigned Planes = 1;  ///< z offsets, min to max (1 in 2D).
  unsigned Taps = 1;    ///< Points with a weight.
  /// The weights come from a filter array (shared or __constant__ memory):
  /// the unrolled code keeps them in registers across the P rows, unlike
  /// literals and parameters, which are instruction operands.
  bool WeightsInRegisters = false;
  unsigned ElementBytes = 4;
};

struct SystolicShape {
  unsigned RowsPerThread = 1; ///< P.
  unsigned WarpsPerBlock = 4;
  /// 3D: planes each warp streams through (its z chunk).
  unsigned PlanesPerWarp = 1;
  unsigned EstimatedRegisters = 0;
  /// The register budget per thread, enforced through __launch_bounds__ as
  /// this many resident blocks per SM.
  unsigned RegisterBudget = 64;
  unsigned MinBlocksPerSm = 1;
  double HaloRatio = 0; ///< HR of section 5.3 for the chosen P.
  /// One sentence for --remarks: what was chosen and why.
  std::string Why;
};

/// Most rows a thread may compute: beyond it the unrolled code grows
/// without lowering HR much.
constexpr unsigned MaxRowsPerThread = 16;

/// The halo ratio of section 5.3 for a warp of 32 lanes.
double systolicHaloRatio(const SystolicGeometry &G, unsigned RowsPerThread);

/// Registers a thread needs for its cache, estimated: C per plane of the z
/// window (doubled for 8-byte elements), a partial sum, and 16 for what stays
/// live beside them (calibrated on the H200 sweep in bench/RESULTS.md: it
/// makes the model pick the measured best P for float and double). The
/// budget limits this part.
unsigned systolicCacheRegisters(const SystolicGeometry &G,
                                unsigned RowsPerThread);

/// All registers a thread needs: the cache's, plus weights held in
/// registers. Sets how many blocks __launch_bounds__ asks to keep resident.
unsigned systolicRegisters(const SystolicGeometry &G, unsigned RowsPerThread);

/// Chooses the shape; \p RowsOverride (p(..)) and \p BlockOverride
/// (block(..), in threads, a multiple of 32) win over the model.
SystolicShape chooseSystolicShape(const SystolicGeometry &G, const GpuSpec &Gpu,
                                  std::optional<unsigned> RowsOverride,
                                  std::optional<unsigned> BlockOverride);

} // namespace cuda_rewrite

#endif
