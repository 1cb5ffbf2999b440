//===- Options.cpp - cuda-rewrite's command line --------------------------===//

#include "tool/Options.h"
#include "rewriters/aggregate/AggregatePass.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <set>

using namespace llvm;

namespace cuda_rewrite {

namespace {

cl::OptionCategory Category("cuda-rewrite options");

const char Overview[] =
    R"(rewrites CUDA code into faster CUDA code

  cuda-rewrite [options] <file.cu>... [-- <compiler args>]
  cuda-rewrite -p <build dir> [<file.cu>...]

Passes (see #pragma cuda_rewrite in the README; --auto also rewrites
unannotated candidates that are proven legal):
  aggregate  device-side launch aggregation (KLAP)
  promote    launch promotion for recursive kernels (KLAP)
  systolic   stencils/convolutions as software systolic arrays (SSAM)
  fuse       stage-chain fusion into overlapped tiles (PolyMage-GPU)
  pipeline   pipeline execution models (VersaPipe)

A rewritten pipeline chooses its execution model when it runs:
CUDA_REWRITE_PIPELINE_MODEL=kbk|megakernel|coarse|fine|rtc, or a
configuration file in CUDA_REWRITE_PIPELINE_CONFIG or the pragma's config(),
such as scripts/pipeline-tune.py writes (docs/pipeline.md).

Exit status: 0 done (also when nothing matched), 1 an input could not be
parsed or a rewrite failed, 2 usage error.
)";

cl::list<std::string> Sources(cl::Positional, cl::desc("<file.cu>..."),
                              cl::cat(Category));
cl::opt<std::string>
    BuildPath("p",
              cl::desc("Build directory holding compile_commands.json "
                       "(nvcc and clang entries are both understood)"),
              cl::value_desc("dir"), cl::cat(Category));
cl::opt<std::string> OutputFile("o", cl::desc("Write the rewritten file here"),
                                cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> OutputDir(
    "output-dir",
    cl::desc("Write each rewritten file under this directory, at its "
             "relative path with '.' and '..' resolved; an absolute path, or "
             "one that leads out of the current directory, keeps only its "
             "file name"),
    cl::value_desc("dir"), cl::cat(Category));
cl::opt<bool> InPlace("i",
                      cl::desc("Rewrite the input files in place (each keeps "
                               "its mode)"),
                      cl::cat(Category));
cl::opt<bool> FollowSymlinks(
    "follow-symlinks",
    cl::desc("Write through symbolic links: replace the file that a linked "
             "output (-o, -i, --export-fixes, a file under --output-dir) "
             "points to, keeping the link, and follow linked directories "
             "inside --output-dir; without it, such outputs are refused"),
    cl::cat(Category));
cl::opt<bool> FixRemovedApis(
    "fix-removed-apis",
    cl::desc("Replace calls of runtime functions CUDA 13 removed by their "
             "successors where a new name is all it takes "
             "(cudaThreadSynchronize -> cudaDeviceSynchronize and the rest "
             "of cudaThread*); without it, each such call is an error with "
             "a fix-it"),
    cl::cat(Category));
cl::opt<bool> Diff("diff",
                   cl::desc("Print a unified diff against the input instead "
                            "of the rewritten file"),
                   cl::cat(Category));
cl::opt<bool> LineDirectives(
    "line-directives",
    cl::desc("Emit #line directives in the rewritten file so that compiler "
             "diagnostics and profilers point at the lines of the input file "
             "(by its absolute path); generated code is attributed to the "
             "lines at or right after the construct it came from"),
    cl::cat(Category));
cl::opt<std::string> ExportFixes(
    "export-fixes",
    cl::desc("Write the edits as YAML for clang-apply-replacements"),
    cl::value_desc("file.yaml"), cl::cat(Category));
cl::opt<bool>
    List("list",
         cl::desc("List candidates and pragmas with the verdict a rewrite "
                  "with the same options would reach, from the passes "
                  "themselves: 'would rewrite: <how>', 'would refuse: "
                  "<why>', 'not rewritten: <why>' (and what --auto would do "
                  "where only a pragma is missing); rewrite nothing"),
         cl::cat(Category));
cl::opt<bool> CoverageFlag(
    "coverage",
    cl::desc("Report how much of the code --auto would rewrite, in Markdown: "
             "per candidate and per kernel with none, the kind found, the "
             "verdict and the pass's reason (for a kernel with none, what "
             "the analyses say); totals per kind; refusals grouped by "
             "cause; files that did not parse. Inputs may be "
             "directories (their .cu files); rewrite nothing"),
    cl::cat(Category));
cl::opt<bool>
    RemarksFlag("remarks",
                cl::desc("Explain every candidate: rewritten (how, why) or "
                         "not (the reason)"),
                cl::cat(Category));
cl::opt<bool> WarningsAsErrors(
    "warnings-as-errors",
    cl::desc("Make a refused annotated candidate (-Wcuda-rewrite-refused) "
             "an error: the file fails and nothing is written for it"),
    cl::cat(Category));
cl::opt<bool> Auto("auto",
                   cl::desc("Also rewrite unannotated candidates proven legal"),
                   cl::cat(Category));
cl::opt<std::string> Only("only",
                          cl::desc("Run only these passes (comma-separated)"),
                          cl::value_desc("pass,..."), cl::cat(Category));
cl::opt<std::string> Disable("disable", cl::desc("Do not run these passes"),
                             cl::value_desc("pass,..."), cl::cat(Category));
cl::opt<std::string> AggregateGranularity(
    "aggregate-granularity",
    cl::desc("Aggregate every launch at this granularity (warp, block or "
             "kernel), whatever its pragma says; by default kernel, but "
             "warp for parents launched only from the host in grids of at "
             "most 8 warps known at compile time, or where block and "
             "kernel are not legal"),
    cl::value_desc("warp|block|kernel"), cl::cat(Category));
cl::opt<std::string> Gpu("gpu",
                         cl::desc("Target GPU for the cost models and the "
                                  "parser (default sm_90)"),
                         cl::value_desc("sm_XX"), cl::init("sm_90"),
                         cl::cat(Category));
cl::opt<std::string> GpuSpecPath(
    "gpu-spec",
    cl::desc("GPU figures for the cost models, as written by "
             "cuda-rewrite-probe (overrides --gpu's built-in ones)"),
    cl::value_desc("file.json"), cl::cat(Category));
cl::opt<std::string>
    CudaPath("cuda-path",
             cl::desc("CUDA toolkit root (default: $CUDA_PATH, "
                      "$CUDA_HOME, then /usr/local/cuda)"),
             cl::value_desc("dir"), cl::cat(Category));
cl::opt<unsigned> Jobs("j",
                       cl::desc("Files processed in parallel (default: one "
                                "per core)"),
                       cl::value_desc("N"), cl::init(0), cl::Prefix,
                       cl::cat(Category));
cl::opt<bool> Verbose("verbose",
                      cl::desc("Print how long each file took to parse"),
                      cl::cat(Category));
cl::list<std::string>
    ExtraArgs("extra-arg",
              cl::desc("Append an argument to every compile command"),
              cl::value_desc("arg"), cl::cat(Category));
cl::list<std::string>
    ExtraArgsBefore("extra-arg-before",
                    cl::desc("Prepend an argument to every compile command"),
                    cl::value_desc("arg"), cl::cat(Category));

Error usage(const Twine &Message) {
  return createStringError(inconvertibleErrorCode(), Message);
}

} // namespace

Expected<ToolOptions> parseCommandLine(int Argc, const char **Argv) {
  ToolOptions Opts;
  const char **End = std::find_if(
      Argv, Argv + Argc, [](const char *A) { return StringRef(A) == "--"; });
  if (End != Argv + Argc) {
    Opts.HasCompilerArgs = true;
    Opts.CompilerArgs.assign(End + 1, Argv + Argc);
  }

  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter([](raw_ostream &OS) {
    OS << "cuda-rewrite " CUDA_REWRITE_VERSION " (clang " LLVM_VERSION_STRING
          ")\n";
  });
  std::string Errors;
  raw_string_ostream ErrorStream(Errors);
  if (!cl::ParseCommandLineOptions(End - Argv, Argv, Overview, &ErrorStream))
    return usage(StringRef(Errors).trim());

  Opts.Sources = Sources;
  Opts.BuildPath = BuildPath;
  Opts.ExtraArgs = ExtraArgs;
  Opts.ExtraArgsBefore = ExtraArgsBefore;
  Opts.OutputFile = OutputFile;
  Opts.OutputDir = OutputDir;
  Opts.InPlace = InPlace;
  Opts.FollowSymlinks = FollowSymlinks;
  Opts.FixRemovedApis = FixRemovedApis;
  Opts.Diff = Diff;
  Opts.LineDirectives = LineDirectives;
  Opts.ExportFixes = ExportFixes;
  Opts.List = List;
  Opts.Coverage = CoverageFlag;
  Opts.Remarks = RemarksFlag;
  Opts.WarningsAsErrors = WarningsAsErrors;
  Opts.Auto = Auto;
  Opts.Only = Only;
  Opts.Disable = Disable;
  Opts.AggregateGranularity = AggregateGranularity;
  Opts.Gpu = Gpu;
  Opts.GpuSpecFile = GpuSpecPath;
  Opts.CudaPath = CudaPath;
  Opts.Jobs = Jobs;
  Opts.Verbose = Verbose;
  if (Error E = validateOptions(Opts))
    return E;
  return Opts;
}

Error validateOptions(ToolOptions &Opts) {
  if (Opts.Sources.empty() && Opts.BuildPath.empty())
    return usage("no input files (give <file.cu>... or -p <build dir>)");
  if (Opts.InPlace && (!Opts.OutputFile.empty() || !Opts.OutputDir.empty()))
    return usage("-i cannot be combined with -o or --output-dir");
  if (!Opts.OutputFile.empty() && !Opts.OutputDir.empty())
    return usage("-o and --output-dir cannot be combined");
  if (Opts.List && Opts.Coverage)
    return usage("--list and --coverage cannot be combined");
  if (Opts.rewritesNothing() &&
      (Opts.InPlace || Opts.Diff || !Opts.ExportFixes.empty() ||
       !Opts.OutputFile.empty() || !Opts.OutputDir.empty()))
    return usage(std::string(Opts.List ? "--list" : "--coverage") +
                 " rewrites nothing; it cannot be combined with -o, "
                 "--output-dir, -i, --diff or --export-fixes");
  if (Opts.InPlace && Opts.LineDirectives)
    return usage("--line-directives cannot be combined with -i: the "
                 "directives would name the lines of the file that -i "
                 "replaces; write the rewrite elsewhere with -o or "
                 "--output-dir");
  std::set<std::string> Seen;
  for (const std::string &Source : Opts.Sources)
    if (!Seen.insert(Source).second)
      return usage("input file '" + Source + "' is given twice");
  bool SeveralInputs = Opts.Sources.size() != 1;
  if (!Opts.OutputFile.empty() && SeveralInputs)
    return usage("-o needs exactly one input file; use --output-dir or -i "
                 "for several");
  if (SeveralInputs && Opts.printsRewrittenToStdout())
    return usage("several input files: choose where the results go with "
                 "--output-dir, -i, --diff or --export-fixes");
  if (!Opts.Gpu.empty() && !StringRef(Opts.Gpu).starts_with("sm_"))
    return usage("--gpu takes an architecture such as sm_90, not '" + Opts.Gpu +
                 "'");
  if (!Opts.AggregateGranularity.empty() &&
      !parseGranularity(Opts.AggregateGranularity))
    return usage("--aggregate-granularity takes warp, block or kernel, not '" +
                 Opts.AggregateGranularity + "'");
  Expected<PassSet> Passes = enabledPasses(Opts.Only, Opts.Disable);
  if (!Passes)
    return usage(toString(Passes.takeError()));
  Opts.Passes = *Passes;
  return Error::success();
}

} // namespace cuda_rewrite
