//===- GeneratedLayout.cpp - One layout for all generated code ------------===//

#include "rewriters/common/GeneratedLayout.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <optional>
#include <vector>

using namespace clang;

namespace cuda_rewrite {

llvm::Expected<format::FormatStyle> generatedCodeStyle(llvm::StringRef FilePath,
                                                       llvm::StringRef Code) {
  llvm::Expected<format::FormatStyle> Style =
      format::getStyle("file", FilePath, "LLVM", Code);
  if (!Style)
    return Style;
  Style->Language = format::FormatStyle::LK_Cpp; // .cu and .cuh too.
  // CUDA's `__launch_bounds__(N)` is an attribute: read as an identifier, it
  // passes for the function's name, and the real name goes on an indented
  // line of its own.
  if (!llvm::is_contained(Style->AttributeMacros, "__launch_bounds__"))
    Style->AttributeMacros.push_back("__launch_bounds__");
  return Style;
}

/// The text each edit inserts, as ranges of the edited file, without the
/// blanks and newlines at its ends: a range that touched the user's token
/// before or after it would make clang-format lay out the user's line too.
static std::vector<tooling::Range>
insertedRanges(const tooling::Replacements &Edits) {
  std::vector<tooling::Range> Ranges;
  long Shift = 0;
  for (const tooling::Replacement &R : Edits) {
    llvm::StringRef Text = R.getReplacementText();
    size_t Lead = Text.size() - Text.ltrim().size();
    llvm::StringRef Core = Text.trim();
    if (!Core.empty())
      Ranges.emplace_back(unsigned(long(R.getOffset()) + Shift + long(Lead)),
                          unsigned(Core.size()));
    Shift += long(Text.size()) - long(R.getLength());
  }
  return Ranges;
}

// clang-format puts every preprocessor line at column 0, also the
// `#pragma unroll` of a loop and the comments above it. While the layout
// runs, generated pragma lines are comments (with this marker), which sit at
// the indentation of the code after them; then they are pragmas again.
static constexpr llvm::StringLiteral PragmaMarker = "// cuda-rewrite-pragma ";

/// \p Text with each line that is a whole `#pragma` (not continued with a
/// backslash) turned into a marked comment.
static std::string markPragmas(llvm::StringRef Text) {
  std::string Out;
  for (llvm::StringRef Rest = Text; !Rest.empty();) {
    auto [Line, Next] = Rest.split('\n');
    llvm::StringRef Code = Line.ltrim(" \t");
    if (Code.starts_with("#pragma") && !Line.rtrim().ends_with("\\"))
      Out += Line.take_front(Line.size() - Code.size()).str() +
             PragmaMarker.str() + Code.str();
    else
      Out += Line.str();
    if (Rest.size() > Line.size())
      Out += "\n";
    Rest = Next;
  }
  return Out;
}

/// \p Edits with their pragma lines marked.
static tooling::Replacements markPragmas(const tooling::Replacements &Edits) {
  tooling::Replacements Marked;
  for (const tooling::Replacement &R : Edits)
    llvm::cantFail(Marked.add(
        tooling::Replacement(R.getFilePath(), R.getOffset(), R.getLength(),
                             markPragmas(R.getReplacementText()))));
  return Marked;
}

/// The edits that take the markers out of \p Text again, or nothing if a
/// marked line did not stay whole behind its marker.
static std::optional<tooling::Replacements>
unmarkPragmas(llvm::StringRef Text, llvm::StringRef FileName) {
  // The marker's name has no blank, so a reflow cannot split it; one that
  // joined it to the comment above would leave it mid-line.
  llvm::StringRef Name = PragmaMarker.drop_front(3).rtrim();
  tooling::Replacements Unmark;
  for (size_t At = Text.find(Name); At != llvm::StringRef::npos;
       At = Text.find(Name, At + 1)) {
    size_t LineStart = Text.rfind('\n', At) + 1; // npos + 1 == 0.
    size_t Begin = At - 3;                       // "// " before the name.
    if (At < LineStart + 3 || !Text.slice(LineStart, Begin).trim().empty() ||
        !Text.substr(Begin).starts_with(PragmaMarker.str() + "#pragma"))
      return std::nullopt;
    llvm::cantFail(Unmark.add(tooling::Replacement(
        FileName, unsigned(Begin), unsigned(PragmaMarker.size()), "")));
  }
  return Unmark;
}

/// The start of the line of \p Text that holds \p Offset.
static size_t lineBegin(llvm::StringRef Text, size_t Offset) {
  size_t Newline = Text.substr(0, Offset).rfind('\n');
  return Newline == llvm::StringRef::npos ? 0 : Newline + 1;
}

/// The end (its newline, or the end of \p Text) of the line holding \p
/// Offset.
static size_t lineEnd(llvm::StringRef Text, size_t Offset) {
  size_t Newline = Text.find('\n', Offset);
  return Newline == llvm::StringRef::npos ? Text.size() : Newline;
}

/// Whether code \p Line (one line) goes on on the next line: it is code and
/// does not end a statement, a declaration or a block.
static bool continuesOnNextLine(llvm::StringRef Line) {
  llvm::StringRef Code = Line.trim();
  return !Code.empty() && !Code.starts_with("#") && !Code.starts_with("//") &&
         !Code.ends_with("*/") && !Code.ends_with("\\") &&
         !llvm::is_contained(llvm::StringRef(";{}:"), Code.back());
}

/// The changes of \p Layout that lie on lines of \p Text holding inserted
/// text (\p Inserted), or on the other lines of their statements; nothing
/// if a change elsewhere is more than whitespace. clang-format changes lines
/// next to those it is asked to: it re-indents the first line of a body
/// whose head it laid out (such a change only of blanks is left out: the
/// user's line keeps its indentation), and it reflows a comment the user
/// wrote just above a generated one as one paragraph with it (the pieces of
/// a reflow cannot be left out one by one).
static std::optional<tooling::Replacements>
onGeneratedLines(llvm::StringRef Text, llvm::ArrayRef<tooling::Range> Inserted,
                 const tooling::Replacements &Layout) {
  // The lines holding inserted text, in order: [Begin, End) from the start
  // of the first to the end of the last; Lead is where the whitespace before
  // Begin starts (clang-format replaces all the whitespace before a token,
  // line breaks included, to indent it).
  struct Span {
    size_t Lead, Begin, End;
  };
  std::vector<Span> Spans;
  for (const tooling::Range &R : Inserted) {
    size_t Begin = lineBegin(Text, R.getOffset());
    size_t End = lineEnd(Text, R.getOffset() + R.getLength());
    // The statement or declaration the lines belong to: a kernel head that
    // gained launch bounds is laid out with its continued parameter lines.
    while (Begin > 0) {
      size_t Previous = lineBegin(Text, Begin - 1);
      if (!continuesOnNextLine(Text.slice(Previous, Begin - 1)))
        break;
      Begin = Previous;
    }
    while (End < Text.size() &&
           continuesOnNextLine(Text.slice(lineBegin(Text, End), End)))
      End = lineEnd(Text, End + 1);
    size_t Lead = Text.substr(0, Begin).find_last_not_of(" \t\r\n");
    Lead = Lead == llvm::StringRef::npos ? 0 : Lead + 1;
    if (!Spans.empty() && Lead <= Spans.back().End)
      Spans.back().End = std::max(Spans.back().End, End);
    else
      Spans.push_back({Lead, Begin, End});
  }
  tooling::Replacements Kept;
  for (const tooling::Replacement &R : Layout) {
    size_t Begin = R.getOffset(), End = Begin + R.getLength();
    bool Keep = llvm::any_of(Spans, [&](const Span &S) {
      if (Begin >= S.Begin && End <= S.End)
        return true;
      // Into the whitespace before the lines: blanks and line breaks only,
      // and never all the line breaks (that would join a line to the one
      // above).
      if (Begin >= S.Lead && End <= S.End &&
          Text.slice(Begin, std::max(End, S.Begin)).trim().empty() &&
          (End <= S.Begin || Text.slice(Begin, S.Begin).contains('\n')) &&
          R.getReplacementText().contains('\n'))
        return true;
      // Into the whitespace after them: only blank lines, the user's next
      // line keeps its indentation.
      llvm::StringRef Old = Text.slice(Begin, End),
                      New = R.getReplacementText();
      return Begin >= S.Begin && Begin <= S.End && End > S.End &&
             Old.trim().empty() && Old.contains('\n') && New.contains('\n') &&
             Old.rsplit('\n').second == New.rsplit('\n').second;
    });
    if (Keep)
      llvm::cantFail(Kept.add(R));
    else if (!Text.slice(Begin, End).trim().empty() ||
             !R.getReplacementText().trim().empty())
      return std::nullopt;
  }
  return Kept;
}

/// \p Text without what a layout may change: blanks and line breaks, the
/// split of a string literal into adjacent pieces, and comment markers
/// (reflowing a comment adds and removes `//`).
static std::string layoutFree(llvm::StringRef Text) {
  std::string Out;
  for (size_t I = 0; I < Text.size(); ++I) {
    if (llvm::isSpace(Text[I]))
      continue;
    if (Text.substr(I).starts_with("//")) { // `//`, `///` and longer runs.
      while (I + 1 < Text.size() && Text[I + 1] == '/')
        ++I;
      continue;
    }
    Out += Text[I];
  }
  for (size_t At; (At = Out.find("\"\"")) != std::string::npos;)
    Out.erase(At, 2);
  return Out;
}

/// \p Edits where a generated line comment would continue a comment the
/// user wrote on the line above or below: a blank line keeps them apart, so
/// that the layout never reflows the user's comment with it.
static tooling::Replacements
separateComments(llvm::StringRef Original, const tooling::Replacements &Edits) {
  auto IsLineComment = [](llvm::StringRef Line) {
    return Line.trim().starts_with("//");
  };
  // Where each edit's text starts and ends in the result: past the edits
  // right before and after it that only remove text (a pragma's line).
  std::vector<tooling::Replacement> All(Edits.begin(), Edits.end());
  auto Removes = [](const tooling::Replacement &R) {
    return R.getReplacementText().empty();
  };
  tooling::Replacements Out;
  for (size_t I = 0; I != All.size(); ++I) {
    const tooling::Replacement &R = All[I];
    size_t First = I, Last = I;
    while (First > 0 && Removes(All[First - 1]) &&
           All[First - 1].getOffset() + All[First - 1].getLength() ==
               All[First].getOffset())
      --First;
    while (Last + 1 < All.size() && Removes(All[Last + 1]) &&
           All[Last].getOffset() + All[Last].getLength() ==
               All[Last + 1].getOffset())
      ++Last;
    std::string Text = R.getReplacementText().str();
    llvm::StringRef Before = Original.substr(0, All[First].getOffset());
    llvm::StringRef After =
        Original.substr(All[Last].getOffset() + All[Last].getLength());
    llvm::StringRef TextRef = Text;
    if (!Text.empty() && (Before.empty() || Before.ends_with("\n")) &&
        IsLineComment(TextRef.split('\n').first) &&
        IsLineComment(Before.drop_back().rsplit('\n').second))
      Text = "\n" + Text;
    TextRef = Text;
    if (TextRef.ends_with("\n") &&
        IsLineComment(TextRef.drop_back().rsplit('\n').second) &&
        IsLineComment(After.split('\n').first))
      Text += "\n";
    llvm::cantFail(Out.add(tooling::Replacement(R.getFilePath(), R.getOffset(),
                                                R.getLength(), Text)));
  }
  return Out;
}

/// \p Edits laid out in \p Style over the ranges they insert (in \p
/// Original's offsets), and the text that results; nothing where the layout
/// would touch other lines or change more than layout.
static std::optional<std::pair<tooling::Replacements, std::string>>
reformatInserted(llvm::StringRef Original, const tooling::Replacements &Edits,
                 const format::FormatStyle &Style, llvm::StringRef FileName) {
  llvm::Expected<std::string> Edited =
      tooling::applyAllReplacements(Original, Edits);
  if (!Edited) {
    llvm::consumeError(Edited.takeError());
    return std::nullopt;
  }
  std::vector<tooling::Range> Inserted = insertedRanges(Edits);
  std::optional<tooling::Replacements> Layout = onGeneratedLines(
      *Edited, Inserted, format::reformat(Style, *Edited, Inserted, FileName));
  if (!Layout)
    return std::nullopt;
  llvm::Expected<std::string> LaidOut =
      tooling::applyAllReplacements(*Edited, *Layout);
  if (!LaidOut) {
    llvm::consumeError(LaidOut.takeError());
    return std::nullopt;
  }
  if (layoutFree(*LaidOut) != layoutFree(*Edited))
    return std::nullopt;
  return std::make_pair(Edits.merge(*Layout), std::move(*LaidOut));
}

/// The layout of \p Edits with generated pragmas indented like their code,
/// if it touches only generated lines.
static std::optional<tooling::Replacements>
layOutWithPragmas(llvm::StringRef Original, const tooling::Replacements &Edits,
                  const format::FormatStyle &Style, llvm::StringRef FileName) {
  // A comment pragma is never reflowed, nor joined to the comment above.
  format::FormatStyle MarkerStyle = Style;
  MarkerStyle.CommentPragmas =
      (Style.CommentPragmas.empty() ? "" : Style.CommentPragmas + "|") + "^ " +
      PragmaMarker.drop_front(3).rtrim().str();
  auto Marked =
      reformatInserted(Original, markPragmas(Edits), MarkerStyle, FileName);
  if (!Marked)
    return std::nullopt;
  std::optional<tooling::Replacements> Unmark =
      unmarkPragmas(Marked->second, FileName);
  if (!Unmark)
    return std::nullopt;
  return Marked->first.merge(*Unmark);
}

llvm::Expected<tooling::Replacements> layOutGeneratedCode(
    llvm::StringRef Original, const tooling::Replacements &Edits,
    const format::FormatStyle &Style, llvm::StringRef FileName) {
  if (insertedRanges(Edits).empty() || Style.DisableFormat)
    return Edits;
  tooling::Replacements Separated = separateComments(Original, Edits);
  if (auto LaidOut = layOutWithPragmas(Original, Separated, Style, FileName))
    return *LaidOut;
  // Without reflowing comments, the layout changes only the blanks between
  // tokens; then without marking pragmas (at column 0, as clang-format puts
  // them); else the edits as the passes wrote them.
  format::FormatStyle NoReflow = Style;
  NoReflow.ReflowComments = format::FormatStyle::RCS_IndentOnly;
  if (auto LaidOut = layOutWithPragmas(Original, Separated, NoReflow, FileName))
    return *LaidOut;
  if (auto LaidOut = reformatInserted(Original, Separated, NoReflow, FileName))
    return LaidOut->first;
  return Edits;
}

std::string callText(llvm::StringRef Callee, llvm::ArrayRef<std::string> Args) {
  return Callee.str() + "(" + llvm::join(Args, ", ") + ")";
}

} // namespace cuda_rewrite
