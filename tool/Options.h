//===- Options.h - cuda-rewrite's command line ------------------*- C++ -*-===//
//
// The contract of docs/design.md section 2. Parsing is llvm::cl; the checks
// between options live in validateOptions() so that they are unit-tested.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_OPTIONS_H
#define CUDA_REWRITE_TOOL_OPTIONS_H

#include "rewriters/PassManager.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// Exit statuses (docs/design.md section 2).
enum ExitCode : int { ExitOk = 0, ExitFailed = 1, ExitUsage = 2 };

struct ToolOptions {
  std::vector<std::string> Sources;
  std::string BuildPath;                 ///< -p: holds compile_commands.json.
  bool HasCompilerArgs = false;          ///< A `--` was given.
  std::vector<std::string> CompilerArgs; ///< What follows `--`.
  std::vector<std::string> ExtraArgs, ExtraArgsBefore;

  std::string OutputFile; ///< -o
  std::string OutputDir;  ///< --output-dir
  bool InPlace = false;   ///< -i
  /// Write through symbolic links (outputs, directories under --output-dir)
  /// instead of refusing them.
  bool FollowSymlinks = false;
  bool Diff = false;
  /// #line directives in the rewritten text, pointing at the input.
  bool LineDirectives = false;
  std::string ExportFixes;
  bool List = false;
  /// --coverage: the report of what --auto would rewrite, and nothing else.
  bool Coverage = false;
  bool Remarks = false;
  /// A refused annotated candidate is an error, not a warning.
  bool WarningsAsErrors = false;
  bool Auto = false;
  std::string Only, Disable;
  std::string AggregateGranularity; ///< Overrides the pragmas' when set.
  /// Rename calls of runtime functions CUDA 13 removed (RemovedApis.h)
  /// instead of reporting them as errors.
  bool FixRemovedApis = false;
  PassSet Passes = PassSet::all();

  std::string Gpu = "sm_90";
  std::string GpuSpecFile;
  std::string CudaPath;
  unsigned Jobs = 0;    ///< 0: one per core.
  bool Verbose = false; ///< Per-file parse times on stderr.

  /// --list and --coverage report on the files and write none.
  bool rewritesNothing() const { return List || Coverage; }

  /// Whether the rewritten text of each file is printed on stdout.
  bool printsRewrittenToStdout() const {
    return !rewritesNothing() && !Diff && ExportFixes.empty() &&
           OutputFile.empty() && OutputDir.empty() && !InPlace;
  }
};

/// Parses argv (program name first). --help and --version print and exit
/// the process, as llvm::cl does. A usage problem is returned as an Error
/// whose message is ready to print.
llvm::Expected<ToolOptions> parseCommandLine(int Argc, const char **Argv);

/// Checks combinations of options and fills Passes from Only/Disable.
llvm::Error validateOptions(ToolOptions &Opts);

} // namespace cuda_rewrite

#endif
