//===- reyes.cu - Reyes rendering of Bezier patches as a pipeline ---------===//
//
// Renders a scene of bicubic Bezier patches with the Reyes algorithm (Cook,
// Carpenter and Catmull 1987; the `Reyes` benchmark of VersaPipe, section 8,
// after Patney and Owens' real-time Reyes): bound and split, dice, shade. The
// scene is a few "teapot-like" blobs, deformed spheres of 32 patches each,
// placed at random in front of a pinhole camera at the origin looking down +z.
//
// Stages (each is a pipeline stage in the run-to-completion style; the entry
// kernel `render` seeds split with one warp per input patch):
//
//   split  threads(32), recursive. The 32 threads project the patch's 16
//          control points to the screen (lanes 0-15; 16-31 repeat them) and
//          reduce the screen bound with shuffles. A patch wholly off screen
//          is dropped; one whose bound is wider than kDiceBound pixels, at
//          split depth below kMaxSplitDepth, is halved by de Casteljau along
//          its longer screen direction and split is called on both halves;
//          any other goes to dice. Item: Patch (200 bytes).
//   dice   threads(32). Evaluates the patch at a 16 x 16 grid of vertices,
//          two rows per step (lanes 0-15 an even row, 16-31 the odd row
//          after it), and builds the 15 x 15 micropolygons from neighbouring
//          lanes' vertices with shuffles. Each thread culls its
//          micropolygon if it faces away from the camera and otherwise hands
//          it to shade. Arithmetic-heavy: ~150 flops per vertex.
//   shade  threads(1), one micropolygon (Quad, 52 bytes). Projects the
//          corners, flat-shades it (one diffuse light plus ambient), and
//          writes every pixel whose centre it covers into a z-buffer with
//          atomicMin on a 64-bit key, depth bits high and colour low, so that
//          the nearest micropolygon wins (ties by colour) whatever order the
//          micropolygons arrive in. Memory-bound, divergent.
//
// Call depth in the original: render -> split (at most kMaxSplitDepth + 1 =
// 13 nested frames of ~440 bytes) -> dice -> shade, about 6 KB of device
// stack per thread (main raises the limit to kStackBytes).
//
// The check compares the whole z-buffer (depth and colour of every pixel)
// exactly with a CPU renderer that makes the same float operations in the
// same order: every rounding step is one of addRn/subRn/mulRn/divRn/sqrtRn,
// which are the _rn intrinsics on the device (never contracted into FMAs)
// and go through a volatile on the host (never contracted either), and both
// sides share the __host__ __device__ helpers. The results are therefore
// bit-identical, whatever -fmad or host compiler flags, and no tolerance is
// needed.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/pipeline/reyes.cu -lcudadevrt -o reyes
//   ./reyes [width [height [blobs]]] [--seed=N] [--reps=N]
//
// Default: 1024 x 768 pixels, 8 blobs (256 patches); the program prints how
// many patches split visits, how many grids are diced and how many
// micropolygons reach shade (about 120-300k over seeds, all of which may be
// waiting in shade's queue at once under kernel-by-kernel execution). The
// original takes about 2-3 ms on an H100.
//
// The bench runs it with one input (its speedups follow the input's work
// more than the guard's 10%; bench/run.py):
// bench-seed: 1
//
//===----------------------------------------------------------------------===//

#include "exact_float.cuh"
#include "harness.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace {

/// A (sub-)patch whose screen bound is at most this many pixels wide and
/// high is diced (into micropolygons of about a pixel).
constexpr float kDiceBound = 32.0f;
/// Split depth limit: the recursion is at most this deep.
constexpr int kMaxSplitDepth = 12;
/// Vertices per side of a diced grid (kGrid - 1 micropolygons per side).
constexpr int kGrid = 16;
/// Patches per blob: kBlobU around, kBlobV from pole to pole.
constexpr int kBlobU = 8, kBlobV = 4;
/// Light reaching surfaces that face away from the light.
constexpr float kAmbient = 0.15f;
/// Device stack per thread: 13 split frames of ~500 bytes plus dice and
/// shade, with room to spare.
constexpr size_t kStackBytes = 16 * 1024;

} // namespace

//===-- Arithmetic shared by the GPU and the CPU reference ----------------===//
//
// exact_float.cuh: addRn, subRn, mulRn, divRn, sqrtRn, floatBits.

__host__ __device__ inline float3 sub3(float3 A, float3 B) {
  return make_float3(subRn(A.x, B.x), subRn(A.y, B.y), subRn(A.z, B.z));
}

__host__ __device__ inline float dot3(float3 A, float3 B) {
  return addRn(addRn(mulRn(A.x, B.x), mulRn(A.y, B.y)), mulRn(A.z, B.z));
}

__host__ __device__ inline float3 cross3(float3 A, float3 B) {
  return make_float3(subRn(mulRn(A.y, B.z), mulRn(A.z, B.y)),
                     subRn(mulRn(A.z, B.x), mulRn(A.x, B.z)),
                     subRn(mulRn(A.x, B.y), mulRn(A.y, B.x)));
}

/// Acc + W * P, per component.
__host__ __device__ inline float3 madd3(float3 Acc, float W, float3 P) {
  return make_float3(addRn(Acc.x, mulRn(W, P.x)), addRn(Acc.y, mulRn(W, P.y)),
                     addRn(Acc.z, mulRn(W, P.z)));
}

/// Halfway between A and B.
__host__ __device__ inline float3 mid3(float3 A, float3 B) {
  return make_float3(mulRn(addRn(A.x, B.x), 0.5f), mulRn(addRn(A.y, B.y), 0.5f),
                     mulRn(addRn(A.z, B.z), 0.5f));
}

//===-- Scene and items ---------------------------------------------------===//

/// The camera and the output, the same for every item.
struct Frame {
  int Width, Height;
  float CenterX, CenterY, Focal; ///< Pinhole projection, in pixels.
  float3 Light;                  ///< Unit vector towards the light.
  unsigned long long *ZBuffer;   ///< Width * Height keys, row-major.
};

__constant__ Frame gFrame;

/// Item of split and dice: a bicubic Bezier patch in camera space.
/// P[4 * i + j] is row i (parameter v) and column j (parameter u).
struct Patch {
  float3 P[16];
  int Depth;       ///< How many times it has been halved.
  unsigned Colour; ///< Base colour, 8 bits per channel, red lowest.
};

/// Item of shade: a micropolygon, corners in camera space in the order
/// (u, v), (u + du, v), (u + du, v + dv), (u, v + dv).
struct Quad {
  float3 P[4];
  unsigned Colour;
};

/// Where camera-space point P lands on the screen, in pixels.
__host__ __device__ inline float2 project(const Frame &F, float3 P) {
  return make_float2(addRn(F.CenterX, divRn(mulRn(F.Focal, P.x), P.z)),
                     subRn(F.CenterY, divRn(mulRn(F.Focal, P.y), P.z)));
}

//===-- Split -------------------------------------------------------------===//

/// Screen-space lengths of the control polygon: the sum of |dx| and |dy|
/// between the ends of a row (along u) or of a column (along v).
__host__ __device__ inline float chord(float2 A, float2 B) {
  return addRn(fabsf(subRn(B.x, A.x)), fabsf(subRn(B.y, A.y)));
}

/// Halves the cubic curve (A, B, C, D) at t = 1/2 by de Casteljau and keeps
/// the first (Side 0) or second half, in place.
__host__ __device__ inline void halveCurve(float3 &A, float3 &B, float3 &C,
                                           float3 &D, int Side) {
  float3 AB = mid3(A, B), BC = mid3(B, C), CD = mid3(C, D);
  float3 ABC = mid3(AB, BC), BCD = mid3(BC, CD);
  float3 M = mid3(ABC, BCD);
  if (Side == 0) {
    B = AB;
    C = ABC;
    D = M;
  } else {
    A = M;
    B = BCD;
    C = CD;
  }
}

/// One half of \p In: u in [0, 1/2] or [1/2, 1] (AlongU), else v.
__host__ __device__ inline Patch halve(const Patch &In, bool AlongU, int Side) {
  Patch Out = In;
  Out.Depth = In.Depth + 1;
  // Two branches rather than one with computed strides, so that once the
  // loops are unrolled the control points sit at constant indices
  // (registers, not local memory).
  if (AlongU) {
    for (int I = 0; I < 4; ++I)
      halveCurve(Out.P[4 * I], Out.P[4 * I + 1], Out.P[4 * I + 2],
                 Out.P[4 * I + 3], Side);
  } else {
    for (int J = 0; J < 4; ++J)
      halveCurve(Out.P[J], Out.P[4 + J], Out.P[8 + J], Out.P[12 + J], Side);
  }
  return Out;
}

/// What split does with a patch, from its control points' screen bound.
struct SplitDecision {
  bool Visible; ///< Some of the bound is on screen.
  bool Split;   ///< Halve it (else dice it).
  bool AlongU;  ///< Which way to halve it.
};

__host__ __device__ inline SplitDecision decide(const Frame &F, const Patch &P,
                                                float MinX, float MaxX,
                                                float MinY, float MaxY,
                                                float ChordU, float ChordV) {
  SplitDecision D;
  // The surface lies in the convex hull of its control points, all in front
  // of the camera, so the points' screen bound bounds it.
  D.Visible = !(MaxX < 0.0f || MinX > float(F.Width) || MaxY < 0.0f ||
                MinY > float(F.Height));
  float Extent = fmaxf(subRn(MaxX, MinX), subRn(MaxY, MinY));
  D.Split = Extent > kDiceBound && P.Depth < kMaxSplitDepth;
  D.AlongU = ChordU >= ChordV;
  return D;
}

//===-- Dice --------------------------------------------------------------===//

/// Cubic Bernstein weights at T.
__host__ __device__ inline void bernstein(float T, float B[4]) {
  float S = subRn(1.0f, T);
  float T2 = mulRn(T, T), S2 = mulRn(S, S);
  B[0] = mulRn(S2, S);
  B[1] = mulRn(3.0f, mulRn(T, S2));
  B[2] = mulRn(3.0f, mulRn(T2, S));
  B[3] = mulRn(T2, T);
}

/// The patch's point at (U, V): rows weighted along u, then the rows' points
/// weighted along v.
__host__ __device__ inline float3 evalPatch(const Patch &P, float U, float V) {
  float BU[4], BV[4];
  bernstein(U, BU);
  bernstein(V, BV);
  float3 Sum = make_float3(0.0f, 0.0f, 0.0f);
  for (int I = 0; I < 4; ++I) {
    float3 Row = make_float3(0.0f, 0.0f, 0.0f);
    for (int J = 0; J < 4; ++J)
      Row = madd3(Row, BU[J], P.P[4 * I + J]);
    Sum = madd3(Sum, BV[I], Row);
  }
  return Sum;
}

/// The parameter of grid vertex K (0 .. kGrid - 1).
__host__ __device__ inline float gridParam(int K) {
  return divRn(float(K), float(kGrid - 1));
}

__host__ __device__ inline Quad makeQuad(float3 P0, float3 P1, float3 P2,
                                         float3 P3, unsigned Colour) {
  Quad Q;
  Q.P[0] = P0;
  Q.P[1] = P1;
  Q.P[2] = P2;
  Q.P[3] = P3;
  Q.Colour = Colour;
  return Q;
}

/// The micropolygon's (unnormalized) normal, the cross product of its
/// diagonals; it points out of the blob.
__host__ __device__ inline float3 quadNormal(const Quad &Q) {
  return cross3(sub3(Q.P[2], Q.P[0]), sub3(Q.P[3], Q.P[1]));
}

/// Back-face culling, seen from the camera at the origin. Degenerate
/// micropolygons (zero normal) are culled too, so shade never divides by a
/// zero length.
__host__ __device__ inline bool facesCamera(const Quad &Q) {
  return dot3(quadNormal(Q), Q.P[0]) < 0.0f;
}

//===-- Shade -------------------------------------------------------------===//

/// A projected micropolygon, ready to sample.
struct Micro {
  float2 S[4];            ///< Screen corners.
  int X0, X1, Y0, Y1;     ///< Pixels whose centres its bound holds.
  unsigned long long Key; ///< Depth bits high, colour low.
};

/// First pixel whose centre (X + 0.5) is at or after Lo, clamped to
/// [0, Limit]; likewise the last one at or before Hi, clamped to
/// [-1, Limit - 1]. Clamping in float first keeps the conversions in range.
__host__ __device__ inline int firstPixel(float Lo, int Limit) {
  return int(fminf(fmaxf(ceilf(subRn(Lo, 0.5f)), 0.0f), float(Limit)));
}
__host__ __device__ inline int lastPixel(float Hi, int Limit) {
  return int(fminf(fmaxf(floorf(subRn(Hi, 0.5f)), -1.0f), float(Limit - 1)));
}

__host__ __device__ inline Micro setupMicro(const Frame &F, const Quad &Q) {
  Micro M;
  float MinX = INFINITY, MaxX = -INFINITY, MinY = INFINITY, MaxY = -INFINITY;
  for (int K = 0; K < 4; ++K) {
    M.S[K] = project(F, Q.P[K]);
    MinX = fminf(MinX, M.S[K].x);
    MaxX = fmaxf(MaxX, M.S[K].x);
    MinY = fminf(MinY, M.S[K].y);
    MaxY = fmaxf(MaxY, M.S[K].y);
  }
  M.X0 = firstPixel(MinX, F.Width);
  M.X1 = lastPixel(MaxX, F.Width);
  M.Y0 = firstPixel(MinY, F.Height);
  M.Y1 = lastPixel(MaxY, F.Height);

  // Flat shading: Lambert with one directional light, plus ambient.
  float3 N = quadNormal(Q);
  float Lambert = fmaxf(dot3(N, F.Light), 0.0f);
  float Diffuse = fminf(divRn(Lambert, sqrtRn(dot3(N, N))), 1.0f);
  float Intensity = addRn(kAmbient, mulRn(1.0f - kAmbient, Diffuse));
  unsigned Rgb = 0;
  for (int C = 0; C < 3; ++C) {
    float Base = float((Q.Colour >> (8 * C)) & 255u);
    Rgb |= unsigned(mulRn(Base, Intensity)) << (8 * C);
  }
  // Flat depth, the mean of the corners' z: positive, so its bits order as
  // the floats do.
  float Depth =
      mulRn(addRn(addRn(addRn(Q.P[0].z, Q.P[1].z), Q.P[2].z), Q.P[3].z), 0.25f);
  M.Key = (static_cast<unsigned long long>(floatBits(Depth)) << 32) | Rgb;
  return M;
}

/// Edge function: twice the signed area of (A, B, (X, Y)).
__host__ __device__ inline float edge(float2 A, float2 B, float X, float Y) {
  return subRn(mulRn(subRn(B.x, A.x), subRn(Y, A.y)),
               mulRn(subRn(B.y, A.y), subRn(X, A.x)));
}

__host__ __device__ inline bool inTriangle(float2 A, float2 B, float2 C,
                                           float X, float Y) {
  float E0 = edge(A, B, X, Y), E1 = edge(B, C, X, Y), E2 = edge(C, A, X, Y);
  return (E0 >= 0.0f && E1 >= 0.0f && E2 >= 0.0f) ||
         (E0 <= 0.0f && E1 <= 0.0f && E2 <= 0.0f);
}

/// Whether the micropolygon covers the centre of pixel (X, Y): it is the
/// two triangles (0, 1, 2) and (0, 2, 3), whichever way round.
__host__ __device__ inline bool covers(const Micro &M, int X, int Y) {
  float PX = addRn(float(X), 0.5f), PY = addRn(float(Y), 0.5f);
  return inTriangle(M.S[0], M.S[1], M.S[2], PX, PY) ||
         inTriangle(M.S[0], M.S[2], M.S[3], PX, PY);
}

//===-- Stages ------------------------------------------------------------===//

__device__ inline float3 shflDown3(float3 V, int Delta) {
  return make_float3(__shfl_down_sync(0xffffffffu, V.x, Delta),
                     __shfl_down_sync(0xffffffffu, V.y, Delta),
                     __shfl_down_sync(0xffffffffu, V.z, Delta));
}

__device__ inline float3 shflXor3(float3 V, int Mask) {
  return make_float3(__shfl_xor_sync(0xffffffffu, V.x, Mask),
                     __shfl_xor_sync(0xffffffffu, V.y, Mask),
                     __shfl_xor_sync(0xffffffffu, V.z, Mask));
}

/// Min or max over the warp; every lane gets the same (exact) result.
__device__ inline float warpMin(float V) {
  for (int Mask = 16; Mask > 0; Mask >>= 1)
    V = fminf(V, __shfl_xor_sync(0xffffffffu, V, Mask));
  return V;
}
__device__ inline float warpMax(float V) {
  for (int Mask = 16; Mask > 0; Mask >>= 1)
    V = fmaxf(V, __shfl_xor_sync(0xffffffffu, V, Mask));
  return V;
}

#pragma cuda_rewrite stage
__device__ void shade(Quad Q) {
  const Frame &F = gFrame;
  Micro M = setupMicro(F, Q);
  for (int Y = M.Y0; Y <= M.Y1; ++Y)
    for (int X = M.X0; X <= M.X1; ++X)
      if (covers(M, X, Y))
        atomicMin(&F.ZBuffer[size_t(Y) * F.Width + X], M.Key);
}

#pragma cuda_rewrite stage threads(32)
__device__ void dice(Patch P, int rank) {
  // Lane (Half, Col) evaluates vertex (row 2K + Half, column Col) at step K.
  // Lanes of half 0 close the micropolygons between rows 2K and 2K + 1 with
  // the vertices of the lanes above them; lanes of half 1 close those
  // between rows 2K - 1 (their previous vertices) and 2K.
  const int Half = rank >> 4, Col = rank & 15;
  const float U = gridParam(Col);
  float3 Prev = make_float3(0.0f, 0.0f, 0.0f), PrevRight = Prev;
  for (int K = 0; K < kGrid / 2; ++K) {
    float3 Here = evalPatch(P, U, gridParam(2 * K + Half));
    float3 Right = shflDown3(Here, 1);        // column Col + 1, same row
    float3 Across = shflXor3(Here, 16);       // column Col, the other row
    float3 AcrossRight = shflXor3(Right, 16); // column Col + 1, other row
    Quad Q;
    bool Made = false;
    if (Col < kGrid - 1) {
      if (Half == 0) {
        Q = makeQuad(Here, Right, AcrossRight, Across, P.Colour);
        Made = true;
      } else if (K > 0) {
        Q = makeQuad(Prev, PrevRight, AcrossRight, Across, P.Colour);
        Made = true;
      }
    }
    if (Made && facesCamera(Q))
      shade(Q);
    Prev = Here;
    PrevRight = Right;
  }
}

#pragma cuda_rewrite stage threads(32)
__device__ void split(Patch P, int rank) {
  const Frame &F = gFrame;
  // Lane K projects control point K (lanes 16-31 repeat 0-15); chords from
  // the first point of each row (lanes 0, 4, 8, 12) and of each column
  // (lanes 0-3) to the last one, whose projections are 3 and 12 lanes on.
  const int K = rank & 15;
  float2 S = project(F, P.P[K]);
  float2 RowEnd = make_float2(__shfl_down_sync(0xffffffffu, S.x, 3),
                              __shfl_down_sync(0xffffffffu, S.y, 3));
  float2 ColEnd = make_float2(__shfl_down_sync(0xffffffffu, S.x, 12),
                              __shfl_down_sync(0xffffffffu, S.y, 12));
  float ChordU = (K & 3) == 0 ? chord(S, RowEnd) : 0.0f;
  float ChordV = K < 4 ? chord(S, ColEnd) : 0.0f;
  SplitDecision D = decide(F, P, warpMin(S.x), warpMax(S.x), warpMin(S.y),
                           warpMax(S.y), warpMax(ChordU), warpMax(ChordV));
  // D is the same in every lane, so the warp stays together.
  if (!D.Visible)
    return;
  if (D.Split) {
    split(halve(P, D.AlongU, 0), rank);
    split(halve(P, D.AlongU, 1), rank);
  } else {
    dice(P, rank);
  }
}

/// The pipeline's entry: one warp per input patch.
__global__ void render(const Patch *Patches, int NumPatches) {
  const int Warp = int((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int Lane = int(threadIdx.x % 32);
  if (Warp < NumPatches)
    split(Patches[Warp], Lane);
}

//===-- Host --------------------------------------------------------------===//

namespace {

/// Deformed spheres of kBlobU x kBlobV patches each, in the camera's view.
/// A blob's control points are samples of a star-shaped surface on a
/// (3 kBlobU) x (3 kBlobV + 1) grid of longitudes and latitudes, shared
/// along patch edges, so neighbouring patches meet.
std::vector<Patch> makeScene(harness::Rng &R, int NumBlobs, const Frame &F) {
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  const int GU = 3 * kBlobU, GV = 3 * kBlobV + 1;
  const double HalfW = F.CenterX / F.Focal, HalfH = F.CenterY / F.Focal;
  std::vector<Patch> Patches;
  std::vector<float3> Grid(size_t(GU) * GV);
  for (int B = 0; B < NumBlobs; ++B) {
    double Z = 7.0 + 8.0 * Uniform();
    double X = (2.0 * Uniform() - 1.0) * 0.75 * Z * HalfW;
    double Y = (2.0 * Uniform() - 1.0) * 0.75 * Z * HalfH;
    double Radius = 0.8 + 0.5 * Uniform();
    double Squash = 0.65 + 0.5 * Uniform(); // vertical scale
    double A1 = 0.08 + 0.2 * Uniform(), A2 = 0.05 + 0.15 * Uniform();
    int K1 = 2 + int(R.next() % 4), K2 = 1 + int(R.next() % 3);
    double Phase1 = 2 * M_PI * Uniform(), Phase2 = 2 * M_PI * Uniform();
    unsigned Colour = 0;
    for (int C = 0; C < 3; ++C)
      Colour |= unsigned(80 + R.next() % 176) << (8 * C);
    for (int I = 0; I < GU; ++I)
      for (int J = 0; J < GV; ++J) {
        double Theta = 2 * M_PI * I / GU, Phi = -M_PI / 2 + M_PI * J / (GV - 1);
        double Rad =
            Radius * (1 + A1 * std::sin(K1 * Theta + Phase1) * std::cos(Phi) +
                      A2 * std::cos(K2 * Phi + Phase2));
        // u (theta) and v (phi) so that dP/du x dP/dv points outwards.
        Grid[size_t(I) * GV + J] =
            make_float3(float(X + Rad * std::cos(Phi) * std::cos(Theta)),
                        float(Y + Squash * Rad * std::sin(Phi)),
                        float(Z - Rad * std::cos(Phi) * std::sin(Theta)));
      }
    for (int PU = 0; PU < kBlobU; ++PU)
      for (int PV = 0; PV < kBlobV; ++PV) {
        Patch P;
        for (int I = 0; I < 4; ++I)
          for (int J = 0; J < 4; ++J)
            P.P[4 * I + J] =
                Grid[size_t((3 * PU + J) % GU) * GV + (3 * PV + I)];
        P.Depth = 0;
        P.Colour = Colour;
        Patches.push_back(P);
      }
  }
  return Patches;
}

/// The CPU renderer: the stages' work, depth first, with the same helpers.
struct Reference {
  Frame F;
  std::vector<unsigned long long> ZBuffer;
  long Splits = 0, Grids = 0, Micropolygons = 0;
  int DeepestSplit = 0;

  void split(const Patch &P) {
    ++Splits;
    DeepestSplit = std::max(DeepestSplit, P.Depth);
    float MinX = INFINITY, MaxX = -INFINITY, MinY = INFINITY, MaxY = -INFINITY;
    float2 S[16];
    for (int K = 0; K < 16; ++K) {
      S[K] = project(F, P.P[K]);
      MinX = fminf(MinX, S[K].x);
      MaxX = fmaxf(MaxX, S[K].x);
      MinY = fminf(MinY, S[K].y);
      MaxY = fmaxf(MaxY, S[K].y);
    }
    float ChordU = 0.0f, ChordV = 0.0f;
    for (int I = 0; I < 4; ++I) {
      ChordU = fmaxf(ChordU, chord(S[4 * I], S[4 * I + 3]));
      ChordV = fmaxf(ChordV, chord(S[I], S[12 + I]));
    }
    SplitDecision D = decide(F, P, MinX, MaxX, MinY, MaxY, ChordU, ChordV);
    if (!D.Visible)
      return;
    if (D.Split) {
      split(halve(P, D.AlongU, 0));
      split(halve(P, D.AlongU, 1));
    } else {
      dice(P);
    }
  }

  void dice(const Patch &P) {
    ++Grids;
    float3 G[kGrid][kGrid];
    for (int Row = 0; Row < kGrid; ++Row)
      for (int Col = 0; Col < kGrid; ++Col)
        G[Row][Col] = evalPatch(P, gridParam(Col), gridParam(Row));
    for (int Row = 0; Row + 1 < kGrid; ++Row)
      for (int Col = 0; Col + 1 < kGrid; ++Col) {
        Quad Q = makeQuad(G[Row][Col], G[Row][Col + 1], G[Row + 1][Col + 1],
                          G[Row + 1][Col], P.Colour);
        if (facesCamera(Q))
          shade(Q);
      }
  }

  void shade(const Quad &Q) {
    ++Micropolygons;
    Micro M = setupMicro(F, Q);
    for (int Y = M.Y0; Y <= M.Y1; ++Y)
      for (int X = M.X0; X <= M.X1; ++X)
        if (covers(M, X, Y)) {
          unsigned long long &Z = ZBuffer[size_t(Y) * F.Width + X];
          Z = std::min(Z, M.Key);
        }
  }
};

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "reyes", {1024, 768, 8});
  if (A.size(0) < 16 || A.size(0) > 16384 || A.size(1) < 16 ||
      A.size(1) > 16384 || A.size(2) < 1 || A.size(2) > 4096)
    harness::fail("need 16 <= width, height <= 16384 and 1 <= blobs <= 4096");
  const int Width = int(A.size(0)), Height = int(A.size(1));
  const int NumBlobs = int(A.size(2));
  const size_t NumPixels = size_t(Width) * Height;

  Frame F;
  F.Width = Width;
  F.Height = Height;
  F.CenterX = 0.5f * float(Width);
  F.CenterY = 0.5f * float(Height);
  F.Focal = 0.9f * float(Width);
  const double LX = -0.35, LY = 0.6, LZ = -0.72;
  const double LLen = std::sqrt(LX * LX + LY * LY + LZ * LZ);
  F.Light = make_float3(float(LX / LLen), float(LY / LLen), float(LZ / LLen));
  F.ZBuffer = nullptr;

  harness::Rng R(A.Seed);
  std::vector<Patch> Patches = makeScene(R, NumBlobs, F);
  const int NumPatches = int(Patches.size());

  Reference Ref;
  Ref.F = F;
  Ref.ZBuffer.assign(NumPixels, ~0ull);
  for (const Patch &P : Patches)
    Ref.split(P);
  size_t Covered = 0;
  for (unsigned long long Z : Ref.ZBuffer)
    Covered += Z != ~0ull;
  std::printf("reyes: %d patches, %ld split items (deepest split %d), %ld "
              "grids diced, %ld micropolygons shaded, %zu of %zu pixels "
              "covered\n",
              NumPatches, Ref.Splits, Ref.DeepestSplit, Ref.Grids,
              Ref.Micropolygons, Covered, NumPixels);

  // The recursion: render -> up to kMaxSplitDepth + 1 split frames -> dice
  // -> shade.
  HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, kStackBytes));

  harness::DeviceArray<Patch> DPatches(Patches);
  harness::DeviceArray<unsigned long long> DZBuffer(NumPixels);
  F.ZBuffer = DZBuffer.data();
  HARNESS_CHECK(cudaMemcpyToSymbol(gFrame, &F, sizeof F));

  constexpr int kBlock = 128; // 4 warps, 4 patches per block
  const int Blocks = (NumPatches * 32 + kBlock - 1) / kBlock;
  const Patch *PatchesPtr = DPatches.data();

  harness::Result Res = harness::measure(
      A,
      [&] {
        // The empty key: farther than anything, so atomicMin replaces it.
        HARNESS_CHECK(cudaMemsetAsync(DZBuffer.data(), 0xff, DZBuffer.bytes()));
      },
      [&] {
#pragma cuda_rewrite pipeline
        render<<<Blocks, kBlock>>>(PatchesPtr, NumPatches);
      },
      [&] { return harness::compareExact(DZBuffer.download(), Ref.ZBuffer); });
  // The patches read once, the z-buffer written once.
  double Bytes = double(sizeof(Patch)) * NumPatches +
                 double(sizeof(unsigned long long)) * NumPixels;
  return harness::report(A, Res, Bytes);
}
