//===- Output.h - Where rewritten files go ----------------------*- C++ -*-===//
//
// One edit set per file feeds every output mode: stdout, -o, --output-dir,
// -i, --diff and --export-fixes. Files are written atomically (a temporary
// file in the target directory, then a rename), so a failed or interrupted
// run never leaves a half-written file.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_OUTPUT_H
#define CUDA_REWRITE_TOOL_OUTPUT_H

#include "tool/Options.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace cuda_rewrite {

struct RewrittenFile {
  std::string InputPath;    ///< As the user named it (used in --diff).
  std::string AbsolutePath; ///< Used in --export-fixes.
  std::string Original;
  std::string Rewritten;
  clang::tooling::Replacements Edits;
};

/// Writes \p Contents to \p Path through a temporary file and a rename.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents);

/// Where --output-dir puts \p InputPath: its relative path under \p Dir when
/// it is relative and stays below the current directory, else its name.
std::string outputDirPath(llvm::StringRef Dir, llvm::StringRef InputPath);

/// The edits of all files as one clang-apply-replacements document.
std::string exportFixesYaml(llvm::ArrayRef<RewrittenFile> Files);

/// Emits every output mode \p Opts asks for. \p Stdout receives the
/// rewritten text (default mode) or the diffs.
llvm::Error writeOutputs(const ToolOptions &Opts,
                         llvm::ArrayRef<RewrittenFile> Files,
                         llvm::raw_ostream &Stdout);

} // namespace cuda_rewrite

#endif
