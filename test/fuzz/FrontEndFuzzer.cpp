//===- FrontEndFuzzer.cpp - libFuzzer over parsing, analysis and passes ---===//
//
// Each input is a CUDA source. It goes through the tool's own per-file code
// path (processFile: host parse, device parse when the file tests
// __CUDA_ARCH__, pragmas, candidates, every pass, edits merged and applied)
// twice: once as --list, once rewriting to memory with --remarks; the
// rewritten file is then rendered as a diff and as --export-fixes YAML, in
// memory. Nothing is written but the input itself, and diagnostics are
// dropped. A crash, an ASan or UBSan report, an assert or an
// llvm_unreachable is a finding.
//
// Speed: the CUDA toolkit's headers cost about 0.8 s a parse, which leaves
// a fuzzer nothing to do, so inputs are parsed with -nocudainc and
// test/fuzz/include/cuda_runtime.h in place of clang's CUDA runtime wrapper
// (README.md: what that costs in fidelity).
//
//===----------------------------------------------------------------------===//

#include "gpu/GpuSpec.h"
#include "tool/CompilationDatabase.h"
#include "tool/CompilerArgs.h"
#include "tool/FileProcessor.h"
#include "tool/Options.h"
#include "tool/Output.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include <cstdlib>

using namespace cuda_rewrite;
using namespace llvm;

namespace {

[[noreturn]] void setupFailed(const Twine &Message) {
  errs() << "cuda-rewrite-fuzz: " << Message << "\n";
  std::abort();
}

void writeFile(StringRef Path, StringRef Contents) {
  std::error_code EC;
  raw_fd_ostream OS(Path, EC);
  if (EC)
    setupFailed("cannot write " + Path + ": " + EC.message());
  OS << Contents;
}

/// What every input shares: the toolchain, the GPU spec, the arguments
/// and the path the input is written to.
struct Setup {
  CudaToolchain Toolchain;
  GpuSpec Gpu;
  std::string Dir, InputPath;
  std::vector<std::string> Args;

  Setup() {
    Expected<CudaToolchain> TC = findCudaToolchain("", "sm_90");
    if (!TC)
      setupFailed(toString(TC.takeError()));
    Toolchain = *TC;
    Expected<GpuSpec> Spec = selectGpuSpec("sm_90", "");
    if (!Spec)
      setupFailed(toString(Spec.takeError()));
    Gpu = *Spec;

    SmallString<128> TempDir;
    if (std::error_code EC =
            sys::fs::createUniqueDirectory("cuda-rewrite-fuzz", TempDir))
      setupFailed("cannot create a temporary directory: " + EC.message());
    Dir = std::string(TempDir);
    InputPath = Dir + "/input.cu";

    // The small runtime where clang would include its CUDA wrapper, and
    // where the seeds' quoted includes (harness.cuh, needs-flags.cuh) are.
    // -I, not -isystem: the stand-ins for CUB must come before the
    // toolkit's cccl directory, which the tool adds with -isystem.
    std::string Source = CUDA_REWRITE_SOURCE_DIR;
    Args = {"-nocudainc", "-nocudalib",
            "-I",         Source + "/test/fuzz/include",
            "-include",   "cuda_runtime.h",
            "-I",         Source + "/samples/common",
            "-I",         Source + "/test/lit/Inputs"};
  }

  ~Setup() { sys::fs::remove_directories(Dir); }

  /// The options of one run over the input, as the command line would set
  /// them: `cuda-rewrite <input> -- <Args>`.
  ToolOptions options() const {
    ToolOptions Opts;
    Opts.Sources = {InputPath};
    Opts.HasCompilerArgs = true;
    Opts.CompilerArgs = Args;
    Opts.Jobs = 1;
    return Opts;
  }
};

const Setup &setup() {
  static Setup S;
  return S;
}

/// With CUDA_REWRITE_FUZZ_SHOW set (when replaying a reproducer), each run
/// prints the command line that repeats it and its diagnostics.
void show(const Setup &S, const ToolOptions &Opts, const FileResult &R) {
  if (!std::getenv("CUDA_REWRITE_FUZZ_SHOW"))
    return;
  errs() << "cuda-rewrite" << (Opts.List ? " --list" : "")
         << (Opts.Remarks ? " --remarks" : "") << (Opts.Auto ? " --auto" : "");
  if (!Opts.AggregateGranularity.empty())
    errs() << " --aggregate-granularity=" << Opts.AggregateGranularity;
  errs() << " " << S.InputPath << " --";
  for (const std::string &Arg : S.Args)
    errs() << " " << Arg;
  errs() << "\n" << R.Diagnostics;
}

/// The rewriting run, to memory only: the rewritten text, the diff and the
/// --export-fixes document are rendered and dropped.
void rewrite(const Setup &S, ToolOptions Opts,
             const clang::tooling::CompilationDatabase &DB) {
  FileResult R = processFile(Opts, DB, S.Toolchain, S.Gpu, S.InputPath);
  show(S, Opts, R);
  if (R.Failed)
    return;
  std::string Text;
  raw_string_ostream Stream(Text);
  Opts.Diff = true;
  if (Error E = writeOutputs(Opts, {R.Output}, Stream))
    consumeError(std::move(E));
  Text = exportFixesYaml({R.Output});
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  const Setup &S = setup();
  StringRef Input(reinterpret_cast<const char *>(Data), Size);
  writeFile(S.InputPath, Input);

  ToolOptions Opts = S.options();
  auto DB = loadCompilationDatabase(Opts);
  if (!DB)
    setupFailed(toString(DB.takeError()));

  Opts.List = true;
  show(S, Opts, processFile(Opts, **DB, S.Toolchain, S.Gpu, S.InputPath));

  // --remarks renders a remark for every candidate; --auto and the
  // granularity override come from the input's hash, so that a reproducer
  // replays the same run.
  Opts.List = false;
  Opts.Remarks = true;
  uint64_t Hash = xxh3_64bits(Input);
  Opts.Auto = Hash & 1;
  static const char *const Granularities[] = {"", "warp", "block", "kernel"};
  Opts.AggregateGranularity = Granularities[(Hash >> 1) % 4];
  rewrite(S, Opts, **DB);
  return 0;
}
