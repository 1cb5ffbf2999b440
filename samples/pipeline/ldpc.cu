//===- ldpc.cu - Min-sum LDPC decoding as a loop of pipeline stages -------===//
//
// Decodes a batch of noisy codewords of a regular (3,6) LDPC code (Gallager)
// with the flooding min-sum algorithm: the `LDPC` benchmark of VersaPipe
// (Table 1: 4 stages, a loop, after the GPU decoder of its reference [18]).
//
// The code: block length 2048 bits, 1024 parity checks; every bit is in 3
// checks and every check holds 6 bits. Its parity-check matrix is built from
// the seed (random socket matching, then random swaps until there are no
// double edges and no 4-cycles). Each codeword is a random valid codeword
// (the host reduces H to row echelon form over GF(2) and picks the free bits
// at random), sent as BPSK (+1 for a 0 bit) over an AWGN channel at the
// given Eb/N0; the decoder gets the received samples as floats.
//
// Everything the decoder computes is an integer: the channel LLR 2y/sigma^2
// is quantized to steps of 1/4 (one float multiply, round to nearest even,
// saturated to +-31), messages are 8-bit and saturated to +-63, and the check
// nodes use offset min-sum (offset 2 steps). So the CPU reference agrees
// exactly, whatever order the items run in: the decoded bits and the
// iteration count of every codeword are compared exactly.
//
// One item (a Frame: codeword, iteration) per codeword runs around the loop
//
//   initialize -> checkToVariable -> variableToCheck -> decide
//                      ^                                  |
//                      +------ not all checks satisfied --+
//
// All four stages are threads(32): a warp shares a codeword. (decide could
// be one thread's work, but it hands the codeword back to checkToVariable,
// which n = 32 threads must call together; the entry kernel must call
// initialize, which calls checkToVariable, with 32 threads too.) They differ
// in cost and in how they touch memory:
//  - initialize streams the codeword's 8 KiB of float samples, quantizes them
//    and gathers the LLRs into the check-ordered message slots (once);
//  - checkToVariable is the arithmetic: one 8-byte load and store per check
//    (coalesced), a min/second-min/sign reduction in registers;
//  - variableToCheck is scattered: per bit, 3 slot indices, 3 byte loads and
//    3 byte stores all over the codeword's messages, and a ballot per 32 bits
//    for the hard decision;
//  - decide is a short, latency-bound syndrome check (6 random bit lookups
//    per check) that stops at the first 32 checks with a failure, which is
//    where most iterations end; only a converged (or given up) codeword pays
//    for all 1024 checks and the write of its decoded bits.
// Codewords converge after different numbers of iterations (at the default
// 2 dB: 11 on average, most in 6-14, about 2% not within 20), so the loop's
// population shrinks from iteration to iteration.
//
// Messages live in global memory per codeword, reached through the
// file-scope __device__ struct gLdpc: 1024 checks x 8 one-byte slots (6 used,
// padded so a check's messages are one 64-bit word). A slot holds the
// variable-to-check message until checkToVariable overwrites it with the
// check-to-variable message and variableToCheck overwrites it back: each slot
// belongs to one check and one bit, so both updates work in place.
//
// In the RTC original every hand-off is a call, so a codeword's warp goes
// 2 + 3 x iterations calls deep (62 frames at the default 20 iterations, a
// few dozen bytes each): main raises the device stack limit for that.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/pipeline/ldpc.cu -lcudadevrt -o ldpc
//   ./ldpc [codewords [max_iterations [ebn0_centi_dB]]] [--seed=N]
//
// Default: 4096 codewords, at most 20 iterations, Eb/N0 = 2.00 dB (offset
// min-sum's waterfall; 1.5 dB leaves half the codewords undecoded, 3 dB
// decodes all in about 5 iterations).
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <algorithm>
#include <array>
#include <cmath>

/// Bits per codeword (variable nodes) and parity checks (check nodes).
constexpr int kN = 2048;
constexpr int kM = kN / 2;
constexpr int kVarDegree = 3;
constexpr int kCheckDegree = 6;
/// Message slots per check: 6 used, padded to one 64-bit word.
constexpr int kSlotsPerCheck = 8;
/// 32-bit words of a codeword's hard decision.
constexpr int kWords = kN / 32;
/// Fixed point: LLR steps of 1/4; channel LLRs saturate at +-31, messages at
/// +-63 (they fit in a signed byte); offset min-sum subtracts 2 steps.
constexpr float kLlrStep = 0.25f;
constexpr int kChannelMax = 31;
constexpr int kMessageMax = 63;
constexpr int kOffset = 2;
/// Beyond this the RTC call chain needs an unreasonable device stack.
constexpr int kMaxSupportedIterations = 50;

/// The item: one codeword on its way around the decoding loop.
struct Frame {
  int codeword;
  int iteration; ///< 1 for the first pass of check and variable updates.
};

/// The decoder's global data, set once by the host.
struct Decoder {
  const float *received;         ///< [codeword][kN] channel samples
  signed char *channel;          ///< [codeword][kN] quantized channel LLRs
  unsigned long long *messages;  ///< [codeword][kM] 8 byte slots per check
  unsigned *hard;                ///< [codeword][kWords] hard decision
  const unsigned short *slotVar; ///< [kM * 8] the bit of each check slot
  const unsigned short *varSlot; ///< [kN * 3] the check slots of each bit
  unsigned *decoded;             ///< [codeword][kWords] output bits
  int *iterations;               ///< [codeword] output, < 0: gave up
  float llrScale;                ///< 2 / (sigma^2 * kLlrStep)
  int maxIterations;
};

__device__ Decoder gLdpc;

//===-- Fixed-point arithmetic, shared by the GPU and the CPU reference ---===//

/// The quantized channel LLR of sample \p y: one float multiply, rounded to
/// the nearest integer (ties to even) on both sides, so they agree bit for
/// bit.
__host__ __device__ inline int quantizeLlr(float y, float scale) {
#ifdef __CUDA_ARCH__
  int q = __float2int_rn(__fmul_rn(y, scale));
#else
  float product = y * scale;
  int q = int(std::nearbyint(product));
#endif
  return q < -kChannelMax ? -kChannelMax : q > kChannelMax ? kChannelMax : q;
}

__host__ __device__ inline int saturate(int x) {
  return x < -kMessageMax ? -kMessageMax : x > kMessageMax ? kMessageMax : x;
}

__host__ __device__ inline int slotByte(unsigned long long word, int k) {
  return int(static_cast<signed char>(word >> (8 * k)));
}

__host__ __device__ inline unsigned long long packByte(int value, int k) {
  return static_cast<unsigned long long>(static_cast<unsigned char>(value))
         << (8 * k);
}

/// Offset min-sum update of one check: its 6 incoming variable-to-check
/// messages (bytes 0-5 of \p in) become the 6 outgoing check-to-variable
/// messages. Outgoing k: the product of the other signs times the smallest
/// other magnitude, less the offset (not below 0).
__host__ __device__ inline unsigned long long
checkNodeUpdate(unsigned long long in) {
  int min1 = 255, min2 = 255, minAt = 0, signs = 0, parity = 0;
  for (int k = 0; k < kCheckDegree; ++k) {
    int m = slotByte(in, k);
    int negative = m < 0;
    int magnitude = negative ? -m : m;
    signs |= negative << k;
    parity ^= negative;
    if (magnitude < min1) {
      min2 = min1;
      min1 = magnitude;
      minAt = k;
    } else if (magnitude < min2) {
      min2 = magnitude;
    }
  }
  unsigned long long out = 0;
  for (int k = 0; k < kCheckDegree; ++k) {
    int magnitude = (k == minAt ? min2 : min1) - kOffset;
    magnitude = magnitude < 0 ? 0 : magnitude;
    int negative = parity ^ ((signs >> k) & 1);
    out |= packByte(negative ? -magnitude : magnitude, k);
  }
  return out;
}

/// Variable node update of one bit: its 3 incoming check-to-variable messages
/// \p c become outgoing variable-to-check messages (the channel LLR plus the
/// other two, saturated). Returns the hard decision: 1 when the total LLR is
/// negative.
__host__ __device__ inline bool variableNodeUpdate(int channel, int c[3]) {
  int total = channel + c[0] + c[1] + c[2];
  for (int j = 0; j < kVarDegree; ++j)
    c[j] = saturate(total - c[j]);
  return total < 0;
}

//===-- Stages ------------------------------------------------------------===//

// The stages hand codewords around a cycle, so one of them is declared
// ahead; the stage pragma marks its definition.
__device__ void checkToVariable(Frame f, int rank);

/// Quantizes the codeword's channel samples, then fills every check slot with
/// its bit's channel LLR: the first variable-to-check messages.
#pragma cuda_rewrite stage threads(32)
__device__ void initialize(Frame f, int rank) {
  const size_t cw = size_t(f.codeword);
  const float4 *received =
      reinterpret_cast<const float4 *>(gLdpc.received + cw * kN);
  signed char *channel = gLdpc.channel + cw * kN;
  char4 *channel4 = reinterpret_cast<char4 *>(channel);
  const float scale = gLdpc.llrScale;
  for (int i = rank; i < kN / 4; i += 32) {
    float4 y = received[i];
    channel4[i] = make_char4(quantizeLlr(y.x, scale), quantizeLlr(y.y, scale),
                             quantizeLlr(y.z, scale), quantizeLlr(y.w, scale));
  }
  // The gather below reads LLRs that the other lanes wrote.
  __syncwarp();
  unsigned long long *messages = gLdpc.messages + cw * kM;
  for (int c = rank; c < kM; c += 32) {
    unsigned long long word = 0;
    for (int k = 0; k < kCheckDegree; ++k)
      word |= packByte(channel[gLdpc.slotVar[kSlotsPerCheck * c + k]], k);
    messages[c] = word;
  }
  // The next stage's lanes (a different warp, after a rewrite) read every
  // lane's messages: publish them before rank 0 hands the codeword on.
  __threadfence();
  __syncwarp();
  checkToVariable(f, rank);
}

/// Syndrome check of the hard decision. A codeword that fails a check goes
/// around the loop again, up to maxIterations; otherwise its decision is the
/// output, with the iteration count (negated if it gave up).
#pragma cuda_rewrite stage threads(32)
__device__ void decide(Frame f, int rank) {
  const size_t cw = size_t(f.codeword);
  const unsigned *hard = gLdpc.hard + cw * kWords;
  // `satisfied` is the same in every lane (a warp vote), so the loop and the
  // vote in it stay converged.
  bool satisfied = true;
  for (int i = 0; i < kM / 32 && satisfied; ++i) {
    const int c = 32 * i + rank;
    unsigned parity = 0;
    for (int k = 0; k < kCheckDegree; ++k) {
      unsigned v = gLdpc.slotVar[kSlotsPerCheck * c + k];
      parity ^= hard[v / 32] >> (v % 32);
    }
    satisfied = !__any_sync(0xffffffffu, parity & 1);
  }
  if (!satisfied && f.iteration < gLdpc.maxIterations) {
    checkToVariable(Frame{f.codeword, f.iteration + 1}, rank);
    return;
  }
  unsigned *decoded = gLdpc.decoded + cw * kWords;
  for (int i = rank; i < kWords; i += 32)
    decoded[i] = hard[i];
  if (rank == 0)
    gLdpc.iterations[cw] = satisfied ? f.iteration : -f.iteration;
}

/// Variable update of every bit of the codeword, in place, and its hard
/// decision: lane r owns bits 32i + r, so a ballot is word i of the decision.
#pragma cuda_rewrite stage threads(32)
__device__ void variableToCheck(Frame f, int rank) {
  const size_t cw = size_t(f.codeword);
  signed char *slots =
      reinterpret_cast<signed char *>(gLdpc.messages + cw * kM);
  const signed char *channel = gLdpc.channel + cw * kN;
  unsigned *hard = gLdpc.hard + cw * kWords;
  for (int i = 0; i < kWords; ++i) {
    const int v = 32 * i + rank;
    int at[kVarDegree], c[kVarDegree];
    for (int j = 0; j < kVarDegree; ++j) {
      at[j] = gLdpc.varSlot[kVarDegree * v + j];
      c[j] = slots[at[j]];
    }
    bool bit = variableNodeUpdate(channel[v], c);
    for (int j = 0; j < kVarDegree; ++j)
      slots[at[j]] = static_cast<signed char>(c[j]);
    unsigned word = __ballot_sync(0xffffffffu, bit);
    if (rank == 0)
      hard[i] = word;
  }
  __threadfence(); // as in initialize
  __syncwarp();
  decide(f, rank);
}

/// Min-sum update of every check of the codeword, in place: each lane owns
/// checks rank, rank + 32, ..., whose 8 slots are one coalesced word.
#pragma cuda_rewrite stage threads(32)
__device__ void checkToVariable(Frame f, int rank) {
  unsigned long long *messages = gLdpc.messages + size_t(f.codeword) * kM;
  for (int c = rank; c < kM; c += 32)
    messages[c] = checkNodeUpdate(messages[c]);
  __threadfence(); // as in initialize
  __syncwarp();
  variableToCheck(f, rank);
}

/// One warp per codeword.
__global__ void ldpcDecode(int numCodewords) {
  const int warp = int((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = int(threadIdx.x % 32);
  if (warp < numCodewords)
    initialize(Frame{warp, 1}, lane);
}

//===-- Host: the code, the channel and the CPU reference -----------------===//

namespace {

/// The Tanner graph: bit v is in checks VarChecks[3v .. 3v + 2]; slot k of
/// check c (in order of its bits) is SlotVar[8c + k] and bit v's j-th check
/// slot is VarSlot[3v + j].
struct Code {
  std::vector<int> VarChecks;
  std::vector<unsigned short> SlotVar, VarSlot;
};

/// Random regular (3,6) code: a random matching of bit sockets to check
/// sockets, then random swaps of the sockets of any bit that has a double
/// edge or shares two checks with another bit (a 4-cycle, which hurts
/// min-sum), until there are none.
Code makeCode(harness::Rng &R) {
  const int E = kN * kVarDegree;
  std::vector<int> Sock(E);
  for (int I = 0; I < E; ++I)
    Sock[I] = I / kCheckDegree;
  for (int I = E - 1; I > 0; --I)
    std::swap(Sock[I], Sock[R.next() % uint64_t(I + 1)]);

  std::vector<std::vector<int>> CheckVars(kM);
  for (int Pass = 0;; ++Pass) {
    if (Pass == 10000)
      harness::fail("could not build a (3,6) code without 4-cycles");
    for (auto &L : CheckVars)
      L.clear();
    for (int I = 0; I < E; ++I)
      CheckVars[Sock[I]].push_back(I / kVarDegree);
    bool Clean = true;
    for (int V = 0; V < kN; ++V) {
      const int *C = &Sock[kVarDegree * V];
      bool Bad = C[0] == C[1] || C[0] == C[2] || C[1] == C[2];
      for (int A = 0; A < kVarDegree && !Bad; ++A)
        for (int B = A + 1; B < kVarDegree && !Bad; ++B)
          for (int U : CheckVars[C[A]])
            if (U != V &&
                std::count(CheckVars[C[B]].begin(), CheckVars[C[B]].end(), U))
              Bad = true;
      if (!Bad)
        continue;
      // The lists are stale after a swap; the next pass checks again.
      Clean = false;
      int J = int(R.next() % kVarDegree), Other;
      do
        Other = int(R.next() % uint64_t(E));
      while (Other / kVarDegree == V);
      std::swap(Sock[kVarDegree * V + J], Sock[Other]);
    }
    if (Clean)
      break;
  }

  Code Cd;
  Cd.VarChecks = Sock;
  Cd.SlotVar.assign(size_t(kM) * kSlotsPerCheck, 0);
  Cd.VarSlot.assign(E, 0);
  std::vector<int> Fill(kM, 0);
  for (int V = 0; V < kN; ++V)
    for (int J = 0; J < kVarDegree; ++J) {
      int C = Sock[kVarDegree * V + J];
      int Slot = kSlotsPerCheck * C + Fill[C]++;
      Cd.SlotVar[Slot] = (unsigned short)V;
      Cd.VarSlot[kVarDegree * V + J] = (unsigned short)Slot;
    }
  return Cd;
}

constexpr int kRowWords = kN / 64;
using BitRow = std::array<uint64_t, kRowWords>;

/// Random valid codewords: H in reduced row echelon form over GF(2); the
/// non-pivot bits are free, each pivot bit is the parity of its row's free
/// bits.
class Encoder {
public:
  explicit Encoder(const Code &Cd) : Rows(kM) {
    for (auto &Row : Rows)
      Row.fill(0);
    for (int V = 0; V < kN; ++V)
      for (int J = 0; J < kVarDegree; ++J) {
        int C = Cd.VarChecks[kVarDegree * V + J];
        Rows[C][V / 64] |= 1ull << (V % 64);
      }
    FreeMask.fill(~0ull);
    int Rank = 0;
    for (int Col = 0; Col < kN && Rank < kM; ++Col) {
      const uint64_t Bit = 1ull << (Col % 64);
      int Pivot = Rank;
      while (Pivot < kM && !(Rows[Pivot][Col / 64] & Bit))
        ++Pivot;
      if (Pivot == kM)
        continue;
      std::swap(Rows[Rank], Rows[Pivot]);
      for (int Row = 0; Row < kM; ++Row)
        if (Row != Rank && (Rows[Row][Col / 64] & Bit))
          for (int W = 0; W < kRowWords; ++W)
            Rows[Row][W] ^= Rows[Rank][W];
      PivotCols.push_back(Col);
      FreeMask[Col / 64] &= ~Bit;
      ++Rank;
    }
    Rows.resize(Rank);
  }

  int rank() const { return int(PivotCols.size()); }

  /// A random codeword, as bits.
  void encode(harness::Rng &R, BitRow &X) const {
    for (int W = 0; W < kRowWords; ++W)
      X[W] = R.next() & FreeMask[W];
    for (size_t P = 0; P < PivotCols.size(); ++P) {
      int Parity = 0;
      for (int W = 0; W < kRowWords; ++W)
        Parity ^= __builtin_popcountll(Rows[P][W] & X[W]);
      X[PivotCols[P] / 64] |= uint64_t(Parity & 1) << (PivotCols[P] % 64);
    }
  }

private:
  std::vector<BitRow> Rows;
  std::vector<int> PivotCols;
  BitRow FreeMask;
};

/// The CPU reference decoder: the same fixed-point flooding min-sum, one
/// codeword at a time. Writes the decoded words and returns the iteration
/// count (negated if it gave up).
int decodeReference(const Code &Cd, const float *Received, float Scale,
                    int MaxIterations, unsigned *Decoded) {
  signed char Channel[kN];
  unsigned long long Messages[kM];
  signed char *Slots = reinterpret_cast<signed char *>(Messages);
  for (int V = 0; V < kN; ++V)
    Channel[V] = (signed char)quantizeLlr(Received[V], Scale);
  for (int C = 0; C < kM; ++C) {
    unsigned long long Word = 0;
    for (int K = 0; K < kCheckDegree; ++K)
      Word |= packByte(Channel[Cd.SlotVar[kSlotsPerCheck * C + K]], K);
    Messages[C] = Word;
  }
  for (int It = 1;; ++It) {
    for (int C = 0; C < kM; ++C)
      Messages[C] = checkNodeUpdate(Messages[C]);
    std::fill(Decoded, Decoded + kWords, 0u);
    for (int V = 0; V < kN; ++V) {
      int Cv[kVarDegree];
      for (int J = 0; J < kVarDegree; ++J)
        Cv[J] = Slots[Cd.VarSlot[kVarDegree * V + J]];
      bool Bit = variableNodeUpdate(Channel[V], Cv);
      for (int J = 0; J < kVarDegree; ++J)
        Slots[Cd.VarSlot[kVarDegree * V + J]] = (signed char)Cv[J];
      Decoded[V / 32] |= unsigned(Bit) << (V % 32);
    }
    bool Satisfied = true;
    for (int C = 0; C < kM && Satisfied; ++C) {
      unsigned Parity = 0;
      for (int K = 0; K < kCheckDegree; ++K) {
        unsigned V = Cd.SlotVar[kSlotsPerCheck * C + K];
        Parity ^= Decoded[V / 32] >> (V % 32);
      }
      Satisfied = !(Parity & 1);
    }
    if (Satisfied)
      return It;
    if (It == MaxIterations)
      return -It;
  }
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "ldpc", {4096, 20, 200});
  if (A.size(0) < 1 || A.size(0) > (1 << 18) || A.size(1) < 1 ||
      A.size(1) > kMaxSupportedIterations || A.size(2) > 1000)
    harness::fail("need 1 <= codewords <= 2^18, 1 <= max_iterations <= 50 "
                  "and ebn0_centi_dB <= 1000");
  const int NumCodewords = int(A.size(0)), MaxIterations = int(A.size(1));
  const double EbN0Db = double(A.size(2)) / 100;

  harness::Rng R(A.Seed);
  const Code Cd = makeCode(R);
  const Encoder Enc(Cd);

  // BPSK over AWGN at the design rate 1/2: sigma^2 = 1 / (2 R Eb/N0).
  const double Sigma2 = 1.0 / (2 * 0.5 * std::pow(10.0, EbN0Db / 10));
  const double Sigma = std::sqrt(Sigma2);
  const float Scale = float(2 / Sigma2 / kLlrStep);
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  auto Gaussian = [&] {
    double U1 = std::max(Uniform(), 1e-300), U2 = Uniform();
    return std::sqrt(-2 * std::log(U1)) * std::cos(2 * M_PI * U2);
  };
  std::vector<float> Received(size_t(NumCodewords) * kN);
  std::vector<unsigned> Sent(size_t(NumCodewords) * kWords);
  for (int Cw = 0; Cw < NumCodewords; ++Cw) {
    BitRow X;
    Enc.encode(R, X);
    for (int V = 0; V < kN; ++V) {
      int Bit = int(X[V / 64] >> (V % 64)) & 1;
      Sent[size_t(Cw) * kWords + V / 32] |= unsigned(Bit) << (V % 32);
      Received[size_t(Cw) * kN + V] =
          float((Bit ? -1.0 : 1.0) + Sigma * Gaussian());
    }
  }
  // Every codeword satisfies every check, or the encoder is wrong.
  for (int Cw = 0; Cw < NumCodewords; ++Cw)
    for (int C = 0; C < kM; ++C) {
      unsigned Parity = 0;
      for (int K = 0; K < kCheckDegree; ++K) {
        unsigned V = Cd.SlotVar[kSlotsPerCheck * C + K];
        Parity ^= Sent[size_t(Cw) * kWords + V / 32] >> (V % 32);
      }
      if (Parity & 1)
        harness::fail("the encoder made an invalid codeword");
    }

  std::vector<unsigned> RefDecoded(size_t(NumCodewords) * kWords);
  std::vector<int> RefIterations(NumCodewords);
  long TotalIterations = 0, Failed = 0, BitErrors = 0, FrameErrors = 0;
  std::vector<int> Histogram(MaxIterations + 1, 0);
  for (int Cw = 0; Cw < NumCodewords; ++Cw) {
    int It = decodeReference(Cd, &Received[size_t(Cw) * kN], Scale,
                             MaxIterations, &RefDecoded[size_t(Cw) * kWords]);
    RefIterations[Cw] = It;
    TotalIterations += std::abs(It);
    Failed += It < 0;
    ++Histogram[std::abs(It)];
    long Errors = 0;
    for (int W = 0; W < kWords; ++W)
      Errors += __builtin_popcount(RefDecoded[size_t(Cw) * kWords + W] ^
                                   Sent[size_t(Cw) * kWords + W]);
    BitErrors += Errors;
    FrameErrors += Errors > 0;
  }
  std::printf("ldpc: (3,6) code, n=%d, rank %d; %d codewords at Eb/N0 %.2f "
              "dB; %.2f iterations on average, %ld gave up after %d, %ld "
              "frame errors, BER %.2e\n",
              kN, Enc.rank(), NumCodewords, EbN0Db,
              double(TotalIterations) / NumCodewords, Failed, MaxIterations,
              FrameErrors, double(BitErrors) / (double(NumCodewords) * kN));
  std::printf("ldpc: codewords finishing after 1..%d iterations:",
              MaxIterations);
  for (int I = 1; I <= MaxIterations; ++I)
    std::printf(" %d", Histogram[I]);
  std::printf("\n");

  // The RTC call chain: ldpcDecode -> initialize -> (checkToVariable ->
  // variableToCheck -> decide) x iterations, 62 frames deep at 20 iterations.
  // ptxas gives the stages 8-16 byte frames (saved registers); 128 bytes a
  // frame leaves room for other compilers, and stays small because the
  // runtime reserves the limit for every resident thread.
  const size_t Frames = 2 + 3 * size_t(MaxIterations);
  HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + Frames * 128));

  harness::DeviceArray<float> DReceived(Received);
  harness::DeviceArray<signed char> DChannel(size_t(NumCodewords) * kN);
  harness::DeviceArray<unsigned long long> DMessages(size_t(NumCodewords) * kM);
  harness::DeviceArray<unsigned> DHard(size_t(NumCodewords) * kWords);
  harness::DeviceArray<unsigned short> DSlotVar(Cd.SlotVar),
      DVarSlot(Cd.VarSlot);
  harness::DeviceArray<unsigned> DDecoded(size_t(NumCodewords) * kWords);
  harness::DeviceArray<int> DIterations(NumCodewords);
  Decoder D{DReceived.data(), DChannel.data(),    DMessages.data(),
            DHard.data(),     DSlotVar.data(),    DVarSlot.data(),
            DDecoded.data(),  DIterations.data(), Scale,
            MaxIterations};
  HARNESS_CHECK(cudaMemcpyToSymbol(gLdpc, &D, sizeof D));

  const int Block = 256;
  const int Grid = int((size_t(NumCodewords) * 32 + Block - 1) / Block);
  harness::Result Res = harness::measure(
      A,
      [&] {
        DDecoded.poison();
        DIterations.poison();
      },
      [&] {
#pragma cuda_rewrite pipeline
        ldpcDecode<<<Grid, Block>>>(NumCodewords);
      },
      [&] {
        harness::Check C =
            harness::compareExact(DDecoded.download(), RefDecoded);
        C.merge(harness::compareExact(DIterations.download(), RefIterations));
        return C;
      });
  // The samples read once, the decoded bits and the iteration counts written
  // once.
  double Bytes =
      double(NumCodewords) * (kN * sizeof(float) + kN / 8 + sizeof(int));
  return harness::report(A, Res, Bytes);
}
