//===- harness.cuh - Checks and times one sample --------------*- CUDA -*-===//
//
// Every sample's main() uses this, unchanged by the rewrite, so the original
// and the rewritten program are checked and timed the same way
// (docs/design.md section 7):
//
//   harness::Args A = harness::parseArgs(argc, argv, "2d5pt", {8192, 8192});
//   harness::Rng R(A.Seed);                  // fresh input each run; the
//   std::vector<float> In(N);                // seed is printed to replay it
//   R.fill(In, 0.f, 1.f);
//   std::vector<double> Ref = ...;           // float64 CPU reference
//   harness::DeviceArray<float> DIn(In), DOut(N);
//   harness::Result Res = harness::measure(A,
//       [&] { DOut.poison(); },              // before every run, untimed
//       [&] { launch(DIn.data(), DOut.data()); },      // timed
//       [&] { return harness::compareFloat(DOut.download(), Ref, Written); });
//   return harness::report(A, Res, BytesMoved);
//
// Command line of every sample: `<sample> [size...] [--seed=N] [--reps=N]
// [--warmup=N]`, plus the switches a sample declares (parseArgs' last
// argument; for example `--flat` in samples/aggregate/, which selects a
// version without dynamic parallelism). Output ends with exactly one line
//
//   RESULT sample=<name> median_ms=<x> min_ms=<x> max_rel_err=<e>
//          mismatches=<n> unwritten=<n> stray=<n> bytes=<n> [cells=<n>]
//          seed=<n> runs=<n> status=ok|FAIL
//
// (on one line) that bench/run.py parses; cells= (points written per run)
// only from samples that pass it to report(). The exit status is non-zero on
// FAIL. A failing CUDA call prints `RESULT sample=<name> status=FAIL` and
// exits at once.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_SAMPLES_HARNESS_CUH
#define CUDA_REWRITE_SAMPLES_HARNESS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace harness {

//===-- Errors ------------------------------------------------------------===//

/// The sample's name, for the RESULT line of a failure.
inline std::string &sampleName() {
  static std::string Name = "unknown";
  return Name;
}

/// Ends the program with a RESULT line, so that a crash-free failure is
/// never mistaken for a missing sample.
[[noreturn]] inline void fail(const std::string &Message) {
  std::fprintf(stderr, "harness: error: %s\n", Message.c_str());
  std::fflush(stderr);
  std::printf("RESULT sample=%s status=FAIL\n", sampleName().c_str());
  std::fflush(stdout);
  std::exit(1);
}

inline void check(cudaError_t Err, const char *What, const char *File,
                  int Line) {
  if (Err != cudaSuccess)
    fail(std::string(File) + ":" + std::to_string(Line) + ": " + What + ": " +
         cudaGetErrorName(Err) + " (" + cudaGetErrorString(Err) + ")");
}

#define HARNESS_CHECK(Call) ::harness::check((Call), #Call, __FILE__, __LINE__)

//===-- Command line ------------------------------------------------------===//

struct Args {
  std::string Name;
  std::vector<long> Sizes; ///< Positional arguments, else the defaults.
  uint64_t Seed = 0;
  int WarmUp = 3;
  int Reps = 30;
  std::vector<std::string> Switches; ///< Those given, of the declared ones.
  long size(size_t I) const { return Sizes.at(I); }
  bool has(const std::string &Switch) const {
    return std::find(Switches.begin(), Switches.end(), Switch) !=
           Switches.end();
  }
};

[[noreturn]] inline void usage(const char *Problem, const char *Arg) {
  std::fprintf(stderr,
               "harness: %s '%s'\nusage: <sample> [size...] [--seed=N] "
               "[--reps=N] [--warmup=N]\n",
               Problem, Arg);
  std::exit(2);
}

inline unsigned long long parseNumber(const char *Text) {
  char *End = nullptr;
  unsigned long long Value = std::strtoull(Text, &End, 10);
  if (!*Text || *End || *Text == '-')
    usage("not a number:", Text);
  return Value;
}

/// Reads the command line and prints what a rerun needs (the seed and the
/// switches). \p KnownSwitches are the sample's own flags, such as "--flat";
/// Args::has() tells which were given.
inline Args parseArgs(int argc, char **argv, const char *Name,
                      std::vector<long> DefaultSizes,
                      const std::vector<std::string> &KnownSwitches = {}) {
  Args A;
  A.Name = sampleName() = Name;
  A.Sizes = DefaultSizes;
  // Fresh input on every run unless a seed is given: a rewrite that only
  // works for one input must not pass by luck.
  A.Seed = uint64_t(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  size_t Positional = 0;
  for (int I = 1; I < argc; ++I) {
    const char *Arg = argv[I];
    if (!std::strncmp(Arg, "--seed=", 7))
      A.Seed = parseNumber(Arg + 7);
    else if (!std::strncmp(Arg, "--reps=", 7))
      A.Reps = std::max(1, int(parseNumber(Arg + 7)));
    else if (!std::strncmp(Arg, "--warmup=", 9))
      A.WarmUp = int(parseNumber(Arg + 9));
    else if (std::find(KnownSwitches.begin(), KnownSwitches.end(), Arg) !=
             KnownSwitches.end()) {
      if (!A.has(Arg))
        A.Switches.push_back(Arg);
    } else if (Arg[0] != '-' && Positional < A.Sizes.size())
      A.Sizes[Positional++] = long(parseNumber(Arg));
    else
      usage("unexpected argument", Arg);
  }
  std::printf("%s: seed=%llu size=", Name, (unsigned long long)A.Seed);
  for (size_t I = 0; I < A.Sizes.size(); ++I)
    std::printf("%s%ld", I ? "x" : "", A.Sizes[I]);
  std::printf(" (rerun: --seed=%llu", (unsigned long long)A.Seed);
  for (const std::string &Switch : A.Switches)
    std::printf(" %s", Switch.c_str());
  std::printf(")\n");
  return A;
}

//===-- Input -------------------------------------------------------------===//

/// splitmix64: small, fast (inputs reach 10^8 elements) and the same on
/// every platform, so a printed seed replays the same input anywhere.
class Rng {
public:
  explicit Rng(uint64_t Seed) : State(Seed) {}

  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }

  /// Uniform in [Lo, Hi) for floating point, [Lo, Hi] for integers.
  template <typename T> void fill(std::vector<T> &V, T Lo, T Hi) {
    for (T &X : V) {
      if constexpr (std::is_floating_point<T>::value)
        X = T(Lo + (Hi - Lo) * (double(next() >> 11) * 0x1.0p-53));
      else
        X = T(Lo + T(next() % (uint64_t(Hi - Lo) + 1)));
    }
  }

private:
  uint64_t State;
};

//===-- Device memory -----------------------------------------------------===//

/// What unwritten output holds. All-ones bytes are a NaN for float and
/// double, which no correct float result is; integers get 0xa5a5...,
/// rather than -1 or 0, which are common legitimate values.
template <typename T> constexpr unsigned char poisonByte() {
  return std::is_floating_point<T>::value ? 0xff : 0xa5;
}

template <typename T> bool isPoison(const T &X) {
  unsigned char Bytes[sizeof(T)];
  std::memcpy(Bytes, &X, sizeof(T));
  for (unsigned char B : Bytes)
    if (B != poisonByte<T>())
      return false;
  return true;
}

template <typename T> class DeviceArray {
public:
  explicit DeviceArray(size_t N) : N(N) {
    HARNESS_CHECK(cudaMalloc(&Ptr, bytes()));
  }
  explicit DeviceArray(const std::vector<T> &Host) : DeviceArray(Host.size()) {
    upload(Host);
  }
  // Not checked: it may run while exiting after an earlier error.
  ~DeviceArray() { cudaFree(Ptr); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *data() const { return Ptr; }
  size_t size() const { return N; }
  size_t bytes() const { return N * sizeof(T); }

  void upload(const std::vector<T> &Host) {
    if (Host.size() != N)
      fail("upload of the wrong size");
    HARNESS_CHECK(cudaMemcpy(Ptr, Host.data(), bytes(), cudaMemcpyDefault));
  }
  std::vector<T> download() const {
    std::vector<T> Host(N);
    HARNESS_CHECK(cudaMemcpy(Host.data(), Ptr, bytes(), cudaMemcpyDefault));
    return Host;
  }
  /// Stream-ordered, so it can sit between timed runs.
  void poison() {
    HARNESS_CHECK(cudaMemsetAsync(Ptr, poisonByte<T>(), bytes()));
  }

private:
  T *Ptr = nullptr;
  size_t N;
};

//===-- Device-side launches (dynamic parallelism) ------------------------===//
//
// A device-side launch that fails (past the pending-launch limit it fails
// with cudaErrorLaunchPendingCountExceeded, 69) tells only the launching
// thread, through cudaGetLastError(); the child silently never runs. Parents
// pass that error to checkDeviceLaunch(), which keeps the program's first one;
// checkDeviceLaunches() on the host fails the sample if there was one:
//
//   child<<<Grid, Block>>>(...);
//   harness::checkDeviceLaunch(cudaGetLastError());
//
// The state is static: one copy per translation unit, which is what a
// one-file sample needs, and it links with or without -rdc=true.

/// The first failed device-side launch's cudaError_t, 0 while none failed.
static __device__ int FirstDeviceLaunchError;

__device__ inline void checkDeviceLaunch(cudaError_t Err) {
  if (Err != cudaSuccess)
    atomicCAS(&FirstDeviceLaunchError, 0, int(Err));
}

/// Synchronizes with the device (cudaMemcpyFromSymbol does) and fails the
/// sample if any device-side launch failed since the program started.
inline void checkDeviceLaunches() {
  int Err = 0;
  HARNESS_CHECK(cudaMemcpyFromSymbol(&Err, FirstDeviceLaunchError, sizeof Err));
  if (Err)
    fail(std::string("a device-side launch failed: ") +
         cudaGetErrorName(cudaError_t(Err)) + " (" +
         cudaGetErrorString(cudaError_t(Err)) + ")");
}

//===-- Checking ----------------------------------------------------------===//

struct Check {
  double MaxRelErr = 0;  ///< Worst error over the written elements.
  size_t Mismatches = 0; ///< Beyond tolerance (integers: not equal).
  size_t Unwritten = 0;  ///< Expected to be written, still poisoned.
  size_t Stray = 0;      ///< Not expected to be written, but changed.
  size_t FirstBad = SIZE_MAX;
  double FirstBadGot = 0, FirstBadWant = 0;

  bool ok() const { return !Mismatches && !Unwritten && !Stray; }

  void bad(size_t I, double Got, double Want) {
    if (I < FirstBad)
      FirstBad = I, FirstBadGot = Got, FirstBadWant = Want;
  }

  void merge(const Check &O) {
    MaxRelErr = std::max(MaxRelErr, O.MaxRelErr);
    Mismatches = std::max(Mismatches, O.Mismatches);
    Unwritten = std::max(Unwritten, O.Unwritten);
    Stray = std::max(Stray, O.Stray);
    if (O.FirstBad < FirstBad)
      FirstBad = O.FirstBad, FirstBadGot = O.FirstBadGot,
      FirstBadWant = O.FirstBadWant;
  }
};

/// Every element is expected to be written.
struct Everywhere {
  bool operator()(size_t) const { return true; }
};

/// Compares \p Got to a float64 reference by relative error
/// |got - want| / max(|want|, floor), where floor is 1% of the largest
/// |want|: a float sum of terms of size S carries rounding error of about
/// 1e-7 * S however small the sum, so results that cancel to near zero are
/// judged against the data's scale, not against themselves. The rewrites
/// reassociate sums, hence no bitwise comparison. \p Expected(i) says
/// whether element i is to be written; the others must keep their poison.
template <typename T, typename ExpectedFn = Everywhere>
Check compareFloat(const std::vector<T> &Got, const std::vector<double> &Want,
                   ExpectedFn Expected = {}, double Tolerance = 1e-5) {
  static_assert(std::is_floating_point<T>::value, "use compareExact");
  if (Got.size() != Want.size())
    fail("compareFloat: output and reference differ in size");
  double Scale = 0;
  for (size_t I = 0; I < Want.size(); ++I)
    if (Expected(I))
      Scale = std::max(Scale, std::fabs(Want[I]));
  const double Floor = std::max(0.01 * Scale, 1e-300);

  Check C;
  for (size_t I = 0; I < Got.size(); ++I) {
    if (!Expected(I)) {
      if (!isPoison(Got[I]))
        ++C.Stray, C.bad(I, double(Got[I]), NAN);
      continue;
    }
    if (isPoison(Got[I])) {
      ++C.Unwritten, C.bad(I, NAN, Want[I]);
      continue;
    }
    double Err = std::fabs(double(Got[I]) - Want[I]) /
                 std::max(std::fabs(Want[I]), Floor);
    if (!(Err <= Tolerance)) { // NaN and Inf fail too.
      ++C.Mismatches, C.bad(I, double(Got[I]), Want[I]);
      Err = std::isnan(Err) ? INFINITY : Err;
    }
    C.MaxRelErr = std::max(C.MaxRelErr, Err);
  }
  return C;
}

/// Integers: exact. A reference value that happens to equal the poison
/// counts as written.
template <typename T, typename ExpectedFn = Everywhere>
Check compareExact(const std::vector<T> &Got, const std::vector<T> &Want,
                   ExpectedFn Expected = {}) {
  if (Got.size() != Want.size())
    fail("compareExact: output and reference differ in size");
  Check C;
  for (size_t I = 0; I < Got.size(); ++I) {
    if (!Expected(I)) {
      if (!isPoison(Got[I]))
        ++C.Stray, C.bad(I, double(Got[I]), NAN);
    } else if (Got[I] != Want[I]) {
      ++(isPoison(Got[I]) ? C.Unwritten : C.Mismatches);
      C.bad(I, double(Got[I]), double(Want[I]));
    }
  }
  C.MaxRelErr = C.Mismatches ? INFINITY : 0;
  return C;
}

//===-- Timing ------------------------------------------------------------===//

struct Result {
  double MedianMs = 0, MinMs = 0, MaxMs = 0;
  int Runs = 0;
  Check Output;
};

/// Runs the sample: Poison() then Launch() for the first (cold) run, which
/// is checked; A.WarmUp untimed runs; A.Reps runs timed with CUDA events
/// around Launch() alone, each after Poison(); then checks the last run's
/// output as well, which catches races and runs that only work once. Every
/// launch is followed by an error check.
template <typename PoisonFn, typename LaunchFn, typename CheckFn>
Result measure(const Args &A, PoisonFn Poison, LaunchFn Launch,
               CheckFn CheckOutput) {
  Result R;
  Poison();
  Launch();
  HARNESS_CHECK(cudaGetLastError());
  HARNESS_CHECK(cudaDeviceSynchronize());
  R.Output = CheckOutput();

  for (int I = 0; I < A.WarmUp; ++I) {
    Poison();
    Launch();
    HARNESS_CHECK(cudaGetLastError());
  }
  HARNESS_CHECK(cudaDeviceSynchronize());

  cudaEvent_t Start, Stop;
  HARNESS_CHECK(cudaEventCreate(&Start));
  HARNESS_CHECK(cudaEventCreate(&Stop));
  std::vector<float> Ms;
  for (int I = 0; I < A.Reps; ++I) {
    Poison();
    HARNESS_CHECK(cudaEventRecord(Start));
    Launch();
    HARNESS_CHECK(cudaEventRecord(Stop));
    HARNESS_CHECK(cudaGetLastError());
    HARNESS_CHECK(cudaEventSynchronize(Stop));
    float Elapsed = 0;
    HARNESS_CHECK(cudaEventElapsedTime(&Elapsed, Start, Stop));
    Ms.push_back(Elapsed);
  }
  HARNESS_CHECK(cudaEventDestroy(Start));
  HARNESS_CHECK(cudaEventDestroy(Stop));
  HARNESS_CHECK(cudaDeviceSynchronize());
  R.Output.merge(CheckOutput());

  std::sort(Ms.begin(), Ms.end());
  size_t Mid = Ms.size() / 2;
  R.MedianMs = Ms.size() % 2 ? Ms[Mid] : (Ms[Mid - 1] + Ms[Mid]) / 2;
  R.MinMs = Ms.front();
  R.MaxMs = Ms.back();
  R.Runs = int(Ms.size());
  return R;
}

//===-- Report ------------------------------------------------------------===//

/// Prints a summary and the RESULT line; returns the exit status.
/// \p BytesMoved is the least DRAM traffic the computation needs (each input
/// read once, each output written once), the basis of bench/'s GB/s.
/// \p Cells, where given, is the number of points a run computes (a
/// stencil's written points), the basis of bench/'s GCells/s.
inline int report(const Args &A, const Result &R, double BytesMoved,
                  std::optional<size_t> Cells = std::nullopt) {
  const Check &C = R.Output;
  std::printf("%s: median %.4f ms (min %.4f, max %.4f, %d runs), %.1f GB/s",
              A.Name.c_str(), R.MedianMs, R.MinMs, R.MaxMs, R.Runs,
              BytesMoved / (R.MedianMs * 1e-3) / 1e9);
  if (Cells)
    std::printf(", %.2f GCells/s", double(*Cells) / (R.MedianMs * 1e-3) / 1e9);
  std::printf("\n");
  std::printf("%s: max_rel_err %.3g, %zu mismatched, %zu unwritten, %zu "
              "written outside the output\n",
              A.Name.c_str(), C.MaxRelErr, C.Mismatches, C.Unwritten, C.Stray);
  if (!C.ok())
    std::printf("%s: first bad element %zu: got %.9g, want %.9g\n",
                A.Name.c_str(), C.FirstBad, C.FirstBadGot, C.FirstBadWant);
  std::string CellsField =
      Cells ? " cells=" + std::to_string(*Cells) : std::string();
  std::printf("RESULT sample=%s median_ms=%.6f min_ms=%.6f max_rel_err=%.3g "
              "mismatches=%zu unwritten=%zu stray=%zu bytes=%.0f%s seed=%llu "
              "runs=%d status=%s\n",
              A.Name.c_str(), R.MedianMs, R.MinMs, C.MaxRelErr, C.Mismatches,
              C.Unwritten, C.Stray, BytesMoved, CellsField.c_str(),
              (unsigned long long)A.Seed, R.Runs, C.ok() ? "ok" : "FAIL");
  std::fflush(stdout);
  return C.ok() ? 0 : 1;
}

} // namespace harness

#endif // CUDA_REWRITE_SAMPLES_HARNESS_CUH
