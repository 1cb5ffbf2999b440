//===- Pragmas.cpp - #pragma cuda_rewrite front end -----------------------===//

#include "analysis/Pragmas.h"
#include "analysis/FunctionTrackingVisitor.h"
#include "analysis/LaunchSites.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

template <typename Range> std::string joinNames(const Range &R) {
  std::string S;
  for (const auto &Item : R) {
    if (!S.empty())
      S += ", ";
    S += Item.Name;
  }
  return S;
}

std::string joinNames(ArrayRef<const DirectiveSpec *> Directives) {
  std::string S;
  for (const DirectiveSpec *D : Directives)
    S += (S.empty() ? "" : ", ") + D->Name.str();
  return S;
}

} // namespace

const PragmaClause *PragmaDirective::clause(StringRef Name) const {
  for (const PragmaClause &C : Clauses)
    if (C.Name == Name)
      return &C;
  return nullptr;
}

std::string PragmaDirective::spelling() const {
  std::string S = name().str();
  for (const PragmaClause &C : Clauses) {
    S += " " + C.Name;
    if (!C.Args.empty())
      S += "(" + join(C.Args, ", ") + ")";
  }
  return S;
}

//===----------------------------------------------------------------------===//
// Lexing and checking one pragma line.
//===----------------------------------------------------------------------===//

namespace {

/// Reads one pragma line token by token; reports the first problem.
class PragmaLineParser {
public:
  PragmaLineParser(Preprocessor &PP, ArrayRef<const DirectiveSpec *> Directives)
      : PP(PP), Directives(Directives) {
    next();
  }

  std::optional<PragmaDirective> parse(SourceLocation HashLoc);

private:
  void next() { PP.LexUnexpandedToken(Tok); }
  bool atEnd() const { return Tok.is(tok::eod) || Tok.is(tok::eof); }
  void skipToEnd() {
    while (!atEnd())
      next();
  }
  std::string spelling() const { return PP.getSpelling(Tok); }

  /// Reports \p Format (with %0, %1, ... filled from \p Args) at \p Loc.
  template <unsigned N>
  void error(SourceLocation Loc, const char (&Format)[N],
             ArrayRef<std::string> Args = {}) {
    DiagnosticsEngine &Diags = PP.getDiagnostics();
    auto Builder = Diags.Report(
        Loc, Diags.getCustomDiagID(DiagnosticsEngine::Error, Format));
    for (const std::string &Arg : Args)
      Builder << Arg;
    Failed = true;
  }

  std::optional<PragmaClause> parseClause(const DirectiveSpec &Spec);
  std::vector<std::string> parseArgs();
  void checkArgs(const ClauseSpec &Spec, const PragmaClause &Clause);
  void checkValues(const ClauseSpec &Spec, const PragmaClause &Clause);

  Preprocessor &PP;
  ArrayRef<const DirectiveSpec *> Directives;
  Token Tok;
  bool Failed = false;
};

std::optional<PragmaDirective> PragmaLineParser::parse(SourceLocation HashLoc) {
  if (atEnd() || !Tok.is(tok::identifier)) {
    error(atEnd() ? HashLoc : Tok.getLocation(),
          "expected a cuda_rewrite directive (one of %0)",
          {joinNames(Directives)});
    skipToEnd();
    return std::nullopt;
  }
  std::string Name = spelling();
  const DirectiveSpec *const *Found = find_if(
      Directives, [&](const DirectiveSpec *D) { return D->Name == Name; });
  if (Found == Directives.end()) {
    error(Tok.getLocation(),
          "unknown cuda_rewrite directive '%0'; expected one of %1",
          {Name, joinNames(Directives)});
    skipToEnd();
    return std::nullopt;
  }
  PragmaDirective Directive;
  const DirectiveSpec *Spec = *Found;
  Directive.Spec = Spec;
  Directive.HashLoc = HashLoc;
  next();
  while (!atEnd() && !Failed) {
    std::optional<PragmaClause> Clause = parseClause(*Spec);
    if (!Clause)
      break;
    if (Directive.clause(Clause->Name)) {
      error(Clause->Loc, "clause '%0' appears twice", {Clause->Name});
      break;
    }
    Directive.Clauses.push_back(std::move(*Clause));
    if (Tok.is(tok::comma))
      next();
  }
  Directive.EndLoc = Tok.getLocation();
  skipToEnd();
  if (Failed)
    return std::nullopt;
  return Directive;
}

std::optional<PragmaClause>
PragmaLineParser::parseClause(const DirectiveSpec &Spec) {
  if (!Tok.is(tok::identifier)) {
    error(Tok.getLocation(), "expected a clause name, found '%0'",
          {spelling()});
    return std::nullopt;
  }
  PragmaClause Clause;
  Clause.Name = spelling();
  Clause.Loc = Tok.getLocation();
  const ClauseSpec *CSpec = find_if(
      Spec.Clauses, [&](const ClauseSpec &C) { return C.Name == Clause.Name; });
  if (CSpec == Spec.Clauses.end()) {
    if (Spec.Clauses.empty())
      error(Clause.Loc, "'%0' takes no clauses", {Spec.Name.str()});
    else
      error(Clause.Loc, "unknown clause '%0' for '%1'; expected one of %2",
            {Clause.Name, Spec.Name.str(), joinNames(Spec.Clauses)});
    return std::nullopt;
  }
  next();
  if (Tok.is(tok::l_paren)) {
    if (CSpec->Args == ClauseArgs::None) {
      error(Tok.getLocation(), "clause '%0' takes no arguments", {Clause.Name});
      return std::nullopt;
    }
    Clause.Args = parseArgs();
    if (Failed)
      return std::nullopt;
  } else if (CSpec->Args != ClauseArgs::None) {
    error(Clause.Loc, "clause '%0' needs an argument in parentheses",
          {Clause.Name});
    return std::nullopt;
  }
  checkArgs(*CSpec, Clause);
  if (Failed)
    return std::nullopt;
  return Clause;
}

std::vector<std::string> PragmaLineParser::parseArgs() {
  SourceLocation Open = Tok.getLocation();
  std::vector<std::string> Args(1);
  for (next(); !Tok.is(tok::r_paren); next()) {
    if (atEnd()) {
      error(Open, "missing ')' after clause arguments");
      return {};
    }
    if (Tok.is(tok::comma)) {
      Args.emplace_back();
      continue;
    }
    std::string Text = spelling();
    if (Tok.is(tok::string_literal) && Text.size() >= 2)
      Text = Text.substr(1, Text.size() - 2);
    Args.back() += Text;
  }
  next(); // ')'
  if (llvm::any_of(Args, [](const std::string &A) { return A.empty(); })) {
    error(Open, "empty clause argument");
    return {};
  }
  return Args;
}

void PragmaLineParser::checkArgs(const ClauseSpec &Spec,
                                 const PragmaClause &Clause) {
  auto IsPositiveInt = [](StringRef S) {
    unsigned long long V;
    return !S.getAsInteger(10, V) && V > 0;
  };
  const std::vector<std::string> &Args = Clause.Args;
  switch (Spec.Args) {
  case ClauseArgs::None:
  case ClauseArgs::Text:
    if (Spec.Args == ClauseArgs::Text && Args.size() != 1)
      error(Clause.Loc, "clause '%0' takes one argument", {Clause.Name});
    return;
  case ClauseArgs::OneOf:
    if (Args.size() != 1 || !llvm::is_contained(Spec.Choices, Args[0]))
      error(Clause.Loc, "clause '%0' takes one of: %1",
            {Clause.Name, join(Spec.Choices, ", ")});
    return;
  case ClauseArgs::PositiveInt:
    if (Args.size() != 1 || !IsPositiveInt(Args[0]))
      error(Clause.Loc, "clause '%0' takes a positive integer", {Clause.Name});
    else
      checkValues(Spec, Clause);
    return;
  case ClauseArgs::AutoOrIntPair:
    if (!(Args.size() == 1 && Args[0] == "auto") &&
        !((Args.size() == 2 || Args.size() == 3) &&
          llvm::all_of(Args, IsPositiveInt)))
      error(Clause.Loc,
            "clause '%0' takes 'auto' or two or three positive integers",
            {Clause.Name});
    else if (Args[0] != "auto")
      checkValues(Spec, Clause);
    return;
  case ClauseArgs::AutoOrFraction: {
    double V;
    if (!((Args.size() == 1 || Args.size() == 2) &&
          (Args[0] == "auto" ||
           (!StringRef(Args[0]).getAsDouble(V) && V >= 0 && V <= 1)) &&
          (Args.size() == 1 || Args[1] == "x" || Args[1] == "y")))
      error(Clause.Loc,
            "clause '%0' takes 'auto' or a fraction between 0 and 1, and "
            "optionally the split dimension 'x' or 'y'",
            {Clause.Name});
    return;
  }
  }
}

/// Runs \p Spec's range check on integer arguments the form check passed.
void PragmaLineParser::checkValues(const ClauseSpec &Spec,
                                   const PragmaClause &Clause) {
  if (!Spec.Check)
    return;
  SmallVector<unsigned, 3> Values;
  for (const std::string &Arg : Clause.Args) {
    unsigned V;
    if (StringRef(Arg).getAsInteger(10, V))
      return error(Clause.Loc, "clause '%0(%1)' is out of range",
                   {Clause.Name, join(Clause.Args, ", ")});
    Values.push_back(V);
  }
  std::string Why = Spec.Check(Values);
  if (!Why.empty())
    error(Clause.Loc, "clause '%0(%1)' is out of range: '%0' %2",
          {Clause.Name, join(Clause.Args, ", "), Why});
}

} // namespace

void CudaRewritePragmaHandler::HandlePragma(Preprocessor &PP,
                                            PragmaIntroducer Introducer,
                                            Token &FirstToken) {
  SourceManager &SM = PP.getSourceManager();
  DiagnosticsEngine &Diags = PP.getDiagnostics();
  if (Introducer.Kind != PIK_HashPragma) {
    Diags.Report(Introducer.Loc,
                 Diags.getCustomDiagID(
                     DiagnosticsEngine::Error,
                     "write cuda_rewrite directives as '#pragma' lines; the "
                     "tool removes them from its output and cannot edit a "
                     "_Pragma operator"));
    PragmaLineParser(PP, Directives).parse(Introducer.Loc);
    return;
  }
  SourceLocation Loc = SM.getExpansionLoc(Introducer.Loc);
  bool InMain = SM.isWrittenInMainFile(Loc);
  // A project file the main file includes: not a system header, a file.
  bool InProject = !InMain && Loc.isValid() && !SM.isInSystemHeader(Loc) &&
                   SM.getFileEntryRefForID(SM.getFileID(Loc));
  if (!InMain && !InProject) {
    Diags.Report(Introducer.Loc,
                 Diags.getCustomDiagID(
                     DiagnosticsEngine::Warning,
                     "cuda_rewrite pragma ignored: only pragmas in the file "
                     "being rewritten and the project files it includes "
                     "take effect"));
    PragmaLineParser(PP, Directives).parse(Introducer.Loc);
    return;
  }
  std::optional<PragmaDirective> Directive =
      PragmaLineParser(PP, Directives).parse(Introducer.Loc);
  if (!Directive)
    return;
  if (InProject && !Directive->Spec->InIncludedFiles) {
    Diags.Report(Introducer.Loc,
                 Diags.getCustomDiagID(
                     DiagnosticsEngine::Warning,
                     "cuda_rewrite pragma ignored: '%0' is read in the file "
                     "being rewritten only; in an included file, only "
                     "'systolic' is"))
        << Directive->name();
    return;
  }
  Directive->File = SM.getFileID(Loc);
  Directive->Offset = SM.getFileOffset(Loc);
  Out.push_back(std::move(*Directive));
}

//===----------------------------------------------------------------------===//
// Attaching pragmas to what follows them.
//===----------------------------------------------------------------------===//

SourceLocation AttachedPragma::targetLoc() const {
  return TargetDecl ? TargetDecl->getBeginLoc() : TargetStmt->getBeginLoc();
}

const FunctionDecl *AttachedPragma::targetFunction() const {
  if (!TargetDecl)
    return nullptr;
  if (const auto *Template = dyn_cast<FunctionTemplateDecl>(TargetDecl))
    return Template->getTemplatedDecl();
  return dyn_cast<FunctionDecl>(TargetDecl);
}

namespace {

/// Where pragmas can attach: file-scope declarations and the children of
/// every { } block, with their main-file offsets.
class AttachmentPoints : public FunctionTrackingVisitor<AttachmentPoints> {
public:
  /// Offsets [Begin, End) in File.
  struct Span {
    FileID File;
    unsigned Begin, End;
    bool contains(unsigned Offset) const {
      return Begin <= Offset && Offset < End;
    }
  };
  struct Block {
    const CompoundStmt *Stmt;
    const FunctionDecl *Function;
    Span Range;
  };
  struct FileDecl {
    const Decl *D;
    Span Range;
  };

  explicit AttachmentPoints(ASTContext &Ctx) : SM(Ctx.getSourceManager()) {
    for (Decl *D : Ctx.getTranslationUnitDecl()->decls())
      collectFileScope(D);
  }

  /// The offsets \p R covers in its file (the main file or a project file
  /// it includes; a pragma attaches within its own file).
  std::optional<Span> span(SourceRange R) const {
    SourceLocation B = SM.getExpansionLoc(R.getBegin());
    SourceLocation E = SM.getExpansionRange(R.getEnd()).getEnd();
    if (B.isInvalid() || E.isInvalid() || SM.getFileID(B) != SM.getFileID(E) ||
        SM.isInSystemHeader(B))
      return std::nullopt;
    return Span{SM.getFileID(B), SM.getFileOffset(B), SM.getFileOffset(E) + 1};
  }

  bool VisitCompoundStmt(CompoundStmt *S) {
    if (std::optional<Span> R = span(S->getSourceRange()))
      Blocks.push_back({S, currentFunction(), *R});
    return true;
  }

  std::vector<Block> Blocks;
  std::vector<FileDecl> FileDecls;

private:
  void collectFileScope(Decl *D) {
    if (D->isImplicit())
      return;
    if (auto *DC = dyn_cast<DeclContext>(D);
        DC && (isa<NamespaceDecl>(D) || isa<LinkageSpecDecl>(D))) {
      for (Decl *Inner : DC->decls())
        collectFileScope(Inner);
      return;
    }
    std::optional<Span> R = span(D->getSourceRange());
    if (!R)
      return;
    FileDecls.push_back({D, *R});
    TraverseDecl(D);
  }

  const SourceManager &SM;
};

/// Diagnoses at a pragma and returns false, for use as `return fail(...)`.
template <unsigned N>
bool fail(ASTContext &Ctx, const PragmaDirective &P, const char (&Format)[N],
          StringRef Arg1 = "") {
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  auto B = Diags.Report(
      P.HashLoc, Diags.getCustomDiagID(DiagnosticsEngine::Error, Format));
  B << P.name();
  if (StringRef(Format).contains("%1"))
    B << Arg1;
  return false;
}

bool isDeviceCode(const FunctionDecl *F) {
  return F && (F->hasAttr<CUDAGlobalAttr>() || F->hasAttr<CUDADeviceAttr>());
}

bool isHostCode(const FunctionDecl *F) {
  return !F || !isDeviceCode(F) || F->hasAttr<CUDAHostAttr>();
}

std::string describeDecl(const Decl *D) {
  if (const auto *F = dyn_cast<FunctionDecl>(D)) {
    if (F->hasAttr<CUDAGlobalAttr>())
      return "__global__ function '" + F->getNameAsString() + "'";
    if (F->hasAttr<CUDADeviceAttr>() && !F->hasAttr<CUDAHostAttr>())
      return "__device__ function '" + F->getNameAsString() + "'";
    return "host function '" + F->getNameAsString() + "'";
  }
  if (const auto *ND = dyn_cast<NamedDecl>(D))
    return std::string(D->getDeclKindName()) + " '" + ND->getNameAsString() +
           "'";
  return std::string(D->getDeclKindName()) + " declaration";
}

/// Checks that the directive applies to its target (docs/design.md
/// section 3).
bool validateTarget(ASTContext &Ctx, const AttachedPragma &A) {
  const PragmaDirective &P = *A.Directive;
  const FunctionDecl *F = A.targetFunction();
  const Stmt *S = A.TargetStmt;
  std::string Found =
      A.TargetDecl ? describeDecl(A.TargetDecl) : std::string("a statement");
  switch (P.Spec->Target) {
  case PragmaTarget::KernelOrDeviceLaunches:
    if (F && F->hasAttr<CUDAGlobalAttr>())
      return true;
    if (S && isDeviceCode(A.EnclosingFunction)) {
      if (containsKernelLaunch(S))
        return true;
      return fail(Ctx, P,
                  "'%0' must precede a statement that launches "
                  "kernels; this statement launches none");
    }
    if (S && containsKernelLaunch(S))
      return fail(Ctx, P,
                  "'%0' applies to device-side launches; this launch is in "
                  "host code");
    return fail(Ctx, P,
                "'%0' must precede a __global__ function or a statement in "
                "device code that launches kernels; found %1",
                Found);
  case PragmaTarget::Kernel:
    if (F && F->hasAttr<CUDAGlobalAttr>())
      return true;
    return fail(Ctx, P, "'%0' must precede a __global__ function; found %1",
                Found);
  case PragmaTarget::StatementInKernel:
    if (S && A.EnclosingFunction &&
        A.EnclosingFunction->hasAttr<CUDAGlobalAttr>())
      return true;
    return fail(Ctx, P,
                "'%0' must precede a statement in the body of a __global__ "
                "function; found %1",
                Found);
  case PragmaTarget::HostLaunchBlock:
    if (S && isa<CompoundStmt>(S) && isHostCode(A.EnclosingFunction)) {
      if (countKernelLaunches(S) >= 2)
        return true;
      return fail(Ctx, P,
                  "'%0' needs a block with at least two kernel "
                  "launches to fuse");
    }
    return fail(Ctx, P,
                "'%0' must precede a { } block of kernel launches in host "
                "code; found %1",
                Found);
  case PragmaTarget::DeviceVoidFunction:
    if (F && F->hasAttr<CUDADeviceAttr>() && !F->hasAttr<CUDAGlobalAttr>() &&
        F->getReturnType()->isVoidType())
      return true;
    return fail(Ctx, P,
                "'%0' must precede a __device__ void function; found %1",
                Found);
  case PragmaTarget::HostLaunch:
    if (S && isHostCode(A.EnclosingFunction) && containsKernelLaunch(S))
      return true;
    return fail(Ctx, P,
                "'%0' must precede the host launch of a pipeline's entry "
                "kernel; found %1",
                Found);
  }
  llvm_unreachable("all targets handled");
}

} // namespace

std::vector<AttachedPragma>
attachPragmas(ASTContext &Ctx, ArrayRef<PragmaDirective> Directives) {
  std::vector<AttachedPragma> Result;
  if (Directives.empty())
    return Result;
  AttachmentPoints Points(Ctx);

  for (const PragmaDirective &P : Directives) {
    AttachedPragma A;
    A.Directive = &P;
    unsigned Offset = P.Offset;

    // The innermost block holding the pragma decides where it may attach.
    const AttachmentPoints::Block *Inner = nullptr;
    for (const AttachmentPoints::Block &B : Points.Blocks)
      if (B.Range.File == P.File && B.Range.Begin < Offset &&
          Offset < B.Range.End &&
          (!Inner || Inner->Range.contains(B.Range.Begin)))
        Inner = &B;

    if (Inner) {
      A.EnclosingFunction = Inner->Function;
      bool InsideChild = false;
      for (const Stmt *Child : Inner->Stmt->body()) {
        std::optional<AttachmentPoints::Span> R =
            Points.span(Child->getSourceRange());
        if (!R)
          continue;
        if (R->contains(Offset)) {
          InsideChild = true;
          break;
        }
        if (R->Begin > Offset) {
          A.TargetStmt = Child;
          break;
        }
      }
      if (InsideChild) {
        fail(Ctx, P,
             "'%0' must precede a statement directly inside a { } block");
        continue;
      }
      if (!A.TargetStmt) {
        fail(Ctx, P,
             "'%0' is attached to nothing: no statement follows it in this "
             "block");
        continue;
      }
    } else {
      const AttachmentPoints::FileDecl *Next = nullptr;
      bool Inside = false;
      for (const AttachmentPoints::FileDecl &D : Points.FileDecls) {
        if (D.Range.File != P.File)
          continue;
        if (D.Range.contains(Offset))
          Inside = true;
        else if (D.Range.Begin > Offset &&
                 (!Next || D.Range.Begin < Next->Range.Begin))
          Next = &D;
      }
      if (Inside) {
        fail(Ctx, P,
             "'%0' must precede a file-scope declaration or a statement "
             "directly inside a { } block");
        continue;
      }
      if (!Next) {
        fail(Ctx, P, "'%0' is attached to nothing: no declaration follows it");
        continue;
      }
      A.TargetDecl = Next->D;
    }
    if (validateTarget(Ctx, A))
      Result.push_back(A);
  }
  return Result;
}

} // namespace cuda_rewrite
