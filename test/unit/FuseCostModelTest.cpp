//===- FuseCostModelTest.cpp - Algorithm 2's cost and DP-Fusion -----------===//
//
// The terms of the fused-group cost model counted by hand on small groups
// with the built-in H100 spec (sm_90: 132 SMs, 228 KiB of shared memory
// per SM, 1 KiB reserved per block, 65536 registers, 2048 threads), the
// choice among candidates, and DP-Fusion on cost tables.
//
//===----------------------------------------------------------------------===//

#include "rewriters/fuse/FuseCostModel.h"
#include "gpu/GpuSpec.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"
#include <cmath>
#include <map>
#include <utility>

using namespace cuda_rewrite;

namespace {

GpuSpec h100() { return llvm::cantFail(getBuiltinGpuSpec("sm_90")); }

CostConfig config(unsigned Columns, unsigned Rows, unsigned Warps,
                  double Fraction = 0) {
  CostConfig C;
  C.ColumnsPerLane = Columns;
  C.Rows = Rows;
  C.Warps = Warps;
  C.RegisterFraction = Fraction;
  return C;
}

/// Only term \p I counts.
CostWeights only(unsigned I) {
  CostWeights W;
  W.W[I] = 1;
  return W;
}

/// A stage kept in a float tile over its region, widened by the halos.
CostStage tiled(int64_t HaloX, int64_t HaloY) {
  CostStage S;
  S.RegionLo[0] = -HaloX;
  S.RegionHi[0] = HaloX;
  S.RegionLo[1] = -HaloY;
  S.RegionHi[1] = HaloY;
  S.TileElementBytes = 4;
  return S;
}

/// A stage computed over the output tile, storing a float.
CostStage output() {
  CostStage S;
  S.GlobalStoreBytes = 4;
  return S;
}

CostTerms cost(const std::vector<CostStage> &Stages, const CostConfig &C,
               const ImageExtent &E = {},
               const CostWeights &W = CostWeights::defaults(),
               uint64_t SharedLimit = 0) {
  return estimateGroupCost(Stages, E, C, h100(), W, SharedLimit);
}

//===----------------------------------------------------------------------===//
// Lines 7-12: shared memory and hybrid tiles.
//===----------------------------------------------------------------------===//

TEST(FuseCostModelTest, SharedMemoryOverTheBlockLimitIsInfeasible) {
  // 128 x 32 floats per warp and tile: 16 KiB; 8 warps: 128 KiB a tile.
  std::vector<CostStage> One = {tiled(0, 0), output()};
  CostTerms T = cost(One, config(4, 32, 8));
  EXPECT_TRUE(T.Feasible) << T.Why; // Under the 227 KiB opt-in limit.
  EXPECT_EQ(T.SharedBytesPerBlock, 128u * 1024);
  EXPECT_TRUE(std::isfinite(T.Total));

  T = cost(One, config(4, 32, 8), {}, CostWeights::defaults(), 48 * 1024);
  EXPECT_FALSE(T.Feasible); // Over the static 48 KiB.
  EXPECT_TRUE(std::isinf(T.Total));
  EXPECT_NE(T.Why.find("131072 bytes of shared memory per block > 49152"),
            std::string::npos)
      << T.Why;

  std::vector<CostStage> Two = {tiled(0, 0), tiled(0, 0), output()};
  T = cost(Two, config(4, 32, 8)); // 256 KiB > 227 KiB.
  EXPECT_FALSE(T.Feasible);
  EXPECT_NE(T.Why.find("shared memory"), std::string::npos) << T.Why;
}

TEST(FuseCostModelTest, HybridFractionOneMovesTheTileToRegisters) {
  std::vector<CostStage> G = {tiled(1, 1), output()};
  // 64 + 2 columns by 8 + 2 rows of floats.
  CostTerms Shared = cost(G, config(2, 8, 4, 0));
  CostTerms Half = cost(G, config(2, 8, 4, 0.5));
  CostTerms Registers = cost(G, config(2, 8, 4, 1));
  ASSERT_TRUE(Shared.Feasible && Half.Feasible && Registers.Feasible);
  EXPECT_EQ(Shared.SharedBytesPerWarp, 66u * 10 * 4);
  EXPECT_EQ(Half.SharedBytesPerWarp, 34u * 10 * 4);     // One chunk out.
  EXPECT_EQ(Registers.SharedBytesPerWarp, 2u * 10 * 4); // The x overlap only.
  EXPECT_EQ(Registers.SharedBytesPerBlock, 4u * 80);
  // Each lane holds one column of each chunk: a register per row.
  EXPECT_EQ(Shared.RegistersPerThread, 16u);
  EXPECT_EQ(Half.RegistersPerThread, 16u + 10);
  EXPECT_EQ(Registers.RegistersPerThread, 16u + 2 * 10);
}

TEST(FuseCostModelTest, HybridAlongYKeepsTheLastRowsInRegisters) {
  std::vector<CostStage> G = {tiled(1, 1), output()};
  CostConfig Half = config(2, 8, 4, 0.5), One = config(2, 8, 4, 1);
  Half.SplitAxis = One.SplitAxis = 1;
  EXPECT_EQ(Half.registerRows(), 4u);
  EXPECT_EQ(Half.registerChunks(), 0u);
  CostTerms H = cost(G, Half), O = cost(G, One);
  ASSERT_TRUE(H.Feasible && O.Feasible) << H.Why << O.Why;
  // 66 columns by 10 - 4 rows stay shared; a register row spans three
  // 32-lane chunks (96 lanes for 66 columns), one register each.
  EXPECT_EQ(H.SharedBytesPerWarp, 66u * 6 * 4);
  EXPECT_EQ(H.RegistersPerThread, 16u + 3 * 4);
  EXPECT_EQ(O.SharedBytesPerWarp, 66u * 2 * 4); // The y overlap only.
  EXPECT_EQ(O.RegistersPerThread, 16u + 3 * 8);
  // The idle lanes of the register rows count as computed points.
  EXPECT_DOUBLE_EQ(H.OverlapFraction,
                   (66.0 * 6 + 96 * 4 + 64 * 8) / (2 * 64 * 8) - 1);
  // A fraction that keeps no row is malformed.
  CostConfig None = config(1, 1, 4, 0.25);
  None.SplitAxis = 1;
  EXPECT_FALSE(cost(G, None).Feasible);
  EXPECT_NE(cost(G, None).Why.find("keeps no row"), std::string::npos);
}

TEST(FuseCostModelTest, HybridNeedsAWholeChunkAndAnEligibleTile) {
  std::vector<CostStage> G = {tiled(1, 1), output()};
  CostTerms T = cost(G, config(1, 8, 4, 0.25)); // 0.25 of one chunk.
  EXPECT_FALSE(T.Feasible);
  EXPECT_NE(T.Why.find("no whole 32-column chunk"), std::string::npos) << T.Why;

  G[0].HybridEligible = false; // Stays in shared memory whatever f is.
  CostTerms Shared = cost(G, config(2, 8, 4, 0));
  CostTerms Hybrid = cost(G, config(2, 8, 4, 1));
  ASSERT_TRUE(Hybrid.Feasible) << Hybrid.Why;
  EXPECT_EQ(Hybrid.SharedBytesPerWarp, Shared.SharedBytesPerWarp);
  EXPECT_EQ(Hybrid.RegistersPerThread, Shared.RegistersPerThread);
}

//===----------------------------------------------------------------------===//
// Lines 18-24: occupancy.
//===----------------------------------------------------------------------===//

TEST(FuseCostModelTest, OccupancyFromSharedMemoryMatchesAHandCount) {
  // 32 x 80 floats per warp: 10240 bytes; 4 warps: 40960 bytes per block,
  // plus 1 KiB reserved: 41984. 233472 / 41984 = 5.56: 5 blocks (threads
  // allow 16, registers 32, MaxBlocksPerSm 32), 20 of 64 warps.
  std::vector<CostStage> G = {tiled(0, 0), output()};
  CostTerms T = cost(G, config(1, 80, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  EXPECT_EQ(T.SharedBytesPerBlock, 40960u);
  EXPECT_EQ(T.BlocksPerSm, 5u);
  EXPECT_DOUBLE_EQ(T.Occupancy, 20.0 / 64);
  EXPECT_DOUBLE_EQ(T.OneMinusOccupancy, 44.0 / 64);
  EXPECT_DOUBLE_EQ(T.UnallocatedShared, 1 - 5.0 * 40960 / (228 * 1024));
  // 16 registers for 20 resident warps of 32 threads.
  EXPECT_DOUBLE_EQ(T.UnusedRegisters, 1 - 16.0 * 32 * 20 / 65536);
}

TEST(FuseCostModelTest, OccupancyFromRegistersUsesAllocationUnits) {
  // 100 registers are allocated as 104: 3328 per warp, 19 warps per SM,
  // so 4 blocks of 4 warps.
  CostStage S = output();
  S.Registers = 100;
  CostTerms T = cost({S}, config(1, 8, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  EXPECT_EQ(T.RegistersPerThread, 100u);
  EXPECT_EQ(T.BlocksPerSm, 4u);
  EXPECT_DOUBLE_EQ(T.Occupancy, 16.0 / 64);

  S.Registers = 256; // Over the 255 of sm_90.
  T = cost({S}, config(1, 8, 4));
  EXPECT_FALSE(T.Feasible);
  EXPECT_NE(T.Why.find("256 registers per thread > 255"), std::string::npos)
      << T.Why;
}

TEST(FuseCostModelTest, RegistersAreTheMostOneStageNeeds) {
  // Stages run one after another; an inlined stage runs inside its reader.
  CostStage A = tiled(0, 0), B = tiled(0, 0), C = output();
  A.Registers = 40;
  B.Inlined = true;
  B.Registers = 12;
  C.Registers = 24;
  CostTerms T = cost({A, B, C}, config(1, 8, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  EXPECT_EQ(T.RegistersPerThread, 40u); // Not 40 + 12 + 24.
  C.Registers = 30;
  T = cost({A, B, C}, config(1, 8, 4));
  EXPECT_EQ(T.RegistersPerThread, 42u); // 30 + the inlined 12.
}

//===----------------------------------------------------------------------===//
// Lines 14-17, 25-28, 33-35: transactions, times, overlap, load imbalance.
//===----------------------------------------------------------------------===//

TEST(FuseCostModelTest, TransactionsOfA3x3ReadMatchAHandCount) {
  // A 32 x 8 tile reading a float input at -1..1 in x and y: 10 rows of
  // 34 floats from byte -4 to 131, six 32-byte sectors each (from -32 to
  // 160); the float store takes 8 rows of four sectors.
  CostStage S = output();
  S.GlobalReads.push_back({4, -1, 1, -1, 1});
  CostTerms T = cost({S}, config(1, 8, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  EXPECT_DOUBLE_EQ(T.TransactionsPerTile, 10 * 6 + 8 * 4);
  EXPECT_DOUBLE_EQ(T.GlobalTransactions, 92.0 / 256); // Extent unknown.

  // 128-byte lines: three per read row (-128 to 256), one per store row.
  CostConfig Lines = config(1, 8, 4);
  Lines.TransactionBytes = 128;
  EXPECT_DOUBLE_EQ(cost({S}, Lines).TransactionsPerTile, 10 * 3 + 8 * 1);

  // A ragged image: 33 x 8 needs two warp tiles, counted whole.
  T = cost({S}, config(1, 8, 4), {33, 8, 1});
  EXPECT_EQ(T.WarpTiles, 2u);
  EXPECT_DOUBLE_EQ(T.GlobalTransactions, 2 * 92.0 / (33 * 8));
}

TEST(FuseCostModelTest, MemoryOverComputeFollowsLines25To28) {
  // 8 rows of 4 sectors loaded and stored: 2048 bytes per warp tile, at
  // 3000 GB/s shared by 132 SMs and 4 schedulers; 256 points of 10
  // instructions, 32 lanes per instruction at 1.98 GHz.
  CostStage S = output();
  S.GlobalReads.push_back({4, 0, 0, 0, 0});
  S.WorkPerPoint = 10;
  CostTerms T = cost({S}, config(1, 8, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  double Mem = 2048 / (3000e9 / 132 / 4);
  double Compute = 10 * 256 / 32 / 1.98e9;
  EXPECT_NEAR(T.MemTime, Mem, Mem * 1e-12);
  EXPECT_NEAR(T.ComputeTime, Compute, Compute * 1e-12);
  EXPECT_NEAR(T.MemOverCompute, Mem / Compute, 1e-9);
  S.WorkPerPoint = 20; // Twice the work, half the ratio.
  EXPECT_NEAR(cost({S}, config(1, 8, 4)).MemOverCompute, Mem / Compute / 2,
              1e-9);
}

TEST(FuseCostModelTest, MoreRowsReduceTheOverlapOfAYHalo) {
  // A producer computed one row above and below the tile for its reader:
  // 8 rows: (32 * 10 + 32 * 8) / (2 * 256) - 1; 16 rows: half of that.
  std::vector<CostStage> G = {tiled(0, 1), output()};
  CostTerms Eight = cost(G, config(1, 8, 4));
  CostTerms Sixteen = cost(G, config(1, 16, 4));
  EXPECT_DOUBLE_EQ(Eight.OverlapFraction, 0.125);
  EXPECT_DOUBLE_EQ(Sixteen.OverlapFraction, 0.0625);
  EXPECT_LT(cost(G, config(1, 16, 4), {}, only(5)).Total,
            cost(G, config(1, 8, 4), {}, only(5)).Total);
}

TEST(FuseCostModelTest, ScaledStagesSpanTheirScaleOfTheTile) {
  // A coarser level at half the rows (what an upsampling reader reads),
  // with a row of halo either side: 8 rows of tile take 4 + 2 of it.
  CostStage Coarse = tiled(0, 1);
  Coarse.ScaleDen[1] = 2;
  std::vector<CostStage> G = {Coarse, output()};
  CostTerms T = cost(G, config(1, 8, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  EXPECT_EQ(T.SharedBytesPerBlock, 4u * 32 * 6 * 4);
  // A finer level at twice the columns (what a downsampling reader reads).
  CostStage Fine = tiled(0, 0);
  Fine.ScaleNum[0] = 2;
  EXPECT_EQ(cost({Fine, output()}, config(1, 8, 4)).SharedBytesPerBlock,
            4u * 64 * 8 * 4);
  // Overlap counts each stage's points at its own scale: the coarse level
  // computes 32 x 6 of its 32 x 4, the output its 32 x 8.
  EXPECT_DOUBLE_EQ(T.OverlapFraction, (32.0 * 6 + 256) / (32 * 4 + 256) - 1);
  // One row does not halve into whole rows.
  CostTerms One = cost(G, config(1, 1, 4));
  EXPECT_FALSE(One.Feasible);
  EXPECT_NE(One.Why.find("does not scale to whole points"), std::string::npos)
      << One.Why;
}

TEST(FuseCostModelTest, StagedTablesAreCopiedOncePerBlock) {
  // A 4 KiB table: shared memory per block, and 128 transactions of 32
  // bytes per block that its warps share.
  CostStage Lookup = output();
  Lookup.StagedTableBytes = 4096;
  CostTerms Two = cost({Lookup}, config(1, 8, 2));
  CostTerms Eight = cost({Lookup}, config(1, 8, 8));
  CostTerms Without = cost({output()}, config(1, 8, 2));
  EXPECT_EQ(Two.SharedBytesPerBlock, 4096u);
  EXPECT_DOUBLE_EQ(Two.TransactionsPerTile - Without.TransactionsPerTile,
                   4096.0 / 32 / 2);
  EXPECT_DOUBLE_EQ(Eight.TransactionsPerTile - Without.TransactionsPerTile,
                   4096.0 / 32 / 8);
  EXPECT_LT(cost({Lookup}, config(1, 8, 8), {}, only(0)).Total,
            cost({Lookup}, config(1, 8, 2), {}, only(0)).Total);
}

TEST(FuseCostModelTest, InlinedStagesAreRecomputedOverTheirReadersRegion) {
  // Stage 0 (2 instructions) is inlined and read 3 times per point of
  // stage 1 (1 instruction), computed over 32 x 10 for stage 2's y halo.
  CostStage In = output(), Reader = tiled(0, 1), Out = output();
  In.GlobalStoreBytes = 0;
  In.Inlined = true;
  In.ReadsPerReaderPoint = 3;
  In.WorkPerPoint = 2;
  CostTerms T = cost({In, Reader, Out}, config(1, 8, 4));
  ASSERT_TRUE(T.Feasible) << T.Why;
  double Work = 2 * 3 * 320 + 1 * 320 + 1 * 256;
  EXPECT_DOUBLE_EQ(T.ComputedWorkPerTile, Work);
  // Overlap is that of the tiled stages only: (320 + 256) / (2 * 256) - 1;
  // the inlined recomputation is compute time, not overlap.
  EXPECT_DOUBLE_EQ(T.OverlapFraction, 0.125);
  // Read by the last stage instead, over the output tile only.
  In.Readers = {2};
  T = cost({In, Reader, Out}, config(1, 8, 4));
  EXPECT_DOUBLE_EQ(T.ComputedWorkPerTile, 2 * 3 * 256 + 320 + 256);
}

TEST(FuseCostModelTest, IdleBlocksAreThoseOfTheLastWave) {
  // 4 warps of 16 registers and no shared memory: 16 blocks per SM
  // (2048 threads), a wave of 16 * 132 = 2112 blocks of 32 x 32 points.
  std::vector<CostStage> G = {output()};
  CostTerms Full = cost(G, config(1, 8, 4), {32 * 2112, 64, 1});
  ASSERT_TRUE(Full.Feasible) << Full.Why;
  EXPECT_EQ(Full.BlocksPerSm, 16u);
  EXPECT_EQ(Full.Blocks, 2u * 2112);
  EXPECT_DOUBLE_EQ(Full.ExtraBlocks, 0);
  CostTerms OneMore = cost(G, config(1, 8, 4), {32 * 2113, 32, 1});
  EXPECT_EQ(OneMore.Blocks, 2113u);
  EXPECT_DOUBLE_EQ(OneMore.ExtraBlocks, 1 - 2113.0 / 4224);
  // Three planes of the same image, and an unknown extent (no term).
  EXPECT_EQ(cost(G, config(1, 8, 4), {32 * 2113, 32, 3}).Blocks, 3u * 2113);
  EXPECT_DOUBLE_EQ(cost(G, config(1, 8, 4)).ExtraBlocks, 0);
}

TEST(FuseCostModelTest, TotalIsTheWeightedSumOfTheTerms) {
  std::vector<CostStage> G = {tiled(1, 1), output()};
  G[0].GlobalReads.push_back({4, -1, 1, -1, 1});
  CostWeights W = {{1, 2, 3, 4, 5, 6, 7}};
  CostTerms T = cost(G, config(2, 4, 8), {1000, 700, 1}, W);
  ASSERT_TRUE(T.Feasible) << T.Why;
  double Sum = 0;
  for (unsigned I = 0; I < CostTerms::NumTerms; ++I) {
    EXPECT_GE(T.terms()[I], 0) << CostTerms::termName(I).str();
    Sum += W.W[I] * T.terms()[I];
  }
  EXPECT_GT(Sum, 0);
  EXPECT_DOUBLE_EQ(T.Total, Sum);
  EXPECT_EQ(CostTerms::termName(0), "transactions/pt");
}

//===----------------------------------------------------------------------===//
// The argmin and its candidates.
//===----------------------------------------------------------------------===//

TEST(FuseCostModelTest, ChooseConfigTakesTheCheapestFeasible) {
  // Only the overlap counts, so more rows are cheaper; the 64-row tile is
  // cheapest of all but needs 64 KiB per block, over the 48 KiB given.
  std::vector<CostStage> G = {tiled(0, 1), output()};
  std::vector<CostConfig> Candidates = {config(4, 64, 2), config(1, 4, 4),
                                        config(1, 16, 4), config(1, 8, 4)};
  CostConfig Tie = config(1, 16, 4);
  Tie.TransactionBytes = 128; // Same overlap: a tie, after the first.
  Candidates.push_back(Tie);
  ASSERT_FALSE(
      cost(G, Candidates[0], {}, only(5), 48 * 1024).Feasible); // Sanity.
  std::optional<CostChoice> Best =
      chooseConfig(G, {}, h100(), only(5), Candidates, 48 * 1024);
  ASSERT_TRUE(Best);
  EXPECT_EQ(Best->Config.Rows, 16u);
  EXPECT_EQ(Best->Config.TransactionBytes, 32u);
  EXPECT_DOUBLE_EQ(Best->Terms.Total, 1.0 / 16); // (576 + 512) / 1024 - 1.

  EXPECT_FALSE(
      chooseConfig(G, {}, h100(), only(5), {Candidates[0]}, 48 * 1024));
  EXPECT_FALSE(chooseConfig(G, {}, h100(), only(5), {}));
}

TEST(FuseCostModelTest, DefaultCandidatesKeepWholeChunks) {
  EXPECT_EQ(defaultCandidates(false).size(), 3u * 6 * 3);
  std::vector<CostConfig> Hybrid = defaultCandidates(true);
  // Split along x, fractions per ColumnsPerLane: 1: {0, 1}; 2 and 4:
  // {0, 0.5, 1}. Split along y, per Rows: 1: {1}; the others {0.5, 1}.
  EXPECT_EQ(Hybrid.size(), (2u + 3 + 3) * 6 * 3 + 3 * (1 + 2 * 5) * 3);
  for (const CostConfig &C : Hybrid)
    if (C.SplitAxis == 0)
      EXPECT_DOUBLE_EQ(C.registerChunks(),
                       C.ColumnsPerLane * C.RegisterFraction);
    else
      EXPECT_DOUBLE_EQ(C.registerRows(), C.Rows * C.RegisterFraction);
  // Every default candidate of a small group is feasible on an H100.
  std::vector<CostStage> G = {tiled(1, 1), output()};
  for (const CostConfig &C : Hybrid)
    EXPECT_TRUE(cost(G, C).Feasible) << describeCost({C, cost(G, C)});
}

//===----------------------------------------------------------------------===//
// DP-Fusion.
//===----------------------------------------------------------------------===//

/// A cost table over [Begin, End); missing groups are illegal.
struct Table {
  std::map<std::pair<unsigned, unsigned>, double> Costs;
  std::map<std::pair<unsigned, unsigned>, unsigned> Calls;
  std::optional<double> operator()(unsigned B, unsigned E) {
    ++Calls[{B, E}];
    auto It = Costs.find({B, E});
    if (It == Costs.end())
      return std::nullopt;
    return It->second;
  }
};

std::vector<std::pair<unsigned, unsigned>>
bounds(const std::vector<FusionSegment> &Segments) {
  std::vector<std::pair<unsigned, unsigned>> Result;
  for (const FusionSegment &S : Segments)
    Result.push_back({S.Begin, S.End});
  return Result;
}

using Bounds = std::vector<std::pair<unsigned, unsigned>>;

TEST(FuseCostModelTest, DpFusionFindsTheBestPartitionOfAChain) {
  // Singles 10; the best is 0 | 1 2 | 3 = 10 + 8 + 10 = 28 (all of them:
  // 40, 0 1 | 2 3: 30, 0 1 2 | 3: 32, 0 | 1 2 3: 31, all singles: 40).
  Table T;
  T.Costs = {{{0, 1}, 10}, {{1, 2}, 10}, {{2, 3}, 10}, {{3, 4}, 10},
             {{0, 2}, 15}, {{1, 3}, 8},  {{2, 4}, 15}, {{0, 3}, 22},
             {{1, 4}, 21}, {{0, 4}, 40}};
  std::vector<FusionSegment> S =
      dpFusion(4, [&](unsigned B, unsigned E) { return T(B, E); });
  EXPECT_EQ(bounds(S), (Bounds{{0, 1}, {1, 3}, {3, 4}}));
  ASSERT_EQ(S.size(), 3u);
  EXPECT_DOUBLE_EQ(S[1].Cost, 8);
  // Each group asked once at most: N (N + 1) / 2 calls.
  unsigned Calls = 0;
  for (const auto &[Group, N] : T.Calls) {
    EXPECT_EQ(N, 1u);
    Calls += N;
  }
  EXPECT_LE(Calls, 10u);

  // With 1 2 illegal: 0 1 | 2 3 at 30.
  T.Costs.erase({1, 3});
  S = dpFusion(4, [&](unsigned B, unsigned E) { return T(B, E); });
  EXPECT_EQ(bounds(S), (Bounds{{0, 2}, {2, 4}}));
}

TEST(FuseCostModelTest, DpFusionHandlesOneStageAndRefusedSingles) {
  std::vector<FusionSegment> S =
      dpFusion(1, [](unsigned, unsigned) { return std::optional<double>(3); });
  ASSERT_EQ(S.size(), 1u);
  EXPECT_EQ(S[0].Begin, 0u);
  EXPECT_EQ(S[0].End, 1u);
  EXPECT_DOUBLE_EQ(S[0].Cost, 3);

  // A single the cost function refuses is still a segment, at +inf.
  S = dpFusion(1, [](unsigned, unsigned) { return std::optional<double>(); });
  ASSERT_EQ(S.size(), 1u);
  EXPECT_TRUE(std::isinf(S[0].Cost));

  // Stage 1 alone is refused, but fusing it with stage 0 is fine.
  Table T;
  T.Costs = {{{0, 1}, 1}, {{2, 3}, 1}, {{0, 2}, 5}};
  S = dpFusion(3, [&](unsigned B, unsigned E) { return T(B, E); });
  EXPECT_EQ(bounds(S), (Bounds{{0, 2}, {2, 3}}));
  EXPECT_TRUE(
      dpFusion(0, [&](unsigned B, unsigned E) { return T(B, E); }).empty());

  // Ties go to the longer last segment (fewer kernels).
  T.Costs = {{{0, 1}, 1}, {{1, 2}, 1}, {{0, 2}, 2}};
  S = dpFusion(2, [&](unsigned B, unsigned E) { return T(B, E); });
  EXPECT_EQ(bounds(S), (Bounds{{0, 2}}));
}

//===----------------------------------------------------------------------===//
// Remarks.
//===----------------------------------------------------------------------===//

TEST(FuseCostModelTest, DescribeCostMentionsTheTile) {
  std::vector<CostStage> G = {tiled(1, 1), output()};
  CostConfig C = config(2, 8, 4, 0.5);
  std::string Text = describeCost({C, cost(G, C)});
  EXPECT_EQ(Text.rfind("tile 64x8, 4 warps, registers 0.5: cost ", 0), 0u)
      << Text;
  EXPECT_NE(Text.find("occupancy 1.00"), std::string::npos) << Text;
  EXPECT_EQ(Text.find('\n'), std::string::npos);

  C = config(1, 8, 4, 0.25);
  Text = describeCost({C, cost(G, C)});
  EXPECT_EQ(Text.rfind("tile 32x8, 4 warps, registers 0.25: infeasible (", 0),
            0u)
      << Text;
}

} // namespace
