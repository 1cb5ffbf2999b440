//===- UnifiedDiff.h - --diff output ----------------------------*- C++ -*-===//
#ifndef CUDA_REWRITE_TOOL_UNIFIEDDIFF_H
#define CUDA_REWRITE_TOOL_UNIFIEDDIFF_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace cuda_rewrite {

/// A unified diff (3 lines of context) that `patch -p0` and `git apply`
/// accept, with both headers naming \p Path. Empty when the texts are equal.
std::string unifiedDiff(llvm::StringRef Path, llvm::StringRef Before,
                        llvm::StringRef After);

} // namespace cuda_rewrite

#endif
