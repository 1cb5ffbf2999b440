//===- ListPrinter.h - --list output ----------------------------*- C++ -*-===//
#ifndef CUDA_REWRITE_TOOL_LISTPRINTER_H
#define CUDA_REWRITE_TOOL_LISTPRINTER_H

#include "analysis/Candidates.h"
#include "analysis/GpuSpec.h"
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
/// order: what was found, and the rewrite it would get (on \p Gpu, whose
/// figures the fuse pass's cost model uses to group stages).
std::vector<ListEntry> listEntries(clang::ASTContext &Ctx,
                                   llvm::ArrayRef<Candidate> Candidates,
                                   llvm::ArrayRef<AttachedPragma> Pragmas,
                                   const PassOptions &Opts, const GpuSpec &Gpu);

} // namespace cuda_rewrite

#endif
