//===- SystolicModelTest.cpp - Choosing P and the block size for SSAM -----===//
//
// The halo ratio of seed 002 section 5.3, the register estimates, and the
// shape the model picks for 2D and 3D stencils of float and double, with
// the built-in H100 spec (a budget of 64 registers per thread).
//
//===----------------------------------------------------------------------===//

#include "analysis/SystolicModel.h"
#include "analysis/GpuSpec.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"
#include <algorithm>

using namespace cuda_rewrite;

namespace {

SystolicGeometry geometry(unsigned Columns, unsigned Rows, unsigned Planes = 1,
                          unsigned ElementBytes = 4) {
  SystolicGeometry G;
  G.Columns = Columns;
  G.Rows = Rows;
  G.Planes = Planes;
  G.Taps = Columns * Rows * Planes;
  G.ElementBytes = ElementBytes;
  return G;
}

GpuSpec h100() { return llvm::cantFail(getBuiltinGpuSpec("sm_90")); }

SystolicShape choose(const SystolicGeometry &G,
                     std::optional<unsigned> P = std::nullopt,
                     std::optional<unsigned> Block = std::nullopt) {
  return chooseSystolicShape(G, h100(), P, Block);
}

//===----------------------------------------------------------------------===//
// The halo ratio: HR = (S*C - (S - (M-1)) * P) / (S*C), S = 32, C = P+N-1.
//===----------------------------------------------------------------------===//

TEST(SystolicModelTest, HaloRatioOfSection53) {
  // 3x3: C = P + 2, 30 useful lanes.
  SystolicGeometry G = geometry(3, 3);
  EXPECT_DOUBLE_EQ(systolicHaloRatio(G, 1), (96.0 - 30.0) / 96.0);     // 0.6875
  EXPECT_DOUBLE_EQ(systolicHaloRatio(G, 4), (192.0 - 120.0) / 192.0);  // 0.375
  EXPECT_DOUBLE_EQ(systolicHaloRatio(G, 16), (576.0 - 480.0) / 576.0); // 1/6
  // 5x5: C = P + 4, 28 useful lanes.
  EXPECT_DOUBLE_EQ(systolicHaloRatio(geometry(5, 5), 8),
                   (384.0 - 224.0) / 384.0);
  // One column, three rows: only the rows' halo is redundant.
  EXPECT_DOUBLE_EQ(systolicHaloRatio(geometry(1, 3), 1), 2.0 / 3.0);
  // A single point has no halo.
  EXPECT_DOUBLE_EQ(systolicHaloRatio(geometry(1, 1), 16), 0.0);
  // Planes do not enter the ratio (each plane has the same window).
  EXPECT_DOUBLE_EQ(systolicHaloRatio(geometry(3, 3, 3), 4),
                   systolicHaloRatio(geometry(3, 3), 4));
}

TEST(SystolicModelTest, HaloRatioFallsAsRowsGrow) {
  for (unsigned M : {2u, 3u, 5u, 9u, 17u}) {
    SystolicGeometry G = geometry(M, M);
    double Last = 1.0;
    for (unsigned P = 1; P <= 64; P *= 2) {
      double HR = systolicHaloRatio(G, P);
      EXPECT_LT(HR, Last) << "M = N = " << M << ", P = " << P;
      EXPECT_GE(HR, 0.0);
      Last = HR;
    }
  }
}

//===----------------------------------------------------------------------===//
// Registers: C values per plane (two registers each for double), a partial
// sum, and a fixed overhead that the model calibrates; the tests read the
// overhead back from a one-value cache rather than repeating its value.
//===----------------------------------------------------------------------===//

unsigned overhead2D() {
  return systolicCacheRegisters(geometry(1, 1), 1) - 2; // C = 1, one sum.
}
unsigned overhead3D() {
  // A window of 2 planes of 1 row, the next plane, and the sum.
  return systolicCacheRegisters(geometry(1, 1, 2), 1) - 4;
}

/// The documented 2D rule: the largest power of two up to MaxRowsPerThread
/// whose cache fits the budget, else 1.
unsigned largestFittingRows(const SystolicGeometry &G, unsigned Budget) {
  for (unsigned P = MaxRowsPerThread; P > 1; P /= 2)
    if (systolicCacheRegisters(G, P) <= Budget)
      return P;
  return 1;
}

/// Resident blocks __launch_bounds__ asks for on the H100 (64K registers):
/// the estimate rounded up to 8, at least the budget of 64.
unsigned residentBlocks(unsigned Estimate, unsigned Threads) {
  unsigned PerThread = std::max(64u, (Estimate + 7) / 8 * 8);
  return std::max(1u, 65536u / (Threads * PerThread));
}

TEST(SystolicModelTest, CacheRegisters) {
  unsigned O = overhead2D();
  // Something stays live beside the cache, but not a whole budget's worth.
  EXPECT_GT(O, 0u);
  EXPECT_LT(O, 48u);
  EXPECT_EQ(systolicCacheRegisters(geometry(3, 3), 16), 18 + 1 + O);
  EXPECT_EQ(systolicCacheRegisters(geometry(3, 3), 1), 3 + 1 + O);
  EXPECT_EQ(systolicCacheRegisters(geometry(9, 9), 4), 12 + 1 + O);
  // Columns do not count: each lane holds one column.
  EXPECT_EQ(systolicCacheRegisters(geometry(9, 3), 4),
            systolicCacheRegisters(geometry(1, 3), 4));
  // Double: two registers per value and for the sum.
  EXPECT_EQ(systolicCacheRegisters(geometry(3, 3, 1, 8), 16), (18 + 1) * 2 + O);
  EXPECT_EQ(systolicCacheRegisters(geometry(3, 3, 1, 8), 8), (10 + 1) * 2 + O);
  // 3D: C values per plane of the z window and of the plane loaded ahead.
  unsigned O3 = overhead3D();
  EXPECT_EQ(systolicCacheRegisters(geometry(3, 3, 3), 4), 6 * 4 + 1 + O3);
  EXPECT_EQ(systolicCacheRegisters(geometry(5, 5, 5, 8), 8),
            (12 * 6 + 1) * 2 + O3);
}

TEST(SystolicModelTest, WeightsInRegistersAddTaps) {
  SystolicGeometry G = geometry(3, 3);
  EXPECT_EQ(systolicRegisters(G, 16), systolicCacheRegisters(G, 16));
  G.WeightsInRegisters = true;
  EXPECT_EQ(systolicRegisters(G, 16), systolicCacheRegisters(G, 16) + 9);
  SystolicGeometry D = geometry(3, 3, 1, 8);
  D.WeightsInRegisters = true;
  EXPECT_EQ(systolicRegisters(D, 8), systolicCacheRegisters(D, 8) + 18);
}

//===----------------------------------------------------------------------===//
// Choosing P
//===----------------------------------------------------------------------===//

TEST(SystolicModelTest, TwoDimensionalFloatTakesTheMostRows) {
  // 3x3 float: P = 16 needs 19 registers plus the overhead, well within the
  // H100's budget of 64 (half of 2048 threads resident with 64K registers).
  SystolicShape S = choose(geometry(3, 3));
  EXPECT_EQ(S.RegisterBudget, 64u);
  EXPECT_EQ(S.RowsPerThread, 16u);
  EXPECT_EQ(S.RowsPerThread, MaxRowsPerThread);
  EXPECT_EQ(S.WarpsPerBlock, 4u);
  EXPECT_EQ(S.PlanesPerWarp, 1u);
  EXPECT_EQ(S.EstimatedRegisters, 19 + overhead2D());
  EXPECT_EQ(S.MinBlocksPerSm, residentBlocks(S.EstimatedRegisters, 128));
  EXPECT_DOUBLE_EQ(S.HaloRatio, systolicHaloRatio(geometry(3, 3), 16));
}

TEST(SystolicModelTest, TwoDimensionalTakesTheLargestRowsThatFit) {
  for (unsigned N : {1u, 3u, 5u, 9u, 13u, 17u, 21u, 33u}) {
    SystolicGeometry F = geometry(N, N), D = geometry(N, N, 1, 8);
    SystolicShape SF = choose(F), SD = choose(D);
    EXPECT_EQ(SF.RowsPerThread, largestFittingRows(F, 64)) << N << "x" << N;
    EXPECT_EQ(SD.RowsPerThread, largestFittingRows(D, 64)) << N << "x" << N;
    // Double values take twice the registers: never more rows than float.
    EXPECT_LE(SD.RowsPerThread, SF.RowsPerThread) << N << "x" << N;
    EXPECT_EQ(SD.EstimatedRegisters,
              systolicCacheRegisters(D, SD.RowsPerThread));
  }
  // A 13x13 filter: float keeps P = 16 (28 values), double cannot (56
  // registers for the values alone, plus the overhead).
  EXPECT_EQ(choose(geometry(13, 13)).RowsPerThread, 16u);
  EXPECT_LT(choose(geometry(13, 13, 1, 8)).RowsPerThread, 16u);
  // Tall stencils run out of registers: fewer rows than a short one.
  EXPECT_LT(choose(geometry(3, 49)).RowsPerThread,
            choose(geometry(3, 3)).RowsPerThread);
}

TEST(SystolicModelTest, WeightsInRegistersLowerResidentBlocks) {
  // Weights count in the estimate and in __launch_bounds__, not in P.
  SystolicGeometry G = geometry(9, 9, 1, 8);
  unsigned Without = choose(G).RowsPerThread;
  G.WeightsInRegisters = true;
  SystolicShape S = choose(G);
  EXPECT_EQ(S.RowsPerThread, Without);
  EXPECT_EQ(S.EstimatedRegisters,
            systolicCacheRegisters(G, S.RowsPerThread) + 81 * 2);
  EXPECT_EQ(S.MinBlocksPerSm, residentBlocks(S.EstimatedRegisters, 128));
  EXPECT_LT(S.MinBlocksPerSm, choose(geometry(9, 9, 1, 8)).MinBlocksPerSm);
}

TEST(SystolicModelTest, ThreeDimensionalTakesTheFewestRowsWithHalfHalo) {
  // 3x3x3 (7-point and 27-point): HR(1) = 0.69, HR(2) = 0.53,
  // HR(4) = 0.375, so P = 4 for float and double alike.
  SystolicShape F = choose(geometry(3, 3, 3));
  EXPECT_EQ(F.RowsPerThread, 4u);
  EXPECT_EQ(F.PlanesPerWarp, 32u);
  EXPECT_EQ(F.EstimatedRegisters, 6 * 4 + 1 + overhead3D());
  SystolicShape D = choose(geometry(3, 3, 3, 8));
  EXPECT_EQ(D.RowsPerThread, 4u);
  EXPECT_EQ(D.EstimatedRegisters, (6 * 4 + 1) * 2 + overhead3D());
  EXPECT_LE(D.HaloRatio, 0.5);
  EXPECT_GT(systolicHaloRatio(geometry(3, 3, 3), 2), 0.5);
  // 5x5x5: HR(4) = 0.56, HR(8) = 0.42. Float takes P = 8 (61 values,
  // within twice the budget); double would need 122 registers for the
  // values at P = 8, so it stops at P = 4 although its halo is above half.
  EXPECT_EQ(choose(geometry(5, 5, 5)).RowsPerThread, 8u);
  SystolicShape D5 = choose(geometry(5, 5, 5, 8));
  EXPECT_EQ(D5.RowsPerThread, 4u);
  EXPECT_GT(D5.HaloRatio, 0.5);
}

TEST(SystolicModelTest, BudgetComesFromTheGpu) {
  // Half of 1024 threads resident with 64K registers: 128 per thread, so
  // a 13x13 double filter fits P = 16.
  GpuSpec Small = h100();
  Small.MaxThreadsPerSm = 1024;
  SystolicShape S = chooseSystolicShape(geometry(13, 13, 1, 8), Small,
                                        std::nullopt, std::nullopt);
  EXPECT_EQ(S.RegisterBudget, 128u);
  EXPECT_EQ(S.RowsPerThread, 16u);
  // The per-thread limit caps the budget.
  Small.MaxRegistersPerThread = 32;
  SystolicShape Capped =
      chooseSystolicShape(geometry(3, 3), Small, std::nullopt, std::nullopt);
  EXPECT_EQ(Capped.RegisterBudget, 32u);
  EXPECT_EQ(Capped.RowsPerThread, largestFittingRows(geometry(3, 3), 32));
  // An empty spec falls back to 64K registers and 2048 threads.
  SystolicShape E = chooseSystolicShape(geometry(3, 3), GpuSpec(), std::nullopt,
                                        std::nullopt);
  EXPECT_EQ(E.RegisterBudget, 64u);
  EXPECT_EQ(E.RowsPerThread, 16u);
  EXPECT_NE(E.Why.find("the GPU's threads"), std::string::npos) << E.Why;
}

TEST(SystolicModelTest, OverridesWin) {
  SystolicShape S = choose(geometry(3, 3), 4u, 256u);
  EXPECT_EQ(S.RowsPerThread, 4u);
  EXPECT_EQ(S.WarpsPerBlock, 8u);
  EXPECT_EQ(S.MinBlocksPerSm, residentBlocks(S.EstimatedRegisters, 256));
  EXPECT_DOUBLE_EQ(S.HaloRatio, systolicHaloRatio(geometry(3, 3), 4));
  EXPECT_NE(S.Why.find("p(4) as given"), std::string::npos) << S.Why;
  EXPECT_NE(S.Why.find("256 threads per block as given"), std::string::npos)
      << S.Why;
  // p(..) wins even beyond the model's MaxRowsPerThread and the budget.
  SystolicShape Big = choose(geometry(3, 3, 1, 8), 64u);
  EXPECT_EQ(Big.RowsPerThread, 64u);
  EXPECT_GT(Big.EstimatedRegisters, Big.RegisterBudget);
  // In 3D too.
  EXPECT_EQ(choose(geometry(3, 3, 3), 2u).RowsPerThread, 2u);
  // block(..) alone keeps the model's P.
  SystolicShape B = choose(geometry(3, 3), std::nullopt, 1024u);
  EXPECT_EQ(B.RowsPerThread, 16u);
  EXPECT_EQ(B.WarpsPerBlock, 32u);
  EXPECT_EQ(B.MinBlocksPerSm, 1u);
}

TEST(SystolicModelTest, WhyNamesPAndTheHalo) {
  SystolicShape S = choose(geometry(3, 3));
  EXPECT_EQ(S.Why,
            "P = 16 rows per thread, the most (up to 16) whose cache (~" +
                std::to_string(19 + overhead2D()) +
                " registers) fits the budget of 64 that keeps half of the "
                "NVIDIA H100 SXM5 80GB's threads resident; each thread "
                "caches 18 rows, so 17% of what a warp loads is halo "
                "(section 5.3); 128 threads per block (the paper's B = 128)");
  SystolicShape T = choose(geometry(3, 3, 3, 8));
  EXPECT_NE(T.Why.find("P = 4 rows per thread"), std::string::npos) << T.Why;
  EXPECT_NE(T.Why.find("each thread caches 6 rows in each of 3 planes"),
            std::string::npos)
      << T.Why;
  EXPECT_NE(T.Why.find("38% of what a warp loads is halo"), std::string::npos)
      << T.Why;
  EXPECT_NE(T.Why.find("each warp streams 32 planes along z"),
            std::string::npos)
      << T.Why;
  // One cached row: singular.
  SystolicShape One = choose(geometry(3, 1), 1u);
  EXPECT_NE(One.Why.find("caches 1 row,"), std::string::npos) << One.Why;
}

//===----------------------------------------------------------------------===//
// The aligned form: where it measured faster, V = 16 bytes of elements and
// P = 16 / V within the budget; vector(..) overrides.
//===----------------------------------------------------------------------===//

/// A star of M columns and N rows (taps off the centre column in one row),
/// on contiguous parameter arrays.
SystolicGeometry star(unsigned Columns, unsigned Rows,
                      unsigned ElementBytes = 4) {
  SystolicGeometry G = geometry(Columns, Rows, 1, ElementBytes);
  G.Taps = Columns + Rows - 1;
  G.Left = G.Right = (Columns - 1) / 2;
  G.ContiguousRows = true;
  G.SideTapsInOneRow = true;
  return G;
}

std::optional<SystolicShape> aligned(const SystolicGeometry &G,
                                     std::optional<unsigned> Vector = {},
                                     std::optional<unsigned> P = {}) {
  return chooseAlignedShape(G, h100(), P, std::nullopt, Vector);
}

TEST(SystolicModelTest, AlignedFormForThreeRowStars) {
  std::optional<SystolicShape> F = aligned(star(3, 3));
  ASSERT_TRUE(F);
  EXPECT_EQ(F->ColumnsPerLane, 4u); // float4
  EXPECT_EQ(F->RowsPerThread, 4u);  // 16 points a thread
  EXPECT_EQ(F->EstimatedRegisters, alignedRegisters(star(3, 3), 4, 4));
  EXPECT_LE(F->EstimatedRegisters, F->RegisterBudget);
  EXPECT_DOUBLE_EQ(F->HaloRatio, 2.0 / 6.0); // two of six rows
  std::optional<SystolicShape> D = aligned(star(3, 3, 8));
  ASSERT_TRUE(D);
  EXPECT_EQ(D->ColumnsPerLane, 2u); // double2
  EXPECT_EQ(D->RowsPerThread, 4u);
  // A 5-wide star of three rows reaches two columns: still aligned.
  EXPECT_TRUE(aligned(star(5, 3)));
}

TEST(SystolicModelTest, AlignedFormOnlyWhereItMeasuredFaster) {
  // Filters one column wide either side, up to seven rows: aligned, with
  // P = 8 beyond three rows.
  SystolicGeometry Box = star(3, 3);
  Box.SideTapsInOneRow = false;
  EXPECT_EQ(aligned(Box)->RowsPerThread, 4u);
  SystolicGeometry Tall = star(3, 7);
  Tall.SideTapsInOneRow = false;
  EXPECT_EQ(aligned(Tall)->RowsPerThread, 8u);
  SystolicGeometry Taller = star(3, 9);
  Taller.SideTapsInOneRow = false;
  EXPECT_FALSE(aligned(Taller));
  // Reaching two columns: only stars of up to three rows. The five-row
  // star (2d9pt) and the 5x5 box keep the overlapped form, unless
  // vector(..) asks.
  EXPECT_FALSE(aligned(star(5, 5)));
  SystolicGeometry WideBox = star(5, 5);
  WideBox.SideTapsInOneRow = false;
  EXPECT_FALSE(aligned(WideBox));
  std::optional<SystolicShape> Forced = aligned(WideBox, 2u);
  ASSERT_TRUE(Forced);
  EXPECT_EQ(Forced->ColumnsPerLane, 2u);
  EXPECT_EQ(Forced->RowsPerThread, 8u);
  // vector(1) is the overlapped form; p(..) is taken as given.
  EXPECT_FALSE(aligned(star(3, 3), 1u));
  EXPECT_EQ(aligned(star(3, 3), std::nullopt, 16u)->RowsPerThread, 16u);
}

TEST(SystolicModelTest, AlignedFormNeedsContiguousRowsAndShortReach) {
  SystolicGeometry Strided = star(3, 3);
  Strided.ContiguousRows = false;
  EXPECT_FALSE(aligned(Strided));
  EXPECT_FALSE(aligned(Strided, 4u));
  // Three columns either side: not even when asked.
  EXPECT_FALSE(aligned(star(7, 3)));
  EXPECT_FALSE(aligned(star(7, 3), 4u));
  // No 3D form.
  SystolicGeometry Cube = star(3, 3);
  Cube.Planes = 3;
  EXPECT_FALSE(aligned(Cube, 4u));
}

} // namespace

//===----------------------------------------------------------------------===//
// 3D: streaming unless z(shared) asks for the paper's exchange form.
//===----------------------------------------------------------------------===//

namespace {

TEST(SystolicModelTest, ThreeDimensionalStreamsUnlessAskedToShare) {
  SystolicGeometry G = geometry(3, 3, 3);
  EXPECT_FALSE(choose(G).ExchangePlanes);
  SystolicShape S =
      chooseSystolicShape(G, h100(), std::nullopt, std::nullopt, ZForm::Shared);
  EXPECT_TRUE(S.ExchangePlanes);
  EXPECT_EQ(S.WarpsPerBlock, ExchangeWarps);
  EXPECT_EQ(S.RowsPerThread, ExchangeRows);
  EXPECT_EQ(S.PlanesPerWarp, ExchangeWarps - 2); // output planes per block
  EXPECT_EQ(S.MinBlocksPerSm, 1u);
  EXPECT_EQ(exchangeBytes(G, 8, 8), 3u * 8 * 8 * 32 * 4);
  // A five-plane window of doubles: P halves until the sums fit 48 KiB.
  SystolicGeometry D = geometry(5, 5, 5, 8);
  SystolicShape SD =
      chooseSystolicShape(D, h100(), std::nullopt, std::nullopt, ZForm::Shared);
  EXPECT_EQ(SD.RowsPerThread, 4u);
  EXPECT_LE(exchangeBytes(D, SD.WarpsPerBlock, SD.RowsPerThread), 48u * 1024);
  EXPECT_EQ(SD.PlanesPerWarp, 4u);
  // A block smaller than the window still writes one plane.
  SystolicShape Small =
      chooseSystolicShape(D, h100(), std::nullopt, 64u, ZForm::Shared);
  EXPECT_EQ(Small.WarpsPerBlock, 5u);
  EXPECT_EQ(Small.PlanesPerWarp, 1u);
  // A filter loop cannot be split by z offset: it streams.
  SystolicGeometry Loop = G;
  Loop.FilterLoop = true;
  EXPECT_FALSE(chooseSystolicShape(Loop, h100(), std::nullopt, std::nullopt,
                                   ZForm::Shared)
                   .ExchangePlanes);
}

} // namespace
