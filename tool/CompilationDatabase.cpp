//===- CompilationDatabase.cpp - Where compile commands come from ---------===//

#include "tool/CompilationDatabase.h"
#include "tool/NvccArgs.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <algorithm>

using namespace clang::tooling;
using namespace llvm;

namespace cuda_rewrite {

Expected<std::unique_ptr<CompilationDatabase>>
loadCompilationDatabase(const ToolOptions &Opts) {
  if (!Opts.BuildPath.empty()) {
    std::string Error;
    std::unique_ptr<CompilationDatabase> DB =
        CompilationDatabase::loadFromDirectory(Opts.BuildPath, Error);
    if (!DB)
      return createStringError(inconvertibleErrorCode(),
                               "cannot load a compilation database from "
                               "'%s': %s",
                               Opts.BuildPath.c_str(), Error.c_str());
    // Headers and files the build does not list get the command of the
    // most similar file, as clangd does.
    return inferMissingCompileCommands(std::move(DB));
  }
  std::vector<std::string> Args =
      Opts.HasCompilerArgs ? Opts.CompilerArgs : std::vector<std::string>{};
  return std::make_unique<FixedCompilationDatabase>(".", Args);
}

static bool isCudaSource(StringRef Path) {
  StringRef Ext = sys::path::extension(Path);
  return Ext == ".cu" || Ext == ".cuh";
}

/// \p Dir's CUDA sources (.cu), at any depth, sorted.
static std::vector<std::string> cudaSourcesUnder(StringRef Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (sys::fs::recursive_directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (sys::path::extension(It->path()) == ".cu" &&
        It->type() != sys::fs::file_type::directory_file)
      Files.push_back(It->path());
  llvm::sort(Files);
  return Files;
}

std::vector<std::string> sourcesToProcess(const ToolOptions &Opts,
                                          const CompilationDatabase &DB) {
  if (!Opts.Sources.empty()) {
    if (!Opts.rewritesNothing())
      return Opts.Sources;
    // A report may take a whole tree.
    std::vector<std::string> Files;
    for (const std::string &Source : Opts.Sources)
      if (sys::fs::is_directory(Source))
        append_range(Files, cudaSourcesUnder(Source));
      else
        Files.push_back(Source);
    return Files;
  }
  std::vector<std::string> Files;
  for (const std::string &File : DB.getAllFiles())
    if (isCudaSource(File))
      Files.push_back(File);
  llvm::sort(Files);
  return Files;
}

ArgumentsAdjuster commandAdjuster(const ToolOptions &Opts,
                                  const CudaToolchain &TC, CudaSide Side,
                                  IntrusiveRefCntPtr<vfs::FileSystem> FS) {
  ArgumentsAdjuster Adjuster =
      combineAdjusters(nvccArgumentsAdjuster(nullptr, std::move(FS)),
                       cudaArgumentsAdjuster(TC, Side));
  if (!Opts.ExtraArgsBefore.empty())
    Adjuster = combineAdjusters(
        Adjuster, getInsertArgumentAdjuster(Opts.ExtraArgsBefore,
                                            ArgumentInsertPosition::BEGIN));
  if (!Opts.ExtraArgs.empty())
    Adjuster = combineAdjusters(
        Adjuster,
        getInsertArgumentAdjuster(Opts.ExtraArgs, ArgumentInsertPosition::END));
  if (Side == CudaSide::Device)
    // The host parse already reported clang's warnings for this file.
    Adjuster = combineAdjusters(
        Adjuster, getInsertArgumentAdjuster("-w", ArgumentInsertPosition::END));
  return Adjuster;
}

} // namespace cuda_rewrite
