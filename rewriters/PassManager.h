//===- PassManager.h - Hands candidates to the passes -----------*- C++ -*-===//
//
// The passes as a whole: which are enabled (--only/--disable), which pass
// each candidate and pragma belongs to, and running them in order, each on
// its own candidates, with a remark for every candidate a pass never sees.
// The passes themselves are listed in Passes.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_PASSMANAGER_H
#define CUDA_REWRITE_REWRITERS_PASSMANAGER_H

#include "analysis/Candidates.h"
#include "rewriters/aggregate/AggregatePass.h"
#include "rewriters/common/Pass.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>

namespace cuda_rewrite {

/// A set of passes, by name.
class PassSet {
public:
  static PassSet all();
  static PassSet none() { return PassSet(); }
  bool contains(llvm::StringRef Name) const { return Names.contains(Name); }
  void insert(llvm::StringRef Name) { Names.insert(Name); }
  void erase(llvm::StringRef Name) { Names.erase(Name); }
  bool operator==(const PassSet &O) const;

private:
  llvm::StringSet<> Names;
};

/// Parses a comma-separated list of pass names ("aggregate,systolic").
/// Unknown or empty names are an error that lists the valid ones.
llvm::Expected<PassSet> parsePassList(llvm::StringRef List);

/// The passes enabled by --only (empty: all) minus --disable.
llvm::Expected<PassSet> enabledPasses(llvm::StringRef Only,
                                      llvm::StringRef Disable);

struct PassOptions {
  PassSet Enabled = PassSet::all();
  bool Auto = false;
  /// --aggregate-granularity: replaces every pragma's granularity.
  std::optional<Granularity> AggregateGranularity;
};

/// Two passes whose candidates can overlap: `Leaves` leaves the code inside
/// `To`'s candidates to `To` (systolic and fuse: a stencil launched in a
/// fuse block is fused, not rewritten alone).
struct PassSharing {
  llvm::StringLiteral Leaves;
  llvm::StringLiteral To;
};

/// Every pass, in the order they run, made for \p Opts (Passes.cpp).
std::vector<std::unique_ptr<Pass>> createPasses(const PassOptions &Opts);
/// How the passes share candidates (Passes.cpp).
llvm::ArrayRef<PassSharing> passSharing();

/// The passes made with default options, for their names and kinds.
llvm::ArrayRef<std::unique_ptr<Pass>> registeredPasses();

/// Every pass's directives and markers, in the order the passes run: the
/// pragma handler's table.
llvm::ArrayRef<const DirectiveSpec *> registeredDirectives();

/// The pass that rewrites candidates of \p Kind.
const Pass &passFor(const CandidateKind &Kind);
/// The pass whose candidates \p Directive annotates; none for a marker
/// (Pass::markers).
const Pass *passForDirective(const DirectiveSpec &Directive);

/// All candidates of the main file, each pass's own (in the order of
/// createPasses), sorted by offset.
std::vector<Candidate> collectCandidates(clang::ASTContext &Ctx,
                                         llvm::ArrayRef<AttachedPragma> Pragmas,
                                         const CudaArchRegions &ArchRegions);

/// Why \p C is not handed to its pass, or an empty string if it is.
std::string reasonToSkip(const Candidate &C, const PassOptions &Opts);

/// Runs the passes (runEachPass) unless the file is the tool's own output
/// (its marker line), and marks a file they rewrote.
bool runPasses(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
               const PassOptions &Opts);
/// Hands each pass its candidates, in the order of createPasses; false as
/// soon as one fails (an edit that could not be made).
bool runEachPass(PassContext &Context, llvm::ArrayRef<Candidate> Candidates,
                 const PassOptions &Opts);

/// Warns (-Wcuda-rewrite-refused) at each pragma of an enabled pass that
/// annotates no candidate: `promote` on a kernel that does not launch
/// itself, `aggregate` on code without device-side launches. Pragmas whose
/// target reaches into \p Regions are left to the other side's parse.
void reportUnusedPragmas(PassContext &Context,
                         llvm::ArrayRef<AttachedPragma> Pragmas,
                         llvm::ArrayRef<Candidate> Candidates,
                         const PassOptions &Opts,
                         const CudaArchRegions &Regions);

} // namespace cuda_rewrite

#endif
