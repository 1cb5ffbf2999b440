//===- pyramid.cu - Histogram-equalized image pyramids of a batch of frames
//===//
//
// Builds an image pyramid of each frame of a batch of RGB frames: the `Image
// Pyramid` benchmark of VersaPipe (Table 1 and Figure 12: grayscale, histogram
// equalization, then a recursive resize), after Oh et al. Each frame is
// converted to luma (integer BT.601 weights), equalized by its own 256-bin
// histogram, and halved by 2x2 box filtering, level by level, while the level
// is at least 32 pixels wide and high (1920x1080 gives 7 levels, down to
// 30x16). Every step is integer arithmetic, so the equalized frames, all
// pyramid levels and the histograms are checked exactly against a CPU
// reference, whatever order the items run in (the histograms are integer
// atomic sums).
//
// The items are tiles of 32x8 pixels of one level of one frame (Tile, 12
// bytes, as in the paper) and frames (a plain int). Four stages:
//
//   grayscale (threads(32), a tile) -- last tile of the frame --> equalize
//   equalize  (threads(32), a frame) -- every tile of the frame --> apply
//   apply     (threads(1), a tile)  --+-- last of 4 quadrants --> resize
//   resize    (threads(1), a tile)  --+   (the tile of the next level)
//
//  - grayscale streams the tile's 768 bytes of RGB (a row of 32 pixels is 96
//    coalesced bytes), writes the luma, and adds the tile to the frame's
//    histogram with warp-aggregated atomics (__match_any_sync: lanes with the
//    same value add once). A per-frame counter finds the frame's last tile,
//    whose warp calls equalize.
//  - equalize is the serial bottleneck of the paper: one warp per frame scans
//    the histogram into a CDF (8 bins a lane, a shuffle scan), writes the
//    lookup table, then hands on every tile of the frame (8100 at 1920x1080)
//    to apply, each lane a share of them.
//  - apply is one thread per tile: 256 lookups of the frame's table. The tile
//    then counts itself into the next level's tile that it feeds (a 32x8
//    tile of level l + 1 is the 2x2 box filter of 2x2 tiles of level l,
//    fewer at the edges); the last of the up to 4 calls resize for it.
//  - resize is one thread per tile of level l + 1, 4 byte loads per output
//    pixel, and counts itself into level l + 2 the same way: the recursion
//    climbs the pyramid and its work shrinks 4x per level (the paper's load
//    imbalance of the KBK model).
// grayscale and equalize must be called by full warps (n = 32 threads call a
// threads(32) stage together), so the entry kernel runs one warp per tile;
// equalize hands on one apply item per calling lane and tile (threads(1)).
//
// In the RTC original a tile's chain of calls goes entry -> grayscale ->
// equalize -> apply -> resize x (levels - 1): 10 frames at 1920x1080;
// main raises the device stack limit for that. The RTC original runs each
// frame's equalize and all of that frame's apply and resize work in one warp:
// the serial section that the other execution models spread out.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/pipeline/pyramid.cu -lcudadevrt -o pyramid
//   ./pyramid [frames [width [height]]] [--seed=N]
//
// Default: 8 frames of 1920x1080 (the paper used 8 and 32 HD frames): 64800
// grayscale and apply items, 21600 resize items, 8 equalize items.
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <algorithm>
#include <cmath>

/// A tile is kTileW x kTileH pixels: one lane per column in grayscale, and
/// the output of one resize item, whose source is the 2x2 tiles below it.
constexpr int kTileW = 32;
constexpr int kTileH = 8;
/// Levels are made while the current one is at least this wide and high.
constexpr int kMinSide = 32;
constexpr int kMaxLevels = 16;
constexpr int kBins = 256;
/// Items waiting in one stage stay below this (the queues hold 2^20).
constexpr long kMaxTilesInFlight = 1L << 19;

/// The item of grayscale, apply and resize: tile `index` (row-major among
/// the level's tiles) of `level` of `frame`.
struct Tile {
  int frame;
  int level;
  int index;
};

/// The pyramid's geometry and buffers, set once by the host.
struct Pyramid {
  const unsigned char *rgb; ///< [frame][height[0]][width[0]][3] input
  unsigned char *gray;      ///< [frame][height[0]][width[0]] luma
  unsigned char *levels;    ///< [frame][framePixels]: level 0 (equalized)
                            ///< at levelOffset[0], then the smaller levels
  unsigned *histogram;      ///< [frame][kBins]
  unsigned char *lut;       ///< [frame][kBins] equalization table
  int *tilesCounted;        ///< [frame] grayscale tiles done
  int *quadrantsDone;       ///< level l >= 1: [counterOffset[l] + frame *
                            ///< tiles(l) + tile] source tiles done
  int numLevels;
  long long framePixels; ///< all levels of one frame
  int width[kMaxLevels], height[kMaxLevels];
  int tilesX[kMaxLevels], tilesY[kMaxLevels];
  long long levelOffset[kMaxLevels];
  int counterOffset[kMaxLevels];
};

__constant__ Pyramid gPyr;

//===-- Integer pixel arithmetic, shared by the GPU and the CPU reference -===//

/// BT.601 luma with 8-bit weights that sum to 256: at most 255.
__host__ __device__ inline int luma(int r, int g, int b) {
  return (77 * r + 150 * g + 29 * b + 128) >> 8;
}

/// The equalization table's entry for value \p v, whose CDF is \p cdf, in a
/// frame of \p total pixels whose smallest nonzero CDF is \p cdfMin:
/// round((cdf - cdfMin) / (total - cdfMin) * 255). A frame of one value
/// keeps it.
__host__ __device__ inline unsigned char
lutEntry(int v, unsigned cdf, unsigned cdfMin, unsigned total) {
  if (total <= cdfMin)
    return static_cast<unsigned char>(v);
  if (cdf < cdfMin)
    return 0; // a value that does not occur
  unsigned long long range = total - cdfMin;
  return static_cast<unsigned char>(
      ((unsigned long long)(cdf - cdfMin) * 255 + range / 2) / range);
}

/// The 2x2 box filter, rounded.
__host__ __device__ inline unsigned char boxAverage(int a, int b, int c,
                                                    int d) {
  return static_cast<unsigned char>((a + b + c + d + 2) >> 2);
}

//===-- Rows of a tile ----------------------------------------------------===//
//
// apply and resize are one thread per tile. Written pixel by pixel, each
// pixel's loads would wait for the previous pixel's store (they may alias),
// so a lone thread would wait for memory 256 times a tile; the RTC original
// runs a frame's tiles on 32 threads only, so that is its whole run time.
// These load a row (or half a row) first, then store it: one wait a row.
// They are shared with a host test of the tile geometry.

/// A byte that other items wrote during the run. On the GPU it is read
/// through L2 (__ldcg), where their fenced writes are, never from a possibly
/// stale L1 line.
__host__ __device__ inline unsigned char loadShared(const unsigned char *p) {
#ifdef __CUDA_ARCH__
  return __ldcg(p);
#else
  return *p;
#endif
}

/// out[i] = lut[in[i]] for i < n <= kTileW.
__host__ __device__ inline void equalizeRow(const unsigned char *in,
                                            const unsigned char *lut,
                                            unsigned char *out, int n) {
  unsigned char v[kTileW];
#pragma unroll
  for (int i = 0; i < kTileW; ++i)
    v[i] = i < n ? loadShared(in + i) : 0;
#pragma unroll
  for (int i = 0; i < kTileW; ++i)
    v[i] = lut[v[i]];
#pragma unroll
  for (int i = 0; i < kTileW; ++i)
    if (i < n)
      out[i] = v[i];
}

/// out[i] = the 2x2 box filter of top[2i..2i+1] and bottom[2i..2i+1] for
/// i < n <= kTileW, half a row at a time (64 loads in flight).
__host__ __device__ inline void resizeRow(const unsigned char *top,
                                          const unsigned char *bottom,
                                          unsigned char *out, int n) {
  constexpr int kHalf = kTileW / 2;
#pragma unroll
  for (int h = 0; h < kTileW; h += kHalf) {
    unsigned char v[kHalf];
#pragma unroll
    for (int i = 0; i < kHalf; ++i) {
      const int x = h + i;
      v[i] = x < n ? boxAverage(loadShared(top + 2 * x),
                                loadShared(top + 2 * x + 1),
                                loadShared(bottom + 2 * x),
                                loadShared(bottom + 2 * x + 1))
                   : 0;
    }
#pragma unroll
    for (int i = 0; i < kHalf; ++i)
      if (h + i < n)
        out[h + i] = v[i];
  }
}

//===-- Stages ------------------------------------------------------------===//

/// Counts a finished tile of level \p t.level into the tile of the next level
/// that it feeds. Returns true, with that tile in \p parent, for the last of
/// its (up to 4) source tiles; false for the others, at the top level, and
/// for edge tiles that no next-level pixel reads (odd sizes are rounded
/// down). The caller has written the tile's pixels.
__device__ bool countIntoParent(Tile t, Tile &parent) {
  const int l = t.level, up = l + 1;
  if (up >= gPyr.numLevels)
    return false;
  const int tx = t.index % gPyr.tilesX[l], ty = t.index / gPyr.tilesX[l];
  const int px = tx / 2, py = ty / 2;
  if (px >= gPyr.tilesX[up] || py >= gPyr.tilesY[up])
    return false;
  // The parent's sources: 2x2 tiles, fewer on the right and bottom edges.
  const int expected = (2 * px + 1 < gPyr.tilesX[l] ? 2 : 1) *
                       (2 * py + 1 < gPyr.tilesY[l] ? 2 : 1);
  parent = Tile{t.frame, up, py * gPyr.tilesX[up] + px};
  const int tilesUp = gPyr.tilesX[up] * gPyr.tilesY[up];
  int *counter = gPyr.quadrantsDone + gPyr.counterOffset[up] +
                 (long long)t.frame * tilesUp + parent.index;
  __threadfence(); // publish this tile's pixels before counting it
  if (atomicAdd(counter, 1) != expected - 1)
    return false;
  __threadfence(); // and see the other sources' pixels
  return true;
}

/// One 32x8 tile of level t.level: the 2x2 box filter of level t.level - 1,
/// which other items wrote.
#pragma cuda_rewrite stage
__device__ void resize(Tile t) {
  const int l = t.level;
  const int w = gPyr.width[l], h = gPyr.height[l], sw = gPyr.width[l - 1];
  unsigned char *frame = gPyr.levels + t.frame * gPyr.framePixels;
  const unsigned char *src = frame + gPyr.levelOffset[l - 1];
  unsigned char *dst = frame + gPyr.levelOffset[l];
  const int x0 = (t.index % gPyr.tilesX[l]) * kTileW;
  const int y0 = (t.index / gPyr.tilesX[l]) * kTileH;
  const int x1 = min(x0 + kTileW, w), y1 = min(y0 + kTileH, h);
  for (int y = y0; y < y1; ++y) {
    const unsigned char *top = src + (long long)(2 * y) * sw + 2 * x0;
    resizeRow(top, top + sw, dst + (long long)y * w + x0, x1 - x0);
  }
  Tile parent;
  if (countIntoParent(t, parent))
    resize(parent);
}

/// Equalizes one 32x8 tile of level 0 with its frame's lookup table and
/// starts the pyramid above it.
#pragma cuda_rewrite stage
__device__ void apply(Tile t) {
  const int w = gPyr.width[0], h = gPyr.height[0];
  const long long pixels = (long long)w * h;
  const unsigned char *gray = gPyr.gray + t.frame * pixels;
  // Written by equalize before it handed this tile on; no L1 of this launch
  // read the frame's table before that, so plain (cached) loads are safe.
  const unsigned char *lut = gPyr.lut + t.frame * kBins;
  unsigned char *out =
      gPyr.levels + t.frame * gPyr.framePixels + gPyr.levelOffset[0];
  const int x0 = (t.index % gPyr.tilesX[0]) * kTileW;
  const int y0 = (t.index / gPyr.tilesX[0]) * kTileH;
  const int x1 = min(x0 + kTileW, w), y1 = min(y0 + kTileH, h);
  for (int y = y0; y < y1; ++y) {
    const long long at = (long long)y * w + x0;
    equalizeRow(gray + at, lut, out + at, x1 - x0);
  }
  Tile parent;
  if (countIntoParent(t, parent))
    resize(parent);
}

/// Histogram equalization of one frame, one warp: the CDF of the frame's
/// histogram (lane r holds bins 8r .. 8r + 7), the lookup table, then every
/// tile of the frame to apply.
#pragma cuda_rewrite stage threads(32)
__device__ void equalize(int frame, int rank) {
  constexpr int kPerLane = kBins / 32;
  const unsigned *hist = gPyr.histogram + frame * kBins;
  unsigned cdf[kPerLane];
  unsigned laneSum = 0;
  for (int b = 0; b < kPerLane; ++b) {
    laneSum += __ldcg(hist + rank * kPerLane + b); // atomics' results: L2
    cdf[b] = laneSum;
  }
  // Inclusive scan of the lanes' sums.
  unsigned inclusive = laneSum;
  for (int offset = 1; offset < 32; offset *= 2) {
    unsigned other = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (rank >= offset)
      inclusive += other;
  }
  const unsigned before = inclusive - laneSum;
  const unsigned total = __shfl_sync(0xffffffffu, inclusive, 31);
  // The CDF never decreases: its smallest nonzero value is its first.
  unsigned cdfMin = 0xffffffffu;
  for (int b = 0; b < kPerLane; ++b) {
    cdf[b] += before;
    if (cdf[b] && cdfMin == 0xffffffffu)
      cdfMin = cdf[b];
  }
  for (int offset = 16; offset > 0; offset /= 2)
    cdfMin = min(cdfMin, __shfl_xor_sync(0xffffffffu, cdfMin, offset));
  unsigned char *lut = gPyr.lut + frame * kBins;
  for (int b = 0; b < kPerLane; ++b) {
    const int v = rank * kPerLane + b;
    lut[v] = lutEntry(v, cdf[b], cdfMin, total);
  }
  // Every apply item reads the whole table, which all lanes wrote.
  __threadfence();
  __syncwarp();
  const int tiles = gPyr.tilesX[0] * gPyr.tilesY[0];
  for (int i = rank; i < tiles; i += 32)
    apply(Tile{frame, 0, i});
}

/// Luma of one 32x8 tile of level 0 (lane r: column r) and its share of the
/// frame's histogram; the frame's last tile equalizes it.
#pragma cuda_rewrite stage threads(32)
__device__ void grayscale(Tile t, int rank) {
  const int w = gPyr.width[0], h = gPyr.height[0];
  const long long pixels = (long long)w * h;
  const unsigned char *rgb = gPyr.rgb + t.frame * pixels * 3;
  unsigned char *gray = gPyr.gray + t.frame * pixels;
  unsigned *hist = gPyr.histogram + t.frame * kBins;
  const int x = (t.index % gPyr.tilesX[0]) * kTileW + rank;
  const int y0 = (t.index / gPyr.tilesX[0]) * kTileH;
  for (int r = 0; r < kTileH; ++r) {
    const int y = y0 + r;
    const bool inside = x < w && y < h;
    int v = kBins; // no value: lanes outside the frame match only each other
    if (inside) {
      const long long at = (long long)y * w + x;
      const unsigned char *p = rgb + at * 3;
      v = luma(p[0], p[1], p[2]);
      gray[at] = static_cast<unsigned char>(v);
    }
    // Smooth images repeat values along a row: one atomic per distinct
    // value of the warp, by its lowest lane, instead of one per pixel.
    const unsigned peers = __match_any_sync(0xffffffffu, v);
    if (inside && rank == __ffs(peers) - 1)
      atomicAdd(hist + v, unsigned(__popc(peers)));
  }
  // Publish this tile's luma and counts (every lane's), then count the tile.
  __threadfence();
  __syncwarp();
  int last = 0;
  if (rank == 0)
    last = atomicAdd(gPyr.tilesCounted + t.frame, 1) ==
           gPyr.tilesX[0] * gPyr.tilesY[0] - 1;
  last = __shfl_sync(0xffffffffu, last, 0);
  if (last) {
    __threadfence(); // see the other tiles' luma and counts
    equalize(t.frame, rank);
  }
}

/// One warp per tile of level 0 of every frame.
__global__ void pyramidBuild(int numFrames) {
  const long long warp =
      (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x % 32);
  const int tiles = gPyr.tilesX[0] * gPyr.tilesY[0];
  if (warp < (long long)numFrames * tiles)
    grayscale(Tile{int(warp / tiles), 0, int(warp % tiles)}, lane);
}

//===-- Host: input frames and the CPU reference --------------------------===//

namespace {

/// One frame: a smooth random picture (bilinear interpolation of a coarse
/// grid of random colours, about 120 pixels apart)
/// with a little noise, in a narrow, frame-dependent brightness range, so
/// that equalization has something to stretch.
void makeFrame(harness::Rng &R, int W, int H, unsigned char *Out) {
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  const double Center = 50 + 150 * Uniform(), Spread = 15 + 45 * Uniform();
  const int GW = W / 120 + 2, GH = H / 120 + 2;
  std::vector<float> Grid(size_t(GW) * GH * 3);
  for (float &G : Grid)
    G = float(Center + Spread * (2 * Uniform() - 1));
  for (int Y = 0; Y < H; ++Y) {
    const float GY = float(Y) * float(GH - 1) / float(std::max(H - 1, 1));
    const int Y0 = std::min(int(GY), GH - 2);
    const float FY = GY - float(Y0);
    for (int X = 0; X < W; ++X) {
      const float GX = float(X) * float(GW - 1) / float(std::max(W - 1, 1));
      const int X0 = std::min(int(GX), GW - 2);
      const float FX = GX - float(X0);
      const uint64_t Noise = R.next();
      for (int C = 0; C < 3; ++C) {
        auto G = [&](int I, int J) {
          return Grid[(size_t(J) * GW + I) * 3 + C];
        };
        float V = (1 - FY) * ((1 - FX) * G(X0, Y0) + FX * G(X0 + 1, Y0)) +
                  FY * ((1 - FX) * G(X0, Y0 + 1) + FX * G(X0 + 1, Y0 + 1));
        V += float(int((Noise >> (8 * C)) % 9) - 4);
        Out[(size_t(Y) * W + X) * 3 + C] =
            static_cast<unsigned char>(std::min(std::max(V, 0.f), 255.f));
      }
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "pyramid", {8, 1920, 1080});
  if (A.size(0) < 1 || A.size(1) < 1 || A.size(2) < 1 ||
      A.size(1) > (1 << 15) || A.size(2) > (1 << 15))
    harness::fail("need frames >= 1 and 1 <= width, height <= 32768");
  const int NumFrames = int(A.size(0)), W = int(A.size(1)), H = int(A.size(2));

  // The levels: halve (rounding down) while the level is >= kMinSide a side.
  Pyramid P{};
  P.width[0] = W;
  P.height[0] = H;
  P.numLevels = 1;
  while (P.numLevels < kMaxLevels && P.width[P.numLevels - 1] >= kMinSide &&
         P.height[P.numLevels - 1] >= kMinSide) {
    P.width[P.numLevels] = P.width[P.numLevels - 1] / 2;
    P.height[P.numLevels] = P.height[P.numLevels - 1] / 2;
    ++P.numLevels;
  }
  long long FramePixels = 0;
  int Counters = 0;
  long long TilesAbove = 0;
  for (int L = 0; L < P.numLevels; ++L) {
    P.tilesX[L] = (P.width[L] + kTileW - 1) / kTileW;
    P.tilesY[L] = (P.height[L] + kTileH - 1) / kTileH;
    P.levelOffset[L] = FramePixels;
    FramePixels += (long long)P.width[L] * P.height[L];
    P.counterOffset[L] = Counters;
    if (L > 0) {
      Counters += NumFrames * P.tilesX[L] * P.tilesY[L];
      TilesAbove += P.tilesX[L] * P.tilesY[L];
    }
  }
  P.framePixels = FramePixels;
  const long long Tiles0 = (long long)P.tilesX[0] * P.tilesY[0];
  if (NumFrames * Tiles0 > kMaxTilesInFlight)
    harness::fail("too many tiles: frames x tiles of a frame must stay "
                  "below 2^19 (the queues hold 2^20 items a stage)");
  const long long Pixels = (long long)W * H;
  std::printf("pyramid: %d frames of %dx%d, %d levels (top %dx%d), %lld "
              "tiles a frame at level 0 and %lld above\n",
              NumFrames, W, H, P.numLevels, P.width[P.numLevels - 1],
              P.height[P.numLevels - 1], Tiles0, TilesAbove);

  harness::Rng R(A.Seed);
  std::vector<unsigned char> Rgb(size_t(NumFrames) * Pixels * 3);
  for (int F = 0; F < NumFrames; ++F)
    makeFrame(R, W, H, Rgb.data() + size_t(F) * Pixels * 3);

  // CPU reference: the same integer steps, frame by frame.
  std::vector<unsigned char> RefLevels(size_t(NumFrames) * FramePixels);
  std::vector<unsigned> RefHist(size_t(NumFrames) * kBins, 0);
  {
    std::vector<unsigned char> Gray(Pixels);
    for (int F = 0; F < NumFrames; ++F) {
      const unsigned char *In = Rgb.data() + size_t(F) * Pixels * 3;
      unsigned *Hist = RefHist.data() + size_t(F) * kBins;
      for (long long I = 0; I < Pixels; ++I) {
        Gray[I] = static_cast<unsigned char>(
            luma(In[3 * I], In[3 * I + 1], In[3 * I + 2]));
        ++Hist[Gray[I]];
      }
      unsigned Cdf[kBins], Sum = 0, CdfMin = 0;
      for (int V = 0; V < kBins; ++V) {
        Sum += Hist[V];
        Cdf[V] = Sum;
        if (!CdfMin)
          CdfMin = Sum;
      }
      unsigned char Lut[kBins];
      for (int V = 0; V < kBins; ++V)
        Lut[V] = lutEntry(V, Cdf[V], CdfMin, Sum);
      unsigned char *Out = RefLevels.data() + size_t(F) * FramePixels;
      for (long long I = 0; I < Pixels; ++I)
        Out[I] = Lut[Gray[I]];
      for (int L = 1; L < P.numLevels; ++L) {
        const unsigned char *Src = Out + P.levelOffset[L - 1];
        unsigned char *Dst = Out + P.levelOffset[L];
        const int SW = P.width[L - 1];
        for (int Y = 0; Y < P.height[L]; ++Y)
          for (int X = 0; X < P.width[L]; ++X) {
            const unsigned char *S = Src + size_t(2 * Y) * SW + 2 * X;
            Dst[size_t(Y) * P.width[L] + X] =
                boxAverage(S[0], S[1], S[SW], S[SW + 1]);
          }
      }
    }
  }

  // The RTC call chain: pyramidBuild -> grayscale -> equalize -> apply ->
  // resize x (levels - 1), 10 frames at 1920x1080. ptxas gives the stages
  // empty frames (resize's self call becomes a loop); 256 bytes a frame
  // leaves room for other compilers, and stays small because the limit is
  // reserved for every resident thread.
  const size_t Frames = 4 + size_t(P.numLevels);
  HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + Frames * 256));

  harness::DeviceArray<unsigned char> DRgb(Rgb);
  harness::DeviceArray<unsigned char> DGray(size_t(NumFrames) * Pixels);
  harness::DeviceArray<unsigned char> DLevels(size_t(NumFrames) * FramePixels);
  harness::DeviceArray<unsigned> DHist(size_t(NumFrames) * kBins);
  harness::DeviceArray<unsigned char> DLut(size_t(NumFrames) * kBins);
  harness::DeviceArray<int> DCounters(size_t(NumFrames) + Counters);
  P.rgb = DRgb.data();
  P.gray = DGray.data();
  P.levels = DLevels.data();
  P.histogram = DHist.data();
  P.lut = DLut.data();
  P.tilesCounted = DCounters.data();
  P.quadrantsDone = DCounters.data() + NumFrames;
  HARNESS_CHECK(cudaMemcpyToSymbol(gPyr, &P, sizeof P));

  const int Block = 256;
  const long long Grid = (NumFrames * Tiles0 * 32 + Block - 1) / Block;
  harness::Result Res = harness::measure(
      A, [&] { DLevels.poison(); },
      [&] {
        // The histograms and the dependency counters start at zero.
        HARNESS_CHECK(cudaMemsetAsync(DHist.data(), 0, DHist.bytes()));
        HARNESS_CHECK(cudaMemsetAsync(DCounters.data(), 0, DCounters.bytes()));
#pragma cuda_rewrite pipeline
        pyramidBuild<<<unsigned(Grid), Block>>>(NumFrames);
      },
      [&] {
        harness::Check C = harness::compareExact(DLevels.download(), RefLevels);
        C.merge(harness::compareExact(DHist.download(), RefHist));
        return C;
      });
  // The frames read once; the levels and the histograms written once.
  double Bytes = double(NumFrames) * (3.0 * Pixels + double(FramePixels) +
                                      kBins * sizeof(unsigned));
  return harness::report(A, Res, Bytes, size_t(NumFrames) * FramePixels);
}
