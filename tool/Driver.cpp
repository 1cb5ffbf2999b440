//===- Driver.cpp - cuda-rewrite from argv to exit status -----------------===//

#include "tool/Driver.h"
#include "gpu/GpuSpec.h"
#include "tool/CompilationDatabase.h"
#include "tool/CompilerArgs.h"
#include "tool/CoverageReport.h"
#include "tool/FileProcessor.h"
#include "tool/Options.h"
#include "tool/Output.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace cuda_rewrite {

namespace {

int fail(int Code, const Twine &Message) {
  errs() << "cuda-rewrite: error: " << Message << "\n";
  if (Code == ExitUsage)
    errs() << "run 'cuda-rewrite --help' for usage\n";
  return Code;
}

/// What a run of several files did, for the line that closes it.
struct RunSummary {
  unsigned Files = 0, Failed = 0, Unchanged = 0;
  RewriteCounts Counts;

  void add(const FileResult &R) {
    ++Files;
    Counts.Rewritten += R.Counts.Rewritten;
    Counts.Refused += R.Counts.Refused;
    if (R.Failed)
      ++Failed;
    else if (R.Output.Rewritten == R.Output.Original)
      ++Unchanged;
  }

  /// "3 files: 4 rewritten candidates, 1 refused, 1 unchanged[, 1 failed]".
  std::string line() const {
    std::string Text =
        std::to_string(Files) + " files: " + std::to_string(Counts.Rewritten) +
        " rewritten candidates, " + std::to_string(Counts.Refused) +
        " refused, " + std::to_string(Unchanged) + " unchanged";
    if (Failed)
      Text += ", " + std::to_string(Failed) + " failed";
    return Text;
  }
};

/// Processes every file, \p Jobs at a time; results keep input order.
std::vector<FileResult>
processAll(const ToolOptions &Opts,
           const clang::tooling::CompilationDatabase &DB,
           const CudaToolchain &Toolchain, const GpuSpec &Gpu,
           ArrayRef<std::string> Files) {
  std::vector<FileResult> Results(Files.size());
  unsigned Jobs = Opts.Jobs ? Opts.Jobs : llvm::get_physical_cores();
  Jobs = std::max(1u, std::min<unsigned>(Jobs, Files.size()));
  if (Jobs == 1) {
    for (size_t I = 0; I < Files.size(); ++I)
      Results[I] = processFile(Opts, DB, Toolchain, Gpu, Files[I]);
    return Results;
  }
  DefaultThreadPool Pool(hardware_concurrency(Jobs));
  for (size_t I = 0; I < Files.size(); ++I)
    Pool.async([&, I] {
      Results[I] = processFile(Opts, DB, Toolchain, Gpu, Files[I]);
    });
  Pool.wait();
  return Results;
}

/// The first line of \p Diagnostics that reports an error, without the
/// file name it starts with.
std::string firstError(StringRef Diagnostics) {
  SmallVector<StringRef> Lines;
  Diagnostics.split(Lines, '\n');
  for (StringRef Line : Lines)
    if (size_t At = Line.find("error: "); At != StringRef::npos)
      return Line.substr(At + 7).str();
  return "the file did not parse";
}

} // namespace

int runCudaRewrite(int Argc, const char **Argv) {
  Expected<ToolOptions> Parsed = parseCommandLine(Argc, Argv);
  if (!Parsed)
    return fail(ExitUsage, toString(Parsed.takeError()));
  const ToolOptions &Opts = *Parsed;

  Expected<GpuSpec> Gpu = selectGpuSpec(Opts.Gpu, Opts.GpuSpecFile);
  if (!Gpu)
    return fail(ExitUsage, toString(Gpu.takeError()));
  Expected<CudaToolchain> Toolchain =
      findCudaToolchain(Opts.CudaPath, Opts.Gpu);
  if (!Toolchain)
    return fail(ExitFailed, toString(Toolchain.takeError()));
  auto DB = loadCompilationDatabase(Opts);
  if (!DB)
    return fail(ExitUsage, toString(DB.takeError()));

  std::vector<std::string> Files = sourcesToProcess(Opts, **DB);
  if (Files.empty()) {
    errs() << "cuda-rewrite: warning: the compilation database lists no "
              "CUDA files (.cu); nothing to do\n";
    return ExitOk;
  }

  std::vector<FileResult> Results =
      processAll(Opts, **DB, *Toolchain, *Gpu, Files);

  bool AnyFailed = false;
  std::vector<RewrittenFile> Rewritten;
  std::vector<CoverageFile> Coverage;
  RunSummary Summary;
  for (size_t I = 0; I < Files.size(); ++I) {
    FileResult &R = Results[I];
    Summary.add(R);
    errs() << R.Diagnostics;
    if (Opts.Verbose) {
      errs() << Files[I] << ": host-side parse "
             << format("%.2f", R.HostParseSeconds) << " s";
      if (R.ParsedDeviceSide)
        errs() << ", device-side parse " << format("%.2f", R.DeviceParseSeconds)
               << " s";
      errs() << "\n";
    }
    if (Opts.Coverage)
      Coverage.push_back({Files[I], !R.Failed,
                          R.Failed ? firstError(R.Diagnostics) : "",
                          std::move(R.Coverage)});
    if (R.Failed) {
      AnyFailed = true;
      continue;
    }
    if (Opts.Coverage)
      continue;
    if (Opts.List)
      for (const ListEntry &Entry : R.Listing)
        outs() << Files[I] << ":" << Entry.Text << "\n";
    else
      Rewritten.push_back(std::move(R.Output));
  }
  if (Opts.Coverage)
    printCoverageReport(outs(), Coverage);
  else if (!Opts.List)
    if (Error E = writeOutputs(Opts, Rewritten, outs()))
      return fail(ExitFailed, toString(std::move(E)));
  outs().flush();
  if (Files.size() > 1 && !Opts.rewritesNothing())
    errs() << "cuda-rewrite: " << Summary.line() << "\n";
  return AnyFailed ? ExitFailed : ExitOk;
}

} // namespace cuda_rewrite
