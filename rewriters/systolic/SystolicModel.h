//===- SystolicModel.h - Choosing P and the block size for SSAM -*- C++ -*-===//
//
// An SSAM kernel (SSAM section 4, docs/references.md) caches C = P + N - 1
// input rows per thread and shifts partial sums across M columns of lanes, so
// each warp loads a 32 x C window to produce (32 - (M - 1)) x P outputs. The
// paper's halo model (section 5.3) measures the redundant part of that window,
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
#ifndef CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICMODEL_H
#define CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICMODEL_H

#include <optional>
#include <string>

namespace cuda_rewrite {

struct GpuSpec;

/// What the model needs to know of a stencil.
struct SystolicGeometry {
  unsigned Columns = 1; ///< M: distinct x offsets, min to max.
  unsigned Rows = 1;    ///< N: distinct y offsets, min to max.
  unsigned Planes = 1;  ///< z offsets, min to max (1 in 2D).
  /// Coordinates the kernel has: 2, or 3 (a 3D stencil whose taps lie in
  /// one plane has Planes == 1 but still runs plane by plane).
  unsigned Rank = 2;
  unsigned Taps = 1; ///< Points with a weight.
  /// The weights come from a filter array (shared or __constant__ memory):
  /// the unrolled code keeps them in registers across the P rows, unlike
  /// literals and parameters, which are instruction operands.
  bool WeightsInRegisters = false;
  unsigned ElementBytes = 4;
  /// Columns the taps reach left (-min dx) and right (max dx) of a point,
  /// 0 where they do not.
  unsigned Left = 0, Right = 0;
  /// Input and output rows are contiguous (unit x stride) arrays the
  /// launcher can test for alignment: the aligned form applies.
  bool ContiguousRows = false;
  /// The weights are a full box of filter elements, summed in loops
  /// (SSAM, Listing 1) rather than tap by tap.
  bool FilterLoop = false;
  /// Every tap off the point's column lies in one row (a star along x),
  /// so only that row needs the columns beyond a lane's.
  bool SideTapsInOneRow = false;
  /// Loads must go point by point: taps read 0 beyond the written points
  /// (zero borders, from the cache's zeros) or wrap around them (periodic
  /// borders, from wrapped addresses), and a whole-vector load would bring
  /// in the elements there; only the overlapped form applies.
  bool PointLoads = false;
};

struct SystolicShape {
  /// V: consecutive columns each lane keeps (one vector load per row); 1
  /// is the paper's overlapped blocking, more a vector form.
  unsigned ColumnsPerLane = 1;
  /// The vector form with wide lanes (chooseVectorShape): partial sums
  /// move one column at a time, within a lane by register and across lanes
  /// by shuffle; otherwise, with V > 1, the aligned-rows form.
  bool WideLanes = false;
  unsigned RowsPerThread = 1; ///< P.
  unsigned WarpsPerBlock = 4;
  /// 3D: planes each warp streams through (its z chunk); with
  /// ExchangePlanes, output planes per block.
  unsigned PlanesPerWarp = 1;
  /// 3D in the paper's form (section 4.9): each warp of a block holds one
  /// plane, and the z partial sums go through shared memory; otherwise each
  /// warp streams along z with the z window in registers.
  bool ExchangePlanes = false;
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

/// How a 3D stencil meets its z taps (SystolicShape::ExchangePlanes).
enum class ZForm { Stream, Shared };

/// 3D: the paper's exchange form (z(shared)) applies to spelled-out taps
/// (each warp sums its plane's taps one z offset at a time). A block of
/// Warps planes writes Warps - (Window - 1) of them. It is never the
/// default: on an H200 streaming ran faster for every 3D sample, float and
/// double (3d7pt float 0.414 ms against 0.601, 0.509 without a minimum of
/// resident blocks; bench/RESULTS.md), so the model streams unless z(shared)
/// asks. Its shape: 8 warps and P = 8, the best of a hand-written sweep,
/// P halved until the exchange fits 48 KiB of shared memory.
constexpr unsigned ExchangeWarps = 8;
constexpr unsigned ExchangeRows = 8;

/// Shared memory of the exchange form: a partial sum per z offset, warp,
/// row and lane.
/// The most shared memory a kernel may declare statically (more needs a
/// dynamic allocation and cudaFuncSetAttribute).
constexpr unsigned MaxStaticSharedBytes = 48 * 1024;

unsigned exchangeBytes(const SystolicGeometry &G, unsigned Warps,
                       unsigned RowsPerThread);

/// Chooses the shape; \p RowsOverride (p(..)), \p BlockOverride
/// (block(..), in threads, a multiple of 32) and \p ZOverride (z(..))
/// win over the model.
SystolicShape chooseSystolicShape(const SystolicGeometry &G, const GpuSpec &Gpu,
                                  std::optional<unsigned> RowsOverride,
                                  std::optional<unsigned> BlockOverride,
                                  std::optional<ZForm> ZOverride = {});

/// The vector forms (2D, contiguous rows): a lane keeps V consecutive
/// columns of C rows, loaded as one 16-byte vector per row, so a warp's
/// rows start on a 128-byte line. Overlapped blocking (the paper's form)
/// loads 32 columns to write 32 - (M - 1), and its rows straddle lines.
///
/// Aligned rows, for filters reaching at most one column to either side
/// (up to MaxAlignedRows rows) and stars of up to three rows reaching two
/// columns in their one row of side taps: a lane writes its own V columns;
/// the columns the taps reach beyond them come from its neighbours by
/// shuffle, and the warp's two edge lanes load theirs. On an H100 it ran a
/// 2D 5-point float stencil at the copy bandwidth, the overlapped one at
/// 88-94% (bench/experiments/NOTES.md); 2x2, 3x3, 7x3 boxes and 2d5pt
/// 1.04-1.18x faster on an H100 and an H200 (bench/RESULTS.md, 12:20
/// entry). P = 4 for up to three rows, 8 beyond (conv7x3: P = 8 0.167 ms,
/// P = 4 0.209 on the H200), halved while the estimate exceeds twice the
/// register budget (the compiler keeps far fewer values live than the
/// estimate counts).
///
/// Wide lanes, for every other 2D filter (reaching further, or taller): the
/// paper's overlapped blocking with V columns per lane. Partial sums move
/// one column per filter column, V - 1 of them between a lane's registers
/// and one by shuffle, so a warp finishes 32V - Left - Right columns
/// (rounded to whole vectors) for one shuffle per V points, where the
/// paper's finishes 32 - (M - 1) for one per point. On an H200 the 11x11
/// box ran 10% faster with V = 4 and P = 4 than the overlapped form's best
/// (bench/experiments/systolic_wide_lanes.cu); over 17 2D samples it ran
/// 1.05-2.1x faster than overlapped blocking on an H200 (bench/RESULTS.md,
/// 2026-11-21 14:20 entry). V = 16 bytes / element (halved while a warp
/// would write nothing). P = 4, the best or within 1% in that sweep of P =
/// 4, 8 and 16 (conv12x12..conv19x19: P = 4 1.1-1.9x faster than 8 or
/// 16), but for stars of up to 5 rows (P = 8: 2d9pt 0.135 ms against
/// 0.142). One exception measured and left: conv20x20 ran 1.44 ms with
/// p(16) against 1.77 with P = 4.
///
/// \p ColumnsOverride (vector(..)) sets V; 1 asks for the overlapped form.
constexpr unsigned MaxAlignedRows = 7;
constexpr unsigned MaxAlignedReach = 2;
std::optional<SystolicShape>
chooseVectorShape(const SystolicGeometry &G, const GpuSpec &Gpu,
                  std::optional<unsigned> RowsOverride,
                  std::optional<unsigned> BlockOverride,
                  std::optional<unsigned> ColumnsOverride);

/// Wide lanes: columns loaded left of a warp's first output (Left rounded
/// up to whole vectors); columns loaded right of its last (Right rounded
/// up: the sums move that far, so that each lane ends with whole output
/// vectors); and output columns per warp (32 V less both).
unsigned wideLeftPad(const SystolicGeometry &G, unsigned ColumnsPerLane);
unsigned wideRightPad(const SystolicGeometry &G, unsigned ColumnsPerLane);
unsigned wideColumns(const SystolicGeometry &G, unsigned ColumnsPerLane);

/// Registers a thread of a vector form needs, estimated: its C x V
/// cached values, its P x V sums, the 16 of systolicCacheRegisters, and
/// weights held in registers. It sets __launch_bounds__' resident blocks:
/// counting the weights of a 3x3 filter (7 blocks, not 8) made conv3x3
/// 6% faster on an H100.
unsigned alignedRegisters(const SystolicGeometry &G, unsigned ColumnsPerLane,
                          unsigned RowsPerThread);

} // namespace cuda_rewrite

#endif
