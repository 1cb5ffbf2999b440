//===- AggregateCodeGen.cpp - Text of the aggregate pass's code -----------===//

#include "rewriters/aggregate/AggregateCodeGen.h"
#include "rewriters/common/GeneratedLayout.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

std::string AggregatedChild::argsStruct() const {
  return Child->getNameAsString() + "_args" + suffix();
}
/// Children without barriers or shared memory may get several one-warp
/// blocks per aggregated block, unless a function they call reads the real
/// threadIdx or blockDim: in a packed block those are the aggregated
/// block's, not the original one's.
bool AggregatedChild::packable() const {
  return !Info.HasBarriers && !Info.UsesSharedMemory &&
         Info.HelperReadsBlockShape.empty();
}
std::string AggregatedChild::kernelName() const {
  return Child->getNameAsString() + "_aggregated" + suffix();
}
std::string AggregatedChild::warpHelper() const {
  return Child->getNameAsString() + "_launch_warp" + suffix();
}
std::string AggregatedChild::blockHelper() const {
  return Child->getNameAsString() + "_launch_block" + suffix();
}
std::string AggregatedChild::gridHelper() const {
  return Child->getNameAsString() + "_launch_kernel" + suffix();
}

std::vector<const ParmVarDecl *> AggregatedChild::perLaunchParams() const {
  std::vector<const ParmVarDecl *> Params;
  for (unsigned I = 0; I < Child->getNumParams(); ++I)
    if (!Scalar[I])
      Params.push_back(Child->getParamDecl(I));
  return Params;
}

std::vector<const ParmVarDecl *> AggregatedChild::scalarParams() const {
  std::vector<const ParmVarDecl *> Params;
  for (unsigned I = 0; I < Child->getNumParams(); ++I)
    if (Scalar[I])
      Params.push_back(Child->getParamDecl(I));
  return Params;
}

std::string declareParam(const ParmVarDecl &P) {
  std::string Text;
  raw_string_ostream OS(Text);
  PrintingPolicy Policy = P.getASTContext().getPrintingPolicy();
  Policy.SuppressTagKeyword = true;
  P.getType().print(OS, Policy, P.getName());
  return Text;
}

static std::vector<std::string>
declarations(const std::vector<const ParmVarDecl *> &Params) {
  std::vector<std::string> Decls;
  for (const ParmVarDecl *P : Params)
    Decls.push_back(declareParam(*P));
  return Decls;
}

static std::vector<std::string>
names(const std::vector<const ParmVarDecl *> &Params) {
  std::vector<std::string> Names;
  for (const ParmVarDecl *P : Params)
    Names.push_back(P->getNameAsString());
  return Names;
}

std::vector<std::string> builtinParams(const ChildKernelInfo &Info) {
  std::vector<std::string> Params;
  if (Info.UsesBlockIdx)
    Params.push_back("const uint3 blockIdx");
  if (Info.UsesBlockDim)
    Params.push_back("const dim3 blockDim");
  if (Info.UsesGridDim)
    Params.push_back("const dim3 gridDim");
  if (Info.UsesThreadIdx)
    Params.push_back("const uint3 threadIdx");
  return Params;
}

std::vector<std::string> builtinArgs(const ChildKernelInfo &Info) {
  std::vector<std::string> Args;
  for (const std::string &Param : builtinParams(Info))
    Args.push_back(StringRef(Param).rsplit(' ').second.str());
  return Args;
}

namespace {

/// `// cuda-rewrite (aggregate): ` and \p Text: every part the pass adds says
/// that it is the pass's, and why it is there.
void passComment(CodeWriter &W, const Twine &Text) {
  W.comment("cuda-rewrite (aggregate): " + Text);
}

/// The child's body from just after its '{' to its '}' inclusive.
StringRef bodyAfterBrace(const FunctionDecl &Child) {
  const auto *Body = cast<CompoundStmt>(Child.getBody());
  const SourceManager &SM = Child.getASTContext().getSourceManager();
  unsigned Begin = SM.getFileOffset(Body->getLBracLoc()) + 1;
  unsigned End = SM.getFileOffset(Body->getRBracLoc()) + 1;
  return SM.getBufferData(SM.getFileID(Body->getLBracLoc())).slice(Begin, End);
}

/// Writes the aggregated kernel of one child and its declaration: a kernel
/// each of whose blocks runs one block of one original launch.
class AggregatedKernelWriter {
public:
  AggregatedKernelWriter(const AggregatedChild &A, const ParentCode *AsParent)
      : A(A), AsParent(AsParent) {
    // The kernel's own names share its scope with the child's parameters
    // (per-launch locals of their names), with a leaf's body, which is
    // copied in, and with what a parent's code passes and declares.
    for (const ParmVarDecl *P : A.Child->parameters())
      Names.reserveIdentifiersIn(declareParam(*P));
    if (AsParent)
      AsParent->reserveNames(Names);
    else
      Names.reserveIdentifiersOfSource(bodyAfterBrace(*A.Child),
                                       A.Child->getASTContext().getLangOpts());
  }

  std::string declaration() {
    CodeWriter W;
    W.line("");
    passComment(W, "'" + A.Child->getNameAsString() +
                       "' for aggregated launches, defined below.");
    W.line(head() + ";");
    return W.str();
  }

  std::string definition() {
    CodeWriter W;
    W.line("");
    comment(W);
    if (AsParent)
      parentKernel(W);
    else
      leafKernel(W);
    return W.str();
  }

private:
  /// Its blocks take the shape of the largest launch they serve, or pack
  /// several one-warp launches: its registers are bounded for at least that
  /// block (a child launched with 1024-thread blocks must still launch once
  /// aggregated; AggregatedChild::MaxThreads).
  std::string head() {
    std::vector<std::string> Params = {"cuda_rewrite::LaunchTable " +
                                       Names.name("cr_launches")};
    for (const std::string &Decl : declarations(A.scalarParams()))
      Params.push_back(Decl);
    return callText("__global__ void __launch_bounds__(" +
                        std::to_string(A.MaxThreads) + ") " + A.kernelName(),
                    Params);
  }

  void comment(CodeWriter &W) {
    std::string Name = A.Child->getNameAsString();
    passComment(W, "'" + Name +
                       "' for aggregated launches. Each block of\n"
                       "this grid runs one block of one original launch of '" +
                       Name +
                       "',\nfound by searching the launches' first blocks; "
                       "below, the original body\nsees that launch's built-in "
                       "variables and arguments under their own names.");
    if (AsParent)
      W.comment("Its own launches are aggregated too: every thread, active or "
                "not, takes part\nin gathering them after the body.");
  }

  /// The original launch this block runs a block of.
  void findOriginalLaunch(CodeWriter &W) {
    W.line("const auto " + Names.name("cr_self") +
           " = cuda_rewrite::originalLaunch<" + A.argsStruct() + ">(" +
           Names.name("cr_launches") + ");");
  }

  /// The original launch's built-ins that the body reads, and its
  /// per-launch arguments, under their own names.
  void originalNames(CodeWriter &W) {
    std::string Self = Names.name("cr_self");
    std::vector<std::string> Params = builtinParams(A.Info),
                             Args = builtinArgs(A.Info);
    for (size_t I = 0; I < Params.size(); ++I)
      W.line(Params[I] + " = " + Self + "." + Args[I] + ";");
    for (const ParmVarDecl *P : A.perLaunchParams())
      W.line(declareParam(*P) + " = " + Self + ".args->" +
             P->getNameAsString() + ";");
  }

  /// Runs the parent's code: every thread, active or not, must reach the
  /// flushes, which gather the block's launches at a barrier.
  void parentKernel(CodeWriter &W) {
    CodeWriter::Block Kernel = W.block(head() + " {");
    findOriginalLaunch(W);
    AsParent->writePendingLaunches(W);
    {
      CodeWriter::Block Active =
          W.block("if (" + Names.name("cr_self") + ".active) {");
      originalNames(W);
      AsParent->writeBodyCall(W);
    }
    AsParent->writeFlushes(W);
  }

  /// Runs a copy of the child's body, which brings the kernel's closing
  /// brace.
  void leafKernel(CodeWriter &W) {
    CodeWriter::Block Kernel = W.block(head() + " {", /*Closing=*/"");
    findOriginalLaunch(W);
    if (A.Info.HasBarriers)
      W.comment("Every original launch here has the same block size (its "
                "barriers need\nthat), so no thread returns early.");
    {
      CodeWriter::Block Inactive =
          W.unbraced("if (!" + Names.name("cr_self") + ".active)");
      W.line("return;");
    }
    originalNames(W);
    // The user's text keeps the layout it has.
    W.raw(bodyAfterBrace(*A.Child).ltrim("\r\n").str() + "\n");
  }

  const AggregatedChild &A;
  const ParentCode *AsParent;
  NameAllocator Names;
};

/// Writes the launch helpers of one aggregated child: what a rewritten
/// parent calls to gather the launches of its threads (a warp's, a block's
/// or a grid's) and make them as one launch of the aggregated kernel.
class LaunchHelperWriter {
public:
  explicit LaunchHelperWriter(const AggregatedChild &A) : A(A) {
    // The helpers' own parameters and locals sit beside the child's scalar
    // parameters, which the helpers pass on.
    for (const ParmVarDecl *P : A.scalarParams())
      Names.reserveIdentifiersIn(declareParam(*P));
  }

  std::string warp() {
    std::vector<std::string> Params = {
        "dim3 " + name("cr_grid"), "dim3 " + name("cr_block"),
        "size_t " + name("cr_shared"),
        "const " + A.argsStruct() + " &" + name("cr_args")};
    for (const std::string &Decl : declarations(A.scalarParams()))
      Params.push_back(Decl);
    Params.push_back("int " + name("cr_line"));
    CodeWriter W;
    W.line("");
    passComment(W, "warp granularity. The lanes of a warp that reach\na launch "
                   "of '" +
                       A.Child->getNameAsString() +
                       "' together make one launch of " + A.kernelName() + ".");
    {
      CodeWriter::Block Helper =
          W.block(callText("__device__ void " + A.warpHelper(), Params) + " {");
      gatherAndLaunch(
          W, callText("cuda_rewrite::gatherWarpLaunches",
                      {name("cr_grid"), name("cr_block"), name("cr_shared"),
                       name("cr_args"), "__FILE__", name("cr_line")}));
    }
    return W.str();
  }

  std::string block() {
    return pending(A.blockHelper(),
                   "block granularity. Every thread of the block\ncalls this "
                   "once the parent's body is done; the launches of '" +
                       A.Child->getNameAsString() +
                       "'\nthe block asked for become one launch of " +
                       A.kernelName() + ".",
                   "gatherBlockLaunches", /*PerSite=*/false);
  }

  std::string grid() {
    return pending(A.gridHelper(),
                   "kernel granularity. Every thread of the parent\ngrid calls "
                   "this once the parent's body is done; the last block to "
                   "get here\nlaunches " +
                       A.kernelName() +
                       " once for all the grid's launches of '" +
                       A.Child->getNameAsString() + "'\nfrom one site (" +
                       name("cr_site") + ").",
                   "gatherGridLaunches", /*PerSite=*/true);
  }

private:
  std::string name(StringRef Wanted) { return Names.name(Wanted); }

  /// The block and kernel helpers differ only in their name, comment, the
  /// runtime function that gathers the launches, and the kernel helper's
  /// site number. Both take a PendingLaunch or, for launches in loops, a
  /// PendingLaunchList.
  std::string pending(const std::string &Name, const std::string &Comment,
                      StringRef Gather, bool PerSite) {
    std::string Pending = name("Pending");
    std::vector<std::string> Params = {"const " + Pending + " &" +
                                       name("cr_pending")};
    for (const std::string &Decl : declarations(A.scalarParams()))
      Params.push_back(Decl);
    std::vector<std::string> GatherArgs = {name("cr_pending")};
    if (PerSite) {
      Params.push_back("unsigned " + name("cr_site"));
      GatherArgs.push_back(name("cr_site"));
    }
    Params.push_back("int " + name("cr_line"));
    GatherArgs.push_back("__FILE__");
    GatherArgs.push_back(name("cr_line"));
    CodeWriter W;
    W.line("");
    passComment(W, Comment);
    W.line("template <typename " + Pending + ">");
    {
      CodeWriter::Block Helper =
          W.block(callText("__device__ void " + Name, Params) + " {");
      gatherAndLaunch(W, callText("cuda_rewrite::" + Gather.str(), GatherArgs));
    }
    return W.str();
  }

  /// The part all helpers share: the launches \p Gather gathers, made as
  /// one where this thread is the one to make them, and checked.
  void gatherAndLaunch(CodeWriter &W, const std::string &Gather) {
    std::string Launch = name("cr_launch");
    W.line("auto " + Launch + " = " + Gather + ";");
    CodeWriter::Block Made =
        W.block("if (" + Launch + ".launcher && " + Launch + ".blocks > 0) {");
    std::string Grid = name("cr_aggregated_grid"),
                Block = name("cr_aggregated_block");
    W.line("dim3 " + Grid + ", " + Block + ";");
    W.line(Launch + ".configure(/*packable=*/" +
           (A.packable() ? "true" : "false") + ", " + Grid + ", " + Block +
           ");");
    std::vector<std::string> Args = {Launch + ".table"};
    for (const std::string &Name : names(A.scalarParams()))
      Args.push_back(Name);
    W.line(callText(A.kernelName() + "<<<" + Grid + ", " + Block + ", " +
                        Launch + ".sharedBytes>>>",
                    Args) +
           ";");
    W.line("cuda_rewrite::checkAggregatedLaunch(__FILE__, " + name("cr_line") +
           ");");
  }

  const AggregatedChild &A;
  NameAllocator Names;
};

} // namespace

std::string generateArgsStruct(const AggregatedChild &A) {
  CodeWriter W;
  W.line("");
  passComment(W, "the arguments of one launch of '" +
                     A.Child->getNameAsString() +
                     "'\nthat may differ between the launches aggregated "
                     "together.");
  {
    CodeWriter::Block Struct = W.block("struct " + A.argsStruct() + " {", "};");
    for (const std::string &Decl : declarations(A.perLaunchParams()))
      W.line(Decl + ";");
  }
  return W.str();
}

std::string generateAggregatedKernelDeclaration(const AggregatedChild &A,
                                                const ParentCode *AsParent) {
  return AggregatedKernelWriter(A, AsParent).declaration();
}

std::string generateAggregatedKernel(const AggregatedChild &A,
                                     const ParentCode *AsParent) {
  return AggregatedKernelWriter(A, AsParent).definition();
}

std::string generateWarpHelper(const AggregatedChild &A) {
  return LaunchHelperWriter(A).warp();
}

std::string generateBlockHelper(const AggregatedChild &A) {
  return LaunchHelperWriter(A).block();
}

std::string generateGridHelper(const AggregatedChild &A) {
  return LaunchHelperWriter(A).grid();
}

void ParentCode::writePendingLaunches(CodeWriter &W) const {
  for (const PendingSite &S : Sites)
    W.line(S.Type + " " + S.Var + ";");
}

void ParentCode::writeBodyCall(CodeWriter &W) const {
  W.line(callText(BodyName, BodyArgs) + ";");
}

void ParentCode::writeFlushes(CodeWriter &W) const {
  for (const PendingSite &S : Sites)
    W.line(S.Flush + ";");
}

void ParentCode::reserveNames(NameAllocator &Names) const {
  for (const PendingSite &S : Sites) {
    Names.reserveIdentifiersIn(S.Type);
    Names.reserve(S.Var);
    Names.reserveIdentifiersIn(S.Flush);
  }
  Names.reserve(BodyName);
  for (const std::string &Arg : BodyArgs)
    Names.reserveIdentifiersIn(Arg);
}

std::string generateBodyFunctionHead(StringRef Name, StringRef Prefix,
                                     StringRef ParamText, bool DeclareKernel) {
  CodeWriter W;
  if (DeclareKernel) {
    passComment(W,
                "'" + Name + "' is defined after its body, which launches it.");
    W.line(Prefix + " " + Name + "(" + ParamText + ");");
  }
  passComment(W, "the body of '" + Name +
                     "'; its launches are recorded,\nand made together by '" +
                     Name + "' below.");
  // The body function's name follows, where the parent's was.
  return W.str() + "__device__ __forceinline__ void ";
}

std::string generateParentKernel(StringRef Name, StringRef Head,
                                 StringRef ParamText, const ParentCode &Code) {
  CodeWriter W;
  W.line("");
  passComment(W, "'" + Name +
                     "' with its device-side launches aggregated:\neach "
                     "thread runs the original body, then the launches are "
                     "made together.");
  {
    CodeWriter::Block Kernel = W.block(Head + "(" + ParamText + ") {");
    Code.writePendingLaunches(W);
    Code.writeBodyCall(W);
    Code.writeFlushes(W);
  }
  return W.str();
}

} // namespace cuda_rewrite
