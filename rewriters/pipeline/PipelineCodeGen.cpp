//===- PipelineCodeGen.cpp - The code of a queued pipeline ----------------===//

#include "rewriters/pipeline/PipelineCodeGen.h"
#include "rewriters/common/CodeWriter.h"
#include "rewriters/common/GeneratedLayout.h"
#include "rewriters/common/TextEdits.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace cuda_rewrite {

std::string pipelineLauncherName(const PipelinePlan &Plan) {
  return Plan.name() + "_runPipeline";
}

namespace {

class PipelineWriter {
public:
  PipelineWriter(const PipelinePlan &Plan, ASTContext &Ctx)
      : Plan(Plan), Ctx(Ctx), SM(Ctx.getSourceManager()),
        Struct(Plan.name() + "_Pipeline") {}

  std::string run() {
    queuesStruct();
    for (unsigned I = 0; I != Plan.Stages.size(); ++I) {
      W.line("");
      stageCopy(I);
    }
    W.line("");
    seedKernel();
    W.line("");
    batchRunner();
    W.line("");
    persistentWorker();
    W.line("");
    stageKernel();
    W.line("");
    launcher();
    return W.str();
  }

private:
  std::string stageList() const {
    std::vector<std::string> Names;
    for (const PipelineStage &S : Plan.Stages)
      Names.push_back(S.name());
    return llvm::join(Names, ", ");
  }

  void queuesStruct() {
    W.comment("Pipeline '" + Plan.name() +
              "' (cuda-rewrite pipeline pass): the stages " + stageList() +
              " take\ntheir items from one queue each instead of being "
              "called.");
    CodeWriter::Block Queues = W.block("struct " + Struct + " {", "};");
    W.line("cuda_rewrite::pipeline::Control *control;");
    for (const PipelineStage &S : Plan.Stages)
      W.line("cuda_rewrite::pipeline::Queue<" + S.ItemType + "> " + S.name() +
             ";");
  }

  unsigned offset(SourceLocation Loc) const {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  }

  /// Where \p F's text begins: its first declaration specifier or
  /// attribute (`__device__` is a macro for one).
  unsigned definitionBegin(const FunctionDecl *F) const {
    unsigned Begin = offset(F->getSourceRange().getBegin());
    for (const Attr *A : F->attrs())
      if (A->getLocation().isValid() &&
          SM.isWrittenInMainFile(SM.getExpansionLoc(A->getLocation())))
        Begin = std::min(Begin, offset(A->getLocation()));
    return Begin;
  }

  unsigned tokenEnd(SourceLocation Loc) const {
    SourceLocation E = SM.getExpansionLoc(Loc);
    return SM.getFileOffset(E) +
           Lexer::MeasureTokenLength(E, SM, Ctx.getLangOpts());
  }

  /// How \p Caller hands an item to \p Callee: once per group for a
  /// threads(n) callee, after the calling group's barrier in a stage (the
  /// entry kernel has ended before any stage runs).
  std::string pushMethod(const PipelineStage &Callee,
                         const FunctionDecl *Caller) const {
    if (Callee.GroupSize == 1)
      return ".push";
    return Caller == Plan.Entry ? ".pushOnce" : ".pushFromGroup";
  }

  /// A copy of \p F named \p Name, taking \p Extra as its last parameter,
  /// whose calls of stages push the item into `pipeline`, the queues that
  /// parameter declares (the planner refuses functions that use the name).
  void copyWithPushes(const FunctionDecl *F, const std::string &Name,
                      const std::string &Extra) {
    std::vector<TextEdit> Edits;
    unsigned NameBegin = offset(F->getLocation());
    Edits.push_back({NameBegin, tokenEnd(F->getLocation()), Name});
    unsigned RParen = offset(F->getFunctionTypeLoc().getRParenLoc());
    Edits.push_back({RParen, RParen, (F->getNumParams() ? ", " : "") + Extra});
    for (const StageCall &C : Plan.Calls) {
      const FunctionDecl *Caller =
          C.Caller < 0 ? Plan.Entry : Plan.Stages[C.Caller].Function;
      if (Caller != F)
        continue;
      const PipelineStage &Callee = Plan.Stages[C.Callee];
      const Expr *Ref = C.Call->getCallee()->IgnoreImplicit();
      Edits.push_back(
          {offset(Ref->getBeginLoc()), tokenEnd(Ref->getEndLoc()),
           "pipeline." + Callee.name() +
               (C.SerialRanks ? ".pushOnce" : pushMethod(Callee, F))});
    }
    unsigned Begin = definitionBegin(F), End = tokenEnd(F->getEndLoc());
    // The function is the user's, edited: it keeps the layout it has.
    W.raw(applyTextEdits(SM.getBufferData(SM.getMainFileID()), Begin, End,
                         std::move(Edits)) +
          "\n");
  }

  void stageCopy(unsigned I) {
    const PipelineStage &S = Plan.Stages[I];
    std::vector<std::string> Hands;
    for (const StageCall &C : Plan.Calls) {
      std::string Callee = "'" + Plan.Stages[C.Callee].name() + "'";
      if (C.Caller == int(I) && !llvm::is_contained(Hands, Callee))
        Hands.push_back(Callee);
    }
    std::string Threads =
        S.GroupSize > 1 ? ", threads(" + std::to_string(S.GroupSize) + ")" : "";
    W.comment("Stage '" + S.name() + "' of pipeline '" + Plan.name() +
              "' (stage " + std::to_string(I) + Threads +
              "), pushing the items it hands\nto " +
              (Hands.empty() ? "no stage" : llvm::join(Hands, ", ")) + ".");
    copyWithPushes(S.Function, S.name() + "_inPipeline",
                   "const " + Struct + " &pipeline");
  }

  void seedKernel() {
    W.comment("The entry kernel '" + Plan.name() +
              "', seeding the queues of pipeline '" + Plan.name() + "'.");
    copyWithPushes(Plan.Entry, Plan.name() + "_seedPipeline",
                   Struct + " pipeline");
  }

  // The kernels and the batch runner below hold no text of the user's, so
  // their locals (pipeline, batch, item...) cannot clash with the user's.

  void batchRunner() {
    W.comment("Runs a batch of pipeline '" + Plan.name() +
              "': its items in turn, one per group of threads, of\none of the "
              "stages First..Last (the others are compiled out).");
    W.line("template <int First, int Last>");
    CodeWriter::Block Function = W.block(
        "__device__ void " + Plan.name() + "_runPipelineBatch(const " + Struct +
        " &pipeline, const cuda_rewrite::pipeline::Batch &batch) {");
    for (unsigned I = 0; I != Plan.Stages.size(); ++I)
      batchOfStage(I);
  }

  /// The part of the batch runner that runs stage \p I's items, compiled in
  /// where First <= I <= Last.
  void batchOfStage(unsigned I) {
    const PipelineStage &S = Plan.Stages[I];
    std::string Stage = std::to_string(I);
    std::string N = std::to_string(S.GroupSize);
    bool Groups = S.GroupSize > 1;
    CodeWriter::Block InRange = W.unbraced("if constexpr (First <= " + Stage +
                                           " && " + Stage + " <= Last)");
    CodeWriter::Block OfStage = W.block("if (batch.stage == " + Stage + ") {");
    {
      CodeWriter::Block Items =
          W.unbraced("for (unsigned item = " +
                     (Groups ? "threadIdx.x / " + N : "threadIdx.x") +
                     "; item < unsigned(batch.count); item += " +
                     (Groups ? "blockDim.x / " + N : "blockDim.x") + ")");
      W.line(S.name() + "_inPipeline(pipeline." + S.name() +
             ".take(batch.first + item), " +
             (Groups ? "threadIdx.x % " + N + ", " : "") + "pipeline);");
    }
    W.line("return;");
  }

  /// The head of a kernel of blocks of kPipelineBlockThreads threads,
  /// `<entry>_<Kernel>(pipeline, Params)`, template over \p Template.
  CodeWriter::Block kernelHead(const std::string &Template,
                               const std::string &Kernel,
                               const std::string &Params) {
    W.line("template <" + Template + ">");
    return W.block("__global__ void __launch_bounds__(" +
                   std::to_string(kPipelineBlockThreads) + ") " + Plan.name() +
                   "_" + Kernel + "(" + Struct + " pipeline, " + Params +
                   ") {");
  }

  /// Runs `batch` with the batch runner of stages \p Range, then marks it
  /// done.
  void runBatch(const std::string &Range) {
    W.line(Plan.name() + "_runPipelineBatch<" + Range + ">(pipeline, batch);");
    W.line("cuda_rewrite::pipeline::finishBatch(*pipeline.control, batch);");
  }

  void persistentWorker() {
    W.comment("Persistent blocks of pipeline '" + Plan.name() +
              "' (megakernel, coarse, fine and hybrid models):\neach block "
              "stays on its SMs and takes batches of stages First..Last "
              "until\nno item is left.");
    CodeWriter::Block Function =
        kernelHead("int First, int Last", "pipelineWorker",
                   "cuda_rewrite::pipeline::Placement placement");
    {
      CodeWriter::Block Elsewhere =
          W.unbraced("if (!cuda_rewrite::pipeline::stayOnThisSm(placement))");
      W.line("return;");
    }
    W.line("cuda_rewrite::pipeline::Batch batch;");
    CodeWriter::Block Batches =
        W.block("while (cuda_rewrite::pipeline::nextBatch(*pipeline.control, "
                "placement, First, Last, batch)) {");
    runBatch("First, Last");
  }

  void stageKernel() {
    W.comment("One round of stage Stage of pipeline '" + Plan.name() +
              "' (kernel-by-kernel model): the items\n[first, first + count) "
              "of its queue.");
    CodeWriter::Block Function =
        kernelHead("int Stage", "pipelineStage",
                   "cuda_rewrite::pipeline::Position first, "
                   "cuda_rewrite::pipeline::Position count");
    W.line("cuda_rewrite::pipeline::Batch batch = "
           "cuda_rewrite::pipeline::kernelByKernelBatch(*pipeline.control, "
           "Stage, first, count);");
    runBatch("Stage, Stage");
  }

  /// The launcher's parameters and locals, named so that they do not clash
  /// with the entry's parameters, which the launcher takes too, or with the
  /// names it writes of the user's (the entry, the items' types).
  struct LauncherNames {
    std::string Grid, Block, Shared, Stream, Stages, Runner, Workers, Rounds,
        Error, Queues;
    /// The entry's parameters: `const float * in` and `in`.
    std::vector<std::string> ParamDecls, Params;
  };

  LauncherNames launcherNames() const {
    NameAllocator Names;
    Names.reserve(Plan.name());
    Names.reserve(Struct);
    for (const ParmVarDecl *P : Plan.Entry->parameters())
      if (P->getIdentifier())
        Names.reserve(P->getName());
    for (const PipelineStage &S : Plan.Stages)
      Names.reserveIdentifiersIn(S.ItemType);
    std::vector<std::string> Types;
    for (const ParmVarDecl *P : Plan.Entry->parameters()) {
      Types.push_back(TypeName::getFullyQualifiedName(P->getType(), Ctx,
                                                      Ctx.getPrintingPolicy()));
      Names.reserveIdentifiersIn(Types.back());
    }
    LauncherNames L;
    for (const ParmVarDecl *P : Plan.Entry->parameters()) {
      L.Params.push_back(
          P->getIdentifier()
              ? P->getNameAsString()
              : Names.name("arg" + std::to_string(P->getFunctionScopeIndex())));
      L.ParamDecls.push_back(Types[P->getFunctionScopeIndex()] + " " +
                             L.Params.back());
    }
    L.Grid = Names.name("grid");
    L.Block = Names.name("block");
    L.Shared = Names.name("sharedBytes");
    L.Stream = Names.name("stream");
    L.Stages = Names.name("stages");
    L.Runner = Names.name("runner");
    L.Workers = Names.name("workers");
    L.Rounds = Names.name("rounds");
    L.Error = Names.name("error");
    L.Queues = Names.name("pipeline");
    return L;
  }

  void launcher() {
    LauncherNames L = launcherNames();
    std::string Launch = "<<<" + L.Grid + ", " + L.Block + ", " + L.Shared +
                         ", " + L.Stream + ">>>";
    W.comment("Runs pipeline '" + Plan.name() +
              "' where the program launched " + Plan.name() + Launch +
              ":\nseeds the queues with the entry kernel, then runs the "
              "stages under the model\nthat CUDA_REWRITE_PIPELINE_MODEL, "
              "CUDA_REWRITE_PIPELINE_CONFIG or the pragma\nnames "
              "(cuda_rewrite/pipeline.cuh), and waits for the last item.");
    std::vector<std::string> Params = {"dim3 " + L.Grid, "dim3 " + L.Block,
                                       "size_t " + L.Shared,
                                       "cudaStream_t " + L.Stream};
    llvm::append_range(Params, L.ParamDecls);
    CodeWriter::Block Function =
        W.block("static cudaError_t " +
                callText(pipelineLauncherName(Plan), Params) + " {");
    launcherTables(L);
    {
      CodeWriter::Block Failed =
          W.unbraced("if (cudaError_t " + L.Error + " = " + L.Runner +
                     ".prepare(" + L.Stream + "))");
      W.line("return " + L.Error + ";");
    }
    {
      CodeWriter::Block Original =
          W.block("if (" + L.Runner + ".runsOriginal()) {");
      W.line(callText(Plan.name() + Launch, L.Params) + ";");
      W.line("return " + L.Runner + ".ranOriginal(" + L.Stream + ");");
    }
    std::vector<std::string> Queues = {L.Runner + ".deviceControl()"};
    for (unsigned I = 0; I != Plan.Stages.size(); ++I)
      Queues.push_back(L.Runner + ".queue<" + Plan.Stages[I].ItemType + ">(" +
                       std::to_string(I) + ")");
    W.line(Struct + " " + L.Queues + "{" + llvm::join(Queues, ", ") + "};");
    std::vector<std::string> SeedArgs = L.Params;
    SeedArgs.push_back(L.Queues);
    W.line(callText(Plan.name() + "_seedPipeline" + Launch, SeedArgs) + ";");
    W.line("return " + L.Runner + ".run({" + L.Workers + ", " + L.Rounds +
           "}, &" + L.Queues + ", " + L.Stream + ");");
  }

  /// The launcher's static tables: the stages, the runner, and the kernels
  /// of each range of stages.
  void launcherTables(const LauncherNames &L) {
    unsigned N = Plan.Stages.size();
    {
      CodeWriter::Block Stages =
          W.block("static const cuda_rewrite::pipeline::StageDesc " + L.Stages +
                      "[] = {",
                  "};");
      for (const PipelineStage &S : Plan.Stages)
        W.line("{\"" + S.name() + "\", " + std::to_string(S.GroupSize) +
               ", sizeof(" + S.ItemType + ")},");
    }
    std::string Config = Plan.ConfigFile.empty()
                             ? std::string("nullptr")
                             : "\"" + Plan.ConfigFile + "\"";
    W.line("static cuda_rewrite::pipeline::Runner " + L.Runner + "({\"" +
           Plan.name() + "\", " + std::to_string(N) + ", " + L.Stages + ", " +
           std::to_string(kPipelineBlockThreads) + ", \"" + Plan.Model +
           "\", " + Config + "});");
    {
      CodeWriter::Block Workers =
          W.block("static const void *const " + L.Workers + "[] = {", "};");
      for (unsigned I = 0; I != N; ++I)
        for (unsigned J = 0; J != N; ++J)
          W.line(J < I
                     ? "nullptr,"
                     : "(const void *)" + Plan.name() + "_pipelineWorker<" +
                           std::to_string(I) + ", " + std::to_string(J) + ">,");
    }
    CodeWriter::Block Rounds =
        W.block("static const void *const " + L.Rounds + "[] = {", "};");
    for (unsigned I = 0; I != N; ++I)
      W.line("(const void *)" + Plan.name() + "_pipelineStage<" +
             std::to_string(I) + ">,");
  }

  const PipelinePlan &Plan;
  ASTContext &Ctx;
  const SourceManager &SM;
  std::string Struct;
  CodeWriter W;
};

} // namespace

std::string generatePipelineCode(const PipelinePlan &Plan, ASTContext &Ctx) {
  return PipelineWriter(Plan, Ctx).run();
}

} // namespace cuda_rewrite
