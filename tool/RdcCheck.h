//===- RdcCheck.h - Rewrites that need relocatable device code --*- C++ -*-===//
//
// Rewritten code that launches kernels from the device (aggregate, promote)
// or uses the runtime's program-wide device state (cuda_rewrite/error.cuh,
// memory_pool.cuh) compiles only as relocatable device code: nvcc -rdc=true
// or -dc, linked with -lcudadevrt. Each pass includes the runtime header its
// code needs (`#include "cuda_rewrite/<header>.cuh"`, PassManager's
// includeRuntimeHeader); a table says which of those headers need it. A file
// whose rewrite includes one, compiled by an nvcc command of the compilation
// database that lacks relocatable device code, gets a warning
// [-Wcuda-rewrite-rdc]: the build would fail on the header's static_assert.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_RDCCHECK_H
#define CUDA_REWRITE_TOOL_RDCCHECK_H

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The runtime headers (`runtime` for cuda_rewrite/runtime.cuh) that
/// \p Edits include and that need relocatable device code, in order.
std::vector<std::string>
runtimeHeadersNeedingRdc(const clang::tooling::Replacements &Edits);

/// True if \p Command runs nvcc without relocatable device code (-rdc=true,
/// --relocatable-device-code=true, -dc, -dlto, also in an options file read
/// relative to the command's directory). False for other compilers.
bool nvccCommandLacksRdc(const clang::tooling::CompileCommand &Command);

/// "<File>: warning: ... [-Wcuda-rewrite-rdc]\n" when \p Edits need
/// relocatable device code and the first compile command \p DB has for
/// \p AbsolutePath is an nvcc command without it; else "".
std::string rdcWarning(llvm::StringRef File, llvm::StringRef AbsolutePath,
                       const clang::tooling::Replacements &Edits,
                       const clang::tooling::CompilationDatabase &DB);

} // namespace cuda_rewrite

#endif
