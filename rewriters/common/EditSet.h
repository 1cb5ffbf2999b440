//===- EditSet.h - The edits of one file, checked ---------------*- C++ -*-===//
//
// Every pass adds its edits to the file's EditSet. An edit that conflicts
// with one already there is an error, never dropped; an edit that would
// land inside a macro expansion is an error the pass turns into a refusal.
// Generated definitions (new kernels, helpers) are keyed so that each is
// emitted once, and all of them are emitted sorted by key in one block, so
// the output does not depend on the order passes ran in. The same
// Replacements feed -o, -i, --diff and --export-fixes.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_EDITSET_H
#define CUDA_REWRITE_REWRITERS_COMMON_EDITSET_H

#include "clang/Basic/SourceManager.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>

namespace cuda_rewrite {

class EditSet {
public:
  explicit EditSet(const clang::SourceManager &SM) : SM(SM) {}

  /// Replaces the text of \p Range (a token or char range, possibly written
  /// with macro locations that map back to plain main-file text).
  llvm::Error replace(clang::CharSourceRange Range, llvm::StringRef Text);
  llvm::Error remove(clang::CharSourceRange Range) {
    return replace(Range, "");
  }
  llvm::Error insertBefore(clang::SourceLocation Loc, llvm::StringRef Text);

  /// Removes the whole lines [Begin's line, End's line], newline included,
  /// where nothing but blanks lies outside [Begin, End) on them; else only
  /// [Begin, End) and the blanks after it (a comment or another statement
  /// on the line stays).
  llvm::Error removeLines(clang::SourceLocation Begin,
                          clang::SourceLocation End);

  /// Adds a generated definition. The same key with the same text is
  /// emitted once (before the earliest of its anchors); the same key with
  /// other text is an error. Definitions at one anchor are sorted by key.
  llvm::Error addDefinition(llvm::StringRef Key, llvm::StringRef Text,
                            clang::SourceLocation Anchor);

  bool empty() const { return Edits.empty() && Definitions.empty(); }

  /// All edits, definitions included, in offset order.
  llvm::Expected<clang::tooling::Replacements> finalize() const;

private:
  llvm::Expected<unsigned> mainFileOffset(clang::SourceLocation Loc) const;
  llvm::Error add(unsigned Offset, unsigned Length, llvm::StringRef Text);

  struct Definition {
    std::string Text;
    unsigned AnchorOffset;
  };
  const clang::SourceManager &SM;
  clang::tooling::Replacements Edits;
  std::map<std::string, Definition> Definitions;
};

} // namespace cuda_rewrite

#endif
