//===- SystolicModel.cpp - Choosing P and the block size for SSAM ---------===//

#include "analysis/SystolicModel.h"
#include "analysis/GpuSpec.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>

namespace cuda_rewrite {

static constexpr unsigned WarpSize = 32;
static constexpr unsigned DefaultWarpsPerBlock = 4; // B = 128 (section 6.2).
static constexpr unsigned OverheadRegisters = 16;
/// 3D: planes a warp streams through; the z window's first planes are
/// loaded once per chunk, so longer chunks waste less.
static constexpr unsigned DefaultPlanesPerWarp = 32;
static constexpr double MaxHaloRatio3D = 0.5;

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

SystolicShape chooseSystolicShape(const SystolicGeometry &G, const GpuSpec &Gpu,
                                  std::optional<unsigned> RowsOverride,
                                  std::optional<unsigned> BlockOverride) {
  SystolicShape S;
  S.WarpsPerBlock = BlockOverride ? std::max(1u, *BlockOverride / WarpSize)
                                  : DefaultWarpsPerBlock;
  S.PlanesPerWarp = G.Planes > 1 ? DefaultPlanesPerWarp : 1;
  // Half the SM's threads resident: the register budget per thread.
  uint64_t RegisterFile = Gpu.RegistersPerSm ? Gpu.RegistersPerSm : 65536;
  uint64_t Threads = Gpu.MaxThreadsPerSm ? Gpu.MaxThreadsPerSm : 2048;
  unsigned Budget = unsigned(std::min<uint64_t>(
      Gpu.MaxRegistersPerThread ? Gpu.MaxRegistersPerThread : 255,
      RegisterFile / (Threads / 2)));
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
  // Ask for as many resident blocks as the estimate allows (rounded up to
  // the allocation granularity of 8), so the compiler neither spills nor
  // takes registers the estimate does not need.
  unsigned PerThread = std::max(Budget, (S.EstimatedRegisters + 7) / 8 * 8);
  S.MinBlocksPerSm =
      std::max<unsigned>(1, unsigned(RegisterFile / (uint64_t(S.WarpsPerBlock) *
                                                     WarpSize * PerThread)));
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

} // namespace cuda_rewrite
