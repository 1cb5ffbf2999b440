//===- CudaArchRegions.cpp - #if blocks that test __CUDA_ARCH__ -----------===//

#include "analysis/CudaArchRegions.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/Token.h"

using namespace clang;

namespace cuda_rewrite {

static constexpr llvm::StringLiteral ArchMacro = "__CUDA_ARCH__";

bool CudaArchRegions::contains(unsigned Offset) const {
  for (const auto &[Begin, End] : Ranges)
    if (Begin <= Offset && Offset <= End)
      return true;
  return false;
}

bool CudaArchRegionRecorder::mentionsArch(SourceRange ConditionRange) const {
  bool Invalid = false;
  llvm::StringRef Text =
      Lexer::getSourceText(CharSourceRange::getTokenRange(ConditionRange), SM,
                           LangOptions(), &Invalid);
  // __CUDA_ARCH_LIST__ and friends contain the name as a prefix; only the
  // macro itself changes between the host and device compilations.
  for (size_t Pos = Text.find(ArchMacro); !Invalid && Pos != Text.npos;
       Pos = Text.find(ArchMacro, Pos + 1)) {
    size_t After = Pos + ArchMacro.size();
    if (After == Text.size() || !(isalnum(Text[After]) || Text[After] == '_'))
      return true;
  }
  return false;
}

void CudaArchRegionRecorder::open(SourceLocation Loc, bool MentionsArch) {
  Stack.push_back({Loc, MentionsArch});
}

void CudaArchRegionRecorder::mark(bool MentionsArch) {
  if (!Stack.empty())
    Stack.back().MentionsArch |= MentionsArch;
}

static bool isArchToken(const Token &Tok) {
  const IdentifierInfo *II = Tok.getIdentifierInfo();
  return II && II->getName() == ArchMacro;
}

void CudaArchRegionRecorder::If(SourceLocation Loc, SourceRange Cond,
                                ConditionValueKind) {
  open(Loc, mentionsArch(Cond));
}
void CudaArchRegionRecorder::Elif(SourceLocation, SourceRange Cond,
                                  ConditionValueKind, SourceLocation) {
  mark(mentionsArch(Cond));
}
void CudaArchRegionRecorder::Ifdef(SourceLocation Loc, const Token &Name,
                                   const MacroDefinition &) {
  open(Loc, isArchToken(Name));
}
void CudaArchRegionRecorder::Ifndef(SourceLocation Loc, const Token &Name,
                                    const MacroDefinition &) {
  open(Loc, isArchToken(Name));
}
void CudaArchRegionRecorder::Elifdef(SourceLocation, const Token &Name,
                                     const MacroDefinition &) {
  mark(isArchToken(Name));
}
void CudaArchRegionRecorder::Elifndef(SourceLocation, const Token &Name,
                                      const MacroDefinition &) {
  mark(isArchToken(Name));
}

void CudaArchRegionRecorder::Endif(SourceLocation Loc, SourceLocation) {
  if (Stack.empty())
    return;
  Open Region = Stack.back();
  Stack.pop_back();
  if (!Region.MentionsArch || !SM.isWrittenInMainFile(Region.IfLoc) ||
      !SM.isWrittenInMainFile(Loc))
    return;
  Out.add(SM.getFileOffset(Region.IfLoc), SM.getFileOffset(Loc));
}

} // namespace cuda_rewrite
