//===- SystolicModel.cpp - Choosing P and the block size for SSAM ---------===//

#include "rewriters/systolic/SystolicModel.h"
#include "gpu/GpuSpec.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <vector>

namespace cuda_rewrite {

static constexpr unsigned WarpSize = 32;
static constexpr unsigned DefaultWarpsPerBlock = 4; // B = 128 (section 6.2).
static constexpr unsigned OverheadRegisters = 16;
/// 3D: planes a warp streams through; the z window's first planes are
/// loaded once per chunk, so longer chunks waste less.
static constexpr unsigned DefaultPlanesPerWarp = 32;
static constexpr double MaxHaloRatio3D = 0.5;

static uint64_t registerFile(const GpuSpec &Gpu) {
  return Gpu.RegistersPerSm ? Gpu.RegistersPerSm : 65536;
}

/// Half the SM's threads resident: the register budget per thread.
static unsigned registerBudget(const GpuSpec &Gpu) {
  uint64_t Threads = Gpu.MaxThreadsPerSm ? Gpu.MaxThreadsPerSm : 2048;
  return unsigned(std::min<uint64_t>(
      Gpu.MaxRegistersPerThread ? Gpu.MaxRegistersPerThread : 255,
      registerFile(Gpu) / (Threads / 2)));
}

/// As many resident blocks as the estimate allows (rounded up to the
/// allocation granularity of 8), for __launch_bounds__: the compiler then
/// neither spills nor takes registers the estimate does not need.
static unsigned residentBlocks(const SystolicShape &S, const GpuSpec &Gpu) {
  unsigned PerThread =
      std::max(S.RegisterBudget, (S.EstimatedRegisters + 7) / 8 * 8);
  return std::max<unsigned>(
      1, unsigned(registerFile(Gpu) /
                  (uint64_t(S.WarpsPerBlock) * WarpSize * PerThread)));
}

static unsigned warpsPerBlock(std::optional<unsigned> BlockOverride) {
  return BlockOverride ? std::max(1u, *BlockOverride / WarpSize)
                       : DefaultWarpsPerBlock;
}

double systolicHaloRatio(const SystolicGeometry &G, unsigned RowsPerThread) {
  double Cached = double(WarpSize) * (RowsPerThread + G.Rows - 1);
  double Useful = double(WarpSize - (G.Columns - 1)) * RowsPerThread;
  return (Cached - Useful) / Cached;
}

unsigned systolicCacheRegisters(const SystolicGeometry &G,
                                unsigned RowsPerThread) {
  unsigned PerValue = G.ElementBytes > 4 ? 2 : 1;
  // 3D keeps the z window and the plane after it (loaded a step early).
  unsigned Planes = G.Planes > 1 ? G.Planes + 1 : 1;
  unsigned Cache = (RowsPerThread + G.Rows - 1) * Planes;
  return (Cache + 1) * PerValue + OverheadRegisters;
}

unsigned systolicRegisters(const SystolicGeometry &G, unsigned RowsPerThread) {
  unsigned PerValue = G.ElementBytes > 4 ? 2 : 1;
  return systolicCacheRegisters(G, RowsPerThread) +
         (G.WeightsInRegisters ? G.Taps * PerValue : 0);
}

unsigned exchangeBytes(const SystolicGeometry &G, unsigned Warps,
                       unsigned RowsPerThread) {
  return G.Planes * Warps * RowsPerThread * WarpSize * G.ElementBytes;
}

/// The exchange form's shape (3D, paper's section 4.9).
static SystolicShape exchangeShape(const SystolicGeometry &G,
                                   const GpuSpec &Gpu,
                                   std::optional<unsigned> RowsOverride,
                                   std::optional<unsigned> BlockOverride) {
  SystolicShape S;
  S.ExchangePlanes = true;
  // At least one output plane a block.
  S.WarpsPerBlock = std::max(
      BlockOverride ? warpsPerBlock(BlockOverride) : ExchangeWarps, G.Planes);
  S.RegisterBudget = registerBudget(Gpu);
  S.RowsPerThread = RowsOverride ? *RowsOverride : ExchangeRows;
  while (!RowsOverride && S.RowsPerThread > 1 &&
         exchangeBytes(G, S.WarpsPerBlock, S.RowsPerThread) >
             MaxStaticSharedBytes)
    S.RowsPerThread /= 2;
  S.PlanesPerWarp = S.WarpsPerBlock - (G.Planes - 1);
  // One plane of C rows and a partial sum per z offset.
  SystolicGeometry Plane = G;
  Plane.Planes = 1;
  S.EstimatedRegisters = systolicRegisters(Plane, S.RowsPerThread) +
                         S.RowsPerThread * (G.ElementBytes > 4 ? 2 : 1);
  // No minimum of resident blocks: asking for the budget's 4 made 3d7pt
  // 18% slower on an H200.
  S.MinBlocksPerSm = 1;
  S.HaloRatio = systolicHaloRatio(G, S.RowsPerThread);
  unsigned Cached = S.RowsPerThread + G.Rows - 1;
  S.Why = llvm::formatv(
      "z(shared), the paper's 3D form (section 4.9): a block of {0} warps "
      "holds {0} "
      "planes, one per warp, of {1} rows per lane ({2}), and writes {3} "
      "(the other {4} are halo); the partial sums of each z "
      "offset go through shared memory ({5} bytes); {6:P0} of a plane's "
      "loads are halo (section 5.3){7}",
      S.WarpsPerBlock, Cached,
      RowsOverride ? llvm::formatv("p({0}) as given", S.RowsPerThread).str()
                   : llvm::formatv("P = {0}", S.RowsPerThread).str(),
      S.PlanesPerWarp, G.Planes - 1,
      exchangeBytes(G, S.WarpsPerBlock, S.RowsPerThread), S.HaloRatio,
      BlockOverride ? "; block(..) as given" : "");
  return S;
}

SystolicShape chooseSystolicShape(const SystolicGeometry &G, const GpuSpec &Gpu,
                                  std::optional<unsigned> RowsOverride,
                                  std::optional<unsigned> BlockOverride,
                                  std::optional<ZForm> ZOverride) {
  if (G.Planes > 1 && !G.FilterLoop && ZOverride == ZForm::Shared)
    return exchangeShape(G, Gpu, RowsOverride, BlockOverride);
  SystolicShape S;
  S.WarpsPerBlock = warpsPerBlock(BlockOverride);
  S.PlanesPerWarp = G.Rank == 3 ? DefaultPlanesPerWarp : 1;
  unsigned Budget = registerBudget(Gpu);
  S.RegisterBudget = Budget;
  if (RowsOverride) {
    S.RowsPerThread = *RowsOverride;
  } else if (G.Planes == 1) {
    // 2D: each cached value serves up to N rows, so the largest P that
    // fits wins (an H200 sweep of P = 2..16 agrees: bench/RESULTS.md).
    S.RowsPerThread = 1;
    for (unsigned P = MaxRowsPerThread; P > 1; P /= 2)
      if (systolicCacheRegisters(G, P) <= Budget) {
        S.RowsPerThread = P;
        break;
      }
  } else {
    // 3D: every plane stays in registers for the whole z window, so
    // registers grow Window times faster with P; the smallest P whose halo
    // is at most half of the loads wins (measured best, or within 2%, on
    // the H200 for 3d7pt, 3d13pt and 3d27pt), within twice the budget.
    S.RowsPerThread = 1;
    for (unsigned P = 1; P <= MaxRowsPerThread; P *= 2) {
      if (systolicCacheRegisters(G, P) > 2 * Budget)
        break;
      S.RowsPerThread = P;
      if (systolicHaloRatio(G, P) <= MaxHaloRatio3D)
        break;
    }
  }
  S.EstimatedRegisters = systolicRegisters(G, S.RowsPerThread);
  S.MinBlocksPerSm = residentBlocks(S, Gpu);
  S.HaloRatio = systolicHaloRatio(G, S.RowsPerThread);
  unsigned Cached = S.RowsPerThread + G.Rows - 1;
  std::string Rows =
      RowsOverride ? llvm::formatv("p({0}) as given", S.RowsPerThread).str()
      : G.Planes == 1
          ? llvm::formatv("P = {0} rows per thread, the most (up to {1}) "
                          "whose cache (~{2} registers) fits the budget of {3} "
                          "that keeps half of the {4}'s threads resident",
                          S.RowsPerThread, MaxRowsPerThread,
                          systolicCacheRegisters(G, S.RowsPerThread), Budget,
                          Gpu.Name.empty() ? "GPU" : Gpu.Name)
                .str()
          : llvm::formatv("P = {0} rows per thread, the fewest whose halo is "
                          "at most half of the loads (a 3D window keeps {1} "
                          "planes of rows in registers, ~{2} registers)",
                          S.RowsPerThread, G.Planes,
                          systolicCacheRegisters(G, S.RowsPerThread))
                .str();
  S.Why = llvm::formatv(
      "{0}; each thread caches {1} row{2}{3}, so {4:P0} of what a warp loads "
      "is halo (section 5.3); {5} threads per block{6}",
      Rows, Cached, Cached == 1 ? "" : "s",
      G.Planes > 1 ? llvm::formatv(" in each of {0} planes", G.Planes).str()
                   : "",
      S.HaloRatio, S.WarpsPerBlock * WarpSize,
      BlockOverride ? " as given" : " (the paper's B = 128)");
  if (G.Planes > 1)
    S.Why += llvm::formatv("; each warp streams {0} planes along z",
                           S.PlanesPerWarp);
  return S;
}

unsigned alignedRegisters(const SystolicGeometry &G, unsigned ColumnsPerLane,
                          unsigned RowsPerThread) {
  unsigned PerValue = G.ElementBytes > 4 ? 2 : 1;
  unsigned Cached = RowsPerThread + G.Rows - 1;
  return (Cached + RowsPerThread) * ColumnsPerLane * PerValue +
         OverheadRegisters + (G.WeightsInRegisters ? G.Taps * PerValue : 0);
}

/// Aligned rows (chooseVectorShape).
static SystolicShape alignedRowsShape(const SystolicGeometry &G,
                                      const GpuSpec &Gpu,
                                      std::optional<unsigned> RowsOverride,
                                      std::optional<unsigned> BlockOverride,
                                      std::optional<unsigned> ColumnsOverride) {
  SystolicShape S;
  S.ColumnsPerLane = ColumnsOverride ? *ColumnsOverride : 16 / G.ElementBytes;
  S.WarpsPerBlock = warpsPerBlock(BlockOverride);
  S.RegisterBudget = registerBudget(Gpu);
  S.RowsPerThread = RowsOverride ? *RowsOverride : G.Rows <= 3 ? 4 : 8;
  if (!RowsOverride)
    while (S.RowsPerThread > 1 &&
           alignedRegisters(G, S.ColumnsPerLane, S.RowsPerThread) >
               2 * S.RegisterBudget)
      S.RowsPerThread /= 2;
  S.EstimatedRegisters = alignedRegisters(G, S.ColumnsPerLane, S.RowsPerThread);
  S.MinBlocksPerSm = residentBlocks(S, Gpu);
  unsigned Cached = S.RowsPerThread + G.Rows - 1;
  S.HaloRatio = double(Cached - S.RowsPerThread) / Cached;
  S.Why = llvm::formatv(
      "aligned rows: each lane keeps {0} consecutive columns{1} of {2} row{3} "
      "(one {4}-byte load per row) and writes {0} x {5} points{6}, so warp "
      "rows start on a cache line and {7:P0} of the loads are halo rows; "
      "{8} threads per block{9}; the overlapped form runs where the arrays' "
      "rows are not {4}-byte aligned",
      S.ColumnsPerLane, ColumnsOverride ? " (vector(..) as given)" : "", Cached,
      Cached == 1 ? "" : "s", S.ColumnsPerLane * G.ElementBytes,
      S.RowsPerThread,
      RowsOverride
          ? " (p(..) as given)"
          : llvm::formatv(" (~{0} registers)", S.EstimatedRegisters).str(),
      S.HaloRatio, S.WarpsPerBlock * WarpSize,
      BlockOverride ? " as given" : "");
  return S;
}

unsigned wideLeftPad(const SystolicGeometry &G, unsigned ColumnsPerLane) {
  return (G.Left + ColumnsPerLane - 1) / ColumnsPerLane * ColumnsPerLane;
}

unsigned wideRightPad(const SystolicGeometry &G, unsigned ColumnsPerLane) {
  return (G.Right + ColumnsPerLane - 1) / ColumnsPerLane * ColumnsPerLane;
}

unsigned wideColumns(const SystolicGeometry &G, unsigned ColumnsPerLane) {
  unsigned Window = WarpSize * ColumnsPerLane;
  unsigned Reach =
      wideLeftPad(G, ColumnsPerLane) + wideRightPad(G, ColumnsPerLane);
  return Reach >= Window ? 0 : Window - Reach;
}

/// Registers of the wide-lane form: as alignedRegisters, but a filter loop
/// holds one filter column's weights at a time (read from shared memory as
/// vectors right before they are used), not all of them.
static unsigned wideRegisters(const SystolicGeometry &G,
                              unsigned ColumnsPerLane, unsigned RowsPerThread) {
  SystolicGeometry Counted = G;
  Counted.WeightsInRegisters = G.WeightsInRegisters && !G.FilterLoop;
  unsigned PerVector = 16 / G.ElementBytes, PerValue = G.ElementBytes / 4;
  unsigned ColumnWeights =
      G.FilterLoop ? (G.Rows + PerVector - 1) / PerVector * PerVector : 0;
  return alignedRegisters(Counted, ColumnsPerLane, RowsPerThread) +
         ColumnWeights * PerValue;
}

/// Wide lanes (chooseVectorShape); none where no V >= 2 leaves a warp
/// output columns or fits P >= 2 in the budget.
static std::optional<SystolicShape>
wideLanesShape(const SystolicGeometry &G, const GpuSpec &Gpu,
               std::optional<unsigned> RowsOverride,
               std::optional<unsigned> BlockOverride,
               std::optional<unsigned> ColumnsOverride) {
  SystolicShape S;
  S.WideLanes = true;
  S.ColumnsPerLane = 0;
  S.WarpsPerBlock = warpsPerBlock(BlockOverride);
  S.RegisterBudget = registerBudget(Gpu);
  // The widest V (16 bytes, halved while a warp would write nothing).
  std::vector<unsigned> Widths;
  for (unsigned V = 16 / G.ElementBytes; V >= 2; V /= 2)
    Widths.push_back(V);
  if (ColumnsOverride)
    Widths = {*ColumnsOverride};
  for (unsigned V : Widths)
    if (wideColumns(G, V)) {
      S.ColumnsPerLane = V;
      break;
    }
  S.RowsPerThread = RowsOverride                        ? *RowsOverride
                    : G.SideTapsInOneRow && G.Rows <= 5 ? 8
                                                        : 4;
  if (!S.ColumnsPerLane)
    return std::nullopt;
  unsigned V = S.ColumnsPerLane, P = S.RowsPerThread;
  S.EstimatedRegisters = wideRegisters(G, V, P);
  S.MinBlocksPerSm = residentBlocks(S, Gpu);
  unsigned Cached = P + G.Rows - 1, Columns = wideColumns(G, V);
  S.HaloRatio =
      double(WarpSize * V * Cached - Columns * P) / (WarpSize * V * Cached);
  S.Why = llvm::formatv(
      "wide lanes: each lane keeps {0} consecutive columns{1} of {2} rows (one "
      "{3}-byte load per row) and passes partial sums one column at a time, "
      "so a warp writes {4} of its {5} columns and shuffles once per {0} "
      "points; P = {6} ({7}); {8:P0} of the loads are halo; {9} threads per "
      "block{10}; the overlapped form runs where the arrays' rows are not "
      "{3}-byte aligned",
      V, ColumnsOverride ? " (vector(..) as given)" : "", Cached,
      V * G.ElementBytes, Columns, WarpSize * V, P,
      RowsOverride                        ? "p(..) as given"
      : G.SideTapsInOneRow && G.Rows <= 5 ? "for a star of up to 5 rows"
                                          : "the best of a sweep on an H200",
      S.HaloRatio, S.WarpsPerBlock * WarpSize,
      BlockOverride ? " as given" : "");
  return S;
}

std::optional<SystolicShape>
chooseVectorShape(const SystolicGeometry &G, const GpuSpec &Gpu,
                  std::optional<unsigned> RowsOverride,
                  std::optional<unsigned> BlockOverride,
                  std::optional<unsigned> ColumnsOverride) {
  // The vector forms are 2D only (a 3D stencil with taps in one plane too).
  if (G.Rank != 2 || G.Planes != 1 || !G.ContiguousRows || G.PointLoads ||
      (ColumnsOverride && *ColumnsOverride == 1))
    return std::nullopt;
  bool NarrowFilter = G.Left <= 1 && G.Right <= 1 && G.Rows <= MaxAlignedRows;
  bool ShortStar = G.SideTapsInOneRow && G.Rows <= 3 &&
                   G.Left <= MaxAlignedReach && G.Right <= MaxAlignedReach;
  if (NarrowFilter || ShortStar)
    return alignedRowsShape(G, Gpu, RowsOverride, BlockOverride,
                            ColumnsOverride);
  return wideLanesShape(G, Gpu, RowsOverride, BlockOverride, ColumnsOverride);
}

} // namespace cuda_rewrite
