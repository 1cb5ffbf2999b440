//===- CodeWriter.h - Generated code, a line at a time ----------*- C++ -*-===//
//
// Passes write code: kernels, launchers, structs. Two things go wrong when
// that code is one long format string: its indentation is written by hand,
// so a part reused at another depth comes out wrong, and its names are
// numbered placeholders that a reader has to count to match. A CodeWriter
// keeps the indentation, so each part writes its lines as if at the left
// margin and nests by opening blocks; a NameAllocator gives each generated
// local a name that the user's code does not use.
//
// A generator typically holds one of each:
//
//   NameAllocator Names;
//   Names.reserveIdentifiersIn(TextTakenFromTheKernel);
//   std::string I = Names.name("i"), Sum = Names.name("sum");
//
//   CodeWriter W;
//   W.comment("Add up the row.");
//   {
//     CodeWriter::Block Loop =
//         W.block("for (int " + I + " = 0; " + I + " < n; ++" + I + ") {");
//     W.line(Sum + " += row[" + I + "];");
//   } // Writes the closing "}".
//   return W.str();
//
// gives (with `i` free and `sum` used by the kernel)
//
//   // Add up the row.
//   for (int i = 0; i < n; ++i) {
//     sum_ += row[i];
//   }
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_CODEWRITER_H
#define CUDA_REWRITE_REWRITERS_COMMON_CODEWRITER_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include <string>

namespace clang {
class LangOptions;
} // namespace clang

namespace cuda_rewrite {

/// Names for generated locals that do not shadow or capture the user's: the
/// names the user's code uses are reserved first, then each wanted name is
/// given as it is, or with underscores appended until it is free.
class NameAllocator {
public:
  /// Marks \p Name as used by the user's code. Reserve before asking for
  /// names: a name already given is not given again.
  void reserve(llvm::StringRef Name);

  /// Reserves every identifier-like word of \p Text (an expression or
  /// declaration taken from the user's code): a letter or `_`, then letters,
  /// digits and `_`. The scan knows no C++ beyond that: the suffix of a
  /// number (the `f` of `1.0f`) is reserved too, which costs at most an
  /// underscore. Where a plan holds the names themselves, reserve() them.
  void reserveIdentifiersIn(llvm::StringRef Text);

  /// Reserves every identifier of \p Source, the user's code, as clang's
  /// lexer sees it. Unlike reserveIdentifiersIn, comments and literals name
  /// nothing: a comment that mentions a generated name (a test's CHECK line,
  /// say) leaves it as it is.
  void reserveIdentifiersOfSource(llvm::StringRef Source,
                                  const clang::LangOptions &LangOpts);

  /// The name to use for \p Wanted: \p Wanted itself when free, else
  /// \p Wanted followed by the fewest underscores that make it free. The
  /// answer is then taken, and the same \p Wanted always gets the same
  /// answer, so that every part of the generated code that asks for "i"
  /// names the same variable.
  std::string name(llvm::StringRef Wanted);

  /// A name no one has: \p Wanted followed by the fewest underscores that
  /// make it free, taken, but not remembered as \p Wanted's answer: each
  /// call gives another name (one per host argument that would be spelled
  /// the same).
  std::string fresh(llvm::StringRef Wanted);

private:
  llvm::StringSet<> Taken;
  llvm::StringMap<std::string> Given;
};

/// Generated code, built line by line at the current indentation.
///
/// Text given to line() and comment() may hold several lines, separated by
/// '\n': each gets the current indentation, so the continuation of a long
/// statement is written with its indentation relative to the statement's
/// first line. Empty lines get no indentation. Blocks nest: a Block object
/// indents the lines written while it lives, and writes its closing line
/// when it goes out of scope.
class CodeWriter {
public:
  /// The indented part of the code that one of block() or unbraced()
  /// opened. Ending it (leaving its scope) removes the indentation it added
  /// and writes its closing line, if it has one. Move it to hand the
  /// block's end to the caller, as a function that writes a loop's head
  /// does; nest Blocks in scopes (or std::optional, for a block that is
  /// only sometimes there) so that they end in the reverse order of their
  /// opening.
  class Block {
  public:
    Block(Block &&Other);
    Block(const Block &) = delete;
    Block &operator=(const Block &) = delete;
    Block &operator=(Block &&) = delete;
    ~Block();

    /// Writes \p Line at the opening's indentation between two bodies of
    /// the block, as `} else {`: the lines after it are the second body.
    void continueWith(const llvm::Twine &Line);

  private:
    friend class CodeWriter;
    Block(CodeWriter &W, llvm::StringRef Closing);

    CodeWriter *Writer; ///< Null once moved from.
    std::string Closing;
  };

  /// \p IndentWidth spaces for each level of nesting.
  explicit CodeWriter(unsigned IndentWidth = 2) : IndentWidth(IndentWidth) {}

  /// Writes \p Text's lines at the current indentation, each ending with a
  /// newline; line("") writes an empty line.
  void line(const llvm::Twine &Text);

  /// Writes \p Text's lines as `// ` comments at the current indentation
  /// (an empty line of \p Text as `//`).
  void comment(const llvm::Twine &Text);

  /// Writes \p Text as it is, without indentation: for text laid out
  /// elsewhere. It should end with a newline, as line() leaves the code.
  void raw(llvm::StringRef Text);

  /// Writes \p Opening (ending with `{`), and indents the lines after it
  /// until the Block ends, which writes \p Closing (`};` for a struct or a
  /// lambda).
  [[nodiscard]] Block block(const llvm::Twine &Opening,
                            llvm::StringRef Closing = "}");

  /// Writes \p Head, the head of an `if` or `for` whose body has no braces,
  /// and indents the lines after it until the Block ends.
  [[nodiscard]] Block unbraced(const llvm::Twine &Head);

  /// The code written so far.
  const std::string &str() const { return Out; }

private:
  void writeLines(llvm::StringRef Text, llvm::StringRef Prefix,
                  llvm::StringRef EmptyLine);

  std::string Out;
  unsigned IndentWidth;
  unsigned Depth = 0;
};

} // namespace cuda_rewrite

#endif
