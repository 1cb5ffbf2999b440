//===- SystolicModelTest.cpp - Choosing P and the block size for SSAM -----===//
//
// The halo ratio of SSAM section 5.3, the register estimates, and the
// shape the model picks for 2D and 3D stencils of float and double, with
// the built-in H100 spec (a budget of 64 registers per thread).
//
//===----------------------------------------------------------------------===//

#include "rewriters/systolic/SystolicModel.h"
#include "gpu/GpuSpec.h"

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
  G.Rank = Planes > 1 ? 3 : 2;
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
// The vector forms (chooseVectorShape), 2D on contiguous rows only. Aligned
// rows where they measured faster (reach of one column and up to seven rows,
// or stars of up to three rows reaching two): V = 16 bytes of elements and
// P = 4 or 8 within twice the budget. Wide lanes for every other filter.
// vector(..) sets V, vector(1) asks for the overlapped form.
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

/// A full box of M columns and N rows centred on the point, on contiguous
/// parameter arrays.
SystolicGeometry box(unsigned Columns, unsigned Rows,
                     unsigned ElementBytes = 4) {
  SystolicGeometry G = geometry(Columns, Rows, 1, ElementBytes);
  G.Left = G.Right = (Columns - 1) / 2;
  G.ContiguousRows = true;
  return G;
}

std::optional<SystolicShape> aligned(const SystolicGeometry &G,
                                     std::optional<unsigned> Vector = {},
                                     std::optional<unsigned> P = {}) {
  return chooseVectorShape(G, h100(), P, std::nullopt, Vector);
}

// A 3D kernel whose taps lie in one plane has one plane of taps, like a 2D
// stencil, but its loads and stores index planes: the vector forms (2D
// only) must not take it, and it streams planes as 3D kernels do
// (test/regress/systolic/one-plane-3d.cu).
TEST(SystolicModelTest, ThreeDimensionalWithOnePlaneIsNotVectorised) {
  SystolicGeometry G = star(3, 3);
  G.Rank = 3;
  EXPECT_FALSE(aligned(G));
  SystolicShape S =
      chooseSystolicShape(G, h100(), std::nullopt, std::nullopt, std::nullopt);
  EXPECT_GT(S.PlanesPerWarp, 1u);
  G.Rank = 2;
  EXPECT_TRUE(aligned(G));
  EXPECT_EQ(
      chooseSystolicShape(G, h100(), std::nullopt, std::nullopt, std::nullopt)
          .PlanesPerWarp,
      1u);
}

TEST(SystolicModelTest, AlignedFormForThreeRowStars) {
  std::optional<SystolicShape> F = aligned(star(3, 3));
  ASSERT_TRUE(F);
  EXPECT_FALSE(F->WideLanes);
  EXPECT_EQ(F->ColumnsPerLane, 4u); // float4
  EXPECT_EQ(F->RowsPerThread, 4u);  // 16 points a thread
  EXPECT_EQ(F->EstimatedRegisters, alignedRegisters(star(3, 3), 4, 4));
  EXPECT_LE(F->EstimatedRegisters, F->RegisterBudget);
  EXPECT_DOUBLE_EQ(F->HaloRatio, 2.0 / 6.0); // two of six rows
  std::optional<SystolicShape> D = aligned(star(3, 3, 8));
  ASSERT_TRUE(D);
  EXPECT_FALSE(D->WideLanes);
  EXPECT_EQ(D->ColumnsPerLane, 2u); // double2
  EXPECT_EQ(D->RowsPerThread, 4u);
  // A 5-wide star of three rows reaches two columns: still aligned.
  std::optional<SystolicShape> Five = aligned(star(5, 3));
  ASSERT_TRUE(Five);
  EXPECT_FALSE(Five->WideLanes);
}

TEST(SystolicModelTest, AlignedFormOnlyWhereItMeasuredFaster) {
  // Filters one column wide either side, up to seven rows: aligned, with
  // P = 8 beyond three rows.
  std::optional<SystolicShape> Box = aligned(box(3, 3));
  ASSERT_TRUE(Box);
  EXPECT_FALSE(Box->WideLanes);
  EXPECT_EQ(Box->RowsPerThread, 4u);
  std::optional<SystolicShape> Tall = aligned(box(3, 7));
  ASSERT_TRUE(Tall);
  EXPECT_FALSE(Tall->WideLanes);
  EXPECT_EQ(Tall->RowsPerThread, 8u);
  // Nine rows: wide lanes.
  std::optional<SystolicShape> Taller = aligned(box(3, 9));
  ASSERT_TRUE(Taller);
  EXPECT_TRUE(Taller->WideLanes);
  EXPECT_EQ(Taller->ColumnsPerLane, 4u);
  EXPECT_EQ(Taller->RowsPerThread, 4u);
  // Reaching two columns: aligned rows only for stars of up to three rows.
  // The five-row star (2d9pt) and the 5x5 box get wide lanes, also when
  // vector(..) asks: it sets V, not the form.
  std::optional<SystolicShape> Star5 = aligned(star(5, 5));
  ASSERT_TRUE(Star5);
  EXPECT_TRUE(Star5->WideLanes);
  std::optional<SystolicShape> WideBox = aligned(box(5, 5));
  ASSERT_TRUE(WideBox);
  EXPECT_TRUE(WideBox->WideLanes);
  std::optional<SystolicShape> Forced = aligned(box(5, 5), 2u);
  ASSERT_TRUE(Forced);
  EXPECT_TRUE(Forced->WideLanes);
  EXPECT_EQ(Forced->ColumnsPerLane, 2u);
  EXPECT_EQ(Forced->RowsPerThread, 4u);
  // Where aligned rows apply, vector(..) sets their V.
  std::optional<SystolicShape> Narrow = aligned(star(3, 3), 2u);
  ASSERT_TRUE(Narrow);
  EXPECT_FALSE(Narrow->WideLanes);
  EXPECT_EQ(Narrow->ColumnsPerLane, 2u);
  EXPECT_NE(Narrow->Why.find("aligned rows: each lane keeps 2 consecutive "
                             "columns (vector(..) as given)"),
            std::string::npos)
      << Narrow->Why;
  // vector(1) is the overlapped form; p(..) is taken as given.
  EXPECT_FALSE(aligned(star(3, 3), 1u));
  EXPECT_EQ(aligned(star(3, 3), std::nullopt, 16u)->RowsPerThread, 16u);
}

TEST(SystolicModelTest, VectorFormsNeedContiguousRowsIn2D) {
  SystolicGeometry Strided = star(3, 3);
  Strided.ContiguousRows = false;
  EXPECT_FALSE(aligned(Strided));
  EXPECT_FALSE(aligned(Strided, 4u));
  SystolicGeometry StridedBox = box(11, 11);
  StridedBox.ContiguousRows = false;
  EXPECT_FALSE(aligned(StridedBox));
  EXPECT_FALSE(aligned(StridedBox, 2u));
  // Three columns either side: wide lanes, not aligned rows, even when
  // vector(..) asks.
  std::optional<SystolicShape> Reach3 = aligned(star(7, 3));
  ASSERT_TRUE(Reach3);
  EXPECT_TRUE(Reach3->WideLanes);
  std::optional<SystolicShape> Reach3Forced = aligned(star(7, 3), 4u);
  ASSERT_TRUE(Reach3Forced);
  EXPECT_TRUE(Reach3Forced->WideLanes);
  EXPECT_EQ(Reach3Forced->ColumnsPerLane, 4u);
  // No 3D form, narrow or wide.
  SystolicGeometry Cube = star(3, 3);
  Cube.Planes = 3;
  EXPECT_FALSE(aligned(Cube));
  EXPECT_FALSE(aligned(Cube, 4u));
  SystolicGeometry WideCube = box(11, 11);
  WideCube.Planes = 3;
  EXPECT_FALSE(aligned(WideCube));
  EXPECT_FALSE(aligned(WideCube, 2u));
}

//===----------------------------------------------------------------------===//
// Wide lanes: V = 16 bytes of elements (halved while a warp writes nothing),
// Left and Right rounded up to whole vectors, 32 V less both written per
// warp; P = 4, or 8 for stars of up to 5 rows.
//===----------------------------------------------------------------------===//

TEST(SystolicModelTest, WideLanePadsAndColumns) {
  // Radius 5 (11x11): 5 columns rounded up to 8 (float4) or 6 (double2).
  SystolicGeometry F = box(11, 11), D = box(11, 11, 8);
  EXPECT_EQ(wideLeftPad(F, 4), 8u);
  EXPECT_EQ(wideRightPad(F, 4), 8u);
  EXPECT_EQ(wideColumns(F, 4), 112u);
  EXPECT_EQ(wideLeftPad(D, 2), 6u);
  EXPECT_EQ(wideRightPad(D, 2), 6u);
  EXPECT_EQ(wideColumns(D, 2), 52u);
  // Radius 2 star: 4 either side.
  SystolicGeometry S = star(5, 5);
  EXPECT_EQ(wideLeftPad(S, 4), 4u);
  EXPECT_EQ(wideRightPad(S, 4), 4u);
  EXPECT_EQ(wideColumns(S, 4), 120u);
  EXPECT_EQ(wideColumns(S, 2), 60u);
  // Taps at x .. x + 4: nothing on the left.
  SystolicGeometry Right = box(5, 5);
  Right.Left = 0;
  Right.Right = 4;
  EXPECT_EQ(wideLeftPad(Right, 4), 0u);
  EXPECT_EQ(wideRightPad(Right, 4), 4u);
  EXPECT_EQ(wideColumns(Right, 4), 124u);
  EXPECT_EQ(wideLeftPad(Right, 2), 0u);
  EXPECT_EQ(wideRightPad(Right, 2), 4u);
  EXPECT_EQ(wideColumns(Right, 2), 60u);
  // Taps at x - 3 .. x: one vector on the left, none on the right.
  SystolicGeometry LeftOnly = box(4, 5);
  LeftOnly.Left = 3;
  LeftOnly.Right = 0;
  EXPECT_EQ(wideLeftPad(LeftOnly, 4), 4u);
  EXPECT_EQ(wideRightPad(LeftOnly, 4), 0u);
  EXPECT_EQ(wideColumns(LeftOnly, 4), 124u);
  // One column: no pads.
  SystolicGeometry Column = box(1, 9);
  EXPECT_EQ(wideColumns(Column, 4), 128u);
  // Reaching a whole window: nothing is written.
  SystolicGeometry Huge = box(129, 3);
  EXPECT_EQ(wideLeftPad(Huge, 4), 64u);
  EXPECT_EQ(wideColumns(Huge, 4), 0u);
  EXPECT_EQ(wideColumns(Huge, 2), 0u);
}

TEST(SystolicModelTest, WideLanesTakeSixteenBytesPerLane) {
  // The 11x11 filter loop (2d121pt): float4, P = 4, 14 cached rows; the
  // filter loop holds one filter column's 11 weights (12, whole vectors).
  SystolicGeometry G = box(11, 11);
  G.FilterLoop = true;
  G.WeightsInRegisters = true;
  std::optional<SystolicShape> F = aligned(G);
  ASSERT_TRUE(F);
  EXPECT_TRUE(F->WideLanes);
  EXPECT_EQ(F->ColumnsPerLane, 4u);
  EXPECT_EQ(F->RowsPerThread, 4u);
  EXPECT_EQ(F->WarpsPerBlock, 4u);
  EXPECT_EQ(F->RegisterBudget, 64u);
  // (14 + 4) x 4 values, 16 overhead, 12 weights.
  EXPECT_EQ(F->EstimatedRegisters, 100u);
  EXPECT_EQ(F->MinBlocksPerSm, 4u);
  EXPECT_EQ(F->MinBlocksPerSm, residentBlocks(F->EstimatedRegisters, 128));
  // 112 of 128 columns in 4 of 14 rows.
  EXPECT_DOUBLE_EQ(F->HaloRatio, (128.0 * 14 - 112.0 * 4) / (128.0 * 14));
  EXPECT_NE(F->Why.find("wide lanes: each lane keeps 4 consecutive columns "
                        "of 14 rows (one 16-byte load per row)"),
            std::string::npos)
      << F->Why;
  EXPECT_NE(F->Why.find("a warp writes 112 of its 128 columns and shuffles "
                        "once per 4 points; P = 4 (the best of a sweep on an "
                        "H200)"),
            std::string::npos)
      << F->Why;
  EXPECT_NE(F->Why.find("the overlapped form runs where the arrays' rows are "
                        "not 16-byte aligned"),
            std::string::npos)
      << F->Why;
  // Weights that are instruction operands add nothing.
  std::optional<SystolicShape> Literal = aligned(box(11, 11));
  ASSERT_TRUE(Literal);
  EXPECT_EQ(Literal->EstimatedRegisters, 88u);
  EXPECT_EQ(Literal->EstimatedRegisters, alignedRegisters(box(11, 11), 4, 4));
  // Double: double2, two registers a value.
  SystolicGeometry GD = box(11, 11, 8);
  GD.FilterLoop = true;
  GD.WeightsInRegisters = true;
  std::optional<SystolicShape> D = aligned(GD);
  ASSERT_TRUE(D);
  EXPECT_TRUE(D->WideLanes);
  EXPECT_EQ(D->ColumnsPerLane, 2u);
  EXPECT_EQ(D->RowsPerThread, 4u);
  // (14 + 4) x 2 x 2, 16 overhead, 12 weights x 2.
  EXPECT_EQ(D->EstimatedRegisters, 112u);
  EXPECT_NE(D->Why.find("2 consecutive columns of 14 rows (one 16-byte load "
                        "per row)"),
            std::string::npos)
      << D->Why;
  EXPECT_NE(D->Why.find("a warp writes 52 of its 64 columns"),
            std::string::npos)
      << D->Why;
}

TEST(SystolicModelTest, WideLaneRows) {
  // P = 4 for boxes and for stars of more than 5 rows.
  EXPECT_EQ(aligned(box(5, 5))->RowsPerThread, 4u);
  EXPECT_EQ(aligned(box(3, 15))->RowsPerThread, 4u);
  EXPECT_EQ(aligned(star(5, 7))->RowsPerThread, 4u);
  // P = 8 for stars of up to 5 rows (2d9pt), however far they reach.
  std::optional<SystolicShape> Star = aligned(star(5, 5));
  ASSERT_TRUE(Star);
  EXPECT_TRUE(Star->WideLanes);
  EXPECT_EQ(Star->RowsPerThread, 8u);
  EXPECT_NE(Star->Why.find("of 12 rows"), std::string::npos) << Star->Why;
  EXPECT_NE(Star->Why.find("a warp writes 120 of its 128 columns"),
            std::string::npos)
      << Star->Why;
  EXPECT_NE(Star->Why.find("P = 8 (for a star of up to 5 rows)"),
            std::string::npos)
      << Star->Why;
  EXPECT_EQ(aligned(star(7, 3))->RowsPerThread, 8u);
  EXPECT_EQ(aligned(star(5, 5, 8))->RowsPerThread, 8u);
  // P = 4 however tall the filter (a sweep of 4, 8 and 16 on
  // conv12x12..conv19x19), and not halved for registers: a 20x20 double
  // filter keeps 4.
  std::optional<SystolicShape> Tall = aligned(box(3, 17));
  ASSERT_TRUE(Tall);
  EXPECT_TRUE(Tall->WideLanes);
  EXPECT_EQ(Tall->RowsPerThread, 4u);
  EXPECT_NE(Tall->Why.find("P = 4 (the best of a sweep on an H200)"),
            std::string::npos)
      << Tall->Why;
  EXPECT_EQ(aligned(box(21, 21))->RowsPerThread, 4u);
  EXPECT_EQ(aligned(star(3, 17))->RowsPerThread, 4u);
  SystolicGeometry Big = box(20, 20, 8);
  Big.Left = 10;
  Big.Right = 9;
  std::optional<SystolicShape> B = aligned(Big);
  ASSERT_TRUE(B);
  EXPECT_EQ(B->RowsPerThread, 4u);
  EXPECT_GT(B->EstimatedRegisters, B->RegisterBudget);
  // p(..) is taken as given.
  std::optional<SystolicShape> Given = aligned(box(11, 11), std::nullopt, 2u);
  ASSERT_TRUE(Given);
  EXPECT_TRUE(Given->WideLanes);
  EXPECT_EQ(Given->RowsPerThread, 2u);
  EXPECT_EQ(Given->EstimatedRegisters, alignedRegisters(box(11, 11), 4, 2));
  EXPECT_NE(Given->Why.find("of 12 rows"), std::string::npos) << Given->Why;
  EXPECT_NE(Given->Why.find("P = 2 (p(..) as given)"), std::string::npos)
      << Given->Why;
  EXPECT_EQ(aligned(star(5, 5), std::nullopt, 32u)->RowsPerThread, 32u);
}

TEST(SystolicModelTest, WideLaneVectorOverrides) {
  // vector(2) on float: two columns a lane, 60 of 64 written.
  std::optional<SystolicShape> Two = aligned(star(5, 5), 2u);
  ASSERT_TRUE(Two);
  EXPECT_TRUE(Two->WideLanes);
  EXPECT_EQ(Two->ColumnsPerLane, 2u);
  EXPECT_EQ(Two->RowsPerThread, 8u);
  EXPECT_EQ(Two->EstimatedRegisters, alignedRegisters(star(5, 5), 2, 8));
  EXPECT_NE(Two->Why.find("each lane keeps 2 consecutive columns (vector(..) "
                          "as given) of 12 rows (one 8-byte load per row)"),
            std::string::npos)
      << Two->Why;
  EXPECT_NE(Two->Why.find("a warp writes 60 of its 64 columns"),
            std::string::npos)
      << Two->Why;
  EXPECT_NE(Two->Why.find("not 8-byte aligned"), std::string::npos) << Two->Why;
  // vector(4) on float is the default width, marked as given.
  std::optional<SystolicShape> Four = aligned(box(11, 11), 4u);
  ASSERT_TRUE(Four);
  EXPECT_TRUE(Four->WideLanes);
  EXPECT_EQ(Four->ColumnsPerLane, 4u);
  EXPECT_NE(Four->Why.find("(vector(..) as given)"), std::string::npos)
      << Four->Why;
  // vector(1): the overlapped form, for wide filters too.
  EXPECT_FALSE(aligned(box(11, 11), 1u));
  EXPECT_FALSE(aligned(star(5, 5), 1u));
  EXPECT_FALSE(aligned(box(11, 11, 8), 1u));
  // Without it, a block size is still taken as given.
  std::optional<SystolicShape> Block =
      chooseVectorShape(box(11, 11), h100(), std::nullopt, 256u, std::nullopt);
  ASSERT_TRUE(Block);
  EXPECT_TRUE(Block->WideLanes);
  EXPECT_EQ(Block->WarpsPerBlock, 8u);
  EXPECT_EQ(Block->MinBlocksPerSm,
            residentBlocks(Block->EstimatedRegisters, 256));
  EXPECT_NE(Block->Why.find("256 threads per block as given"),
            std::string::npos)
      << Block->Why;
}

TEST(SystolicModelTest, WideLanesNeedAWarpToWriteSomething) {
  // Reaching 64 columns either side: no V leaves a warp any output.
  SystolicGeometry Huge = box(129, 3);
  EXPECT_FALSE(aligned(Huge));
  EXPECT_FALSE(aligned(Huge, 2u));
  // 60 either side: float4 still writes 8 columns a warp.
  SystolicGeometry Far = box(121, 3);
  std::optional<SystolicShape> S = aligned(Far);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->ColumnsPerLane, 4u);
  EXPECT_EQ(wideColumns(Far, 4), 8u);
  EXPECT_NE(S->Why.find("a warp writes 8 of its 128 columns"),
            std::string::npos)
      << S->Why;
  // ... but not with vector(2).
  EXPECT_FALSE(aligned(Far, 2u));
  // Double: 30 either side leaves double2 4 columns; 32 none.
  std::optional<SystolicShape> D = aligned(box(61, 3, 8));
  ASSERT_TRUE(D);
  EXPECT_EQ(D->ColumnsPerLane, 2u);
  EXPECT_EQ(wideColumns(box(61, 3, 8), 2), 4u);
  EXPECT_FALSE(aligned(box(65, 3, 8)));
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
