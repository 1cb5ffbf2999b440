//===- NvccArgs.h - nvcc command lines translated for clang -----*- C++ -*-===//
//
// compile_commands.json written by CMake for CUDA holds nvcc command lines
// (docs/design.md section 6). Clang cannot parse them: nvcc spells its options
// differently (-rdc=true, -gencode, -Xcompiler, -x cu), takes values in forms
// clang does not know (-I=dir, -DA,B) and has many options that mean nothing to
// a parser. This file turns such a command into the equivalent clang command,
// keeping what changes how the source is parsed (include paths, macros,
// language standard, the macros nvcc itself defines for -rdc, -G,
// --extended-lambda, ...) and dropping the rest.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_NVCCARGS_H
#define CUDA_REWRITE_TOOL_NVCCARGS_H

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// True if \p Argv runs nvcc: argv[0] is named "nvcc" (or "nvcc.exe") in any
/// directory, directly or behind a compiler launcher ("ccache nvcc ...",
/// also sccache and distcc).
bool isNvccCommand(llvm::ArrayRef<std::string> Argv);

struct TranslatedCommand {
  /// The argv for clang; argv[0] is "clang++" (a launcher is removed).
  std::vector<std::string> Args;
  /// The GPU architecture the nvcc command compiles for, as clang spells it
  /// ("sm_90", "sm_90a"), from -arch / --gpu-architecture, -gencode /
  /// --generate-code arch=, --cuda-gpu-arch or, when none of those names one,
  /// -code / --gpu-code. compute_XX and lto_XX are given as sm_XX (it is the
  /// virtual architecture that sets __CUDA_ARCH__), the family suffix of
  /// sm_XXXf is dropped (clang 22 does not know it). Several architectures:
  /// the highest. None for -arch=native|all|all-major or no arch option. The
  /// arch options themselves are not in Args: the tool passes its own
  /// --cuda-gpu-arch (a second one would make clang compile twice).
  std::optional<std::string> GpuArch;
  /// Whether the command compiles relocatable device code (-rdc=true, -dc,
  /// -dlto), which device-side launches and the runtime's device state need.
  bool RelocatableDeviceCode = false;
  /// Problems the user can act on (an nvcc option cuda-rewrite does not know,
  /// an option missing its value, an architecture clang does not support,
  /// an options file it cannot read). Common CMake flags never produce
  /// one. Each message names the option or file concerned.
  std::vector<std::string> Warnings;
};

/// Translates the nvcc command \p Argv (argv[0] is nvcc or a launcher
/// followed by nvcc) into clang's. Options files (--options-file, -optf) are
/// read from \p FS (default: the real file system), relative names against
/// its working directory, and their options translated in place. The result
/// is deterministic: equal inputs (and files) give equal outputs.
TranslatedCommand translateNvccCommand(llvm::ArrayRef<std::string> Argv,
                                       llvm::vfs::FileSystem *FS = nullptr);

/// The options in an nvcc options file, split as nvcc 13.0 does: on
/// whitespace; double quotes group (and are removed), also inside a word
/// (`-I"a b"`); a backslash takes the next character literally; single
/// quotes are ordinary characters.
std::vector<std::string> splitNvccOptionsFile(llvm::StringRef Contents);

/// Receives one warning of translateNvccCommand() for the compile command
/// of \p File.
using NvccWarningHandler =
    std::function<void(llvm::StringRef File, llvm::StringRef Message)>;

/// An ArgumentsAdjuster that applies translateNvccCommand() to nvcc commands
/// and returns every other command unchanged. Apply it first, before any
/// adjuster that adds clang arguments. Warnings go to \p OnWarning, or by
/// default to stderr as "cuda-rewrite: warning: <file>: <message>"; each
/// distinct (file, message) pair is reported once per process however often
/// a command is adjusted (the tool parses every file twice, host and device).
/// Options files are read from \p FS (default: the real file system): give
/// the file system of the ClangTool that runs the adjuster, whose working
/// directory is then the compile command's.
clang::tooling::ArgumentsAdjuster nvccArgumentsAdjuster(
    NvccWarningHandler OnWarning = nullptr,
    llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS = nullptr);

} // namespace cuda_rewrite

#endif
