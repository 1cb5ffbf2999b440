//===- PromoteCodeGen.cpp - The promoted kernel and its launcher ----------===//

#include "rewriters/promote/PromoteCodeGen.h"
#include "rewriters/common/GeneratedLayout.h"
#include "rewriters/common/SourceLines.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace clang;

namespace cuda_rewrite {

std::string promotedKernelName(const PromotePlan &Plan) {
  return Plan.Kernel->getNameAsString() + "_promoted";
}

std::string promotedLauncherName(const PromotePlan &Plan) {
  return promotedKernelName(Plan) + "_launch";
}

namespace {

/// \p Text as a `/// ` comment (the layout breaks its lines).
std::string docComment(llvm::StringRef Text) {
  return "/// " + Text.str() + "\n";
}

class CodeGen {
public:
  CodeGen(const PromotePlan &Plan, const ASTContext &Ctx)
      : Plan(Plan), Ctx(Ctx), SM(Ctx.getSourceManager()),
        Name(Plan.Kernel->getNameAsString()), Kernel(promotedKernelName(Plan)),
        Values(Plan.Kernel->getNameAsString() + "_postponed"),
        Pool(std::to_string(Plan.Variant.Pool)) {
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Postponed)
        PostponedNames.push_back(A.Param->getNameAsString());
    Indent = indentOf(Plan.Body->body_front()->getBeginLoc());
  }

  std::string generate() {
    return valuesStruct() + "\n" + kernelComment() + kernelHead() + body() +
           "\n\n" + launcher();
  }

private:
  //===--------------------------------------------------------------------===//
  // Pieces
  //===--------------------------------------------------------------------===//

  std::string valuesStruct() const {
    std::string S = docComment("The launch arguments of '" + Name +
                               "' that a link computes for the next one "
                               "(postponed by promotion): they travel "
                               "through the chain's slots.") +
                    "struct " + Values + " {\n";
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Postponed)
        S += "  " +
             A.Param->getType().getUnqualifiedType().getAsString(
                 Ctx.getPrintingPolicy()) +
             " " + A.Param->getNameAsString() + ";\n";
    if (PostponedNames.empty())
      S += "  // None: the flag only orders the links.\n";
    return S + "};\n";
  }

  std::string kernelComment() const {
    const PromoteVariant &V = Plan.Variant;
    std::string Postponed =
        PostponedNames.empty() ? "nothing (no argument is postponed)"
                               : "'" + llvm::join(PostponedNames, "', '") + "'";
    std::string C = llvm::formatv(
        "'{0}', promoted: KLAP variant {1} (section III of the KLAP paper), "
        "generated from '{0}', which is unchanged above. ",
        Name, V.name());
    if (V.Pool)
      C += llvm::formatv(
          "Links run as the blocks of pools of {0}: the host launches the "
          "first pool, and the block with the last ticket of a pool launches "
          "the next pool at its start, with cudaStreamFireAndForget so that "
          "the pool starts while this one runs (a tail launch would wait for "
          "the whole pool). Each block takes a ticket (an atomic add) and "
          "runs the link of that number; blocks past the end of the chain "
          "learn it from the chain's extent and return. Deadlock freedom: a "
          "block waits only on the link of the ticket before its own, which "
          "a block took and is therefore already running; no block waits on "
          "one that may not be resident, whatever the pool size or the "
          "occupancy.",
          Pool);
    else
      C += "Each link launches the next one at its start, with "
           "cudaStreamFireAndForget, not at its end, so that the launch "
           "overlaps this link's work. Deadlock freedom: a link waits only "
           "on the link that launched it, which is running.";
    if (!Plan.EarlyCondition)
      C += " The launch condition is known only where the original "
           "launched: the next link is launched speculatively, and returns "
           "if this one did not continue the chain.";
    C += " Flags: link t - 1 stores " + Postponed +
         " in slot t of cr_chain and then releases the slot's flag (2 * t + "
         "continued) ";
    C += Plan.PublishAtEnd ? "at its end, after a barrier, so that all it "
                             "wrote comes before what later links write; "
                           : "where the original launched; ";
    C += V.Overlap ? "link t acquires it after its independent prologue "
                     "(overlap_boundary), "
                   : "link t acquires it at its start, ";
    C += "before anything that depends on link t - 1. Link 0 takes the host "
         "launch's arguments.";
    return docComment(C);
  }

  std::string kernelHead() const {
    const FunctionDecl *K = Plan.Kernel;
    std::string Head = text(K->getBeginLoc(), K->getLocation());
    std::vector<std::string> Params{"cuda_rewrite::PromoteChain<" + Values +
                                    "> *cr_chain"};
    if (!Plan.Variant.Pool)
      Params.push_back("unsigned cr_link");
    for (const ParmVarDecl *P : K->parameters())
      Params.push_back(tokenText(P->getSourceRange()));
    return callText(Head + launchBounds() + Kernel, Params) + " ";
  }

  /// `__launch_bounds__(N) ` where every link's block is known (N its
  /// threads, rounded up to a warp): the chain's bookkeeping adds registers
  /// to the original's, and without a bound nothing keeps them within what
  /// the block can have (a 1024-thread bound would cap them at 64). Empty
  /// where the user bounded the kernel (the head copied keeps theirs).
  std::string launchBounds() const {
    std::optional<uint64_t> Threads = Plan.BlockThreads;
    if (Plan.Kernel->hasAttr<CUDALaunchBoundsAttr>() || !Threads ||
        *Threads == 0 || *Threads > 1024)
      return "";
    return "__launch_bounds__(" + std::to_string((*Threads + 31) / 32 * 32) +
           ") ";
  }

  /// The original body with the promotion's edits.
  std::string body() {
    const CompoundStmt *B = Plan.Body;
    const PromoteVariant &V = Plan.Variant;
    if (V.Pool)
      insert(offset(B->getLBracLoc()) + 1, "\n" + ticket());
    SourceLocation AfterPrefix =
        Plan.PrefixEnd ? B->body_begin()[Plan.PrefixEnd - 1]->getEndLoc()
                       : B->getLBracLoc();
    insert(offset(lineAfter(Ctx, AfterPrefix)),
           (Plan.PrefixEnd ? "\n" : "") + hoisted());
    // The wait replaces the overlap_boundary line, unless the boundary moved
    // past declarations the hoisted code needs.
    bool AtPragma =
        V.Overlap && (*Plan.Boundary == 0 ||
                      offset(B->body_begin()[*Plan.Boundary - 1]->getEndLoc()) <
                          Plan.BoundaryPragmaBegin);
    if (Plan.BoundaryPragmaEnd) {
      unsigned End = Plan.BoundaryPragmaEnd;
      if (buffer()[End] == '\n')
        ++End;
      add(Plan.BoundaryPragmaBegin, End, AtPragma ? await() : "");
    }
    if (V.Overlap && !AtPragma)
      insert(lineStartOffset(B->body_begin()[*Plan.Boundary]), await());
    insert(lineStartOffset(Plan.LaunchIf),
           Indent + Values +
               " cr_next{}; // Set where the original "
               "launched the next link.\n" +
               Indent + "bool cr_launched = false;\n");
    replaceLaunch();
    if (Plan.PublishAtEnd)
      insert(lineStartOffset(B->getRBracLoc()),
             Indent +
                 "// Release only after all of this link's accesses, "
                 "so that later links\n" +
                 Indent + "// see memory as the original's next link did.\n" +
                 Indent + "__syncthreads();\n" + publish());
    else
      insert(offset(lineAfter(Ctx, Plan.LaunchIf->getEndLoc())), publish());
    return render(offset(B->getLBracLoc()), offset(B->getRBracLoc()) + 1);
  }

  std::string ticket() const {
    std::string S =
        Indent +
        "// The block's ticket is its link (see the comment above).\n" +
        Indent +
        "const unsigned cr_link = cuda_rewrite::promoteTicket(cr_chain);\n";
    bool Rank = false;
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Stepped) {
        if (!Rank)
          S += Indent + "const int cr_rank = int(cr_link % " + Pool +
               "); // Links since the pool's first.\n";
        Rank = true;
        std::string P = A.Param->getNameAsString();
        S += Indent + P + " = " + P + " " + A.StepSign + " cr_rank * " +
             A.StepAmount + ";\n";
      }
    return S;
  }

  /// What runs at the start, after the declarations it needs.
  std::string hoisted() const {
    const PromoteVariant &V = Plan.Variant;
    if (V.Pool) {
      std::string S = Indent +
                      "// Does this link exist? A pool may run past "
                      "the end of the chain.\n" +
                      Indent +
                      "if (!cuda_rewrite::promoteAwaitLink(cr_chain, "
                      "cr_link))\n" +
                      Indent + "  return;\n";
      if (Plan.EarlyCondition)
        S += Indent + "if (threadIdx.x == 0)\n" + Indent +
             "  cuda_rewrite::promoteReportLink(cr_chain, cr_link, " +
             Plan.Condition + ");\n";
      S += Indent +
           "// The last link of a pool launches the next pool, hoisted from "
           "where the\n" +
           Indent + "// original launched the next link.\n";
      S += launch("cuda_rewrite::promoteLastOfPool(cr_link, " + Pool + ")",
                  Pool, "cr_chain");
      return V.Overlap ? S : S + await();
    }
    std::string Launch =
        Indent +
        (Plan.EarlyCondition
             ? "// Promoted launch: the next link starts now and waits for "
               "this one.\n"
             : "// Speculative promoted launch: whether the chain continues "
               "is known\n" +
                   Indent + "// only where the original launched.\n") +
        launch("", "1", "cr_chain, cr_link + 1");
    if (V.Overlap)
      return Launch;
    return Plan.EarlyCondition ? Launch + await() : await() + Launch;
  }

  /// `if (threadIdx.x == 0 && extra && cond) kernel<<<grid, ...>>>(...)`.
  std::string launch(const std::string &Extra, const std::string &Grid,
                     const std::string &Leading) const {
    std::string Cond = "threadIdx.x == 0";
    if (!Extra.empty())
      Cond += " && " + Extra;
    if (Plan.EarlyCondition && Plan.Condition != "true")
      Cond += " && (" + Plan.Condition + ")";
    std::vector<std::string> Args{Leading};
    for (const PromoteArg &A : Plan.Args)
      Args.push_back(A.Kind == ArgKind::Uniform || A.Kind == ArgKind::Postponed
                         ? A.Param->getNameAsString()
                         : A.Text);
    return Indent + "if (" + Cond + ") {\n" + Indent + "  " +
           callText(Kernel + "<<<" + Grid + ", " + Plan.BlockText +
                        ", 0, cudaStreamFireAndForget>>>",
                    Args) +
           ";\n" + Indent +
           "  cuda_rewrite::promoteCheckLaunch(__FILE__, __LINE__);\n" +
           Indent + "}\n";
  }

  /// The wait for the previous link's values.
  std::string await() const {
    std::string S = Indent + "// Acquire what link t - 1 released (link 0 "
                             "keeps the host's arguments).\n";
    S +=
        Indent + Values + " cr_in{" + llvm::join(PostponedNames, ", ") + "};\n";
    std::string Call = "cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in)";
    if (!Plan.EarlyCondition && !Plan.Variant.Pool)
      S += Indent + "if (!" + Call + ")\n" + Indent +
           "  return; // Link t - 1 did not continue the chain.\n";
    else
      S += Indent + Call + ";\n";
    for (const std::string &P : PostponedNames)
      S += Indent + P + " = cr_in." + P + ";\n";
    return S;
  }

  std::string publish() const {
    std::string Publish = "cuda_rewrite::promotePublish(cr_chain, cr_link + "
                          "1, cr_next, cr_launched);\n";
    std::string S = Indent + "// Release the next link: it acquires cr_next "
                             "and all this link wrote before.\n";
    if (Plan.Variant.Pool && !Plan.EarlyCondition)
      return S + Indent + "if (threadIdx.x == 0) {\n" + Indent +
             "  cuda_rewrite::promoteReportLink(cr_chain, cr_link, "
             "cr_launched);\n" +
             Indent + "  " + Publish + Indent + "}\n";
    return S + Indent + "if (threadIdx.x == 0)\n" + Indent + "  " + Publish;
  }

  /// The launch statement becomes the hand-over of the postponed values.
  void replaceLaunch() {
    const Stmt *S = Plan.LaunchStmt;
    unsigned Begin = offset(S->getBeginLoc());
    unsigned End = offset(Lexer::getLocForEndOfToken(
        SM.getExpansionLoc(S->getEndLoc()), 0, SM, Ctx.getLangOpts()));
    while (End < buffer().size() && isspace(buffer()[End]))
      ++End;
    if (End < buffer().size() && buffer()[End] == ';')
      ++End;
    // `if (...) launch;` needs braces around what replaces the launch.
    bool Braces = Plan.LaunchIf->getThen() == S;
    std::string Outer = indentOf(Plan.LaunchIf->getBeginLoc());
    std::string Inner = Braces ? Outer + "  " : indentOf(S->getBeginLoc());
    if (Braces)
      Begin = offset(Plan.LaunchIf->getRParenLoc()) + 1;
    std::string Text = (Braces ? " {\n" + Inner : std::string()) +
                       "// The original launched the next link here; hand "
                       "it its arguments.\n";
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Postponed)
        Text += Inner + "cr_next." + A.Param->getNameAsString() + " = " +
                A.Text + ";\n";
    Text += Inner + "cr_launched = true;";
    if (Braces)
      Text += "\n" + Outer + "}";
    add(Begin, End, Text);
  }

  std::string launcher() const {
    const PromoteVariant &V = Plan.Variant;
    std::vector<std::string> Params, Args;
    for (const ParmVarDecl *P : Plan.Kernel->parameters()) {
      Params.push_back(tokenText(P->getSourceRange()));
      Args.push_back(P->getNameAsString());
    }
    std::string Leading = V.Pool ? "cr_chain" : "cr_chain, 0u";
    std::string Grid = V.Pool ? "dim3(" + Pool + ")" : std::string("grid");
    std::string S = docComment(
        llvm::formatv(
            "Replaces `{0}<<<grid, block, shared, stream>>>(...)` on the host: "
            "runs the chain from its first link as {1}. grid is 1 (the pass "
            "checked every launch it rewrote){2}. The chain's state is "
            "allocated, zeroed and freed in stream order, so chains in "
            "different streams never share it; freeing it waits for the whole "
            "chain, since a grid completes only with the grids it launched.",
            Name, promotedKernelName(Plan),
            V.Pool ? "; the first pool of " + Pool + " blocks runs links 0.." +
                         std::to_string(V.Pool - 1) +
                         " and the next pools the "
                         "rest"
                   : "")
            .str());
    std::vector<std::string> Head{"dim3 grid", "dim3 block", "size_t shared",
                                  "cudaStream_t stream"};
    Head.insert(Head.end(), Params.begin(), Params.end());
    S += callText("inline cudaError_t " + promotedLauncherName(Plan), Head) +
         " {\n";
    if (V.Pool)
      S += "  (void)grid;\n";
    S +=
        "  cuda_rewrite::PromoteChain<" + Values +
        "> *cr_chain = nullptr;\n"
        "  cudaError_t cr_error = cudaMallocAsync(&cr_chain, sizeof *cr_chain, "
        "stream);\n"
        "  if (cr_error == cudaSuccess)\n"
        "    cr_error = cudaMemsetAsync(cr_chain, 0, sizeof *cr_chain, "
        "stream);\n"
        "  if (cr_error != cudaSuccess)\n"
        "    return cr_error;\n";
    Args.insert(Args.begin(), Leading);
    S += "  " +
         callText(Kernel + "<<<" + Grid + ", block, shared, stream>>>", Args) +
         ";\n";
    S += "  cr_error = cudaPeekAtLastError();\n"
         "  cudaError_t cr_freed = cudaFreeAsync(cr_chain, stream);\n"
         "  return cr_error != cudaSuccess ? cr_error : cr_freed;\n}\n";
    return S;
  }

  //===--------------------------------------------------------------------===//
  // Text
  //===--------------------------------------------------------------------===//

  struct Edit {
    unsigned Begin, End;
    std::string Text;
    unsigned Seq;
  };

  void add(unsigned Begin, unsigned End, std::string Text) {
    Edits.push_back({Begin, End, std::move(Text), unsigned(Edits.size())});
  }
  void insert(unsigned At, std::string Text) { add(At, At, std::move(Text)); }

  std::string render(unsigned Begin, unsigned End) {
    llvm::stable_sort(Edits, [](const Edit &A, const Edit &B) {
      return std::tie(A.Begin, A.Seq) < std::tie(B.Begin, B.Seq);
    });
    std::string Out;
    unsigned At = Begin;
    for (const Edit &E : Edits) {
      Out += buffer().slice(At, E.Begin).str() + E.Text;
      At = std::max(At, E.End);
    }
    return Out + buffer().slice(At, End).str();
  }

  llvm::StringRef buffer() const {
    return SM.getBufferData(SM.getMainFileID());
  }

  unsigned offset(SourceLocation Loc) const {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  }

  unsigned lineStartOffset(const Stmt *S) const {
    return offset(lineStart(Ctx, S->getBeginLoc()));
  }
  unsigned lineStartOffset(SourceLocation Loc) const {
    return offset(lineStart(Ctx, Loc));
  }

  std::string indentOf(SourceLocation Loc) const {
    unsigned Column = SM.getExpansionColumnNumber(Loc);
    return std::string(Column ? Column - 1 : 0, ' ');
  }

  std::string text(SourceLocation Begin, SourceLocation End) const {
    return buffer().slice(offset(Begin), offset(End)).str();
  }

  std::string tokenText(SourceRange Range) const {
    return sourceText(Ctx, Range);
  }

  const PromotePlan &Plan;
  const ASTContext &Ctx;
  const SourceManager &SM;
  std::string Name, Kernel, Values, Pool, Indent;
  std::vector<std::string> PostponedNames;
  std::vector<Edit> Edits;
};

} // namespace

std::string generatePromotedCode(const PromotePlan &Plan,
                                 const ASTContext &Ctx) {
  return CodeGen(Plan, Ctx).generate();
}

} // namespace cuda_rewrite
