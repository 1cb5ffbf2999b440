//===- AggregateCodeGen.cpp - Text of the aggregate pass's code -----------===//

#include "rewriters/aggregate/AggregateCodeGen.h"
#include "rewriters/common/GeneratedLayout.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
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

std::string generateArgsStruct(const AggregatedChild &A) {
  std::string Text = "\n// cuda-rewrite (aggregate): the arguments of one "
                     "launch of '" +
                     A.Child->getNameAsString() +
                     "'\n// that may differ between the launches aggregated "
                     "together.\nstruct " +
                     A.argsStruct() + " {\n";
  for (const std::string &Decl : declarations(A.perLaunchParams()))
    Text += "  " + Decl + ";\n";
  return Text + "};\n";
}

/// The child's body from just after its '{' to its '}' inclusive.
static StringRef bodyAfterBrace(const FunctionDecl &Child) {
  const auto *Body = cast<CompoundStmt>(Child.getBody());
  const SourceManager &SM = Child.getASTContext().getSourceManager();
  unsigned Begin = SM.getFileOffset(Body->getLBracLoc()) + 1;
  unsigned End = SM.getFileOffset(Body->getRBracLoc()) + 1;
  return SM.getBufferData(SM.getFileID(Body->getLBracLoc())).slice(Begin, End);
}

/// `const uint3 blockIdx = cr_self.blockIdx;` and so on for the built-ins
/// \p Info says the body reads, each line starting with \p Pad.
static std::string shadowBuiltins(const ChildKernelInfo &Info,
                                  const std::string &Pad) {
  std::string Text;
  if (Info.UsesBlockIdx)
    Text += Pad + "const uint3 blockIdx = cr_self.blockIdx;\n";
  if (Info.UsesBlockDim)
    Text += Pad + "const dim3 blockDim = cr_self.blockDim;\n";
  if (Info.UsesGridDim)
    Text += Pad + "const dim3 gridDim = cr_self.gridDim;\n";
  if (Info.UsesThreadIdx)
    Text += Pad + "const uint3 threadIdx = cr_self.threadIdx;\n";
  return Text;
}

static std::string perLaunchLocals(const AggregatedChild &A,
                                   const std::string &Pad) {
  std::string Text;
  for (const ParmVarDecl *P : A.perLaunchParams())
    Text += Pad + declareParam(*P) + " = cr_self.args->" +
            P->getNameAsString() + ";\n";
  return Text;
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

static std::vector<std::string>
aggregatedKernelParams(const AggregatedChild &A) {
  std::vector<std::string> Params = {"cuda_rewrite::LaunchTable cr_launches"};
  for (const std::string &Decl : declarations(A.scalarParams()))
    Params.push_back(Decl);
  return Params;
}

/// Its blocks take the shape of the largest launch they serve, or pack
/// several one-warp launches: its registers are bounded for at least that
/// block (a child launched with 1024-thread blocks must still launch once
/// aggregated; AggregatedChild::MaxThreads).
static std::string aggregatedKernelHead(const AggregatedChild &A) {
  return "__global__ void __launch_bounds__(" + std::to_string(A.MaxThreads) +
         ") " + A.kernelName();
}

std::string generateAggregatedKernelDeclaration(const AggregatedChild &A) {
  return "\n// cuda-rewrite (aggregate): '" + A.Child->getNameAsString() +
         "' for aggregated launches, defined below.\n" +
         callText(aggregatedKernelHead(A), aggregatedKernelParams(A)) + ";" +
         "\n";
}

std::string generateAggregatedKernel(const AggregatedChild &A,
                                     const ParentCode *AsParent) {
  const FunctionDecl &Child = *A.Child;
  std::string Name = Child.getNameAsString();
  std::string Text =
      "\n// cuda-rewrite (aggregate): '" + Name +
      "' for aggregated launches. Each block of\n"
      "// this grid runs one block of one original launch of '" +
      Name +
      "',\n// found by searching the launches' first blocks; below, the "
      "original body\n// sees that launch's built-in variables and "
      "arguments under their own names.\n";
  if (AsParent)
    Text += "// Its own launches are aggregated too: every thread, active or "
            "not, takes part\n// in gathering them after the body.\n";
  Text += callText(aggregatedKernelHead(A), aggregatedKernelParams(A)) + " {\n";
  Text += "  const auto cr_self = cuda_rewrite::originalLaunch<" +
          A.argsStruct() + ">(cr_launches);\n";
  if (AsParent) {
    Text += AsParent->Decls + "  if (cr_self.active) {\n" +
            shadowBuiltins(A.Info, "    ") + perLaunchLocals(A, "    ") +
            AsParent->indentedBodyCall(4) + "\n  }\n" + AsParent->Flushes +
            "}\n";
    return Text;
  }
  if (A.Info.HasBarriers)
    Text += "  // Every original launch here has the same block size (its "
            "barriers need\n  // that), so no thread returns early.\n";
  Text += "  if (!cr_self.active)\n    return;\n";
  Text += shadowBuiltins(A.Info, "  ") + perLaunchLocals(A, "  ");
  Text += bodyAfterBrace(Child).ltrim("\r\n").str();
  return Text + "\n";
}

std::string ParentCode::indentedBodyCall(unsigned Indent) const {
  return std::string(Indent, ' ') + callText(BodyName, BodyArgs) + ";";
}

/// The part the warp and block helpers share: the launch, and its check.
static std::string launchAndCheck(const AggregatedChild &A) {
  std::vector<std::string> Args = {"cr_launch.table"};
  for (const std::string &Name : names(A.scalarParams()))
    Args.push_back(Name);
  bool Packable = A.packable();
  return "  if (cr_launch.launcher && cr_launch.blocks > 0) {\n"
         "    dim3 cr_aggregated_grid, cr_aggregated_block;\n"
         "    cr_launch.configure(/*packable=*/" +
         std::string(Packable ? "true" : "false") +
         ", cr_aggregated_grid, cr_aggregated_block);\n" + "    " +
         callText(A.kernelName() +
                      "<<<cr_aggregated_grid, cr_aggregated_block, "
                      "cr_launch.sharedBytes>>>",
                  Args) +
         ";" +
         "\n    cuda_rewrite::checkAggregatedLaunch(__FILE__, cr_line);\n  "
         "}\n}\n";
}

std::string generateWarpHelper(const AggregatedChild &A) {
  std::vector<std::string> Params = {"dim3 cr_grid", "dim3 cr_block",
                                     "size_t cr_shared",
                                     "const " + A.argsStruct() + " &cr_args"};
  for (const std::string &Decl : declarations(A.scalarParams()))
    Params.push_back(Decl);
  Params.push_back("int cr_line");
  return "\n// cuda-rewrite (aggregate): warp granularity. The lanes of a "
         "warp that reach\n// a launch of '" +
         A.Child->getNameAsString() + "' together make one launch of " +
         A.kernelName() + ".\n" +
         callText("__device__ void " + A.warpHelper(), Params) + " {" +
         "\n  auto cr_launch = cuda_rewrite::gatherWarpLaunches("
         "cr_grid, cr_block, cr_shared, cr_args, __FILE__, cr_line);\n" +
         launchAndCheck(A);
}

/// The block and kernel helpers differ only in their name, comment, the
/// runtime function that gathers the launches, and the kernel helper's
/// site number. Both take a PendingLaunch or, for launches in loops, a
/// PendingLaunchList.
static std::string pendingHelper(const AggregatedChild &A,
                                 const std::string &Name,
                                 const std::string &Comment, StringRef Gather,
                                 bool PerSite) {
  std::vector<std::string> Params = {"const Pending &cr_pending"};
  for (const std::string &Decl : declarations(A.scalarParams()))
    Params.push_back(Decl);
  if (PerSite)
    Params.push_back("unsigned cr_site");
  Params.push_back("int cr_line");
  return Comment + "template <typename Pending>\n" +
         callText("__device__ void " + Name, Params) + " {" +
         "\n  auto cr_launch = cuda_rewrite::" + Gather.str() +
         (PerSite ? "(cr_pending, cr_site, __FILE__, cr_line);\n"
                  : "(cr_pending, __FILE__, cr_line);\n") +
         launchAndCheck(A);
}

std::string generateBlockHelper(const AggregatedChild &A) {
  return pendingHelper(
      A, A.blockHelper(),
      "\n// cuda-rewrite (aggregate): block granularity. Every thread of the "
      "block\n// calls this once the parent's body is done; the launches of '" +
          A.Child->getNameAsString() +
          "'\n// the block asked for become one launch of " + A.kernelName() +
          ".\n",
      "gatherBlockLaunches", /*PerSite=*/false);
}

std::string generateGridHelper(const AggregatedChild &A) {
  return pendingHelper(
      A, A.gridHelper(),
      "\n// cuda-rewrite (aggregate): kernel granularity. Every thread of the "
      "parent\n// grid calls this once the parent's body is done; the last "
      "block to get here\n// launches " +
          A.kernelName() + " once for all the grid's launches of '" +
          A.Child->getNameAsString() + "'\n// from one site (cr_site).\n",
      "gatherGridLaunches", /*PerSite=*/true);
}

} // namespace cuda_rewrite
