//===- Candidates.h - Everything a pass could rewrite -----------*- C++ -*-===//
//
// One list per file of the patterns docs/design.md section 1 names, each
// with the pragma (if any) that asks for its rewrite. Each pass finds its
// own (Pass::findCandidates, rewriters/PassManager's collectCandidates);
// --list prints the list; the passes take their work from it.
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

/// A kind of candidate ("stencil", "device-launch"): defined by the pass
/// that rewrites it (which names its kinds in its constructor) and compared
/// by address.
struct CandidateKind {
  llvm::StringLiteral Name;
};

struct Candidate {
  const CandidateKind *Kind = nullptr;
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
  /// Where the candidate is a run of Statement's statements rather than
  /// all of them (a stage chain in a function's body): its first and last.
  const clang::Stmt *FirstStatement = nullptr, *LastStatement = nullptr;
};

/// What the passes find their candidates with (Pass::findCandidates): the
/// file, its pragmas and launches, and the list they add to.
class CandidateFinder {
public:
  CandidateFinder(clang::ASTContext &Ctx,
                  llvm::ArrayRef<AttachedPragma> Pragmas,
                  const CudaArchRegions &ArchRegions);

  clang::ASTContext &context() const { return Ctx; }
  llvm::ArrayRef<AttachedPragma> pragmas() const { return Pragmas; }
  /// Every launch in the main file (found once, for all passes).
  llvm::ArrayRef<LaunchSite> launches() const { return Launches; }
  /// The kernels with a body written in the main file.
  std::vector<const clang::FunctionDecl *> mainFileKernels() const;
  /// Those and the kernels with a body in the project files the main file
  /// includes (not system headers), in the order the file brings them in.
  std::vector<const clang::FunctionDecl *> projectKernels() const;

  /// A new candidate of \p Kind at \p Loc (its expansion), flagged where it
  /// lies under a __CUDA_ARCH__ conditional.
  Candidate &add(const CandidateKind &Kind, clang::SourceLocation Loc);
  /// The pragma of directive \p Directive whose target is \p F, or whose
  /// target statement contains \p S.
  const PragmaDirective *annotation(const DirectiveSpec &Directive,
                                    const clang::Decl *F,
                                    const clang::Stmt *S = nullptr) const;

  /// The candidates added, sorted by offset (those at one offset in the
  /// order the passes run, which is the order they were added).
  std::vector<Candidate> take();

private:
  bool contains(const clang::Stmt *Outer, const clang::Stmt *Inner) const;

  clang::ASTContext &Ctx;
  const clang::SourceManager &SM;
  llvm::ArrayRef<AttachedPragma> Pragmas;
  const CudaArchRegions &ArchRegions;
  std::vector<LaunchSite> Launches;
  std::vector<Candidate> Result;
};

/// Whether the main file has any CUDA of its own: a __global__ or
/// __device__ function, a __device__/__constant__/__shared__ variable, or a
/// kernel launch.
bool mainFileHasCudaCode(clang::ASTContext &Ctx);

} // namespace cuda_rewrite

#endif
