//===- CompilerArgs.h - The arguments cuda-rewrite gives clang --*- C++ -*-===//
//
// Clang 22 parses CUDA 13 only with a handful of extra arguments
// (docs/design.md section 6). They are prepended to the user's own so that the
// user's win.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_COMPILERARGS_H
#define CUDA_REWRITE_TOOL_COMPILERARGS_H

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// Which side of a CUDA compilation clang parses. The host side sees every
/// kernel body except code under `#ifdef __CUDA_ARCH__`; the device side
/// sees that code and hides `#ifndef __CUDA_ARCH__` code instead.
enum class CudaSide { Host, Device };

struct CudaToolchain {
  std::string CudaPath;    ///< Root of the CUDA toolkit.
  std::string ResourceDir; ///< Clang's resource directory.
  std::string GpuArch = "sm_90";
  /// The host compiler's own headers (g++'s omp.h), searched after all
  /// others; empty where there is no g++.
  std::string HostCompilerIncludeDir;
};

/// The CUDA toolkit to use: \p Explicit if non-empty, else $CUDA_PATH, else
/// $CUDA_HOME, else the configured default (/usr/local/cuda). Fails with a
/// message naming what to install or pass when the toolkit or clang's
/// resource directory is missing.
llvm::Expected<CudaToolchain> findCudaToolchain(llvm::StringRef Explicit,
                                                llvm::StringRef GpuArch);

/// The arguments docs/design.md section 6 lists, for one side.
std::vector<std::string> cudaParseArgs(const CudaToolchain &TC, CudaSide Side);

/// Inserts cudaParseArgs() and the parse prelude (ParsePrelude.h) right
/// after the compiler name, so that the user's
/// arguments that follow override them, and drops arguments that would make
/// clang do more than parse (-c, -o, output dependency files).
clang::tooling::ArgumentsAdjuster cudaArgumentsAdjuster(const CudaToolchain &TC,
                                                        CudaSide Side);

} // namespace cuda_rewrite

#endif
