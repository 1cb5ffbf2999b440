//===- ParsePrelude.h - What nvcc builds in and clang lacks -----*- C++ -*-===//
//
// nvcc compiles some CUDA 13 code that clang cannot parse: its atomic
// builtins (`__nv_atomic_load_n(p, __NV_ATOMIC_RELAXED)`) are built into
// nvcc, and their constants are declared in a header (crt/device_functions.h)
// that clang's CUDA wrapper never includes; host code calls `max(a, b)`,
// which nvcc's headers declare for the host too and clang's wrapper for the
// device only; CUDA 13 removed runtime functions older programs call
// (RemovedApis.h). The tool's parse includes a small header first (-include)
// that declares them, so such a file parses;
// the declarations are enough for the analyses, which treat the calls as
// calls of functions without a body (side effects they cannot see into).
// The header lives in memory and is never written into a rewritten file.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_PARSEPRELUDE_H
#define CUDA_REWRITE_TOOL_PARSEPRELUDE_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace cuda_rewrite {

/// Where the parse finds the prelude (a file in memory only).
constexpr llvm::StringLiteral ParsePreludePath =
    "/cuda-rewrite-parse-prelude/nvcc_builtins.h";

/// The prelude's text.
llvm::StringRef parsePreludeText();

/// Clang's CUDA runtime wrapper header under \p ResourceDir, where the
/// parse finds it, and its text made to define what nvcc does: device-side
/// `std::malloc` and `std::free` the same functions as `::malloc` and
/// `::free` (clang defines them as functions of their own, so that with
/// `using namespace std;` device code's `malloc(n)` is ambiguous), and
/// `__CUDACC__` as 1 (clang's is empty, so `#if __CUDACC__` is an error).
/// Nullopt where the header has neither (another clang): it is then parsed
/// as it is.
struct PatchedHeader {
  std::string Path, Text;
};
std::optional<PatchedHeader>
patchedCudaRuntimeWrapper(llvm::StringRef ResourceDir);

} // namespace cuda_rewrite

#endif
