//===- CoverageReport.cpp - --coverage: how much of the code is rewritten -===//

#include "tool/CoverageReport.h"
#include "rewriters/common/TemplateSpelling.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/CharInfo.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

using Verdict = CoverageEntry::Verdict;

/// The kernels defined in the main file and in the project files it
/// includes (not system headers), as written (a template once, not per
/// instantiation).
class KernelFinder : public RecursiveASTVisitor<KernelFinder> {
public:
  explicit KernelFinder(const SourceManager &SM) : SM(SM) {}

  bool VisitFunctionDecl(FunctionDecl *F) {
    if (!F->hasAttr<CUDAGlobalAttr>() || !F->isThisDeclarationADefinition() ||
        F->isTemplateInstantiation())
      return true;
    SourceLocation Loc = SM.getExpansionLoc(F->getLocation());
    if (SM.isWrittenInMainFile(Loc))
      Kernels.push_back(F);
    else if (Loc.isValid() && !SM.isInSystemHeader(Loc) &&
             SM.getFileEntryRefForID(SM.getFileID(Loc)))
      Included.push_back(F);
    return true;
  }

  std::vector<const FunctionDecl *> Kernels, Included;

private:
  const SourceManager &SM;
};

/// \p Path relative to directory \p Base ("kernels.cuh",
/// "../include/util.h"); \p Path itself where they share no ancestor.
std::string relativeTo(StringRef Path, StringRef Base) {
  SmallVector<StringRef, 16> P, B;
  for (auto It = sys::path::begin(Path), End = sys::path::end(Path); It != End;
       ++It)
    P.push_back(*It);
  for (auto It = sys::path::begin(Base), End = sys::path::end(Base); It != End;
       ++It)
    B.push_back(*It);
  size_t Common = 0;
  while (Common < P.size() && Common < B.size() && P[Common] == B[Common])
    ++Common;
  if (Common == 0 || (Common == 1 && P.front() == "/"))
    return Path.str();
  SmallString<128> Out;
  for (size_t I = Common; I != B.size(); ++I)
    sys::path::append(Out, "..");
  for (size_t I = Common; I != P.size(); ++I)
    sys::path::append(Out, P[I]);
  return std::string(Out);
}

/// The file \p Loc is in, relative to the main file's folder.
std::string includedFileOf(const SourceManager &SM, SourceLocation Loc) {
  StringRef Main = SM.getFileEntryRefForID(SM.getMainFileID())->getName();
  return relativeTo(SM.getFilename(Loc), sys::path::parent_path(Main));
}

/// \p F as written: the template's pattern for an instantiation.
const FunctionDecl *asWritten(const FunctionDecl *F) {
  if (const FunctionDecl *Pattern = F->getTemplateInstantiationPattern())
    F = Pattern;
  return F->getCanonicalDecl();
}

/// The kernels that \p S launches.
void addLaunchedKernels(const Stmt *S, std::set<const FunctionDecl *> &Into) {
  if (!S)
    return;
  if (const auto *Launch = dyn_cast<CUDAKernelCallExpr>(S))
    if (const FunctionDecl *Callee = Launch->getDirectCallee())
      Into.insert(asWritten(Callee));
  for (const Stmt *Child : S->children())
    addLaunchedKernels(Child, Into);
}

/// What the rehearsal said about a candidate, as one verdict: rewritten if
/// any of it is, else refused, else failed, else not rewritten.
std::pair<Verdict, std::string> verdictOf(ArrayRef<const Note *> Notes) {
  auto First = [&](auto Pred) -> const Note * {
    auto It = find_if(Notes, Pred);
    return It == Notes.end() ? nullptr : *It;
  };
  auto Is = [](RemarkRecord::Kind K) {
    return [K](const Note *N) { return N->What == K; };
  };
  if (const Note *N = First(Is(RemarkRecord::Kind::Applied)))
    return {Verdict::Rewritten, N->Text};
  if (const Note *N = First(Is(RemarkRecord::Kind::Refused)))
    return {Verdict::Refused, N->Text};
  if (const Note *N = First([](const Note *N) { return !N->What; }))
    return {Verdict::Failed, N->Text};
  if (const Note *N = First(Is(RemarkRecord::Kind::RefusedPart)))
    return {Verdict::Refused, N->Text};
  if (const Note *N = First(Is(RemarkRecord::Kind::Skipped)))
    return {Verdict::NotRewritten, N->Text};
  if (!Notes.empty())
    return {Verdict::NotRewritten, Notes.front()->Text};
  return {Verdict::NotRewritten, "no remark from its pass"};
}

StringRef verdictName(Verdict V) {
  switch (V) {
  case Verdict::Rewritten:
    return "rewritten";
  case Verdict::Refused:
    return "refused";
  case Verdict::NotRewritten:
    return "not rewritten";
  case Verdict::Failed:
    return "failed";
  case Verdict::NoCandidate:
    return "no candidate";
  }
  llvm_unreachable("all verdicts handled");
}

/// \p Text for a Markdown table cell.
std::string cell(StringRef Text) {
  std::string Out;
  for (char C : Text)
    Out += C == '|'    ? std::string("\\|")
           : C == '\n' ? std::string(" ")
                       : std::string(1, C);
  return Out;
}

/// Rows that share a cause: how many, and where the first is.
class CauseCounts {
public:
  void add(const std::string &Cause, StringRef Path, StringRef Where) {
    auto &[Count, FirstAt] = Counts[Cause];
    if (Count++ == 0)
      FirstAt = (Path + ":" + Where).str();
  }

  /// A table, most frequent first, or "None.".
  void print(raw_ostream &OS, StringRef CountHeader,
             StringRef CauseHeader) const {
    if (Counts.empty()) {
      OS << "None.\n";
      return;
    }
    std::vector<std::pair<std::string, std::pair<unsigned, std::string>>>
        Sorted(Counts.begin(), Counts.end());
    llvm::stable_sort(Sorted, [](const auto &A, const auto &B) {
      return A.second.first > B.second.first;
    });
    OS << "| " << CountHeader << " | " << CauseHeader
       << " | first at |\n|---|---|---|\n";
    for (const auto &[Cause, CountAt] : Sorted)
      OS << "| " << CountAt.first << " | " << cell(Cause) << " | "
         << cell(CountAt.second) << " |\n";
  }

private:
  std::map<std::string, std::pair<unsigned, std::string>> Counts;
};

} // namespace

std::vector<CoverageEntry> coverageEntries(ASTContext &Ctx,
                                           ArrayRef<Candidate> Cands,
                                           ArrayRef<AttachedPragma> Pragmas,
                                           const PassOptions &Opts,
                                           RewriteRehearsal Rehearse) {
  const SourceManager &SM = Ctx.getSourceManager();
  PassOptions AutoOpts = Opts;
  AutoOpts.Auto = true;
  Attribution Rewrite(SM, Cands, Pragmas, Rehearse(AutoOpts));

  std::vector<CoverageEntry> Entries;
  std::set<const FunctionDecl *> Covered;
  for (size_t I = 0; I != Cands.size(); ++I) {
    const Candidate &C = Cands[I];
    CoverageEntry E;
    E.Offset = C.Offset;
    E.Where = lineColumn(SM, C.Loc);
    if (!SM.isWrittenInMainFile(C.Loc)) {
      E.IncludedFrom = includedFileOf(SM, C.Loc);
      E.Where = E.IncludedFrom + ":" + E.Where;
    }
    E.Function = C.Function ? nameWithTemplateArguments(*C.Function) : "";
    E.Kind = C.Kind->Name.str();
    E.Pass = passFor(*C.Kind).name().str();
    std::vector<const Note *> Notes = Rewrite.notesOn(I);
    // A pass that plans a statement's candidates together (fuse: the
    // chains of one block) may remark on the first only.
    for (size_t J = 0; Notes.empty() && C.Statement && J != Cands.size(); ++J)
      if (J != I && Cands[J].Statement == C.Statement)
        Notes = Rewrite.notesOn(J);
    std::tie(E.What, E.Reason) = verdictOf(Notes);
    Entries.push_back(std::move(E));
    if (C.Function)
      Covered.insert(asWritten(C.Function));
    addLaunchedKernels(C.Statement, Covered);
  }
  KernelFinder Finder(SM);
  Finder.TraverseDecl(Ctx.getTranslationUnitDecl());
  std::vector<const FunctionDecl *> Kernels = Finder.Kernels;
  Kernels.insert(Kernels.end(), Finder.Included.begin(), Finder.Included.end());
  for (const FunctionDecl *K : Kernels) {
    if (Covered.count(asWritten(K)))
      continue;
    CoverageEntry E;
    SourceLocation Loc = SM.getExpansionLoc(K->getLocation());
    std::vector<std::string> Why;
    E.Function = K->getNameAsString();
    if (SM.isWrittenInMainFile(Loc)) {
      E.Offset = mainFileOffset(SM, Loc);
      E.Where = lineColumn(SM, Loc);
      E.Kind = "kernel";
    } else {
      // After the main file's rows (the two parses' rows of one kernel
      // merge by Where).
      E.Offset = SM.getBufferData(SM.getMainFileID()).size() + 1 +
                 SM.getFileOffset(Loc);
      E.IncludedFrom = includedFileOf(SM, Loc);
      E.Where = E.IncludedFrom + ":" + lineColumn(SM, Loc);
      E.Kind = "kernel in an included file";
      Why.push_back("not rewritten yet: of the kernels of included files, "
                    "only the systolic pass's stencils are");
    }
    // What the enabled passes' analyses say of it (a stencil the systolic
    // analysis could not read, say).
    for (const std::unique_ptr<Pass> &P : registeredPasses())
      if (Opts.Enabled.contains(P->name()))
        if (std::string Text = P->whyNotACandidate(*K); !Text.empty()) {
          Why.push_back(P->name().str() + ": " + Text);
          if (E.Pass.empty())
            E.Pass = P->name().str();
        }
    E.Reason = join(Why, "; ");
    Entries.push_back(std::move(E));
  }
  llvm::stable_sort(Entries,
                    [](const CoverageEntry &A, const CoverageEntry &B) {
                      return A.Offset < B.Offset;
                    });
  return Entries;
}

void mergeCoverage(std::vector<CoverageEntry> &Into,
                   std::vector<CoverageEntry> Other) {
  for (CoverageEntry &E : Other)
    if (none_of(Into, [&](const CoverageEntry &Known) {
          return Known.Offset == E.Offset && Known.Kind == E.Kind &&
                 Known.Where == E.Where && Known.Function == E.Function;
        }))
      Into.push_back(std::move(E));
  std::set<std::string> WithCandidates;
  for (const CoverageEntry &E : Into)
    if (E.What != Verdict::NoCandidate)
      WithCandidates.insert(E.Function);
  llvm::erase_if(Into, [&](const CoverageEntry &E) {
    return E.What == Verdict::NoCandidate && WithCandidates.count(E.Function);
  });
  llvm::stable_sort(Into, [](const CoverageEntry &A, const CoverageEntry &B) {
    return A.Offset < B.Offset;
  });
}

std::string refusalCause(StringRef Reason) {
  std::string Cause;
  for (size_t I = 0; I < Reason.size();) {
    char C = Reason[I];
    bool WordStart = I == 0 || !isAsciiIdentifierContinue(Reason[I - 1]);
    // A quoted name: a quote that starts a word, up to one that ends it
    // (the apostrophe of "the input's" is neither).
    if (C == '\'' && WordStart) {
      size_t Close = Reason.find('\'', I + 1);
      while (Close != StringRef::npos && Close + 1 < Reason.size() &&
             isAsciiIdentifierContinue(Reason[Close + 1]))
        Close = Reason.find('\'', Close + 1);
      if (Close != StringRef::npos) {
        Cause += "'_'";
        I = Close + 1;
        continue;
      }
    }
    if (isDigit(C) && WordStart) {
      size_t End = I;
      while (End < Reason.size() &&
             (isDigit(Reason[End]) || Reason[End] == '.'))
        ++End;
      if (End == Reason.size() || !isAsciiIdentifierContinue(Reason[End])) {
        Cause += "N";
        I = End;
        continue;
      }
    }
    Cause += C;
    ++I;
  }
  return Cause;
}

/// The path of the file that defines \p E, a kernel of a file that \p F
/// includes, as the report names \p F.
static std::string includedPath(const CoverageFile &F, const CoverageEntry &E) {
  SmallString<128> Path(sys::path::parent_path(F.Path));
  sys::path::append(Path, E.IncludedFrom);
  sys::path::remove_dots(Path, /*remove_dot_dot=*/true);
  return std::string(Path);
}

void printCoverageReport(raw_ostream &OS, ArrayRef<CoverageFile> InFiles) {
  // A kernel of a file that several inputs include is one row, the first's;
  // a candidate there is one row per input, whose verdict is its own (one
  // input may launch it, another not).
  std::vector<CoverageFile> Files(InFiles.begin(), InFiles.end());
  std::set<std::string> SeenIncluded;
  for (CoverageFile &F : Files)
    llvm::erase_if(F.Entries, [&](const CoverageEntry &E) {
      return !E.IncludedFrom.empty() && E.What == Verdict::NoCandidate &&
             !SeenIncluded.insert(E.Where).second;
    });
  unsigned Parsed =
      count_if(Files, [](const CoverageFile &F) { return F.Parsed; });
  unsigned Candidates = 0, Bare = 0;
  for (const CoverageFile &F : Files)
    for (const CoverageEntry &E : F.Entries)
      ++(E.What == Verdict::NoCandidate ? Bare : Candidates);
  auto Count = [](unsigned N, StringRef One, StringRef Many) {
    return std::to_string(N) + " " + (N == 1 ? One : Many).str();
  };
  OS << "# Coverage under --auto\n\n"
     << Count(Files.size(), "file", "files") << " (" << Parsed
     << " parsed): " << Count(Candidates, "candidate", "candidates") << ", "
     << Count(Bare, "kernel", "kernels") << " with no candidate.\n\n"
     << "| file | at | function | kind | verdict | reason |\n"
     << "|---|---|---|---|---|---|\n";
  for (const CoverageFile &F : Files)
    for (const CoverageEntry &E : F.Entries)
      OS << "| " << cell(F.Path) << " | " << E.Where << " | "
         << cell(E.Function) << " | " << E.Kind << " | " << verdictName(E.What)
         << " | " << cell(E.Reason) << " |\n";

  // Per kind: how many of each verdict; per cause: how many refusals, and
  // how many kernels with no candidate the analyses say the same of.
  std::map<std::string, std::map<Verdict, unsigned>> ByKind;
  CauseCounts Refusals, Unread;
  for (const CoverageFile &F : Files)
    for (const CoverageEntry &E : F.Entries) {
      ++ByKind[E.Kind][E.What];
      // An included file's kernel is at its own file and line.
      std::string Path = E.IncludedFrom.empty() ? F.Path : includedPath(F, E);
      StringRef Where = StringRef(E.Where).drop_front(
          E.IncludedFrom.empty() ? 0 : E.IncludedFrom.size() + 1);
      if (E.What == Verdict::Refused)
        Refusals.add(E.Pass + ": " + refusalCause(E.Reason), Path, Where);
      else if (E.What == Verdict::NoCandidate && !E.Reason.empty())
        Unread.add(refusalCause(E.Reason), Path, Where);
    }
  OS << "\n## By kind\n\n"
     << "| kind | found | rewritten | refused | not rewritten | failed |\n"
     << "|---|---|---|---|---|---|\n";
  for (const auto &KindCounts : ByKind) {
    const std::string &Kind = KindCounts.first;
    const std::map<Verdict, unsigned> &Counts = KindCounts.second;
    unsigned Found = 0;
    for (const auto &[V, N] : Counts)
      Found += N;
    auto Of = [&](Verdict V) {
      auto It = Counts.find(V);
      return It == Counts.end() ? 0u : It->second;
    };
    if (Kind == "kernel" || Kind == "kernel in an included file") {
      OS << "| " << (Kind == "kernel" ? "kernel with no candidate" : Kind)
         << " | " << Found << " | - | - | - | - |\n";
      continue;
    }
    OS << "| " << Kind << " | " << Found << " | " << Of(Verdict::Rewritten)
       << " | " << Of(Verdict::Refused) << " | " << Of(Verdict::NotRewritten)
       << " | " << Of(Verdict::Failed) << " |\n";
  }

  OS << "\n## Refusals by cause\n\n";
  Refusals.print(OS, "refusals",
                 "cause (pass: reason, names as '_', "
                 "numbers as N)");
  OS << "\n## Kernels with no candidate, by what the analyses say\n\n";
  Unread.print(OS, "kernels",
               "the passes' analyses (names as '_', numbers "
               "as N)");
  if (Parsed == Files.size())
    return;
  OS << "\n## Files that did not parse\n\n| file | first error |\n|---|---|\n";
  for (const CoverageFile &F : Files)
    if (!F.Parsed)
      OS << "| " << cell(F.Path) << " | " << cell(F.FirstError) << " |\n";
}

} // namespace cuda_rewrite
