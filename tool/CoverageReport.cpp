//===- CoverageReport.cpp - --coverage: how much of the code is rewritten -===//

#include "tool/CoverageReport.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/CharInfo.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <set>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

using Verdict = CoverageEntry::Verdict;

/// The kernels defined in the main file, as written (a template once, not
/// per instantiation).
class KernelFinder : public RecursiveASTVisitor<KernelFinder> {
public:
  explicit KernelFinder(const SourceManager &SM) : SM(SM) {}

  bool VisitFunctionDecl(FunctionDecl *F) {
    if (F->hasAttr<CUDAGlobalAttr>() && F->isThisDeclarationADefinition() &&
        !F->isTemplateInstantiation() &&
        SM.isWrittenInMainFile(SM.getExpansionLoc(F->getLocation())))
      Kernels.push_back(F);
    return true;
  }

  std::vector<const FunctionDecl *> Kernels;

private:
  const SourceManager &SM;
};

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
    E.Function = C.Function ? C.Function->getNameAsString() : "";
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
  for (const FunctionDecl *K : Finder.Kernels) {
    if (Covered.count(asWritten(K)))
      continue;
    CoverageEntry E;
    E.Offset = mainFileOffset(SM, K->getLocation());
    E.Where = lineColumn(SM, K->getLocation());
    E.Function = K->getNameAsString();
    E.Kind = "kernel";
    // What the enabled passes' analyses say of it (a stencil the systolic
    // analysis could not read, say).
    std::vector<std::string> Why;
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
          return Known.Offset == E.Offset && Known.Kind == E.Kind;
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

void printCoverageReport(raw_ostream &OS, ArrayRef<CoverageFile> Files) {
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
      if (E.What == Verdict::Refused)
        Refusals.add(E.Pass + ": " + refusalCause(E.Reason), F.Path, E.Where);
      else if (E.What == Verdict::NoCandidate && !E.Reason.empty())
        Unread.add(refusalCause(E.Reason), F.Path, E.Where);
    }
  OS << "\n## By kind\n\n"
     << "| kind | found | rewritten | refused | not rewritten | failed |\n"
     << "|---|---|---|---|---|---|\n";
  for (const auto &[Kind, Counts] : ByKind) {
    unsigned Found = 0;
    for (const auto &[V, N] : Counts)
      Found += N;
    auto Of = [&](Verdict V) {
      auto It = Counts.find(V);
      return It == Counts.end() ? 0u : It->second;
    };
    if (Kind == "kernel") {
      OS << "| kernel with no candidate | " << Found << " | - | - | - | - |\n";
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
