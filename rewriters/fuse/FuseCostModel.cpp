//===- FuseCostModel.cpp - Algorithm 2's cost of a fused group ------------===//
//
// Algorithm 2 of PolyMage-GPU, line by line where it applies to the kernels
// FuseCodeGen writes, with these readings of the garbled or
// Pascal/Volta-specific parts:
//
// - Lines 3-6, 34: a block is Warps warp tiles stacked along y, so the grid
//   is ceil(W / TileW) x ceil(H / (Rows * Warps)) x Planes blocks, as the
//   fused launcher computes it.
// - Lines 7-12: shared memory per warp is the sum of the on-chip tiles'
//   region areas times their element size; hybrid tiling moves the
//   rightmost R = round(ColumnsPerLane * f) whole 32-column chunks of each
//   eligible tile to registers (line 10's "(1 - f)" is exact only without
//   overlap), which costs each lane R * regionHeight registers per tile
//   (two per 8-byte element). The limit is the spec's opt-in figure unless
//   the caller passes the static 48 KiB one.
// - Lines 14-17: per warp tile, each global read touches the stage's region
//   widened by the read's offsets; each row is counted in whole
//   transactions, assuming rows start aligned and averaging over the tile's
//   x origins (a 3x3 read of a 32-wide float tile touches 136 bytes from
//   byte -4: six 32-byte sectors, not five). Stores cover the output tile.
//   Term 1 is the image's total over its output points.
// - Lines 18-24: resident blocks per SM are the least of the shared-memory
//   limit (per-block allocation rounded to 128 bytes, plus the driver's
//   reserved share: "ShMemPerSM / shMemPerTB" in line 18), the register
//   limit (8 registers per thread, 256 per warp allocation units: line 22's
//   "RegPerSM / regPerTh" counted in whole blocks), the thread limit and
//   MaxBlocksPerSm. Occupancy is resident warps over the SM's maximum.
// - Line 20: the paper sums the stages' registers; the fused kernel runs its
//   stages one after another, so this model takes the most any stage needs
//   (an inlined stage's registers add to each reader's), plus hybrid tiles.
// - Lines 25-28: a warp's bandwidth is the copy bandwidth shared by the SMs
//   and by the warps an SM issues in parallel (four schedulers, the paper's
//   CoresPerSM / WarpSize); compute time is WorkPerPoint instructions per
//   point computed, 32 lanes per instruction, one instruction per clock.
// - Lines 29-32: unallocated shared memory and unused registers are those
//   of all resident blocks, as fractions of the SM's.
// - Line 33: the overlap is the work computed per warp tile (regions plus
//   inlined recomputation, weighted by WorkPerPoint) over the work of
//   computing each stage once per output point, minus 1.
// - Line 34: "totalTB % maxTBPerSM" becomes the share of block slots left
//   idle by the last, partly filled wave, which is what costs time.
//
//===----------------------------------------------------------------------===//

#include "rewriters/fuse/FuseCostModel.h"

#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>

namespace cuda_rewrite {

namespace {

constexpr unsigned kWarp = 32;
/// Warps an SM issues from in parallel (sm_70 to sm_90: four schedulers);
/// GpuSpec has no core count for the paper's CoresPerSM / WarpSize.
constexpr unsigned kSchedulersPerSm = 4;
/// Registers are allocated 8 per thread (256 per warp) on sm_70 to sm_90.
constexpr unsigned kRegisterUnit = 8;
/// Shared memory is allocated to a block in units of 128 bytes.
constexpr uint64_t kSharedUnit = 128;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

int64_t floorDiv(int64_t A, int64_t B) {
  assert(B > 0);
  return A >= 0 ? A / B : -((-A + B - 1) / B);
}

uint64_t ceilDiv(uint64_t A, uint64_t B) { return (A + B - 1) / B; }

uint64_t roundUp(uint64_t A, uint64_t Unit) { return ceilDiv(A, Unit) * Unit; }

/// The tile's \p Extent points along \p D at \p S's scale (rounded down;
/// malformed() rejects the configurations where it is not whole).
int64_t scaled(const CostStage &S, unsigned D, int64_t Extent) {
  return S.ScaleNum[D] * Extent / std::max<int64_t>(1, S.ScaleDen[D]);
}

int64_t regionWidth(const CostStage &S, const CostConfig &C) {
  return std::max<int64_t>(0, scaled(S, 0, C.tileWidth()) + S.RegionHi[0] -
                                  S.RegionLo[0]);
}

int64_t regionHeight(const CostStage &S, const CostConfig &C) {
  return std::max<int64_t>(0, scaled(S, 1, C.Rows) + S.RegionHi[1] -
                                  S.RegionLo[1]);
}

bool hasTile(const CostStage &S) {
  return !S.Inlined && S.TileElementBytes > 0;
}

/// 32-column chunks of \p S's tile kept in registers, split along x.
unsigned registerChunksOf(const CostStage &S, const CostConfig &C) {
  return hasTile(S) && S.HybridEligible ? C.registerChunks() : 0;
}

/// Rows of \p S's region kept in registers, split along y.
unsigned registerRowsOf(const CostStage &S, const CostConfig &C) {
  return hasTile(S) && S.HybridEligible ? C.registerRows() : 0;
}

/// Split along y, a register row spans whole 32-lane chunks over the
/// region's width (the lanes past it idle).
int64_t registerRowWidth(const CostStage &S, const CostConfig &C) {
  return 32 * ceilDiv(regionWidth(S, C), 32);
}

//===-- Lines 14-17: global-memory transactions
//----------------------------===//

/// Transactions of \p Tx bytes that one row of \p Columns elements of
/// \p Elem bytes touches, starting \p Lo columns from the warp tile's x
/// origin. Rows are taken to start Tx-aligned; the origin's byte offset
/// cycles through the tiles (x0 = t * TileW), so the count is the average
/// over one period of that cycle.
double transactionsPerRow(int64_t Lo, int64_t Columns, unsigned Elem,
                          unsigned Tx, unsigned TileW) {
  if (Columns <= 0 || Elem == 0)
    return 0;
  const int64_t Bytes = Columns * Elem;
  const int64_t Step = int64_t(TileW) * Elem;
  const int64_t Period = Tx / std::gcd<int64_t>(Step % Tx, Tx);
  int64_t Sum = 0;
  for (int64_t T = 0; T < Period; ++T) {
    int64_t Start = T * Step + Lo * int64_t(Elem);
    Sum += floorDiv(Start + Bytes - 1, Tx) - floorDiv(Start, Tx) + 1;
  }
  return double(Sum) / double(Period);
}

/// Loads and stores of one warp tile, in transactions.
double transactionsPerTile(const std::vector<CostStage> &Stages,
                           const CostConfig &C) {
  const unsigned Tx = C.TransactionBytes, TileW = C.tileWidth();
  double Sum = 0;
  for (const CostStage &S : Stages) {
    const int64_t W = regionWidth(S, C), H = regionHeight(S, C);
    for (const CostRead &R : S.GlobalReads) {
      int64_t Rows = int64_t(std::ceil(double(H) * R.YScale)) +
                     std::max<int64_t>(0, R.YHi - R.YLo);
      int64_t Columns = int64_t(std::ceil(double(W) * R.XScale)) +
                        std::max<int64_t>(0, R.XHi - R.XLo);
      Sum += double(Rows) * transactionsPerRow(S.RegionLo[0] + R.XLo, Columns,
                                               R.ElementBytes, Tx, TileW);
    }
    if (S.GlobalStoreBytes)
      Sum += double(scaled(S, 1, C.Rows)) *
             transactionsPerRow(0, scaled(S, 0, TileW), S.GlobalStoreBytes, Tx,
                                unsigned(scaled(S, 0, TileW)));
  }
  return Sum;
}

//===-- Lines 27-28, 33: points computed
//-----------------------------------===//

/// The stages that read inlined stage \p I (the next one by default);
/// readers outside the group or not after \p I are ignored.
std::vector<unsigned> readersOf(const std::vector<CostStage> &Stages,
                                unsigned I) {
  std::vector<unsigned> Readers;
  if (Stages[I].Readers.empty()) {
    if (I + 1 < Stages.size())
      Readers.push_back(I + 1);
    return Readers;
  }
  for (unsigned R : Stages[I].Readers)
    if (R > I && R < Stages.size())
      Readers.push_back(R);
  return Readers;
}

/// Per warp tile, how many points each stage is computed at: its region's
/// area, or for an inlined stage, ReadsPerReaderPoint per evaluation of
/// each reader (readers come later, so a backward pass suffices). An
/// inlined stage no stage reads is taken to be computed once per output
/// point.
std::vector<double> evaluationsPerTile(const std::vector<CostStage> &Stages,
                                       const CostConfig &C) {
  const double Output = double(C.tileWidth()) * C.Rows;
  std::vector<double> E(Stages.size(), 0);
  for (unsigned I = Stages.size(); I-- > 0;) {
    const CostStage &S = Stages[I];
    if (!S.Inlined) {
      // Split along y, the register rows' idle lanes issue with the rest.
      const double Rows = registerRowsOf(S, C);
      E[I] = double(regionWidth(S, C)) * (double(regionHeight(S, C)) - Rows) +
             double(registerRowWidth(S, C)) * Rows;
      continue;
    }
    std::vector<unsigned> Readers = readersOf(Stages, I);
    double Sum = 0;
    for (unsigned R : Readers)
      Sum += E[R];
    E[I] = Readers.empty() ? Output : double(S.ReadsPerReaderPoint) * Sum;
  }
  return E;
}

//===-- Lines 20-21: registers
//---------------------------------------------===//

/// Registers per thread before hybrid tiles: stages run one after another,
/// so the kernel needs the most any stage needs, counting the inlined
/// stages evaluated inside it (forward pass: readers come later).
unsigned stageRegisters(const std::vector<CostStage> &Stages) {
  std::vector<unsigned> Live(Stages.size(), 0);
  for (unsigned I = 0; I < Stages.size(); ++I)
    Live[I] += Stages[I].Registers;
  for (unsigned I = 0; I < Stages.size(); ++I)
    if (Stages[I].Inlined)
      for (unsigned R : readersOf(Stages, I))
        Live[R] += Live[I]; // Live[I] is final: its inputs come before it.
  unsigned Most = 0, MostAny = 0;
  for (unsigned I = 0; I < Stages.size(); ++I) {
    MostAny = std::max(MostAny, Live[I]);
    if (!Stages[I].Inlined)
      Most = std::max(Most, Live[I]);
  }
  return Most ? Most : MostAny;
}

/// Registers each lane spends on hybrid tiles: one per row of each register
/// chunk (a lane holds one column of it), two for 8-byte elements.
unsigned hybridRegisters(const std::vector<CostStage> &Stages,
                         const CostConfig &C) {
  unsigned Sum = 0;
  for (const CostStage &S : Stages) {
    unsigned Words = unsigned(ceilDiv(S.TileElementBytes, 4));
    if (unsigned R = registerChunksOf(S, C))
      Sum += R * unsigned(regionHeight(S, C)) * Words;
    if (unsigned R = registerRowsOf(S, C))
      Sum += unsigned(registerRowWidth(S, C) / 32) * R * Words;
  }
  return Sum;
}

//===-- Lines 7-12: shared memory
//------------------------------------------===//

uint64_t sharedBytesPerWarp(const std::vector<CostStage> &Stages,
                            const CostConfig &C) {
  uint64_t Sum = 0;
  for (const CostStage &S : Stages)
    if (hasTile(S)) {
      int64_t Columns =
          regionWidth(S, C) - int64_t(kWarp * registerChunksOf(S, C));
      int64_t Rows = regionHeight(S, C) - int64_t(registerRowsOf(S, C));
      Sum += uint64_t(std::max<int64_t>(0, Columns)) *
             uint64_t(std::max<int64_t>(0, Rows)) * S.TileElementBytes;
    }
  return Sum;
}

//===-- Lines 18-24: occupancy
//---------------------------------------------===//

unsigned allocatedRegisters(unsigned PerThread) {
  return unsigned(roundUp(std::max(PerThread, 1u), kRegisterUnit));
}

/// Resident blocks per SM: the least of the four limits.
unsigned residentBlocks(const CostTerms &T, const CostConfig &C,
                        const GpuSpec &Spec) {
  const uint64_t Threads = uint64_t(kWarp) * C.Warps;
  uint64_t Blocks =
      std::min<uint64_t>(Spec.MaxBlocksPerSm, Spec.MaxThreadsPerSm / Threads);
  uint64_t Shared = roundUp(T.SharedBytesPerBlock, kSharedUnit) +
                    Spec.SharedMemoryReservedPerBlock;
  if (Shared > 0)
    Blocks = std::min<uint64_t>(Blocks, Spec.SharedMemoryPerSm / Shared);
  uint64_t WarpRegisters =
      uint64_t(allocatedRegisters(T.RegistersPerThread)) * kWarp;
  Blocks =
      std::min<uint64_t>(Blocks, Spec.RegistersPerSm / WarpRegisters / C.Warps);
  return unsigned(Blocks);
}

//===-- Feasibility
//--------------------------------------------------------===//

/// Why \p C cannot be used at all, or "".
std::string malformed(const std::vector<CostStage> &Stages, const CostConfig &C,
                      const GpuSpec &Spec) {
  if (Stages.empty())
    return "no stages";
  if (!C.ColumnsPerLane || !C.Rows || !C.Warps || !C.TransactionBytes)
    return "a zero tile, block or transaction size";
  if (!(C.RegisterFraction >= 0 && C.RegisterFraction <= 1))
    return "register fraction outside [0, 1]";
  if (!Spec.SmCount || !Spec.MaxThreadsPerSm || !Spec.RegistersPerSm)
    return "the GPU spec lacks SM figures";
  if (uint64_t(kWarp) * C.Warps > Spec.MaxThreadsPerBlock)
    return llvm::formatv("{0} threads per block > {1}", kWarp * C.Warps,
                         Spec.MaxThreadsPerBlock);
  for (const CostStage &S : Stages)
    for (unsigned D : {0u, 1u}) {
      int64_t Extent = D ? C.Rows : C.tileWidth();
      if (S.ScaleDen[D] < 1 || S.ScaleNum[D] * Extent % S.ScaleDen[D] != 0)
        return llvm::formatv("a tile of {0} {1} does not scale to whole "
                             "points of '{2}' ({3} / {4} of the tile's)",
                             Extent, D ? "rows" : "columns", S.Name,
                             S.ScaleNum[D], S.ScaleDen[D]);
    }
  if (C.SplitAxis > 1)
    return "a split dimension other than x or y";
  if (C.RegisterFraction > 0 && C.SplitAxis == 0 && C.registerChunks() == 0)
    return llvm::formatv("register fraction {0} keeps no whole 32-column "
                         "chunk of a {1}-column tile",
                         C.RegisterFraction, C.tileWidth());
  if (C.RegisterFraction > 0 && C.SplitAxis == 1 && C.registerRows() == 0)
    return llvm::formatv("register fraction {0} keeps no row of a {1}-row "
                         "tile",
                         C.RegisterFraction, C.Rows);
  return "";
}

/// Why the resources \p T needs do not fit, or "".
std::string overLimits(const CostTerms &T, const CostConfig &C,
                       const GpuSpec &Spec, uint64_t SharedLimit) {
  if (T.SharedBytesPerBlock > SharedLimit)
    return llvm::formatv("{0} bytes of shared memory per block > {1}",
                         T.SharedBytesPerBlock, SharedLimit);
  if (T.RegistersPerThread > Spec.MaxRegistersPerThread)
    return llvm::formatv("{0} registers per thread > {1}", T.RegistersPerThread,
                         Spec.MaxRegistersPerThread);
  uint64_t BlockRegisters =
      uint64_t(allocatedRegisters(T.RegistersPerThread)) * kWarp * C.Warps;
  if (BlockRegisters > Spec.RegistersPerBlock)
    return llvm::formatv("{0} registers per block > {1}", BlockRegisters,
                         Spec.RegistersPerBlock);
  return "";
}

CostTerms infeasible(CostTerms T, std::string Why) {
  T.Feasible = false;
  T.Total = kInfinity;
  T.Why = std::move(Why);
  return T;
}

//===-- Lines 25-34: the terms
//---------------------------------------------===//

/// Line 26 over line 28: seconds of one warp's share of bandwidth over
/// seconds of issue for the warp tile.
void setTimes(CostTerms &T, const CostConfig &C, const GpuSpec &Spec) {
  double WarpBandwidth =
      Spec.CopyBandwidthGBps * 1e9 / double(Spec.SmCount) / kSchedulersPerSm;
  T.MemTime = WarpBandwidth > 0
                  ? T.TransactionsPerTile * C.TransactionBytes / WarpBandwidth
                  : 0;
  double Clock = double(Spec.SmClockKHz) * 1e3;
  T.ComputeTime = Clock > 0 ? T.ComputedWorkPerTile / kWarp / Clock : 0;
  // At least one clock, so that a group of no work is not infinitely
  // memory bound.
  double Floor = Clock > 0 ? 1 / Clock : 1;
  T.MemOverCompute = T.MemTime / std::max(T.ComputeTime, Floor);
}

/// Line 33: the redundant fraction of overlapped tiling, the work of the
/// stages computed over regions past the output tile (not inlined) over
/// their work once per output point, minus 1. Inlined stages' recomputation
/// is not overlap: it costs compute time (ComputedWorkPerTile, line 28),
/// and the pass inlines only where that is cheaper than a tile. Unweighted
/// if no stage reports work.
void setOverlap(CostTerms &T, const std::vector<CostStage> &Stages,
                const std::vector<double> &Evaluations, const CostConfig &C) {
  double Work = 0, TiledWork = 0;
  for (const CostStage &S : Stages)
    Work += std::max(0.0, S.WorkPerPoint);
  auto WorkOf = [&](const CostStage &S) {
    return Work > 0 ? std::max(0.0, S.WorkPerPoint) : 1.0;
  };
  // Once per point of the tile at the stage's own scale: a pyramid's
  // half-resolution stage has a quarter of the tile's points.
  double Computed = 0, Tiled = 0, Once = 0;
  for (unsigned I = 0; I < Stages.size(); ++I) {
    const CostStage &S = Stages[I];
    Computed += Evaluations[I] * WorkOf(S);
    if (!S.Inlined) {
      Tiled += Evaluations[I] * WorkOf(S);
      TiledWork += WorkOf(S);
      Once += WorkOf(S) * double(scaled(S, 0, C.tileWidth())) *
              double(scaled(S, 1, C.Rows));
    }
  }
  T.ComputedWorkPerTile = Work > 0 ? Computed : 0;
  T.OverlapFraction = TiledWork > 0 && Once > 0 ? Tiled / Once - 1 : 0;
}

/// Bytes of constant tables the block stages in shared memory.
uint64_t stagedTableBytes(const std::vector<CostStage> &Stages) {
  uint64_t Bytes = 0;
  for (const CostStage &S : Stages)
    Bytes += S.StagedTableBytes;
  return Bytes;
}

/// Not in Algorithm 2: the block's copy of its staged constant tables
/// (StagedTables.h), one load and one store per 4-byte word, shared by the
/// block's warps: transactions and work per tile.
void addTableCopies(CostTerms &T, const std::vector<CostStage> &Stages,
                    const CostConfig &C) {
  const double Bytes = double(stagedTableBytes(Stages)) / C.Warps;
  T.TransactionsPerTile += Bytes / C.TransactionBytes;
  if (T.ComputedWorkPerTile > 0)
    T.ComputedWorkPerTile += 2 * Bytes / 4;
}

/// Lines 3-6, 17 and 34: the grid, transactions per output point of the
/// image, and the idle share of the block slots over all waves.
void setGrid(CostTerms &T, const ImageExtent &E, const CostConfig &C,
             const GpuSpec &Spec) {
  const double TilePoints = double(C.tileWidth()) * C.Rows;
  if (!E.known()) {
    T.GlobalTransactions = T.TransactionsPerTile / TilePoints;
    return;
  }
  uint64_t Columns = ceilDiv(E.Width, C.tileWidth());
  T.WarpTiles = Columns * ceilDiv(E.Height, C.Rows) * E.Planes;
  T.Blocks = Columns * ceilDiv(E.Height, uint64_t(C.Rows) * C.Warps) * E.Planes;
  T.GlobalTransactions = T.TransactionsPerTile * double(T.WarpTiles) /
                         (double(E.Width) * double(E.Height) * E.Planes);
  uint64_t Wave = uint64_t(T.BlocksPerSm) * Spec.SmCount;
  uint64_t Slots = ceilDiv(T.Blocks, Wave) * Wave;
  T.ExtraBlocks = 1 - double(T.Blocks) / double(Slots);
}

/// Lines 29-32: what the resident blocks leave of the SM's shared memory
/// and registers.
void setUsage(CostTerms &T, const CostConfig &C, const GpuSpec &Spec) {
  double Shared = double(T.SharedBytesPerBlock) * T.BlocksPerSm;
  T.UnallocatedShared =
      Spec.SharedMemoryPerSm
          ? std::clamp(1 - Shared / double(Spec.SharedMemoryPerSm), 0.0, 1.0)
          : 0;
  double Registers = double(allocatedRegisters(T.RegistersPerThread)) * kWarp *
                     C.Warps * T.BlocksPerSm;
  T.UnusedRegisters =
      std::clamp(1 - Registers / double(Spec.RegistersPerSm), 0.0, 1.0);
}

/// 0.5 rather than formatv's 0.50: at most two decimals, no trailing zeros.
std::string shortNumber(double V) {
  std::string Text = llvm::formatv("{0:f2}", V).str();
  while (Text.back() == '0')
    Text.pop_back();
  if (Text.back() == '.')
    Text.pop_back();
  return Text;
}

} // namespace

unsigned CostConfig::registerChunks() const {
  if (SplitAxis != 0)
    return 0;
  return unsigned(std::lround(double(ColumnsPerLane) * RegisterFraction));
}

unsigned CostConfig::registerRows() const {
  if (SplitAxis != 1)
    return 0;
  return unsigned(std::lround(double(Rows) * RegisterFraction));
}

CostWeights CostWeights::defaults() {
  // Calibrated on an H100 (bench/RESULTS.md, 2026-11-21 20:10 entry): 136
  // measured configurations of the six fused samples (tiles 1..4 chunks x
  // 1..32 rows, hybrid fractions 0, 0.5, 1), fitted by
  // bench/experiments/fuse_calibrate.py (non-negative least squares of the
  // per-sample normalised times). Leave-one-out, the weights fitted on
  // five samples pick for the sixth a configuration 1.10x slower than its
  // best (geomean). Load imbalance (t7) is 0 while the extent is unknown at
  // compile time, so its weight is not fitted.
  //         t1        t2       t3         t4         t5        t6        t7
  return {{0.393712, 0.762816, 0.140088, 0.0321537, 0.357971, 0.117307, 0}};
}

std::array<double, CostTerms::NumTerms> CostTerms::terms() const {
  return {GlobalTransactions, OneMinusOccupancy, MemOverCompute,
          UnallocatedShared,  UnusedRegisters,   OverlapFraction,
          ExtraBlocks};
}

llvm::StringRef CostTerms::termName(unsigned I) {
  static const char *const Names[NumTerms] = {
      "transactions/pt",  "1-occupancy", "mem/compute", "unallocated shared",
      "unused registers", "overlap",     "idle blocks"};
  return I < NumTerms ? Names[I] : "";
}

CostTerms estimateGroupCost(const std::vector<CostStage> &Stages,
                            const ImageExtent &Extent, const CostConfig &Config,
                            const GpuSpec &Spec, const CostWeights &Weights,
                            uint64_t SharedLimitPerBlock) {
  CostTerms T;
  if (std::string Why = malformed(Stages, Config, Spec); !Why.empty())
    return infeasible(T, Why);
  uint64_t Limit = SharedLimitPerBlock ? SharedLimitPerBlock
                                       : Spec.SharedMemoryPerBlockOptin;

  // Lines 7-12 and 20: what a block needs.
  T.SharedBytesPerWarp = sharedBytesPerWarp(Stages, Config);
  T.SharedBytesPerBlock =
      T.SharedBytesPerWarp * Config.Warps + stagedTableBytes(Stages);
  T.RegistersPerThread =
      stageRegisters(Stages) + hybridRegisters(Stages, Config);
  if (std::string Why = overLimits(T, Config, Spec, Limit); !Why.empty())
    return infeasible(T, Why);

  // Lines 18-24.
  T.BlocksPerSm = residentBlocks(T, Config, Spec);
  if (!T.BlocksPerSm)
    return infeasible(T, "no block fits on an SM");
  uint64_t MaxWarps = Spec.MaxThreadsPerSm / kWarp;
  T.Occupancy = double(T.BlocksPerSm) * Config.Warps / double(MaxWarps);
  T.OneMinusOccupancy = 1 - T.Occupancy;

  // Lines 13-17 and 25-34.
  T.TransactionsPerTile = transactionsPerTile(Stages, Config);
  setOverlap(T, Stages, evaluationsPerTile(Stages, Config), Config);
  addTableCopies(T, Stages, Config);
  setTimes(T, Config, Spec);
  setGrid(T, Extent, Config, Spec);
  setUsage(T, Config, Spec);

  // Line 35.
  std::array<double, CostTerms::NumTerms> Terms = T.terms();
  T.Total = 0;
  for (unsigned I = 0; I < CostTerms::NumTerms; ++I)
    T.Total += Weights.W[I] * Terms[I];
  T.Feasible = true;
  return T;
}

std::optional<CostChoice>
chooseConfig(const std::vector<CostStage> &Stages, const ImageExtent &Extent,
             const GpuSpec &Spec, const CostWeights &Weights,
             const std::vector<CostConfig> &Candidates,
             uint64_t SharedLimitPerBlock) {
  std::optional<CostChoice> Best;
  for (const CostConfig &C : Candidates) {
    CostTerms T = estimateGroupCost(Stages, Extent, C, Spec, Weights,
                                    SharedLimitPerBlock);
    if (T.Feasible && (!Best || T.Total < Best->Terms.Total))
      Best = CostChoice{C, std::move(T)};
  }
  return Best;
}

std::vector<CostConfig> defaultCandidates(bool AllowHybrid) {
  std::vector<double> Fractions = {0};
  if (AllowHybrid)
    Fractions = {0, 0.5, 1};
  std::vector<CostConfig> Candidates;
  for (unsigned Columns : {1u, 2u, 4u})
    for (unsigned Rows : {1u, 2u, 4u, 8u, 16u, 32u})
      for (unsigned Warps : {2u, 4u, 8u})
        for (double F : Fractions)
          for (unsigned Axis : {0u, 1u}) {
            // Only whole 32-column chunks or whole rows go to registers.
            double Kept = (Axis ? Rows : Columns) * F;
            if ((F == 0 && Axis) ||
                (F > 0 && (Kept < 1 || Kept != std::floor(Kept))))
              continue;
            CostConfig C;
            C.ColumnsPerLane = Columns;
            C.Rows = Rows;
            C.Warps = Warps;
            C.RegisterFraction = F;
            C.SplitAxis = Axis;
            Candidates.push_back(C);
          }
  return Candidates;
}

std::vector<FusionSegment>
dpFusion(unsigned NumStages,
         llvm::function_ref<std::optional<double>(unsigned Begin, unsigned End)>
             GroupCost) {
  // Best[E]: least cost of [0, E); From[E]: where its last segment begins.
  std::vector<double> Best(NumStages + 1, kInfinity), Last(NumStages + 1, 0);
  std::vector<unsigned> From(NumStages + 1, 0);
  Best[0] = 0;
  for (unsigned E = 1; E <= NumStages; ++E) {
    bool Found = false;
    // Ascending Begin with a strict comparison: longer last segments (fewer
    // kernels) win ties.
    for (unsigned B = 0; B < E; ++B) {
      std::optional<double> Cost = GroupCost(B, E);
      if (!Cost && E - B > 1)
        continue; // Illegal group.
      double C = Cost ? *Cost : kInfinity;
      double Sum = Best[B] + C;
      if (!Found || Sum < Best[E]) {
        Found = true;
        Best[E] = Sum;
        From[E] = B;
        Last[E] = C;
      }
    }
  }
  std::vector<FusionSegment> Segments;
  for (unsigned E = NumStages; E > 0; E = From[E])
    Segments.push_back({From[E], E, Last[E]});
  std::reverse(Segments.begin(), Segments.end());
  return Segments;
}

std::string describeCost(const CostChoice &Choice) {
  const CostConfig &C = Choice.Config;
  const CostTerms &T = Choice.Terms;
  std::string Shape =
      llvm::formatv("tile {0}x{1}, {2} warps", C.tileWidth(), C.Rows, C.Warps);
  if (C.RegisterFraction > 0)
    Shape += ", registers " + shortNumber(C.RegisterFraction) +
             (C.SplitAxis ? " along y" : "");
  if (!T.Feasible)
    return Shape + ": infeasible (" + T.Why + ")";
  return Shape +
         llvm::formatv(": cost {0:f2} (transactions/pt {1:f2}, occupancy "
                       "{2:f2}, mem/compute {3:f2}, overlap {4:f2}, idle "
                       "blocks {5:f2}; {6} B shared/block, {7} regs/thread)",
                       T.Total, T.GlobalTransactions, T.Occupancy,
                       T.MemOverCompute, T.OverlapFraction, T.ExtraBlocks,
                       T.SharedBytesPerBlock, T.RegistersPerThread)
             .str();
}

} // namespace cuda_rewrite
