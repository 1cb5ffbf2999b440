//===- MainFile.h - Where included files meet the main file -----*- C++ -*-===//
//
// The tool edits the main file only. Code it generates for a kernel defined
// in a project file the main file includes goes into the main file, after
// the #include that brings the kernel in.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_MAINFILE_H
#define CUDA_REWRITE_ANALYSIS_MAINFILE_H

#include "clang/Basic/SourceManager.h"

namespace cuda_rewrite {

/// \p Loc (its expansion) where it is written in the main file; for a
/// location in a file the main file includes, directly or not, the
/// `#include` in the main file that brings that file in; invalid otherwise.
clang::SourceLocation mainFileLocation(const clang::SourceManager &SM,
                                       clang::SourceLocation Loc);

} // namespace cuda_rewrite

#endif
