//===- PromoteCodeGen.cpp - The promoted kernel and its launcher ----------===//

#include "rewriters/promote/PromoteCodeGen.h"
#include "rewriters/common/CodeWriter.h"
#include "rewriters/common/GeneratedLayout.h"
#include "rewriters/common/SourceLines.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

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
void docComment(CodeWriter &W, const llvm::Twine &Text) {
  W.line("/// " + Text);
}

/// \p Code with \p Indent before each of its lines but the empty ones.
std::string indented(llvm::StringRef Code, llvm::StringRef Indent) {
  std::string Out;
  bool LineStart = true;
  for (char C : Code) {
    if (LineStart && C != '\n')
      Out += Indent;
    Out += C;
    LineStart = C == '\n';
  }
  return Out;
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
    CodeWriter W;
    valuesStruct(W);
    W.line("");
    kernelComment(W);
    // The body is the user's, edited: it keeps the layout it has.
    W.raw(kernelHead() + body() + "\n");
    W.line("");
    launcher(W);
    return W.str();
  }

private:
  /// A piece of the promoted kernel's body, written at the left margin.
  using BodyPart = void (CodeGen::*)(CodeWriter &) const;

  //===--------------------------------------------------------------------===//
  // Pieces
  //===--------------------------------------------------------------------===//

  void valuesStruct(CodeWriter &W) const {
    docComment(W, "The launch arguments of '" + Name +
                      "' that a link computes for the next one (postponed by "
                      "promotion): they travel through the chain's slots.");
    CodeWriter::Block Struct = W.block("struct " + Values + " {", "};");
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Postponed)
        W.line(A.Param->getType().getUnqualifiedType().getAsString(
                   Ctx.getPrintingPolicy()) +
               " " + A.Param->getNameAsString() + ";");
    if (PostponedNames.empty())
      W.comment("None: the flag only orders the links.");
  }

  void kernelComment(CodeWriter &W) const {
    docComment(W, "'" + Name + "', promoted: KLAP variant " +
                      Plan.Variant.name() +
                      " (section III of the KLAP paper), generated from '" +
                      Name + "', which is unchanged above. " +
                      schedulingText() + flagsText());
  }

  /// How the links are launched, and why they cannot deadlock.
  std::string schedulingText() const {
    std::string C;
    if (Plan.Variant.Pool)
      C = "Links run as the blocks of pools of " + Pool +
          ": the host launches the first pool, and the block with the last "
          "ticket of a pool launches the next pool at its start, with "
          "cudaStreamFireAndForget so that the pool starts while this one "
          "runs (a tail launch would wait for the whole pool). Each block "
          "takes a ticket (an atomic add) and runs the link of that number; "
          "blocks past the end of the chain learn it from the chain's extent "
          "and return. Deadlock freedom: a block waits only on the link of "
          "the ticket before its own, which a block took and is therefore "
          "already running; no block waits on one that may not be resident, "
          "whatever the pool size or the occupancy.";
    else
      C = "Each link launches the next one at its start, with "
          "cudaStreamFireAndForget, not at its end, so that the launch "
          "overlaps this link's work. Deadlock freedom: a link waits only on "
          "the link that launched it, which is running.";
    if (!Plan.EarlyCondition)
      C += " The launch condition is known only where the original "
           "launched: the next link is launched speculatively, and returns "
           "if this one did not continue the chain.";
    return C;
  }

  /// How the postponed values pass from one link to the next.
  std::string flagsText() const {
    std::string Postponed =
        PostponedNames.empty() ? "nothing (no argument is postponed)"
                               : "'" + llvm::join(PostponedNames, "', '") + "'";
    std::string C = " Flags: link t - 1 stores " + Postponed +
                    " in slot t of cr_chain and then releases the slot's flag "
                    "(2 * t + continued) ";
    C += Plan.PublishAtEnd ? "at its end, after a barrier, so that all it "
                             "wrote comes before what later links write; "
                           : "where the original launched; ";
    C += Plan.Variant.Overlap ? "link t acquires it after its independent "
                                "prologue (overlap_boundary), "
                              : "link t acquires it at its start, ";
    return C + "before anything that depends on link t - 1. Link 0 takes the "
               "host launch's arguments.";
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
      insert(offset(B->getLBracLoc()) + 1, "\n" + inBody(&CodeGen::ticket));
    SourceLocation AfterPrefix =
        Plan.PrefixEnd ? B->body_begin()[Plan.PrefixEnd - 1]->getEndLoc()
                       : B->getLBracLoc();
    insert(offset(lineAfter(Ctx, AfterPrefix)),
           (Plan.PrefixEnd ? "\n" : "") + inBody(&CodeGen::hoisted));
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
      add(Plan.BoundaryPragmaBegin, End,
          AtPragma ? inBody(&CodeGen::await) : "");
    }
    if (V.Overlap && !AtPragma)
      insert(lineStartOffset(B->body_begin()[*Plan.Boundary]),
             inBody(&CodeGen::await));
    insert(lineStartOffset(Plan.LaunchIf), inBody(&CodeGen::handOverState));
    replaceLaunch();
    if (Plan.PublishAtEnd)
      insert(lineStartOffset(B->getRBracLoc()), inBody(&CodeGen::publishAtEnd));
    else
      insert(offset(lineAfter(Ctx, Plan.LaunchIf->getEndLoc())),
             inBody(&CodeGen::publish));
    return render(offset(B->getLBracLoc()), offset(B->getRBracLoc()) + 1);
  }

  /// What \p Part writes, at the indentation of the body's statements: it
  /// goes into the user's body, among lines that no CodeWriter indented.
  std::string inBody(BodyPart Part) const {
    CodeWriter W;
    (this->*Part)(W);
    return indented(W.str(), Indent);
  }

  void ticket(CodeWriter &W) const {
    W.comment("The block's ticket is its link (see the comment above).");
    W.line("const unsigned cr_link = cuda_rewrite::promoteTicket(cr_chain);");
    bool Rank = false;
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Stepped) {
        if (!Rank)
          W.line("const int cr_rank = int(cr_link % " + Pool +
                 "); // Links since the pool's first.");
        Rank = true;
        std::string P = A.Param->getNameAsString();
        W.line(P + " = " + P + " " + A.StepSign + " cr_rank * " +
               stepAmountText(A, Ctx) + ";");
      }
  }

  /// What runs at the start, after the declarations it needs.
  void hoisted(CodeWriter &W) const {
    const PromoteVariant &V = Plan.Variant;
    if (V.Pool) {
      poolStart(W);
      if (!V.Overlap)
        await(W);
      return;
    }
    // A speculative launch waits first: the wait returns where link t - 1
    // did not continue the chain, which ends the speculation there.
    bool AwaitFirst = !V.Overlap && !Plan.EarlyCondition;
    if (AwaitFirst)
      await(W);
    nextLink(W);
    if (!V.Overlap && !AwaitFirst)
      await(W);
  }

  /// A pool's block: whether its link exists, and the launch of the next
  /// pool.
  void poolStart(CodeWriter &W) const {
    W.comment("Does this link exist? A pool may run past the end of the "
              "chain.");
    {
      CodeWriter::Block Missing =
          W.unbraced("if (!cuda_rewrite::promoteAwaitLink(cr_chain, cr_link))");
      W.line("return;");
    }
    if (Plan.EarlyCondition) {
      CodeWriter::Block First = W.unbraced("if (threadIdx.x == 0)");
      W.line("cuda_rewrite::promoteReportLink(cr_chain, cr_link, " +
             conditionText(Plan, Ctx) + ");");
    }
    W.comment("The last link of a pool launches the next pool, hoisted from "
              "where the\noriginal launched the next link.");
    launch(W, "cuda_rewrite::promoteLastOfPool(cr_link, " + Pool + ")", Pool,
           "cr_chain");
  }

  /// The launch of the next link, one block.
  void nextLink(CodeWriter &W) const {
    if (Plan.EarlyCondition)
      W.comment("Promoted launch: the next link starts now and waits for "
                "this one.");
    else
      W.comment("Speculative promoted launch: whether the chain continues is "
                "known\nonly where the original launched.");
    launch(W, "", "1", "cr_chain, cr_link + 1");
  }

  /// `if (threadIdx.x == 0 && extra && cond) kernel<<<grid, ...>>>(...)`.
  void launch(CodeWriter &W, const std::string &Extra, const std::string &Grid,
              const std::string &Leading) const {
    std::string Cond = "threadIdx.x == 0";
    if (!Extra.empty())
      Cond += " && " + Extra;
    if (Plan.EarlyCondition && !Plan.Conditions.empty())
      Cond += " && (" + conditionText(Plan, Ctx) + ")";
    std::vector<std::string> Args{Leading};
    for (const PromoteArg &A : Plan.Args)
      Args.push_back(A.Kind == ArgKind::Uniform || A.Kind == ArgKind::Postponed
                         ? A.Param->getNameAsString()
                         : argText(A, Ctx));
    CodeWriter::Block Then = W.block("if (" + Cond + ") {");
    W.line(callText(Kernel + "<<<" + Grid + ", " + blockText(Plan, Ctx) +
                        ", 0, cudaStreamFireAndForget>>>",
                    Args) +
           ";");
    W.line("cuda_rewrite::promoteCheckLaunch(__FILE__, __LINE__);");
  }

  /// The wait for the previous link's values.
  void await(CodeWriter &W) const {
    W.comment("Acquire what link t - 1 released (link 0 keeps the host's "
              "arguments).");
    W.line(Values + " cr_in{" + llvm::join(PostponedNames, ", ") + "};");
    std::string Call = "cuda_rewrite::promoteAwait(cr_chain, cr_link, cr_in)";
    if (!Plan.EarlyCondition && !Plan.Variant.Pool) {
      CodeWriter::Block Ended = W.unbraced("if (!" + Call + ")");
      W.line("return; // Link t - 1 did not continue the chain.");
    } else {
      W.line(Call + ";");
    }
    for (const std::string &P : PostponedNames)
      W.line(P + " = cr_in." + P + ";");
  }

  /// The values the launch's replacement hands over, before the `if` that
  /// held the launch.
  void handOverState(CodeWriter &W) const {
    W.comment("Set where the original launched the next link.");
    W.line(Values + " cr_next{};");
    W.line("bool cr_launched = false;");
  }

  void publishAtEnd(CodeWriter &W) const {
    W.comment("Release only after all of this link's accesses, so that later "
              "links\nsee memory as the original's next link did.");
    W.line("__syncthreads();");
    publish(W);
  }

  void publish(CodeWriter &W) const {
    std::string Publish = "cuda_rewrite::promotePublish(cr_chain, cr_link + "
                          "1, cr_next, cr_launched);";
    W.comment("Release the next link: it acquires cr_next and all this link "
              "wrote before.");
    if (Plan.Variant.Pool && !Plan.EarlyCondition) {
      CodeWriter::Block First = W.block("if (threadIdx.x == 0) {");
      W.line("cuda_rewrite::promoteReportLink(cr_chain, cr_link, "
             "cr_launched);");
      W.line(Publish);
      return;
    }
    CodeWriter::Block First = W.unbraced("if (threadIdx.x == 0)");
    W.line(Publish);
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
    bool Braces = Plan.LaunchParent->getThen() == S;
    CodeWriter W;
    if (Braces) {
      Begin = offset(Plan.LaunchParent->getRParenLoc()) + 1;
      CodeWriter::Block Then = W.block("{");
      handOver(W);
    } else {
      handOver(W);
    }
    std::string At = Braces ? indentOf(Plan.LaunchParent->getBeginLoc())
                            : indentOf(S->getBeginLoc());
    add(Begin, End, (Braces ? " " : "") + inPlace(W, At));
  }

  void handOver(CodeWriter &W) const {
    W.comment("The original launched the next link here; hand it its "
              "arguments.");
    for (const PromoteArg &A : Plan.Args)
      if (A.Kind == ArgKind::Postponed)
        W.line("cr_next." + A.Param->getNameAsString() + " = " +
               argText(A, Ctx) + ";");
    W.line("cr_launched = true;");
  }

  /// \p W's code in place of a statement at indentation \p At: it starts
  /// where the statement started, after its line's indentation, and ends
  /// where it ended, before the rest of its line.
  static std::string inPlace(const CodeWriter &W, llvm::StringRef At) {
    return llvm::StringRef(indented(W.str(), At))
        .drop_front(At.size())
        .drop_back()
        .str();
  }

  void launcher(CodeWriter &W) const {
    const PromoteVariant &V = Plan.Variant;
    std::vector<std::string> Params, Args;
    for (const ParmVarDecl *P : Plan.Kernel->parameters()) {
      Params.push_back(tokenText(P->getSourceRange()));
      Args.push_back(P->getNameAsString());
    }
    launcherComment(W);
    std::vector<std::string> Head{"dim3 grid", "dim3 block", "size_t shared",
                                  "cudaStream_t stream"};
    Head.insert(Head.end(), Params.begin(), Params.end());
    CodeWriter::Block Body = W.block(
        callText("inline cudaError_t " + promotedLauncherName(Plan), Head) +
        " {");
    if (V.Pool)
      W.line("(void)grid;");
    allocateChain(W);
    std::string Grid = V.Pool ? "dim3(" + Pool + ")" : std::string("grid");
    Args.insert(Args.begin(), V.Pool ? "cr_chain" : "cr_chain, 0u");
    W.line(
        callText(Kernel + "<<<" + Grid + ", block, shared, stream>>>", Args) +
        ";");
    W.line("cr_error = cudaPeekAtLastError();");
    W.line("cudaError_t cr_freed = cudaFreeAsync(cr_chain, stream);");
    W.line("return cr_error != cudaSuccess ? cr_error : cr_freed;");
  }

  void launcherComment(CodeWriter &W) const {
    const PromoteVariant &V = Plan.Variant;
    std::string Pools =
        V.Pool ? "; the first pool of " + Pool + " blocks runs links 0.." +
                     std::to_string(V.Pool - 1) + " and the next pools the rest"
               : "";
    docComment(W,
               "Replaces `" + Name +
                   "<<<grid, block, shared, stream>>>(...)` on the host: runs "
                   "the chain from its first link as " +
                   Kernel +
                   ". grid is 1 (the pass checked every launch it rewrote)" +
                   Pools +
                   ". The chain's state is allocated, zeroed and freed in "
                   "stream order, so chains in different streams never share "
                   "it; freeing it waits for the whole chain, since a grid "
                   "completes only with the grids it launched.");
  }

  /// The chain's state, zeroed; the launcher returns if it cannot have it.
  void allocateChain(CodeWriter &W) const {
    W.line("cuda_rewrite::PromoteChain<" + Values + "> *cr_chain = nullptr;");
    W.line("cudaError_t cr_error = cudaMallocAsync(&cr_chain, sizeof "
           "*cr_chain, stream);");
    {
      CodeWriter::Block Allocated = W.unbraced("if (cr_error == cudaSuccess)");
      W.line("cr_error = cudaMemsetAsync(cr_chain, 0, sizeof *cr_chain, "
             "stream);");
    }
    CodeWriter::Block Failed = W.unbraced("if (cr_error != cudaSuccess)");
    W.line("return cr_error;");
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
