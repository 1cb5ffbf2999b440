//===- ListPrinter.h - --list output ----------------------------*- C++ -*-===//
//
// --list prints each candidate and pragma with the verdict a rewrite with
// the same options would reach. The verdicts are not worked out here: the
// passes run as for a rewrite, into edits nobody writes, and their remarks
// are shown against the candidates they are about.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_LISTPRINTER_H
#define CUDA_REWRITE_TOOL_LISTPRINTER_H

#include "analysis/Candidates.h"
#include "analysis/Pragmas.h"
#include "rewriters/PassManager.h"
#include "rewriters/common/Remarks.h"
#include "tool/Attribution.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One --list line, without its file name: "12:5: device-launch: ...".
struct ListEntry {
  unsigned Offset;
  std::string Text;
  /// A pragma's line: both parses of a file list it, only one with the
  /// verdict of the rewrite (the host side's).
  bool IsPragma = false;
};

/// The lines for the candidates and the pragmas of one parse, in offset
/// order: what was found, and what a rewrite with \p Opts would do with it
/// (from \p Rehearse with \p Opts; for a candidate that is not rewritten for
/// want of a pragma, also what --auto would do).
std::vector<ListEntry> listEntries(clang::ASTContext &Ctx,
                                   llvm::ArrayRef<Candidate> Candidates,
                                   llvm::ArrayRef<AttachedPragma> Pragmas,
                                   const PassOptions &Opts,
                                   RewriteRehearsal Rehearse);

} // namespace cuda_rewrite

#endif
