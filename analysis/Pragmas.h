//===- Pragmas.h - #pragma cuda_rewrite front end ---------------*- C++ -*-===//
//
// `#pragma cuda_rewrite <directive> <clauses>` (docs/design.md section 3) is
// read by a PragmaHandler while clang preprocesses, checked against the
// grammar of its directive (each pass defines its own directives: their
// clauses and what they must precede), attached after parsing to the
// statement or declaration that follows it, and validated against that
// target. Every problem is a clang diagnostic that points at the pragma or
// at the offending clause.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_PRAGMAS_H
#define CUDA_REWRITE_ANALYSIS_PRAGMAS_H

#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Pragma.h"
#include "llvm/ADT/ArrayRef.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// How a clause's parenthesised arguments are checked.
enum class ClauseArgs {
  None,          ///< `overlap`: no parentheses.
  OneOf,         ///< `granularity(block)`: one word from Choices.
  PositiveInt,   ///< `p(4)`.
  AutoOrIntPair, ///< `tile(auto)`, `tile(1, 8)` or `tile(1, 8, 4)`.
  /// `hybrid(auto)` or `hybrid(0.5)`, in [0, 1], with an optional split
  /// dimension: `hybrid(0.5, y)`.
  AutoOrFraction,
  Text, ///< `config(tune.json)` or `config("tune.json")`.
};

/// The integers a clause accepts, beyond their form: "" when \p Values
/// (the clause's integer arguments, in order) are all in range, else what
/// the range is ("takes 1..64 rows per thread"). Checked at the pragma, so
/// that a value no kernel could take is an error where it is written.
using ClauseValueCheck = std::string (*)(llvm::ArrayRef<unsigned> Values);

/// One clause of a directive's grammar.
struct ClauseSpec {
  llvm::StringLiteral Name;
  ClauseArgs Args;
  llvm::ArrayRef<llvm::StringLiteral> Choices = {};
  ClauseValueCheck Check = nullptr;
};

/// What a directive must precede (checked after parsing, with an error at
/// the pragma otherwise).
enum class PragmaTarget {
  /// A __global__ function.
  Kernel,
  /// A __global__ function, or a statement in device code that launches
  /// kernels.
  KernelOrDeviceLaunches,
  /// A statement in the body of a __global__ function.
  StatementInKernel,
  /// A { } block of host code with at least two kernel launches.
  HostLaunchBlock,
  /// A __device__ void function.
  DeviceVoidFunction,
  /// A host statement that launches a kernel.
  HostLaunch,
};

/// A directive, `#pragma cuda_rewrite <Name> <clauses>`: defined by the pass
/// that reads it (docs/design.md section 3 lists them all), handed to the
/// pragma handler in a table, and compared by address.
struct DirectiveSpec {
  llvm::StringLiteral Name;
  llvm::ArrayRef<ClauseSpec> Clauses;
  PragmaTarget Target;
  /// The directive is read in the project files the main file includes
  /// too (not system headers): its pass rewrites kernels defined there.
  bool InIncludedFiles = false;
};

struct PragmaClause {
  std::string Name;
  /// The arguments between the parentheses, split on top-level commas, each
  /// the concatenated spelling of its tokens ("32", "auto", "tune.json").
  std::vector<std::string> Args;
  clang::SourceLocation Loc;
};

struct PragmaDirective {
  const DirectiveSpec *Spec = nullptr;
  std::vector<PragmaClause> Clauses;
  clang::SourceLocation HashLoc; ///< The '#' of the pragma line.
  clang::SourceLocation EndLoc;  ///< The end of the pragma line.
  /// The file the pragma is in: the main file, or a project file it
  /// includes (DirectiveSpec::InIncludedFiles).
  clang::FileID File;
  unsigned Offset = 0; ///< HashLoc's offset in File.

  bool inMainFile(const clang::SourceManager &SM) const {
    return File == SM.getMainFileID();
  }

  bool is(const DirectiveSpec &S) const { return Spec == &S; }
  llvm::StringRef name() const { return Spec->Name; }
  const PragmaClause *clause(llvm::StringRef Name) const;
  /// "aggregate granularity(block)".
  std::string spelling() const;
};

/// Records every well-formed cuda_rewrite pragma of the main file into a
/// vector the caller owns; diagnoses malformed ones. \p Directives (which
/// must outlive the handler) are the directives it knows, in the order
/// its messages list them.
class CudaRewritePragmaHandler : public clang::PragmaHandler {
public:
  CudaRewritePragmaHandler(llvm::ArrayRef<const DirectiveSpec *> Directives,
                           std::vector<PragmaDirective> &Out)
      : clang::PragmaHandler("cuda_rewrite"), Directives(Directives), Out(Out) {
  }
  void HandlePragma(clang::Preprocessor &PP, clang::PragmaIntroducer Introducer,
                    clang::Token &FirstToken) override;

private:
  llvm::ArrayRef<const DirectiveSpec *> Directives;
  std::vector<PragmaDirective> &Out;
};

/// What a pragma ended up attached to: a declaration at file scope or a
/// statement directly inside a { } block.
struct AttachedPragma {
  const PragmaDirective *Directive = nullptr;
  const clang::Decl *TargetDecl = nullptr;
  const clang::Stmt *TargetStmt = nullptr;
  /// For a statement: the function whose body holds it.
  const clang::FunctionDecl *EnclosingFunction = nullptr;

  clang::SourceLocation targetLoc() const;
  /// The __global__/__device__ function a declaration target names (looking
  /// through function templates), or null.
  const clang::FunctionDecl *targetFunction() const;
};

/// Attaches each pragma to what follows it and checks that the directive
/// applies there. Pragmas that fail are diagnosed and left out.
std::vector<AttachedPragma>
attachPragmas(clang::ASTContext &Ctx,
              llvm::ArrayRef<PragmaDirective> Directives);

} // namespace cuda_rewrite

#endif
