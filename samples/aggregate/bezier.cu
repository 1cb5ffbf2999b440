//===- bezier.cu - Bezier line tessellation with a child grid per line ----===//
//
// Turns quadratic Bezier curves into triangle-strip ribbons for drawing (the
// `bt` benchmark of KLAP, Table I, after the CUDA sample
// cdpBezierTessellation). The parent kernel tessellateLines has one thread
// per curve: it picks the number of points along the curve from how bent it
// is (4 to kMaxPoints), takes room for the ribbon's vertices from a
// preallocated pool with an atomic bump pointer, records where it put them,
// and launches computeRibbonVertices. The child grid is two-dimensional in
// its blocks: threadIdx.x walks along the curve, threadIdx.y picks the
// ribbon's side, and each thread writes one vertex, the curve point moved by
// half the width along the normal.
//
// Where a curve's vertices land in the pool depends on timing; the check
// reads every curve's vertex count exactly, checks that the ranges tile the
// used part of the pool without overlap and that the rest of the pool stays
// untouched, and compares each curve's vertices, in curve order, with a
// float64 reference by relative error.
//
// --flat runs without dynamic parallelism: one warp per curve, lane 0 takes
// the room, all lanes stride over the points.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/bezier.cu -lcudadevrt -o bezier
//   ./bezier [curves] [--flat] [--seed=N] [--reps=N]
//
// Default: 32768 curves, so 32768 child launches in one tessellateLines call.
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <algorithm>
#include <climits>
#include <cmath>

namespace {

/// Control points have integer coordinates in [0, kCanvas).
constexpr int kCanvas = 512;
/// Points along a curve per unit of curvature, and the bounds on that count.
constexpr float kTessellationScale = 64.0f;
constexpr int kMinPoints = 4;
constexpr int kMaxPoints = 64;
/// Points per block of the child grid (its blocks are kPointsPerBlock x 2).
constexpr int kPointsPerBlock = 32;
/// Threads per block of the parent grid: one thread per curve.
constexpr int kParentThreads = 64;

} // namespace

/// A quadratic Bezier curve: B(t) = (1-t)^2 p0 + 2 (1-t) t p1 + t^2 p2.
struct BezierLine {
  float2 p0, p1, p2;
};

/// How many points the curve is tessellated into: kTessellationScale times
/// its curvature |2 p1 - p0 - p2| / (2 |p2 - p0|), clamped. With integer
/// coordinates below kCanvas the squared lengths are exact in float and the
/// division and square root are correctly rounded, so host and device agree
/// on the count.
__host__ __device__ inline int tessellationPoints(const BezierLine &line) {
  float bendX = 2.0f * line.p1.x - line.p0.x - line.p2.x;
  float bendY = 2.0f * line.p1.y - line.p0.y - line.p2.y;
  float chordX = line.p2.x - line.p0.x, chordY = line.p2.y - line.p0.y;
  float bend2 = bendX * bendX + bendY * bendY;
  float chord2 = 4.0f * (chordX * chordX + chordY * chordY);
  int n = int(kTessellationScale * sqrtf(bend2 / chord2));
  return n < kMinPoints ? kMinPoints : n > kMaxPoints ? kMaxPoints : n;
}

/// Vertex \p side (0: left, 1: right) of point \p k of \p numPoints of the
/// ribbon of half-width \p halfWidth along \p line.
__device__ float2 ribbonVertex(const BezierLine &line, int k, int numPoints,
                               float halfWidth, int side) {
  float t = float(k) / float(numPoints - 1);
  float s = 1.0f - t;
  float2 point = make_float2(
      s * s * line.p0.x + 2.0f * s * t * line.p1.x + t * t * line.p2.x,
      s * s * line.p0.y + 2.0f * s * t * line.p1.y + t * t * line.p2.y);
  // Half the derivative: (1-t) (p1 - p0) + t (p2 - p1).
  float2 tangent =
      make_float2(s * (line.p1.x - line.p0.x) + t * (line.p2.x - line.p1.x),
                  s * (line.p1.y - line.p0.y) + t * (line.p2.y - line.p1.y));
  float scale = (side ? halfWidth : -halfWidth) *
                rsqrtf(tangent.x * tangent.x + tangent.y * tangent.y);
  return make_float2(point.x - scale * tangent.y, point.y + scale * tangent.x);
}

/// Child: thread (x, y) writes vertex y of point x of the ribbon.
__global__ void computeRibbonVertices(BezierLine line, int numPoints,
                                      float halfWidth, float2 *vertices) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < numPoints)
    vertices[2 * k + threadIdx.y] =
        ribbonVertex(line, k, numPoints, halfWidth, threadIdx.y);
}

/// Parent: one thread per curve, which sizes the curve's tessellation, takes
/// room for its vertices from the pool and launches a child to write them.
#pragma cuda_rewrite aggregate
__global__ void tessellateLines(const BezierLine *__restrict__ lines,
                                int numLines, float halfWidth,
                                int *__restrict__ vertexCount,
                                int *__restrict__ vertexOffset,
                                float2 *vertexPool, int *poolTop) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= numLines)
    return;
  BezierLine line = lines[i];
  int numPoints = tessellationPoints(line);
  int offset = atomicAdd(poolTop, 2 * numPoints);
  vertexCount[i] = 2 * numPoints;
  vertexOffset[i] = offset;
  computeRibbonVertices<<<(numPoints + kPointsPerBlock - 1) / kPointsPerBlock,
                          dim3(kPointsPerBlock, 2)>>>(
      line, numPoints, halfWidth, vertexPool + offset);
  harness::checkDeviceLaunch(cudaGetLastError());
}

/// Flat version: one warp per curve.
__global__ void tessellateLinesFlat(const BezierLine *__restrict__ lines,
                                    int numLines, float halfWidth,
                                    int *__restrict__ vertexCount,
                                    int *__restrict__ vertexOffset,
                                    float2 *vertexPool, int *poolTop) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (i >= numLines)
    return;
  BezierLine line = lines[i];
  int numPoints = tessellationPoints(line);
  int offset = 0;
  if (lane == 0) {
    offset = atomicAdd(poolTop, 2 * numPoints);
    vertexCount[i] = 2 * numPoints;
    vertexOffset[i] = offset;
  }
  offset = __shfl_sync(0xffffffffu, offset, 0);
  for (int k = lane; k < numPoints; k += 32)
    for (int side = 0; side < 2; ++side)
      vertexPool[offset + 2 * k + side] =
          ribbonVertex(line, k, numPoints, halfWidth, side);
}

namespace {

/// Random curves whose ribbons are well defined: both control legs at least
/// 16 long and at most 120 degrees apart in direction, so that the tangent
/// never nearly vanishes (and p2 != p0).
std::vector<BezierLine> makeLines(harness::Rng &R, int NumLines) {
  std::vector<BezierLine> Lines;
  Lines.reserve(NumLines);
  auto Coordinate = [&] { return float(R.next() % kCanvas); };
  while (int(Lines.size()) < NumLines) {
    BezierLine L;
    L.p0 = make_float2(Coordinate(), Coordinate());
    L.p1 = make_float2(Coordinate(), Coordinate());
    L.p2 = make_float2(Coordinate(), Coordinate());
    double AX = L.p1.x - L.p0.x, AY = L.p1.y - L.p0.y;
    double BX = L.p2.x - L.p1.x, BY = L.p2.y - L.p1.y;
    double A2 = AX * AX + AY * AY, B2 = BX * BX + BY * BY;
    double Dot = AX * BX + AY * BY;
    if (A2 >= 256 && B2 >= 256 && (Dot >= 0 || 4 * Dot * Dot <= A2 * B2))
      Lines.push_back(L);
  }
  return Lines;
}

/// The ribbon's vertices in float64, x and y interleaved.
void referenceRibbon(const BezierLine &L, int NumPoints, double HalfWidth,
                     std::vector<double> &Out) {
  for (int K = 0; K < NumPoints; ++K) {
    double T = double(K) / (NumPoints - 1), S = 1 - T;
    double PX = S * S * L.p0.x + 2 * S * T * L.p1.x + T * T * L.p2.x;
    double PY = S * S * L.p0.y + 2 * S * T * L.p1.y + T * T * L.p2.y;
    double TX = S * (double(L.p1.x) - L.p0.x) + T * (double(L.p2.x) - L.p1.x);
    double TY = S * (double(L.p1.y) - L.p0.y) + T * (double(L.p2.y) - L.p1.y);
    double Length = std::sqrt(TX * TX + TY * TY);
    for (int Side = 0; Side < 2; ++Side) {
      double Scale = (Side ? HalfWidth : -HalfWidth) / Length;
      Out.push_back(PX - Scale * TY);
      Out.push_back(PY + Scale * TX);
    }
  }
}

/// Adds the counts of \p From to \p Into (Check::merge keeps the larger).
void accumulate(harness::Check &Into, const harness::Check &From) {
  Into.MaxRelErr = std::max(Into.MaxRelErr, From.MaxRelErr);
  Into.Mismatches += From.Mismatches;
  Into.Unwritten += From.Unwritten;
  Into.Stray += From.Stray;
  if (From.FirstBad < Into.FirstBad)
    Into.FirstBad = From.FirstBad, Into.FirstBadGot = From.FirstBadGot,
    Into.FirstBadWant = From.FirstBadWant;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "bezier", {32768}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 1 || A.size(0) > INT_MAX / (2 * kMaxPoints))
    harness::fail("need 1 <= curves <= 2^31 / (2 * kMaxPoints)");
  const int NumLines = int(A.size(0));
  const float HalfWidth = 1.0f;
  // Room for the longest ribbon of every curve, as a program that cannot
  // size its output beforehand would have.
  const int PoolVertices = NumLines * 2 * kMaxPoints;

  harness::Rng R(A.Seed);
  std::vector<BezierLine> Lines = makeLines(R, NumLines);
  std::vector<int> RefCount(NumLines);
  std::vector<long> RefStart(NumLines + 1, 0); // in vertices, curve order
  std::vector<double> RefVertices;
  long MaxPoints = 0;
  for (int I = 0; I < NumLines; ++I) {
    int NumPoints = tessellationPoints(Lines[I]);
    RefCount[I] = 2 * NumPoints;
    RefStart[I + 1] = RefStart[I] + 2 * NumPoints;
    MaxPoints = std::max<long>(MaxPoints, NumPoints);
    referenceRibbon(Lines[I], NumPoints, HalfWidth, RefVertices);
  }
  const long TotalVertices = RefStart[NumLines];
  std::printf("bezier: %d curves, %ld ribbon vertices (%.1f points per curve "
              "on average, at most %ld), %d child launches in one "
              "tessellateLines call%s\n",
              NumLines, TotalVertices, TotalVertices / 2.0 / NumLines,
              MaxPoints, NumLines, Flat ? "; running the flat version" : "");

  // One launch per curve, all of them possibly pending at once.
  if (!Flat)
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(NumLines, 2048)));

  harness::DeviceArray<BezierLine> DLines(Lines);
  harness::DeviceArray<int> DCount(NumLines), DOffset(NumLines), DTop(1);
  harness::DeviceArray<float> DPool(2 * size_t(PoolVertices));
  float2 *Pool = reinterpret_cast<float2 *>(DPool.data());

  auto CheckOutput = [&] {
    harness::checkDeviceLaunches();
    std::vector<int> Count = DCount.download(), Offset = DOffset.download();
    std::vector<float> PoolHost = DPool.download();
    harness::Check Result = harness::compareExact(Count, RefCount);
    // Gather each curve's vertices into curve order; a curve whose count is
    // wrong or whose range is outside the pool or overlaps another's stays
    // poisoned there, and counts as wrong.
    std::vector<float> Gathered(RefVertices.size());
    std::memset(Gathered.data(), harness::poisonByte<float>(),
                Gathered.size() * sizeof(float));
    std::vector<char> Claimed(PoolVertices, 0);
    size_t BadRanges = 0;
    for (int I = 0; I < NumLines; ++I) {
      long Begin = Offset[I], End = Begin + RefCount[I];
      if (Count[I] != RefCount[I] || Begin < 0 || End > PoolVertices ||
          std::any_of(Claimed.begin() + Begin, Claimed.begin() + End,
                      [](char C) { return C; })) {
        ++BadRanges;
        continue;
      }
      std::fill(Claimed.begin() + Begin, Claimed.begin() + End, 1);
      std::copy(PoolHost.begin() + 2 * Begin, PoolHost.begin() + 2 * End,
                Gathered.begin() + 2 * RefStart[I]);
    }
    Result.Mismatches += BadRanges;
    accumulate(Result, harness::compareFloat(Gathered, RefVertices));
    // Nothing outside the curves' ranges may be written.
    for (long V = 0; V < PoolVertices; ++V)
      if (!Claimed[V] && (!harness::isPoison(PoolHost[2 * V]) ||
                          !harness::isPoison(PoolHost[2 * V + 1])))
        ++Result.Stray;
    return Result;
  };

  harness::Result Res = harness::measure(
      A,
      [&] {
        DCount.poison();
        DOffset.poison();
        DPool.poison();
      },
      [&] {
        HARNESS_CHECK(cudaMemsetAsync(DTop.data(), 0, sizeof(int)));
        if (Flat) {
          long Threads = long(NumLines) * 32;
          tessellateLinesFlat<<<(Threads + 255) / 256, 256>>>(
              DLines.data(), NumLines, HalfWidth, DCount.data(), DOffset.data(),
              Pool, DTop.data());
        } else {
          tessellateLines<<<(NumLines + kParentThreads - 1) / kParentThreads,
                            kParentThreads>>>(
              DLines.data(), NumLines, HalfWidth, DCount.data(), DOffset.data(),
              Pool, DTop.data());
        }
        HARNESS_CHECK(cudaGetLastError());
      },
      CheckOutput);
  // The curves read once; counts, offsets and vertices written once.
  double Bytes = sizeof(BezierLine) * double(NumLines) +
                 2 * sizeof(int) * double(NumLines) +
                 sizeof(float2) * double(TotalVertices);
  return harness::report(A, Res, Bytes);
}
