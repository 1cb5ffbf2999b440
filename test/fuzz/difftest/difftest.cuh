//===- difftest.cuh - Checks for generated differential programs -*- CUDA -*-===//
//
// Part of cuda-rewrite's differential testing (test/fuzz/difftest/README.md).
// A generated file holds several independent programs; each is a function
//
//   static void run_p3(difftest::Rng &rng, difftest::Check &check);
//
// that builds fresh random input from `rng`, poisons its outputs, runs its
// kernels, and checks every output against a reference computed on the host:
// integers exactly, floating point within a bound that holds for any order of
// evaluation (Approx below), points the reference does not write for still
// holding the poison. The file ends with
//
//   DIFFTEST_MAIN({"p0", run_p0}, {"p1", run_p1}, ...)
//
// and the program prints one line per program:
//
//   DIFFTEST <name> PASS|FAIL|ERROR digest=<hex> <detail>
//
// `digest` hashes the integer outputs (0 for floating point), so that the
// runner can also compare the original and rewritten builds bit for bit.
// `--seed=N` picks the input, `--only=<name>` runs one program. A CUDA error
// prints ERROR and ends the process: the runner then runs the programs that
// did not report one at a time.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_DIFFTEST_CUH
#define CUDA_REWRITE_DIFFTEST_CUH

// nvcc warns (20199) about the `#pragma cuda_rewrite` lines inside kernels
// (statement pragmas, overlap_boundary); the tool reads them, nvcc need not.
#pragma nv_diag_suppress 20199

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace difftest {

/// A 32-bit integer hash (a murmur-style finaliser) on host and device:
/// the pipeline programs' items derive their keys with it.
__host__ __device__ inline unsigned mix(unsigned X) {
  X ^= X >> 16;
  X *= 0x7feb352du;
  X ^= X >> 15;
  X *= 0x846ca68bu;
  X ^= X >> 16;
  return X;
}

/// A launch-aggregation program's expected outputs, computed on the host by
/// running its kernels' bodies in order: plain stores to `out` (a second
/// store to one element is a race in the program itself), wrapping atomic
/// additions to `acc`, and `pout` for values a parent writes.
struct Want {
  const int *in;
  std::vector<int> out, acc, pout;
  std::vector<bool> written;
  long long clashes = 0; ///< Elements written twice: a race.
  Want(const std::vector<int> &input, size_t outs, size_t accs, size_t pouts)
      : in(input.data()), out(outs), acc(accs), pout(pouts), written(outs) {}
  void store(long long at, int v) {
    clashes += written[at];
    out[at] = v;
    written[at] = true;
  }
  /// atomicAdd's wrapping addition.
  void add(long long at, int v) {
    acc[at] = int(unsigned(acc[at]) + unsigned(v));
  }
};

//===-- Errors ------------------------------------------------------------===//

inline const char *&currentProgram() {
  static const char *Name = "?";
  return Name;
}

/// A CUDA error leaves the context unusable: report and end the process.
inline void checkCuda(cudaError_t Err, const char *What, int Line) {
  if (Err == cudaSuccess)
    return;
  std::printf("DIFFTEST %s ERROR digest=0 line %d: %s: %s\n",
              currentProgram(), Line, What, cudaGetErrorName(Err));
  std::fflush(stdout);
  std::exit(3);
}

#define DIFFTEST_CUDA(Call) ::difftest::checkCuda((Call), #Call, __LINE__)

//===-- Input -------------------------------------------------------------===//

/// splitmix64: the same numbers on every host.
struct Rng {
  uint64_t State;
  explicit Rng(uint64_t Seed) : State(Seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t Z = (State += 0x9E3779B97F4A7C15ull);
    Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ull;
    Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBull;
    return Z ^ (Z >> 31);
  }
  /// Uniform in [Lo, Hi).
  double uniform(double Lo, double Hi) {
    return Lo + (Hi - Lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  /// Uniform in [Lo, Hi].
  long long integer(long long Lo, long long Hi) {
    return Lo + static_cast<long long>(next() % static_cast<uint64_t>(Hi - Lo + 1));
  }
  template <class T> void fill(std::vector<T> &V, double Lo, double Hi) {
    for (T &X : V)
      X = std::is_integral<T>::value ? static_cast<T>(integer(
                                           static_cast<long long>(Lo),
                                           static_cast<long long>(Hi)))
                                     : static_cast<T>(uniform(Lo, Hi));
  }
};

//===-- Device buffers ----------------------------------------------------===//

/// The value a kernel never writes: a NaN with a payload for floating point,
/// a pattern for integers.
template <class T> T poisonValue() {
  T P;
  std::memset(&P, 0xA5, sizeof(T));
  if (std::is_same<T, float>::value) {
    uint32_t Bits = 0x7FC0DEADu;
    std::memcpy(&P, &Bits, sizeof(T));
  } else if (std::is_same<T, double>::value) {
    uint64_t Bits = 0x7FF8DEADBEEF0001ull;
    std::memcpy(&P, &Bits, sizeof(T));
  }
  return P;
}

template <class T> bool isPoison(const T &X) {
  T P = poisonValue<T>();
  return std::memcmp(&X, &P, sizeof(T)) == 0;
}

/// An array in device memory with its host copy.
template <class T> struct Buffer {
  std::vector<T> Host;
  T *Device = nullptr;
  explicit Buffer(size_t N) : Host(N) {
    DIFFTEST_CUDA(cudaMalloc(&Device, (N ? N : 1) * sizeof(T)));
  }
  Buffer(const Buffer &) = delete;
  ~Buffer() { cudaFree(Device); }
  size_t size() const { return Host.size(); }
  T *data() { return Device; }
  void upload() {
    DIFFTEST_CUDA(cudaMemcpy(Device, Host.data(), Host.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  }
  void poison() {
    std::vector<T> P(Host.size(), poisonValue<T>());
    DIFFTEST_CUDA(cudaMemcpy(Device, P.data(), P.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  }
  const std::vector<T> &download() {
    DIFFTEST_CUDA(cudaDeviceSynchronize());
    DIFFTEST_CUDA(cudaMemcpy(Host.data(), Device, Host.size() * sizeof(T),
                             cudaMemcpyDeviceToHost));
    return Host;
  }
};

//===-- Floating-point references -----------------------------------------===//

/// A value computed in float64 with what bounds its rounding error in the
/// program's precision: `Mag` is the sum of the magnitudes of the monomials
/// the expression expands to and `Ops` the operations on the longest path.
/// Any evaluation of the same monomials (reassociated, distributed, with or
/// without FMA) in precision u is within gamma(Ops) * Mag of the exact value
/// (Higham, Accuracy and Stability, section 3.1), where
/// gamma(k) = k u / (1 - k u). Weights must be exact in the program's type.
struct Approx {
  double V = 0, Mag = 0;
  int Ops = 0;
  Approx() = default;
  /// An input value: exact.
  Approx(double X) : V(X), Mag(std::fabs(X)) {}
  Approx(double V, double Mag, int Ops) : V(V), Mag(Mag), Ops(Ops) {}
};
inline Approx operator+(const Approx &A, const Approx &B) {
  return {A.V + B.V, A.Mag + B.Mag, std::max(A.Ops, B.Ops) + 1};
}
inline Approx operator-(const Approx &A, const Approx &B) {
  return {A.V - B.V, A.Mag + B.Mag, std::max(A.Ops, B.Ops) + 1};
}
inline Approx operator*(const Approx &A, const Approx &B) {
  return {A.V * B.V, A.Mag * B.Mag, std::max(A.Ops, B.Ops) + 1};
}
inline Approx &operator+=(Approx &A, const Approx &B) { return A = A + B; }

/// Sums of n terms: a chain of n - 1 additions in the reference may be a
/// tree in the program, and the other way round; counting every addition on
/// the path keeps the bound valid for both.
inline Approx sum(const std::vector<Approx> &Terms) {
  Approx S{0, 0, 0};
  int Ops = 0;
  for (const Approx &T : Terms) {
    S.V += T.V;
    S.Mag += T.Mag;
    Ops = std::max(Ops, T.Ops);
  }
  S.Ops = Ops + static_cast<int>(Terms.size());
  return S;
}

template <class T> double unitRoundoff() {
  return std::is_same<T, float>::value ? 0x1.0p-24 : 0x1.0p-53;
}

/// The bound on |computed - exact| for \p A computed in T.
template <class T> double errorBound(const Approx &A) {
  double U = unitRoundoff<T>();
  double K = A.Ops + 1; // the final rounding to T
  double Gamma = K * U / (1 - K * U);
  // Subnormal results lose absolute precision, not relative.
  return Gamma * A.Mag + 8 * std::numeric_limits<T>::denorm_min();
}

//===-- Checks ------------------------------------------------------------===//

/// What one program found.
struct Check {
  long long Checked = 0, Mismatches = 0, Unwritten = 0, Stray = 0;
  uint64_t Digest = 1469598103934665603ull; // FNV-1a
  std::string First; ///< The first mismatch, for the report.

  void mismatch(const char *Array, size_t I, const std::string &What) {
    std::string Text = std::string(Array) + "[" + std::to_string(I) + "]: " + What;
    if (First.empty())
      First = Text;
    // DIFFTEST_VERBOSE=<n>: the first n mismatches of each program, for
    // debugging a reproducer.
    static const long long Verbose =
        std::getenv("DIFFTEST_VERBOSE") ? std::atoll(std::getenv("DIFFTEST_VERBOSE")) : 0;
    if (Mismatches + Unwritten + Stray <= Verbose)
      std::fprintf(stderr, "%s: %s\n", currentProgram(), Text.c_str());
  }
  template <class T> void hash(const T &X) {
    const unsigned char *B = reinterpret_cast<const unsigned char *>(&X);
    for (size_t K = 0; K < sizeof(T); ++K)
      Digest = (Digest ^ B[K]) * 1099511628211ull;
  }
  bool passed() const { return !Mismatches && !Unwritten && !Stray; }
};

/// Integer outputs: every written point equal to \p Want, every other still
/// poisoned. \p Written may be empty (all written).
template <class T>
void expectExact(Check &C, const char *Array, const std::vector<T> &Got,
                 const std::vector<T> &Want,
                 const std::vector<bool> &Written = {}) {
  for (size_t I = 0; I < Got.size(); ++I) {
    C.hash(Got[I]);
    ++C.Checked;
    bool W = Written.empty() || Written[I];
    if (!W) {
      if (!isPoison(Got[I]))
        ++C.Stray, C.mismatch(Array, I, "written, should not be");
    } else if (isPoison(Got[I]) && !isPoison(Want[I])) {
      ++C.Unwritten, C.mismatch(Array, I, "not written");
    } else if (std::memcmp(&Got[I], &Want[I], sizeof(T)) != 0) {
      ++C.Mismatches;
      C.mismatch(Array, I,
                 "got " + std::to_string(static_cast<long long>(Got[I])) +
                     ", want " +
                     std::to_string(static_cast<long long>(Want[I])));
    }
  }
}

/// A launch-aggregation program's `out` against its host Want; an element
/// the reference itself stored twice (a race in the program) fails it too.
inline void expectWant(Check &C, const Want &W, const std::vector<int> &Out) {
  if (W.clashes) {
    ++C.Mismatches;
    C.mismatch("reference", 0, "an element is written twice");
  }
  expectExact(C, "out", Out, W.out, W.written);
}

/// Floating-point outputs: every written point within its error bound of
/// the float64 reference, every other still poisoned.
template <class T>
void expectNear(Check &C, const char *Array, const std::vector<T> &Got,
                const std::vector<Approx> &Want,
                const std::vector<bool> &Written = {}) {
  for (size_t I = 0; I < Got.size(); ++I) {
    ++C.Checked;
    bool W = Written.empty() || Written[I];
    if (!W) {
      if (!isPoison(Got[I]))
        ++C.Stray, C.mismatch(Array, I, "written, should not be");
      continue;
    }
    if (isPoison(Got[I])) {
      ++C.Unwritten, C.mismatch(Array, I, "not written");
      continue;
    }
    double Err = std::fabs(static_cast<double>(Got[I]) - Want[I].V);
    double Bound = errorBound<T>(Want[I]);
    if (!(Err <= Bound)) {
      ++C.Mismatches;
      char Text[160];
      std::snprintf(Text, sizeof(Text), "got %.9g, want %.9g (error %.3g > %.3g)",
                    static_cast<double>(Got[I]), Want[I].V, Err, Bound);
      C.mismatch(Array, I, Text);
    }
  }
}

//===-- Driver ------------------------------------------------------------===//

using RunFn = void (*)(Rng &, Check &);
struct Program {
  const char *Name;
  RunFn Run;
};

inline int runPrograms(int Argc, char **Argv, const Program *Programs,
                       int Count) {
  uint64_t Seed = 1;
  const char *Only = nullptr;
  for (int I = 1; I < Argc; ++I) {
    if (!std::strncmp(Argv[I], "--seed=", 7))
      Seed = std::strtoull(Argv[I] + 7, nullptr, 10);
    else if (!std::strncmp(Argv[I], "--only=", 7))
      Only = Argv[I] + 7;
    else {
      std::fprintf(stderr, "usage: %s [--seed=N] [--only=NAME]\n", Argv[0]);
      return 2;
    }
  }
  int Failed = 0;
  for (int P = 0; P < Count; ++P) {
    if (Only && std::strcmp(Only, Programs[P].Name))
      continue;
    currentProgram() = Programs[P].Name;
    // Each program's input depends on the seed and its name only.
    uint64_t H = Seed;
    for (const char *C = Programs[P].Name; *C; ++C)
      H = H * 131 + static_cast<unsigned char>(*C);
    Rng R(H);
    Check C;
    Programs[P].Run(R, C);
    DIFFTEST_CUDA(cudaDeviceSynchronize());
    DIFFTEST_CUDA(cudaGetLastError());
    if (!C.Checked)
      C.First = "checked nothing", ++C.Mismatches;
    std::printf("DIFFTEST %s %s digest=%016llx checked=%lld mismatches=%lld "
                "unwritten=%lld stray=%lld %s\n",
                Programs[P].Name, C.passed() ? "PASS" : "FAIL",
                static_cast<unsigned long long>(C.Digest), C.Checked,
                C.Mismatches, C.Unwritten, C.Stray, C.First.c_str());
    std::fflush(stdout);
    Failed += !C.passed();
  }
  return Failed ? 1 : 0;
}

} // namespace difftest

#define DIFFTEST_MAIN(...)                                                     \
  int main(int Argc, char **Argv) {                                            \
    static const ::difftest::Program Programs[] = {__VA_ARGS__};               \
    return ::difftest::runPrograms(                                            \
        Argc, Argv, Programs,                                                  \
        static_cast<int>(sizeof(Programs) / sizeof(Programs[0])));            \
  }

#endif // CUDA_REWRITE_DIFFTEST_CUH
