//===- Output.h - Where rewritten files go ----------------------*- C++ -*-===//
//
// One edit set per file feeds every output mode: stdout, -o, --output-dir,
// -i, --diff and --export-fixes. Files are written atomically (a temporary
// file in the target directory, then a rename), and no file is replaced
// before every one was checked and written, so a failed or interrupted run
// never leaves a half-written file. Outputs never land outside the place the
// user named:
// --output-dir paths are normalised, and symbolic links are refused unless
// --follow-symlinks is given.
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

/// One file that writeFilesAtomically writes.
struct FileWrite {
  std::string Path;         ///< As the user will see it in errors.
  llvm::StringRef Contents; ///< Must outlive the call.
  /// A new file gets this file's permission bits (less the umask, as cp
  /// does); empty: 0666 less the umask. A file that exists keeps its own
  /// mode (and, where the process may, its owner).
  std::string ModeFrom;
  /// --output-dir's directory when Path lies under it: no directory between
  /// it and Path may be a symbolic link unless symlinks are followed.
  std::string OutputDir;
};

/// Writes every file of \p Writes or none. Each path is checked first (a
/// symbolic link, refused unless \p FollowSymlinks, in which case the file
/// it points to is replaced and the link kept; a directory or other
/// non-regular file; an ancestor that is no directory; an unwritable
/// directory; two outputs naming one file, or one on the path of another);
/// then each file is written to a temporary file in its target's
/// directory; only once all were written are they renamed into place. A
/// failure leaves every target untouched and no temporary file behind.
llvm::Error writeFilesAtomically(llvm::ArrayRef<FileWrite> Writes,
                                 bool FollowSymlinks);

/// Where --output-dir puts \p InputPath: its relative path under \p Dir,
/// with `.` and `..` components resolved lexically, when that stays below
/// the current directory; else (an absolute path, or one such as
/// `a/../../x.cu` that leads out of it) only its file name. The result is
/// always strictly below \p Dir; it is empty when \p InputPath names no
/// file (`..`, `/`).
std::string outputDirPath(llvm::StringRef Dir, llvm::StringRef InputPath);

/// \p Path as a user's tools take it: relative to the current directory
/// when it is an absolute path below it, else unchanged.
std::string displayPath(llvm::StringRef Path);

/// The edits of all files as one clang-apply-replacements document.
std::string exportFixesYaml(llvm::ArrayRef<RewrittenFile> Files);

/// Emits every output mode \p Opts asks for. No output of -o or
/// --output-dir may be its input (only -i replaces inputs). With -p, files
/// under --output-dir keep their paths relative to the database's directory
/// when all inputs lie below it, else relative to the deepest directory
/// holding them all. \p Stdout receives the
/// rewritten text (default mode) or the diffs.
llvm::Error writeOutputs(const ToolOptions &Opts,
                         llvm::ArrayRef<RewrittenFile> Files,
                         llvm::raw_ostream &Stdout);

} // namespace cuda_rewrite

#endif
