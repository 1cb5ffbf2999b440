//===- EditSet.cpp - The edits of one file, checked -----------------------===//

#include "rewriters/common/EditSet.h"

#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

static Error editError(const Twine &Message) {
  return createStringError(inconvertibleErrorCode(), Message);
}

Expected<unsigned> EditSet::mainFileOffset(SourceLocation Loc) const {
  if (Loc.isInvalid() || Loc.isMacroID() || !SM.isWrittenInMainFile(Loc))
    return editError("cannot edit code outside the main file or inside a "
                     "macro expansion");
  return SM.getFileOffset(Loc);
}

Error EditSet::add(unsigned Offset, unsigned Length, StringRef Text) {
  tooling::Replacement R(SM.getFileEntryRefForID(SM.getMainFileID())->getName(),
                         Offset, Length, Text);
  if (Error E = Edits.add(R))
    return editError("conflicting edits at offset " + Twine(Offset) + ": " +
                     toString(std::move(E)));
  return Error::success();
}

Error EditSet::replace(CharSourceRange Range, StringRef Text) {
  // Accepts a range whose ends are macro arguments or whole expansions as
  // long as it maps back to one contiguous piece of main-file text.
  CharSourceRange FileRange =
      Lexer::makeFileCharRange(Range, SM, LangOptions());
  if (FileRange.isInvalid())
    return editError("cannot edit code produced by a macro expansion");
  Expected<unsigned> Begin = mainFileOffset(FileRange.getBegin());
  if (!Begin)
    return Begin.takeError();
  Expected<unsigned> End = mainFileOffset(FileRange.getEnd());
  if (!End)
    return End.takeError();
  return add(*Begin, *End - *Begin, Text);
}

Error EditSet::insertBefore(SourceLocation Loc, StringRef Text) {
  Expected<unsigned> Offset = mainFileOffset(Loc);
  if (!Offset)
    return Offset.takeError();
  return add(*Offset, 0, Text);
}

Error EditSet::removeLines(SourceLocation Begin, SourceLocation End) {
  Expected<unsigned> BeginOffset = mainFileOffset(Begin);
  if (!BeginOffset)
    return BeginOffset.takeError();
  Expected<unsigned> EndOffset = mainFileOffset(End);
  if (!EndOffset)
    return EndOffset.takeError();
  StringRef Buffer = SM.getBufferData(SM.getMainFileID());
  size_t LineStart = Buffer.rfind('\n', *BeginOffset);
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  size_t LineEnd = Buffer.find('\n', *EndOffset);
  LineEnd = LineEnd == StringRef::npos ? Buffer.size() : LineEnd + 1;
  StringRef Before = Buffer.slice(LineStart, *BeginOffset);
  StringRef After = Buffer.slice(*EndOffset, LineEnd);
  if (!Before.trim().empty() || !After.trim().empty()) {
    // Something else shares the lines (another statement, a comment after
    // the range): only the range goes, with the blanks after it.
    size_t Blanks = After.size() - After.ltrim(" \t").size();
    return add(*BeginOffset, *EndOffset - *BeginOffset + unsigned(Blanks), "");
  }
  return add(LineStart, LineEnd - LineStart, "");
}

Error EditSet::addDefinition(StringRef Key, StringRef Text,
                             SourceLocation Anchor) {
  Expected<unsigned> AnchorOffset = mainFileOffset(Anchor);
  if (!AnchorOffset)
    return AnchorOffset.takeError();
  auto [It, Inserted] =
      Definitions.try_emplace(Key.str(), Definition{Text.str(), *AnchorOffset});
  if (Inserted)
    return Error::success();
  if (It->second.Text != Text)
    return editError("two different definitions generated for '" + Key + "'");
  It->second.AnchorOffset = std::min(It->second.AnchorOffset, *AnchorOffset);
  return Error::success();
}

Expected<tooling::Replacements> EditSet::finalize() const {
  tooling::Replacements All = Edits;
  // One block per anchor, definitions sorted by key within it: the output
  // does not depend on the order the passes generated them in.
  std::map<unsigned, std::string> Blocks;
  for (const auto &[Key, Def] : Definitions)
    Blocks[Def.AnchorOffset] += Def.Text;
  StringRef File = SM.getFileEntryRefForID(SM.getMainFileID())->getName();
  for (const auto &[Anchor, Block] : Blocks)
    if (Error E = All.add(tooling::Replacement(File, Anchor, 0, Block)))
      return editError("generated definitions conflict with an edit: " +
                       toString(std::move(E)));
  return All;
}

} // namespace cuda_rewrite
