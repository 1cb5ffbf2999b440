//===- raster.cu - Triangle rasterization of cubes as a pipeline ----------===//
//
// Rasterizes randomly placed, rotated and sized cubes (12 triangles each,
// with a colour per corner) into a z-buffer: the `Rasterization` benchmark of
// VersaPipe (section 8, after Patney and Owens' code), whose three stages
// are clip, interpolate and shade. The camera is a pinhole at the origin
// looking down +z with a near plane at kNear; some cubes cross it, a few lie
// behind it.
//
// Stages (run-to-completion style; the entry kernel `rasterize` seeds clip
// with one thread per triangle of the scene):
//
//   clip        threads(1), one triangle (TriRef, 8 bytes: cube and
//               triangle index). Transforms its corners to camera space,
//               culls it if it faces away from the camera, and clips it
//               against the near plane, which leaves 0, 1 or 2 triangles;
//               each goes to interpolate. Cheap.
//   interpolate threads(1), one camera-space triangle (Triangle, 72 bytes).
//               Triangle setup (projection, 1/z and colour/z per vertex, the
//               reciprocal area) and binning: for every kTile x kTile screen
//               tile under the triangle's bound that the triangle may touch
//               (a conservative edge test on the tile's pixel centres) it
//               hands a (triangle, tile) pair to shade. Output varies from
//               none to a few hundred pairs.
//   shade       threads(32), one (triangle, tile) pair (TileJob, 84
//               bytes). Thread `rank` takes pixels rank, rank + 32, ... of
//               the tile: barycentric coverage test, perspective-correct
//               interpolation of depth and colour, and atomicMin of a 64-bit
//               key (inverted 1/z bits high, colour low) into the z-buffer,
//               so that the nearest triangle wins (ties by colour) whatever
//               order the pairs arrive in. The heavy stage.
//
// interpolate is a single thread, and a call to a threads(32) stage is made
// by 32 threads with ranks 0..31; so interpolate makes the 32 calls itself,
// `for (r = 0; r < kShadeThreads; ++r) shade(Job, r);`. In the original that
// runs the tile's 32 parts one after another in the one thread (the ranks'
// pixels are disjoint and shade uses no warp intrinsics, so that is the same
// work); a rewrite pushes the pair once, from the call with rank 0. Calls go
// rasterize -> clip -> interpolate -> shade, not recursive: the default
// device stack is enough.
//
// The check compares the whole z-buffer (depth and colour of every pixel)
// exactly with a CPU rasterizer that makes the same float operations in the
// same order: every rounding step is one of addRn/subRn/mulRn/divRn, which
// are the _rn intrinsics on the device (never contracted into FMAs) and go
// through a volatile on the host (never contracted either), and the stages'
// arithmetic lives in __host__ __device__ helpers that both sides call. The
// results are bit-identical, so no tolerance is needed.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/pipeline/raster.cu -lcudadevrt -o raster
//   ./raster [width [height [cubes]]] [--seed=N] [--reps=N]
//
// Default: 1024 x 768 pixels, 100 cubes (1200 triangles); the program prints
// how many triangles survive culling and clipping, how many (triangle, tile)
// pairs reach shade (about 8-13 thousand over seeds) and the most from one
// triangle (about 100-210; the original's run time follows it, since one
// thread shades all of a triangle's tiles: about 30 ms on an H100).
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

/// Screen tiles are kTile x kTile pixels; one shade item covers one tile.
constexpr int kTile = 16;
/// Threads of shade: each takes kTile * kTile / kShadeThreads pixels.
constexpr int kShadeThreads = 32;
/// Distance of the near clipping plane from the camera.
constexpr float kNear = 5.0f;
/// Triangles per cube.
constexpr int kCubeTriangles = 12;

} // namespace

//===-- Arithmetic shared by the GPU and the CPU reference ----------------===//
//
// exact_float.cuh: addRn, subRn, mulRn, divRn, floatBits.

__host__ __device__ inline float lerpRn(float A, float B, float T) {
  return addRn(A, mulRn(T, subRn(B, A)));
}

/// Edge function: twice the signed area of ((AX, AY), (BX, BY), (X, Y)).
__host__ __device__ inline float edge(float AX, float AY, float BX, float BY,
                                      float X, float Y) {
  return subRn(mulRn(subRn(BX, AX), subRn(Y, AY)),
               mulRn(subRn(BY, AY), subRn(X, AX)));
}

//===-- Scene and items ---------------------------------------------------===//

/// A cube: model corners (+-1, +-1, +-1), corner c having x = +1 if bit 0
/// of c is set, y if bit 1, z if bit 2.
struct Cube {
  float M[12];        ///< Model to camera space, 3 x 4 row-major (scaled).
  float Colour[8][3]; ///< RGB per corner, in [0, 1].
};

/// The camera, the scene and the output, the same for every item.
struct Frame {
  int Width, Height;
  float CenterX, CenterY, Focal; ///< Pinhole projection, in pixels.
  const Cube *Cubes;
  unsigned long long *ZBuffer; ///< Width * Height keys, row-major.
};

__constant__ Frame gFrame;

/// Item of clip: triangle Tri (0..11) of cube Cube.
struct TriRef {
  int Cube, Tri;
};

/// A camera-space vertex with its colour.
struct Vertex {
  float X, Y, Z, R, G, B;
};

/// Item of interpolate: a triangle wholly on the camera side of the near
/// plane, facing the camera.
struct Triangle {
  Vertex V[3];
};

/// Item of shade: a set-up triangle and one screen tile it may touch.
struct TileJob {
  float SX[3], SY[3]; ///< Screen positions.
  float W[3];         ///< 1 / z.
  float CW[3][3];     ///< Colour / z, per vertex and channel.
  float InvArea;      ///< 1 / edge(V0, V1, V2).
  int TileX, TileY;
};

/// Corner K (0..2) of cube triangle Tri (0..11). Face Tri / 2 is
/// perpendicular to axis A = Tri / 4 on its + side if Tri / 2 is odd; its
/// corners go round counter-clockwise seen from outside, as the cyclic
/// axes (A + 1, A + 2) of the face's plane go, so that
/// (V1 - V0) x (V2 - V0) points out of the cube. Each face is the triangles
/// (Q0, Q1, Q2) and (Q0, Q2, Q3).
__host__ __device__ inline int cubeCorner(int Tri, int K) {
  const int Face = Tri >> 1, Axis = Face >> 1, Positive = Face & 1;
  int Q = (Tri & 1) ? (K == 0 ? 0 : K + 1) : K; // index in the face quad
  if (!Positive)
    Q = (4 - Q) & 3; // reversed: outwards is -Axis
  // Face quad in (axis A + 1, axis A + 2) coordinates: (-,-) (+,-) (+,+)
  // (-,+).
  const int B = (Q == 1 || Q == 2), C = (Q >= 2);
  const int BAxis = (Axis + 1) % 3, CAxis = (Axis + 2) % 3;
  return (Positive << Axis) | (B << BAxis) | (C << CAxis);
}

/// Corner \p Corner of \p C in camera space.
__host__ __device__ inline Vertex transformCorner(const Cube &C, int Corner) {
  const float MX = (Corner & 1) ? 1.0f : -1.0f;
  const float MY = (Corner & 2) ? 1.0f : -1.0f;
  const float MZ = (Corner & 4) ? 1.0f : -1.0f;
  float P[3];
  for (int Row = 0; Row < 3; ++Row) {
    const float *M = C.M + 4 * Row;
    P[Row] = addRn(
        addRn(addRn(mulRn(M[0], MX), mulRn(M[1], MY)), mulRn(M[2], MZ)), M[3]);
  }
  Vertex V;
  V.X = P[0];
  V.Y = P[1];
  V.Z = P[2];
  V.R = C.Colour[Corner][0];
  V.G = C.Colour[Corner][1];
  V.B = C.Colour[Corner][2];
  return V;
}

//===-- Clip --------------------------------------------------------------===//

/// Back-face culling, seen from the camera at the origin: the normal
/// (V1 - V0) x (V2 - V0) must point towards it.
__host__ __device__ inline bool facesCamera(const Vertex V[3]) {
  const float AX = subRn(V[1].X, V[0].X), AY = subRn(V[1].Y, V[0].Y),
              AZ = subRn(V[1].Z, V[0].Z);
  const float BX = subRn(V[2].X, V[0].X), BY = subRn(V[2].Y, V[0].Y),
              BZ = subRn(V[2].Z, V[0].Z);
  const float NX = subRn(mulRn(AY, BZ), mulRn(AZ, BY));
  const float NY = subRn(mulRn(AZ, BX), mulRn(AX, BZ));
  const float NZ = subRn(mulRn(AX, BY), mulRn(AY, BX));
  const float Dot =
      addRn(addRn(mulRn(NX, V[0].X), mulRn(NY, V[0].Y)), mulRn(NZ, V[0].Z));
  return Dot < 0.0f;
}

/// The point where edge (A, B) crosses the near plane, at T along it.
__host__ __device__ inline Vertex lerpVertex(const Vertex &A, const Vertex &B,
                                             float T) {
  Vertex V;
  V.X = lerpRn(A.X, B.X, T);
  V.Y = lerpRn(A.Y, B.Y, T);
  V.Z = lerpRn(A.Z, B.Z, T);
  V.R = lerpRn(A.R, B.R, T);
  V.G = lerpRn(A.G, B.G, T);
  V.B = lerpRn(A.B, B.B, T);
  return V;
}

/// Sutherland-Hodgman against z >= kNear: the clipped polygon, 0, 3 or 4
/// vertices, into Out. Returns the count.
__host__ __device__ inline int clipNear(const Vertex In[3], Vertex Out[4]) {
  int N = 0;
  for (int K = 0; K < 3; ++K) {
    const Vertex &A = In[K], &B = In[(K + 1) % 3];
    const float DA = subRn(A.Z, kNear), DB = subRn(B.Z, kNear);
    if (DA >= 0.0f)
      Out[N++] = A;
    if ((DA >= 0.0f) != (DB >= 0.0f))
      Out[N++] = lerpVertex(A, B, divRn(DA, subRn(DA, DB)));
  }
  return N;
}

__host__ __device__ inline Triangle
makeTriangle(const Vertex &A, const Vertex &B, const Vertex &C) {
  Triangle T;
  T.V[0] = A;
  T.V[1] = B;
  T.V[2] = C;
  return T;
}

//===-- Interpolate -------------------------------------------------------===//

/// First pixel whose centre (X + 0.5) is at or after Lo, clamped to
/// [0, Limit]; likewise the last one at or before Hi, clamped to
/// [-1, Limit - 1]. Clamping in float first keeps the conversions in range.
__host__ __device__ inline int firstPixel(float Lo, int Limit) {
  return int(fminf(fmaxf(ceilf(subRn(Lo, 0.5f)), 0.0f), float(Limit)));
}
__host__ __device__ inline int lastPixel(float Hi, int Limit) {
  return int(fminf(fmaxf(floorf(subRn(Hi, 0.5f)), -1.0f), float(Limit - 1)));
}

/// Triangle setup: screen positions, 1/z, colour/z and the reciprocal area
/// into \p J, and the range of tiles under the bound into (TX0..TX1,
/// TY0..TY1). False if the triangle is degenerate on screen.
__host__ __device__ inline bool setupTriangle(const Frame &F, const Triangle &T,
                                              TileJob &J, int &TX0, int &TX1,
                                              int &TY0, int &TY1) {
  float MinX = INFINITY, MaxX = -INFINITY, MinY = INFINITY, MaxY = -INFINITY;
  for (int K = 0; K < 3; ++K) {
    const Vertex &V = T.V[K];
    J.W[K] = divRn(1.0f, V.Z);
    J.SX[K] = addRn(F.CenterX, mulRn(mulRn(F.Focal, V.X), J.W[K]));
    J.SY[K] = subRn(F.CenterY, mulRn(mulRn(F.Focal, V.Y), J.W[K]));
    J.CW[K][0] = mulRn(V.R, J.W[K]);
    J.CW[K][1] = mulRn(V.G, J.W[K]);
    J.CW[K][2] = mulRn(V.B, J.W[K]);
    MinX = fminf(MinX, J.SX[K]);
    MaxX = fmaxf(MaxX, J.SX[K]);
    MinY = fminf(MinY, J.SY[K]);
    MaxY = fmaxf(MaxY, J.SY[K]);
  }
  const float Area = edge(J.SX[0], J.SY[0], J.SX[1], J.SY[1], J.SX[2], J.SY[2]);
  if (Area == 0.0f)
    return false;
  J.InvArea = divRn(1.0f, Area);
  // Pixels first, then the tiles that hold them (empty where the bound
  // misses every pixel centre: X0 > X1 gives TX0 > TX1).
  const int X0 = firstPixel(MinX, F.Width), X1 = lastPixel(MaxX, F.Width);
  const int Y0 = firstPixel(MinY, F.Height), Y1 = lastPixel(MaxY, F.Height);
  TX0 = X0 / kTile;
  TY0 = Y0 / kTile;
  TX1 = X1 < X0 ? TX0 - 1 : X1 / kTile;
  TY1 = Y1 < Y0 ? TY0 - 1 : Y1 / kTile;
  return true;
}

/// Whether the triangle may cover a pixel centre of tile (TX, TY): false if
/// the four outermost pixel centres of the tile are all strictly outside one
/// edge (the edge function is affine, so then all of them are). Only spares
/// shade items; shade's own test decides coverage.
__host__ __device__ inline bool tileTouched(const TileJob &J, int TX, int TY) {
  const float X0 = addRn(float(TX * kTile), 0.5f);
  const float Y0 = addRn(float(TY * kTile), 0.5f);
  const float X1 = addRn(X0, float(kTile - 1));
  const float Y1 = addRn(Y0, float(kTile - 1));
  const float Sign = J.InvArea > 0.0f ? 1.0f : -1.0f;
  for (int K = 0; K < 3; ++K) {
    const int A = (K + 1) % 3, B = (K + 2) % 3; // edge opposite vertex K
    const float AX = J.SX[A], AY = J.SY[A], BX = J.SX[B], BY = J.SY[B];
    if (mulRn(Sign, edge(AX, AY, BX, BY, X0, Y0)) < 0.0f &&
        mulRn(Sign, edge(AX, AY, BX, BY, X1, Y0)) < 0.0f &&
        mulRn(Sign, edge(AX, AY, BX, BY, X0, Y1)) < 0.0f &&
        mulRn(Sign, edge(AX, AY, BX, BY, X1, Y1)) < 0.0f)
      return false;
  }
  return true;
}

//===-- Shade -------------------------------------------------------------===//

/// The key that pixel (X, Y) gets from \p J, or ~0 (no change) if the
/// triangle does not cover its centre.
__host__ __device__ inline unsigned long long shadePixel(const TileJob &J,
                                                         int X, int Y) {
  const float PX = addRn(float(X), 0.5f), PY = addRn(float(Y), 0.5f);
  // Barycentric coordinates: edge opposite each vertex over the area.
  const float L0 =
      mulRn(edge(J.SX[1], J.SY[1], J.SX[2], J.SY[2], PX, PY), J.InvArea);
  const float L1 =
      mulRn(edge(J.SX[2], J.SY[2], J.SX[0], J.SY[0], PX, PY), J.InvArea);
  const float L2 =
      mulRn(edge(J.SX[0], J.SY[0], J.SX[1], J.SY[1], PX, PY), J.InvArea);
  if (L0 < 0.0f || L1 < 0.0f || L2 < 0.0f)
    return ~0ull;
  // 1/z is linear on the screen; colour/z too, hence colour = (colour/z) /
  // (1/z).
  const float W =
      addRn(addRn(mulRn(L0, J.W[0]), mulRn(L1, J.W[1])), mulRn(L2, J.W[2]));
  if (!(W > 0.0f))
    return ~0ull;
  unsigned Rgb = 0;
  for (int C = 0; C < 3; ++C) {
    const float CW = addRn(addRn(mulRn(L0, J.CW[0][C]), mulRn(L1, J.CW[1][C])),
                           mulRn(L2, J.CW[2][C]));
    const float Colour = fminf(fmaxf(divRn(CW, W), 0.0f), 1.0f);
    Rgb |= unsigned(mulRn(Colour, 255.0f)) << (8 * C);
  }
  // Nearer is larger 1/z; its bits, inverted, order the other way (W > 0).
  return (static_cast<unsigned long long>(~floatBits(W)) << 32) | Rgb;
}

/// Pixel Index (0 .. kTile^2 - 1) of tile (TX, TY), or false if it is off
/// the screen.
__host__ __device__ inline bool tilePixel(const Frame &F, int TX, int TY,
                                          int Index, int &X, int &Y) {
  X = TX * kTile + Index % kTile;
  Y = TY * kTile + Index / kTile;
  return X < F.Width && Y < F.Height;
}

//===-- Stages ------------------------------------------------------------===//

#pragma cuda_rewrite stage threads(32)
__device__ void shade(TileJob J, int rank) {
  const Frame &F = gFrame;
  for (int Index = rank; Index < kTile * kTile; Index += kShadeThreads) {
    int X, Y;
    if (!tilePixel(F, J.TileX, J.TileY, Index, X, Y))
      continue;
    const unsigned long long Key = shadePixel(J, X, Y);
    if (Key != ~0ull)
      atomicMin(&F.ZBuffer[size_t(Y) * F.Width + X], Key);
  }
}

#pragma cuda_rewrite stage
__device__ void interpolate(Triangle T) {
  const Frame &F = gFrame;
  TileJob J;
  int TX0, TX1, TY0, TY1;
  if (!setupTriangle(F, T, J, TX0, TX1, TY0, TY1))
    return;
  for (int TY = TY0; TY <= TY1; ++TY)
    for (int TX = TX0; TX <= TX1; ++TX) {
      if (!tileTouched(J, TX, TY))
        continue;
      J.TileX = TX;
      J.TileY = TY;
      // The 32 threads' calls of a threads(32) stage, made by this one
      // thread (see the header).
      for (int R = 0; R < kShadeThreads; ++R)
        shade(J, R);
    }
}

#pragma cuda_rewrite stage
__device__ void clip(TriRef Ref) {
  const Cube &C = gFrame.Cubes[Ref.Cube];
  Vertex V[3];
  for (int K = 0; K < 3; ++K)
    V[K] = transformCorner(C, cubeCorner(Ref.Tri, K));
  if (!facesCamera(V))
    return;
  Vertex Out[4];
  const int N = clipNear(V, Out);
  if (N >= 3)
    interpolate(makeTriangle(Out[0], Out[1], Out[2]));
  if (N == 4)
    interpolate(makeTriangle(Out[0], Out[2], Out[3]));
}

/// The pipeline's entry: one thread per triangle of the scene.
__global__ void rasterize(int NumCubes) {
  const int I = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (I < NumCubes * kCubeTriangles) {
    TriRef Ref;
    Ref.Cube = I / kCubeTriangles;
    Ref.Tri = I % kCubeTriangles;
    clip(Ref);
  }
}

//===-- Host --------------------------------------------------------------===//

namespace {

/// Cubes in the camera's view: centres at depths kNear - 1.5 .. kNear + 20,
/// so that some cross the near plane and a few lie behind it; half sizes
/// 0.3 .. 0.9; uniformly random rotations; a random colour per corner.
std::vector<Cube> makeScene(harness::Rng &R, int NumCubes, const Frame &F) {
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  auto Gaussian = [&] {
    double U1 = std::max(Uniform(), 1e-300), U2 = Uniform();
    return std::sqrt(-2 * std::log(U1)) * std::cos(2 * M_PI * U2);
  };
  const double HalfW = F.CenterX / F.Focal, HalfH = F.CenterY / F.Focal;
  std::vector<Cube> Cubes(NumCubes);
  for (Cube &C : Cubes) {
    const double Z = kNear - 1.5 + 21.5 * Uniform();
    const double X = (2 * Uniform() - 1) * 0.9 * Z * HalfW;
    const double Y = (2 * Uniform() - 1) * 0.9 * Z * HalfH;
    const double Half = 0.3 + 0.6 * Uniform();
    // A uniformly random rotation from a normalized Gaussian quaternion.
    double QW = Gaussian(), QX = Gaussian(), QY = Gaussian(), QZ = Gaussian();
    const double QN = std::sqrt(QW * QW + QX * QX + QY * QY + QZ * QZ);
    QW /= QN, QX /= QN, QY /= QN, QZ /= QN;
    const double Rot[3][3] = {
        {1 - 2 * (QY * QY + QZ * QZ), 2 * (QX * QY - QZ * QW),
         2 * (QX * QZ + QY * QW)},
        {2 * (QX * QY + QZ * QW), 1 - 2 * (QX * QX + QZ * QZ),
         2 * (QY * QZ - QX * QW)},
        {2 * (QX * QZ - QY * QW), 2 * (QY * QZ + QX * QW),
         1 - 2 * (QX * QX + QY * QY)}};
    const double Centre[3] = {X, Y, Z};
    for (int Row = 0; Row < 3; ++Row) {
      for (int Col = 0; Col < 3; ++Col)
        C.M[4 * Row + Col] = float(Half * Rot[Row][Col]);
      C.M[4 * Row + 3] = float(Centre[Row]);
    }
    for (auto &Corner : C.Colour)
      for (float &Channel : Corner)
        Channel = float(0.15 + 0.85 * Uniform());
  }
  return Cubes;
}

/// The corner table must wind every triangle outwards; checked once, in
/// double, on the unit cube.
void checkCubeWinding() {
  for (int Tri = 0; Tri < kCubeTriangles; ++Tri) {
    double P[3][3];
    for (int K = 0; K < 3; ++K) {
      int Corner = cubeCorner(Tri, K);
      for (int D = 0; D < 3; ++D)
        P[K][D] = (Corner >> D) & 1 ? 1.0 : -1.0;
    }
    double A[3], B[3], Centre[3];
    for (int D = 0; D < 3; ++D) {
      A[D] = P[1][D] - P[0][D];
      B[D] = P[2][D] - P[0][D];
      Centre[D] = P[0][D] + P[1][D] + P[2][D];
    }
    const double N[3] = {A[1] * B[2] - A[2] * B[1], A[2] * B[0] - A[0] * B[2],
                         A[0] * B[1] - A[1] * B[0]};
    if (N[0] * Centre[0] + N[1] * Centre[1] + N[2] * Centre[2] <= 0)
      harness::fail("cube triangle " + std::to_string(Tri) +
                    " is not wound outwards");
  }
}

/// The CPU rasterizer: the stages' work, triangle by triangle, with the same
/// helpers.
struct Reference {
  Frame F;
  std::vector<Cube> Cubes;
  std::vector<unsigned long long> ZBuffer;
  long Front = 0, Clipped = 0, Triangles = 0, Jobs = 0, MostJobs = 0;

  void clip(int CubeIndex, int Tri) {
    Vertex V[3];
    for (int K = 0; K < 3; ++K)
      V[K] = transformCorner(Cubes[CubeIndex], cubeCorner(Tri, K));
    if (!facesCamera(V))
      return;
    ++Front;
    Vertex Out[4];
    const int N = clipNear(V, Out);
    Clipped += N != 3 || Out[0].Z != V[0].Z || Out[1].Z != V[1].Z ||
               Out[2].Z != V[2].Z;
    if (N >= 3)
      interpolate(makeTriangle(Out[0], Out[1], Out[2]));
    if (N == 4)
      interpolate(makeTriangle(Out[0], Out[2], Out[3]));
  }

  void interpolate(const Triangle &T) {
    ++Triangles;
    TileJob J;
    int TX0, TX1, TY0, TY1;
    if (!setupTriangle(F, T, J, TX0, TX1, TY0, TY1))
      return;
    long Mine = 0;
    for (int TY = TY0; TY <= TY1; ++TY)
      for (int TX = TX0; TX <= TX1; ++TX) {
        if (!tileTouched(J, TX, TY))
          continue;
        ++Mine;
        for (int Index = 0; Index < kTile * kTile; ++Index) {
          int X, Y;
          if (!tilePixel(F, TX, TY, Index, X, Y))
            continue;
          unsigned long long &Z = ZBuffer[size_t(Y) * F.Width + X];
          Z = std::min(Z, shadePixel(J, X, Y));
        }
      }
    Jobs += Mine;
    MostJobs = std::max(MostJobs, Mine);
  }
};

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "raster", {1024, 768, 100});
  if (A.size(0) < 16 || A.size(0) > 16384 || A.size(1) < 16 ||
      A.size(1) > 16384 || A.size(2) < 1 || A.size(2) > 100000)
    harness::fail("need 16 <= width, height <= 16384 and 1 <= cubes <= "
                  "100000");
  const int Width = int(A.size(0)), Height = int(A.size(1));
  const int NumCubes = int(A.size(2));
  const size_t NumPixels = size_t(Width) * Height;
  checkCubeWinding();

  Frame F;
  F.Width = Width;
  F.Height = Height;
  F.CenterX = 0.5f * float(Width);
  F.CenterY = 0.5f * float(Height);
  F.Focal = 0.9f * float(Width);
  F.Cubes = nullptr;
  F.ZBuffer = nullptr;

  harness::Rng R(A.Seed);
  std::vector<Cube> Cubes = makeScene(R, NumCubes, F);

  Reference Ref;
  Ref.F = F;
  Ref.Cubes = Cubes;
  Ref.ZBuffer.assign(NumPixels, ~0ull);
  for (int C = 0; C < NumCubes; ++C)
    for (int Tri = 0; Tri < kCubeTriangles; ++Tri)
      Ref.clip(C, Tri);
  size_t Covered = 0;
  for (unsigned long long Z : Ref.ZBuffer)
    Covered += Z != ~0ull;
  std::printf("raster: %d triangles, %ld facing the camera, %ld of them "
              "clipped, %ld after clipping, %ld (triangle, tile) pairs "
              "shaded (at most %ld from one triangle), %zu of %zu pixels "
              "covered\n",
              NumCubes * kCubeTriangles, Ref.Front, Ref.Clipped, Ref.Triangles,
              Ref.Jobs, Ref.MostJobs, Covered, NumPixels);

  harness::DeviceArray<Cube> DCubes(Cubes);
  harness::DeviceArray<unsigned long long> DZBuffer(NumPixels);
  F.Cubes = DCubes.data();
  F.ZBuffer = DZBuffer.data();
  HARNESS_CHECK(cudaMemcpyToSymbol(gFrame, &F, sizeof F));

  constexpr int kBlock = 128;
  const int Blocks = (NumCubes * kCubeTriangles + kBlock - 1) / kBlock;

  harness::Result Res = harness::measure(
      A,
      [&] {
        // The empty key: farther than anything, so atomicMin replaces it.
        HARNESS_CHECK(cudaMemsetAsync(DZBuffer.data(), 0xff, DZBuffer.bytes()));
      },
      [&] {
#pragma cuda_rewrite pipeline
        rasterize<<<Blocks, kBlock>>>(NumCubes);
      },
      [&] { return harness::compareExact(DZBuffer.download(), Ref.ZBuffer); });
  // The cubes read once, the z-buffer written once.
  double Bytes = double(sizeof(Cube)) * NumCubes +
                 double(sizeof(unsigned long long)) * NumPixels;
  return harness::report(A, Res, Bytes);
}
