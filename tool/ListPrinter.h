//===- ListPrinter.h - --list output ----------------------------*- C++ -*-===//
#ifndef CUDA_REWRITE_TOOL_LISTPRINTER_H
#define CUDA_REWRITE_TOOL_LISTPRINTER_H

#include "analysis/Candidates.h"
#include "analysis/Pragmas.h"
#include "rewriters/common/PassManager.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// One --list line, without its file name: "12:5: device-launch: ...".
struct ListEntry {
  unsigned Offset;
  std::string Text;
};

/// The lines for the candidates and the pragmas of one parse, in offset
/// order: what was found, and the rewrite it would get.
std::vector<ListEntry> listEntries(clang::ASTContext &Ctx,
                                   llvm::ArrayRef<Candidate> Candidates,
                                   llvm::ArrayRef<AttachedPragma> Pragmas,
                                   const PassOptions &Opts);

} // namespace cuda_rewrite

#endif
