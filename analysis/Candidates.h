//===- Candidates.h - Everything a pass could rewrite -----------*- C++ -*-===//
//
// One list per file of the patterns docs/design.md section 1 names, each
// with the pragma (if any) that asks for its rewrite. --list
// prints this list; the passes take their work from it.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_CANDIDATES_H
#define CUDA_REWRITE_ANALYSIS_CANDIDATES_H

#include "analysis/CudaArchRegions.h"
#include "analysis/LaunchSites.h"
#include "analysis/Pragmas.h"
#include "clang/AST/ASTContext.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// The passes that rewrite each kind are named in PassManager.h.
enum class CandidateKind {
  DeviceLaunch,    ///< A device-side launch.
  RecursiveKernel, ///< A kernel that launches itself.
  Stencil,         ///< A kernel reading at constant offsets.
  StageChain,      ///< Host launches feeding each other.
  PipelineStage,   ///< A `stage` __device__ function.
  PipelineEntry,   ///< The host launch marked `pipeline`.
};

llvm::StringRef candidateKindName(CandidateKind Kind);

struct Candidate {
  CandidateKind Kind;
  clang::SourceLocation Loc;
  unsigned Offset = 0;
  /// What was found, for --list and remarks ("'child' from kernel 'parent'").
  std::string Description;
  /// Properties that make a rewrite harder ("in branch", "in macro", ...).
  std::vector<std::string> Flags;
  /// The pragma asking for this candidate's rewrite, if any.
  const PragmaDirective *Annotation = nullptr;
  bool UnderCudaArch = false;
  /// Written inside a macro expansion: edits would have to change the
  /// macro's definition, which other code may use.
  bool InMacro = false;
  /// Inside a template: one rewrite must be right for every instantiation.
  bool InTemplate = false;

  /// The AST node the pass starts from (a kernel, launch or block).
  const clang::FunctionDecl *Function = nullptr;
  const clang::Stmt *Statement = nullptr;
};

/// All candidates of the main file, sorted by offset then kind.
std::vector<Candidate> collectCandidates(clang::ASTContext &Ctx,
                                         llvm::ArrayRef<AttachedPragma> Pragmas,
                                         const CudaArchRegions &ArchRegions);

/// Whether the main file has any CUDA of its own: a __global__ or
/// __device__ function, a __device__/__constant__/__shared__ variable, or a
/// kernel launch.
bool mainFileHasCudaCode(clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
