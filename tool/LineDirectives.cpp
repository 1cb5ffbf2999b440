//===- LineDirectives.cpp - #line directives in rewritten files -----------===//

#include "tool/LineDirectives.h"
#include "tool/LineEndings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <vector>

using namespace llvm;
using clang::tooling::Replacement;
using clang::tooling::Replacements;

namespace cuda_rewrite {

namespace {

bool isLineStart(StringRef Text, size_t Pos) {
  return Pos == 0 || Text[Pos - 1] == '\n';
}

/// The start of the line holding \p Pos.
size_t lineStart(StringRef Text, size_t Pos) {
  size_t Newline = Text.rfind('\n', Pos);
  return Newline == StringRef::npos ? 0 : Newline + 1;
}

/// The start of the line after the one holding \p Pos (the end of the text
/// on the last line).
size_t nextLineStart(StringRef Text, size_t Pos) {
  size_t Newline = Text.find('\n', Pos);
  return Newline == StringRef::npos ? Text.size() : Newline + 1;
}

/// Original lines that edits touch, as [Begin, End) offsets: both are line
/// starts (End may be the end of the text), and the rewritten text of the
/// range ends at a line start too.
struct Group {
  size_t Begin, End;
  std::vector<const Replacement *> Edits;
};

/// The whole lines \p R touches. An edit that starts mid-line takes its
/// line from the start; one whose rewritten text does not end a line (it
/// ends mid-line, or its replacement continues the line after it) takes the
/// rest of that line. A line-aligned edit (whole lines replaced by text that
/// ends with a newline, or an insertion of such text at a line start) takes
/// exactly its lines, none for an insertion.
std::pair<size_t, size_t> touchedLines(StringRef Text, const Replacement &R) {
  size_t Begin = R.getOffset(), End = Begin + R.getLength();
  StringRef New = R.getReplacementText();
  bool EndsLine = New.empty() ? isLineStart(Text, Begin) : New.back() == '\n';
  if (!EndsLine || !isLineStart(Text, End))
    End = nextLineStart(Text, End);
  return {lineStart(Text, Begin), End};
}

/// Groups \p Edits by the lines they touch; groups that touch or overlap
/// are merged, so that an untouched line lies between any two.
std::vector<Group> groupEdits(StringRef Text, const Replacements &Edits) {
  std::vector<Group> Groups;
  for (const Replacement &R : Edits) {
    if (R.getLength() == 0 && R.getReplacementText().empty())
      continue;
    auto [Begin, End] = touchedLines(Text, R);
    if (!Groups.empty() && Begin <= Groups.back().End) {
      Groups.back().End = std::max(Groups.back().End, End);
      Groups.back().Edits.push_back(&R);
    } else {
      Groups.push_back({Begin, End, {&R}});
    }
  }
  return Groups;
}

/// The offsets of \p Text where a line starts that a #line directive may
/// precede, in order: not inside a comment, a string or character literal,
/// a raw string or parentheses (a function-like macro's arguments may span
/// lines, and a directive among them is not portable), and not after a line
/// continued with a backslash. Offset 0 is one.
std::vector<size_t> safeLineStarts(StringRef Text) {
  enum { Code, BlockComment, LineComment, String, Char, Raw } State = Code;
  std::string RawEnd; // `)delim"` ends the raw string.
  unsigned Parens = 0;
  bool Directive = false; // In a preprocessor directive's line.
  bool LineBegin = true;  // Only blanks and comments so far on this line.
  std::vector<size_t> Safe{0};
  auto Next = [&](size_t I) { return I + 1 < Text.size() ? Text[I + 1] : 0; };
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (C == '\n') {
      if (State == Raw || State == BlockComment)
        continue;
      StringRef Before = Text.take_front(I).rtrim(" \t\r\f\v");
      if (Before.ends_with("\\"))
        continue; // A spliced line goes on with the next one.
      if (State != Code)
        State = Code; // A line comment ends; an unterminated literal too.
      Directive = false;
      LineBegin = true;
      if (Parens == 0)
        Safe.push_back(I + 1);
      continue;
    }
    switch (State) {
    case BlockComment:
      if (C == '*' && Next(I) == '/') {
        State = Code;
        ++I;
      }
      continue;
    case LineComment:
      continue;
    case String:
    case Char:
      if (C == '\\' && Next(I) != '\n' && Next(I) != '\r')
        ++I;
      else if (C == (State == String ? '"' : '\''))
        State = Code;
      continue;
    case Raw:
      if (Text.substr(I).starts_with(RawEnd)) {
        I += RawEnd.size() - 1;
        State = Code;
      }
      continue;
    case Code:
      break;
    }
    if (isSpace(C))
      continue;
    if (C == '/' && (Next(I) == '*' || Next(I) == '/')) {
      State = Next(I) == '*' ? BlockComment : LineComment;
      ++I;
      continue;
    }
    bool WasLineBegin = LineBegin;
    LineBegin = false;
    if (C == '#' && WasLineBegin) {
      Directive = true;
    } else if (C == '"') {
      State = String;
    } else if (C == '\'') {
      State = Char;
    } else if (isDigit(C) || (C == '.' && isDigit(Next(I)))) {
      // A pp-number, digit separators (1'000) and exponents (1e+3) included.
      size_t J = I + 1;
      while (J < Text.size()) {
        char D = Text[J];
        if (isAlnum(D) || D == '_' || D == '.' ||
            ((D == '+' || D == '-') &&
             StringRef("eEpP").contains(Text[J - 1])) ||
            (D == '\'' && J + 1 < Text.size() && isAlnum(Text[J + 1])))
          ++J;
        else
          break;
      }
      I = J - 1;
    } else if (isAlpha(C) || C == '_' || C == '$') {
      size_t J = I;
      while (J < Text.size() &&
             (isAlnum(Text[J]) || Text[J] == '_' || Text[J] == '$'))
        ++J;
      StringRef Word = Text.slice(I, J);
      I = J - 1;
      if (J < Text.size() && Text[J] == '"' &&
          is_contained({"R", "u8R", "uR", "UR", "LR"}, Word)) {
        size_t Open = Text.find('(', J + 1);
        if (Open == StringRef::npos || Open - J - 1 > 16)
          continue;
        RawEnd = (")" + Text.slice(J + 1, Open) + "\"").str();
        State = Raw;
        I = Open;
      }
    } else if (!Directive && C == '(') {
      ++Parens;
    } else if (!Directive && C == ')' && Parens > 0) {
      --Parens;
    }
  }
  return Safe;
}

/// The 1-based number of the line holding \p Pos, given the offsets at
/// which lines start.
unsigned lineNumber(ArrayRef<size_t> Starts, size_t Pos) {
  return std::upper_bound(Starts.begin(), Starts.end(), Pos) - Starts.begin();
}

} // namespace

std::string lineDirective(unsigned Line, StringRef FileName) {
  std::string Directive = "#line " + std::to_string(Line) + " \"";
  for (char C : FileName) {
    if (C == '\\' || C == '"')
      Directive += '\\';
    if (C == '\n')
      Directive += "\\n";
    else
      Directive += C;
  }
  return Directive + "\"\n";
}

Expected<std::string> applyWithLineDirectives(StringRef Original,
                                              const Replacements &Edits,
                                              StringRef FileName) {
  for (const Replacement &R : Edits)
    if (R.getOffset() + R.getLength() > Original.size())
      return createStringError(inconvertibleErrorCode(),
                               "an edit at offset %u lies past the end of "
                               "the file",
                               R.getOffset());
  std::vector<size_t> Starts{0};
  for (size_t I = 0; I < Original.size(); ++I)
    if (Original[I] == '\n')
      Starts.push_back(I + 1);

  // The rewritten text without directives, and where in it each untouched
  // original line starts (also the first line of each group): the places
  // where a directive may go.
  struct Spot {
    size_t Offset;
    unsigned Line;
  };
  std::string Plain;
  std::vector<Spot> Spots;
  auto CopyUntouched = [&](size_t From, size_t To) {
    size_t Line =
        isLineStart(Original, From) ? From : nextLineStart(Original, From);
    for (; Line <= To && Line < Original.size();
         Line = nextLineStart(Original, Line))
      Spots.push_back({Plain.size() + (Line - From), lineNumber(Starts, Line)});
    Plain += Original.slice(From, To);
  };
  size_t Pos = 0;
  for (const Group &G : groupEdits(Original, Edits)) {
    CopyUntouched(Pos, G.Begin);
    Pos = G.Begin;
    for (const Replacement *R : G.Edits) {
      Plain += Original.slice(Pos, R->getOffset());
      Plain += R->getReplacementText();
      Pos = R->getOffset() + R->getLength();
    }
    Plain += Original.slice(Pos, G.End);
    Pos = G.End;
  }
  CopyUntouched(Pos, Original.size());
  if (Plain == Original)
    return Original.str();

  // A directive goes where the line that follows would otherwise be
  // numbered wrongly, if that is a safe place; else at the next safe one.
  std::vector<size_t> Safe = safeLineStarts(Plain);
  StringRef Text = Plain;
  size_t Body = Text.starts_with("\xEF\xBB\xBF") ? 3 : 0; // After a BOM.
  // In a CRLF file the directives end their lines as the file does.
  const char *Newline = endsLinesWithCrlf(Original) ? "\r\n" : "\n";
  auto Directive = [&](unsigned Line) {
    std::string D = lineDirective(Line, FileName);
    D.pop_back();
    return D + Newline;
  };
  std::string Result = Text.take_front(Body).str() + Directive(1);
  unsigned Presumed = 1; // What the compiler takes the line at Counted for.
  size_t Counted = Body, Copied = Body;
  for (const Spot &S : Spots) {
    if (S.Offset < Counted)
      continue;
    Presumed += Text.slice(Counted, S.Offset).count('\n');
    Counted = S.Offset;
    if (Presumed == S.Line ||
        !std::binary_search(Safe.begin(), Safe.end(), S.Offset))
      continue;
    Result += Text.slice(Copied, S.Offset);
    Result += Directive(S.Line);
    Copied = S.Offset;
    Presumed = S.Line;
  }
  Result += Text.substr(Copied);
  return Result;
}

} // namespace cuda_rewrite
