//===- ConfigPins.cpp - Values a rewrite was made for ---------------------===//

#include "analysis/ConfigPins.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/CharInfo.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallString.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

/// Deeper expressions are refused rather than walked.
constexpr unsigned MaxDepth = 64;

/// Whether \p E names something only visible inside a function (a
/// parameter, a local, a static local), or takes a token from a macro's
/// argument: then its text is no valid spelling at file scope.
bool usesFunctionScope(const Expr *E, const SourceManager &SM) {
  struct Finder : RecursiveASTVisitor<Finder> {
    const SourceManager &SM;
    bool Found = false;
    explicit Finder(const SourceManager &SM) : SM(SM) {}
    bool VisitDeclRefExpr(DeclRefExpr *Ref) {
      if (const auto *V = dyn_cast<VarDecl>(Ref->getDecl()))
        Found |= V->isLocalVarDeclOrParm();
      return !Found;
    }
    bool VisitExpr(Expr *E) {
      SourceLocation Loc = E->getBeginLoc();
      Found |= Loc.isMacroID() && SM.isMacroArgExpansion(Loc);
      return !Found;
    }
  } F(SM);
  F.TraverseStmt(const_cast<Expr *>(E));
  return F.Found;
}

/// Whether \p Loc lies in the body of an object-like macro that is a braced
/// list of values (`#define WEIGHTS {0.25f, 0.5f}`), as expanded: a value
/// there is only part of what the macro's name spells, and another build may
/// define that name otherwise. (Other object-like macros whose body is more
/// than one value expand to code, `#define BODY ... x < 1 ...`, whose
/// literals are written in place.)
bool inBracedListMacro(SourceLocation Loc, const SourceManager &SM) {
  if (!Loc.isMacroID())
    return false;
  const SrcMgr::ExpansionInfo &Expansion =
      SM.getSLocEntry(SM.getFileID(Loc)).getExpansion();
  if (Expansion.isMacroArgExpansion() || Expansion.isFunctionMacroExpansion())
    return false;
  bool Invalid = false;
  const char *Body = SM.getCharacterData(Expansion.getSpellingLoc(), &Invalid);
  return !Invalid && *Body == '{';
}

/// The location of the first character before (\p Step -1) or from
/// (\p Step 1) \p From in \p From's buffer that is no white space, or
/// an invalid one.
SourceLocation nextNonBlank(SourceLocation From, int Step,
                            const SourceManager &SM) {
  bool Invalid = false;
  const char *At = SM.getCharacterData(From, &Invalid);
  if (Invalid)
    return SourceLocation();
  StringRef Buffer = SM.getBufferData(SM.getFileID(From), &Invalid);
  if (Invalid)
    return SourceLocation();
  int Offset = Step < 0 ? -1 : 0;
  for (;; Offset += Step) {
    const char *C = At + Offset;
    if (C < Buffer.begin() || C >= Buffer.end() || *C == '\n')
      return SourceLocation();
    if (!isHorizontalWhitespace(*C))
      return From.getLocWithOffset(Offset);
  }
}

/// Whether the tokens \p B .. \p E (the last \p Length long), in one
/// expansion of a macro's body, are the whole body but for parentheses
/// around them; then \p B and \p E become the parentheses.
bool parenthesizedInBody(SourceLocation &B, SourceLocation &E, unsigned Length,
                         const SourceManager &SM) {
  SourceLocation SB = SM.getSpellingLoc(B), SE = SM.getSpellingLoc(E);
  SourceLocation Open = nextNonBlank(SB, -1, SM);
  SourceLocation Close = nextNonBlank(SE.getLocWithOffset(Length), 1, SM);
  if (Open.isInvalid() || Close.isInvalid() ||
      *SM.getCharacterData(Open) != '(' || *SM.getCharacterData(Close) != ')')
    return false;
  // An expansion maps its body's characters one to one.
  SourceLocation OpenAt = B.getLocWithOffset(int(SM.getFileOffset(Open)) -
                                             int(SM.getFileOffset(SB)));
  SourceLocation CloseAt = E.getLocWithOffset(int(SM.getFileOffset(Close)) -
                                              int(SM.getFileOffset(SE)));
  if (SM.getFileID(OpenAt) != SM.getFileID(B) ||
      SM.getFileID(CloseAt) != SM.getFileID(E) ||
      SM.getSpellingLoc(OpenAt) != Open || SM.getSpellingLoc(CloseAt) != Close)
    return false;
  B = OpenAt;
  E = CloseAt;
  return true;
}

/// The text that spells \p R at the outermost level it is whole at: the
/// use site when R is all of a macro's expansion (`N` for the 1024 that N
/// expands to, also inside another macro's body, where it is the `N`
/// written in that body), else the written text. Empty when R starts and
/// ends in different macro expansions, where no one text spells it, and
/// when R is one value of a braced list macro (the `0.5f` of `#define W
/// {0.5f, 0.25f}`), which its name spells only as a whole.
std::string outermostSpelling(SourceRange R, const SourceManager &SM,
                              const LangOptions &LO) {
  SourceLocation B = R.getBegin(), E = R.getEnd();
  while (B.isMacroID() && E.isMacroID()) {
    // A macro's argument is spelled where the macro is used; walking out of
    // it would name the macro's parameter.
    if (SM.isMacroArgExpansion(B) || SM.isMacroArgExpansion(E))
      break;
    SourceLocation ExpansionBegin, ExpansionEnd;
    // The end test takes the location just past the last token.
    unsigned Length = Lexer::MeasureTokenLength(SM.getSpellingLoc(E), SM, LO);
    if (SM.getFileID(B) != SM.getFileID(E) || Length == 0)
      break;
    if (!SM.isAtStartOfImmediateMacroExpansion(B, &ExpansionBegin) ||
        !SM.isAtEndOfImmediateMacroExpansion(E.getLocWithOffset(Length),
                                             &ExpansionEnd)) {
      // `-1` of `#define OFF (-1)`: the body's text stays what it is when
      // a build defines OFF otherwise, so only the name spells the value.
      if (!parenthesizedInBody(B, E, Length, SM))
        break;
      continue;
    }
    B = ExpansionBegin;
    E = ExpansionEnd;
  }
  if (B.isFileID() != E.isFileID() || inBracedListMacro(B, SM))
    return "";
  if (B.isMacroID()) {
    // Both in one expansion of one macro's body: the text as that body
    // spells it. Ends in two expansions (`N - M`) have no one spelling
    // (their spelling locations can lie anywhere, a #define apart).
    if (SM.getFileID(B) != SM.getFileID(E))
      return "";
    B = SM.getSpellingLoc(B);
    E = SM.getSpellingLoc(E);
    if (SM.getFileID(B) != SM.getFileID(E) ||
        SM.isBeforeInTranslationUnit(E, B))
      return "";
  }
  bool Invalid = false;
  StringRef Text = Lexer::getSourceText(CharSourceRange::getTokenRange(B, E),
                                        SM, LO, &Invalid);
  return Invalid ? "" : Text.str();
}

/// Whether \p E came, in part, from a macro expansion.
bool touchesMacro(const Expr *E) {
  return E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID();
}

/// `::a::b::Name` for a declaration at namespace or class scope, or "" when
/// one of its scopes cannot be named (a function, a template). Anonymous
/// namespaces are left out: their names are visible in the file.
std::string qualifiedName(const NamedDecl *D) {
  std::string Name = D->getNameAsString();
  const DeclContext *DC = D->getDeclContext();
  if (isa<EnumConstantDecl>(D)) {
    // A scoped enumerator is named through its enum; an unscoped one
    // through the enum's scope.
    const auto *Enum = cast<EnumDecl>(DC);
    if (Enum->isScoped())
      Name = Enum->getNameAsString() + "::" + Name;
    DC = Enum->getDeclContext();
  }
  bool Qualified = false;
  for (; DC && !DC->isTranslationUnit(); DC = DC->getParent()) {
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC)) {
      if (NS->isAnonymousNamespace())
        continue;
      Name = NS->getNameAsString() + "::" + Name;
    } else if (const auto *RD = dyn_cast<CXXRecordDecl>(DC)) {
      if (RD->getDescribedClassTemplate() || !RD->getIdentifier() ||
          isa<ClassTemplateSpecializationDecl>(RD))
        return "";
      Name = RD->getNameAsString() + "::" + Name;
    } else if (isa<LinkageSpecDecl>(DC)) {
      continue;
    } else {
      return "";
    }
    Qualified = true;
  }
  return Qualified ? "::" + Name : Name;
}

std::string quoted(StringRef S) {
  std::string Out;
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C == '\n' ? ' ' : C;
  }
  return Out;
}

} // namespace

std::string exactLiteral(const APValue &Value, QualType Type) {
  if (Value.isInt()) {
    const llvm::APSInt &I = Value.getInt();
    SmallString<32> Text;
    I.toString(Text, 10);
    // Beyond long long, the literal needs its suffix to mean the value.
    if (I.isUnsigned() && I.getActiveBits() > 63)
      Text += "ull";
    return std::string(Text);
  }
  if (Value.isFloat()) {
    const llvm::APFloat &F = Value.getFloat();
    if (F.isNaN() || F.isInfinity())
      return "";
    char Buffer[64];
    unsigned N = F.convertToHexString(Buffer, 0, /*UpperCase=*/false,
                                      llvm::APFloat::rmNearestTiesToEven);
    std::string Text(Buffer, N);
    if (&F.getSemantics() == &llvm::APFloat::IEEEsingle())
      Text += "f";
    else if (&F.getSemantics() != &llvm::APFloat::IEEEdouble())
      Text += "l";
    return Text;
  }
  return "";
}

bool ConfigPins::add(std::string Spelling, const Expr *ValueOf,
                     const ASTContext &Ctx) {
  Expr::EvalResult R;
  std::string Value;
  if (!ValueOf->isValueDependent() && ValueOf->EvaluateAsRValue(R, Ctx))
    Value = exactLiteral(R.Val, ValueOf->getType());
  if (Value.empty()) {
    Why = "the value of '" + Spelling + "' is no number cuda-rewrite can pin";
    return false;
  }
  Pins.insert({std::move(Spelling), std::move(Value)});
  return true;
}

bool ConfigPins::pin(const Expr *E, const ASTContext &Ctx) {
  return visit(E, Ctx, 0);
}

bool ConfigPins::visit(const Expr *E, const ASTContext &Ctx, unsigned Depth) {
  if (Depth > MaxDepth) {
    Why = "a constant expression too deep to pin";
    return false;
  }
  const SourceManager &SM = Ctx.getSourceManager();
  // The value pinned is that of the text as written, before the conversion
  // its use applies (`float w = C0;` pins C0's double, not the float).
  // Parentheses stay: they may be all of a macro's body (`#define W
  // (-0.5f)`), which only the macro's name spells.
  E = E->IgnoreImpCasts();
  if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral,
          CXXBoolLiteralExpr>(E)) {
    if (!touchesMacro(E))
      return true;
    // Spelled as itself (in a macro's argument, or in a function-like
    // macro's body), it is a literal in place; else it is what an
    // object-like macro expands to, pinned by that macro's name.
    std::string Text =
        outermostSpelling(E->getSourceRange(), SM, Ctx.getLangOpts());
    bool Invalid = false;
    SmallString<32> Buffer;
    std::string Own =
        Lexer::getSpelling(SM.getSpellingLoc(E->getBeginLoc()), Buffer, SM,
                           Ctx.getLangOpts(), &Invalid)
            .str();
    if (Text.empty())
      return refuseMacroPart(E, SM);
    if (Invalid || Text == Own)
      return true;
    return add(Text, E, Ctx);
  }
  // A macro, or an expression a macro is part of: its spelling at the
  // level where it is whole, if that is valid at file scope.
  if (touchesMacro(E) && !usesFunctionScope(E, SM)) {
    std::string Text =
        outermostSpelling(E->getSourceRange(), SM, Ctx.getLangOpts());
    if (!Text.empty())
      return add(Text, E, Ctx);
  }
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = Ref->getDecl();
    if (const auto *V = dyn_cast<VarDecl>(D)) {
      if (isa<ParmVarDecl>(V))
        return true; // Not a constant: nothing was folded from it.
      if (V->isLocalVarDeclOrParm()) {
        const Expr *Init = V->getInit();
        return !Init || visit(Init, Ctx, Depth + 1);
      }
    }
    if (isa<VarDecl, EnumConstantDecl>(D)) {
      std::string Name = qualifiedName(D);
      if (Name.empty()) {
        Why = "'" + D->getNameAsString() +
              "' is a constant cuda-rewrite cannot name outside its scope";
        return false;
      }
      return add(Name, E, Ctx);
    }
    return true;
  }
  if (isa<UnaryExprOrTypeTraitExpr, CallExpr>(E) && !usesFunctionScope(E, SM)) {
    std::string Text =
        outermostSpelling(E->getSourceRange(), SM, Ctx.getLangOpts());
    if (!Text.empty())
      return add(Text, E, Ctx);
  }
  bool Any = false;
  for (const Stmt *Child : E->children())
    if (const auto *ChildExpr = dyn_cast_or_null<Expr>(Child)) {
      Any = true;
      if (!visit(ChildExpr, Ctx, Depth + 1))
        return false;
    }
  if (!Any && touchesMacro(E))
    return refuseMacroPart(E, SM);
  if (!Any && isa<UnaryExprOrTypeTraitExpr>(E)) {
    Why = "a sizeof or alignof of a local cannot be spelled at file scope";
    return false;
  }
  return true;
}

bool ConfigPins::refuseMacroPart(const Expr *E, const SourceManager &SM) {
  // Where the expansion started: the macro use in the file.
  SourceLocation Use = SM.getExpansionLoc(E->getBeginLoc());
  Why = "a value comes through a macro cuda-rewrite cannot spell at file "
        "scope (used at line " +
        std::to_string(SM.getExpansionLineNumber(Use)) +
        "; a macro whose whole body is one value can be pinned, a braced list "
        "cannot)";
  return false;
}

void ConfigPins::pinSize(StringRef Type, uint64_t Bytes) {
  Pins.insert({"sizeof(" + Type.str() + ")", std::to_string(Bytes)});
}

void ConfigPins::merge(const ConfigPins &Other) {
  Pins.insert(Other.Pins.begin(), Other.Pins.end());
}

std::string ConfigPins::staticAsserts(StringRef Indent) const {
  std::string Out;
  for (const ConfigPin &P : Pins) {
    std::string Said = quoted(P.Spelling) + " == " + P.Value;
    Out += Indent.str() + "static_assert((" + P.Spelling + ") == " + P.Value +
           ", \"cuda-rewrite: rewritten for " + Said +
           "; rerun cuda-rewrite for this configuration\");\n";
  }
  return Out;
}

} // namespace cuda_rewrite
