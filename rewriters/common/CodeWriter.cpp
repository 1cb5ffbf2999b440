//===- CodeWriter.cpp - Generated code, a line at a time ------------------===//

#include "rewriters/common/CodeWriter.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include <cassert>

namespace cuda_rewrite {

//===-- NameAllocator -----------------------------------------------------===//

void NameAllocator::reserve(llvm::StringRef Name) { Taken.insert(Name); }

void NameAllocator::reserveIdentifiersIn(llvm::StringRef Text) {
  auto Continues = [](char C) { return llvm::isAlnum(C) || C == '_'; };
  for (size_t I = 0; I < Text.size();) {
    char First = Text[I];
    if (!llvm::isAlpha(First) && First != '_') {
      ++I;
      continue;
    }
    size_t End = I + 1;
    while (End < Text.size() && Continues(Text[End]))
      ++End;
    reserve(Text.slice(I, End));
    I = End;
  }
}

void NameAllocator::reserveIdentifiersOfSource(
    llvm::StringRef Source, const clang::LangOptions &LangOpts) {
  // The lexer reads up to a null character, which a slice of the file's
  // buffer does not end with.
  std::string Text = Source.str();
  clang::Lexer Raw(clang::SourceLocation(), LangOpts, Text.data(), Text.data(),
                   Text.data() + Text.size());
  clang::Token Tok;
  while (true) {
    bool AtEnd = Raw.LexFromRawLexer(Tok);
    if (Tok.is(clang::tok::raw_identifier))
      reserve(Tok.getRawIdentifier());
    if (AtEnd || Tok.is(clang::tok::eof))
      return;
  }
}

std::string NameAllocator::name(llvm::StringRef Wanted) {
  auto Known = Given.find(Wanted);
  if (Known != Given.end())
    return Known->second;
  std::string Name = fresh(Wanted);
  Given[Wanted] = Name;
  return Name;
}

std::string NameAllocator::fresh(llvm::StringRef Wanted) {
  std::string Name = Wanted.str();
  while (Taken.contains(Name))
    Name += "_";
  Taken.insert(Name);
  return Name;
}

//===-- CodeWriter --------------------------------------------------------===//

CodeWriter::Block::Block(CodeWriter &W, llvm::StringRef Closing)
    : Writer(&W), Closing(Closing.str()) {
  ++W.Depth;
}

CodeWriter::Block::Block(Block &&Other)
    : Writer(Other.Writer), Closing(std::move(Other.Closing)) {
  Other.Writer = nullptr;
}

CodeWriter::Block::~Block() {
  if (!Writer)
    return;
  assert(Writer->Depth > 0 && "blocks ended out of order");
  --Writer->Depth;
  if (!Closing.empty())
    Writer->line(Closing);
}

void CodeWriter::Block::continueWith(const llvm::Twine &Line) {
  assert(Writer && "a moved-from block");
  --Writer->Depth;
  Writer->line(Line);
  ++Writer->Depth;
}

void CodeWriter::writeLines(llvm::StringRef Text, llvm::StringRef Prefix,
                            llvm::StringRef EmptyLine) {
  std::string Indent(Depth * IndentWidth, ' ');
  llvm::SmallVector<llvm::StringRef, 8> Lines;
  Text.split(Lines, '\n');
  for (llvm::StringRef L : Lines) {
    // An empty line ends at its newline: no blanks for tools to flag.
    if (L.empty() && EmptyLine.empty()) {
      Out += "\n";
      continue;
    }
    Out += Indent;
    Out += L.empty() ? EmptyLine : Prefix;
    Out += L;
    Out += "\n";
  }
}

void CodeWriter::line(const llvm::Twine &Text) {
  llvm::SmallString<128> Buffer;
  writeLines(Text.toStringRef(Buffer), "", "");
}

void CodeWriter::comment(const llvm::Twine &Text) {
  llvm::SmallString<128> Buffer;
  writeLines(Text.toStringRef(Buffer), "// ", "//");
}

void CodeWriter::raw(llvm::StringRef Text) { Out += Text; }

CodeWriter::Block CodeWriter::block(const llvm::Twine &Opening,
                                    llvm::StringRef Closing) {
  line(Opening);
  return Block(*this, Closing);
}

CodeWriter::Block CodeWriter::unbraced(const llvm::Twine &Head) {
  line(Head);
  return Block(*this, "");
}

} // namespace cuda_rewrite
