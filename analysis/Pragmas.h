//===- Pragmas.h - #pragma cuda_rewrite front end ---------------*- C++ -*-===//
//
// `#pragma cuda_rewrite <directive> <clauses>` (docs/design.md section 3) is
// read by a PragmaHandler while clang preprocesses, checked against the
// directive table below, attached after parsing to the statement or
// declaration that follows it, and validated against that target. Every
// problem is a clang diagnostic that points at the pragma or at the
// offending clause.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_PRAGMAS_H
#define CUDA_REWRITE_ANALYSIS_PRAGMAS_H

#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Lex/Pragma.h"
#include "llvm/ADT/ArrayRef.h"
#include <optional>
#include <string>
#include <vector>

namespace cuda_rewrite {

enum class DirectiveKind {
  Aggregate,
  Promote,
  OverlapBoundary,
  Systolic,
  Fuse,
  Stage,
  Pipeline
};

llvm::StringRef directiveName(DirectiveKind Kind);

struct PragmaClause {
  std::string Name;
  /// The arguments between the parentheses, split on top-level commas, each
  /// the concatenated spelling of its tokens ("32", "auto", "tune.json").
  std::vector<std::string> Args;
  clang::SourceLocation Loc;
};

struct PragmaDirective {
  DirectiveKind Kind;
  std::vector<PragmaClause> Clauses;
  clang::SourceLocation HashLoc; ///< The '#' of the pragma line.
  clang::SourceLocation EndLoc;  ///< The end of the pragma line.
  unsigned Offset = 0;           ///< HashLoc's offset in the main file.

  const PragmaClause *clause(llvm::StringRef Name) const;
  /// "aggregate granularity(block)".
  std::string spelling() const;
};

/// Records every well-formed cuda_rewrite pragma of the main file into a
/// vector the caller owns; diagnoses malformed ones.
class CudaRewritePragmaHandler : public clang::PragmaHandler {
public:
  explicit CudaRewritePragmaHandler(std::vector<PragmaDirective> &Out)
      : clang::PragmaHandler("cuda_rewrite"), Out(Out) {}
  void HandlePragma(clang::Preprocessor &PP, clang::PragmaIntroducer Introducer,
                    clang::Token &FirstToken) override;

private:
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
