//===- CompilationDatabase.h - Where compile commands come from -*- C++ -*-===//
//
// `-p <dir>` reads compile_commands.json (nvcc entries are translated to
// clang's by NvccArgs); `-- <args>` gives every file the same arguments;
// with neither, files are parsed with the tool's defaults only. No
// compilation database is searched for implicitly: the same command line
// always means the same parse.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_COMPILATIONDATABASE_H
#define CUDA_REWRITE_TOOL_COMPILATIONDATABASE_H

#include "tool/CompilerArgs.h"
#include "tool/Options.h"
#include "clang/Tooling/CompilationDatabase.h"
#include <memory>

namespace cuda_rewrite {

llvm::Expected<std::unique_ptr<clang::tooling::CompilationDatabase>>
loadCompilationDatabase(const ToolOptions &Opts);

/// The files to process: the ones named (for --list and --coverage, a
/// directory named stands for its .cu files), or with -p and none named,
/// every CUDA file of the database, sorted.
std::vector<std::string>
sourcesToProcess(const ToolOptions &Opts,
                 const clang::tooling::CompilationDatabase &DB);

/// Everything done to a compile command before clang sees it, in order:
/// nvcc translation, the tool's CUDA arguments for \p Side, --extra-arg(s).
/// nvcc options files are read from \p FS, the file system of the ClangTool
/// that runs the adjuster (relative names against the compile command's
/// directory, which the tool makes its working directory).
clang::tooling::ArgumentsAdjuster
commandAdjuster(const ToolOptions &Opts, const CudaToolchain &TC, CudaSide Side,
                llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS = nullptr);

} // namespace cuda_rewrite

#endif
