//===- PipelineCodeGen.cpp - The code of a queued pipeline ----------------===//

#include "rewriters/pipeline/PipelineCodeGen.h"
#include "rewriters/common/TextEdits.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

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
    std::string Code = queuesStruct();
    for (unsigned I = 0; I != Plan.Stages.size(); ++I)
      Code += "\n" + stageCopy(I);
    Code += "\n" + seedKernel();
    Code += "\n" + batchRunner();
    Code += "\n" + persistentWorker();
    Code += "\n" + stageKernel();
    Code += "\n" + launcher();
    return Code;
  }

private:
  std::string stageList() const {
    std::vector<std::string> Names;
    for (const PipelineStage &S : Plan.Stages)
      Names.push_back(S.name());
    return llvm::join(Names, ", ");
  }

  std::string queuesStruct() const {
    std::string Members;
    for (const PipelineStage &S : Plan.Stages)
      Members += llvm::formatv("  cuda_rewrite::pipeline::Queue<{0}> {1};\n",
                               S.ItemType, S.name());
    return llvm::formatv(
        "// Pipeline '{0}' (cuda-rewrite pipeline pass): the stages {1} take\n"
        "// their items from one queue each instead of being called.\n"
        "struct {2} {\n"
        "  cuda_rewrite::pipeline::Control *control;\n"
        "{3}};\n",
        Plan.name(), stageList(), Struct, Members);
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
  /// whose calls of stages push the item instead.
  std::string copyWithPushes(const FunctionDecl *F, const std::string &Name,
                             const std::string &Extra) const {
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
    return applyTextEdits(SM.getBufferData(SM.getMainFileID()), Begin, End,
                          std::move(Edits)) +
           "\n";
  }

  std::string stageCopy(unsigned I) const {
    const PipelineStage &S = Plan.Stages[I];
    std::string Hands;
    for (const StageCall &C : Plan.Calls)
      if (C.Caller == int(I) && Hands.find("'" + Plan.Stages[C.Callee].name() +
                                           "'") == std::string::npos)
        Hands += (Hands.empty() ? "" : ", ") +
                 ("'" + Plan.Stages[C.Callee].name() + "'");
    return llvm::formatv("// Stage '{0}' of pipeline '{1}' (stage {2}{3}), "
                         "pushing the items it hands\n// to {4}.\n",
                         S.name(), Plan.name(), I,
                         S.GroupSize > 1
                             ? ", threads(" + std::to_string(S.GroupSize) + ")"
                             : std::string(),
                         Hands.empty() ? std::string("no stage") : Hands)
               .str() +
           copyWithPushes(S.Function, S.name() + "_inPipeline",
                          "const " + Struct + " &pipeline");
  }

  std::string seedKernel() const {
    return llvm::formatv("// The entry kernel '{0}', seeding the queues of "
                         "pipeline '{0}'.\n",
                         Plan.name())
               .str() +
           copyWithPushes(Plan.Entry, Plan.name() + "_seedPipeline",
                          Struct + " pipeline");
  }

  std::string batchRunner() const {
    std::string Cases;
    for (unsigned I = 0; I != Plan.Stages.size(); ++I) {
      const PipelineStage &S = Plan.Stages[I];
      std::string N = std::to_string(S.GroupSize);
      std::string Group =
          S.GroupSize > 1 ? "threadIdx.x / " + N : "threadIdx.x";
      std::string Groups = S.GroupSize > 1 ? "blockDim.x / " + N : "blockDim.x";
      std::string Rank = S.GroupSize > 1 ? "threadIdx.x % " + N + ", " : "";
      Cases += llvm::formatv(
          "  if constexpr (First <= {0} && {0} <= Last)\n"
          "    if (batch.stage == {0}) {\n"
          "      for (unsigned item = {1}; item < unsigned(batch.count);\n"
          "           item += {4})\n"
          "        {2}_inPipeline(pipeline.{2}.take(batch.first + item), "
          "{3}pipeline);\n"
          "      return;\n"
          "    }\n",
          I, Group, S.name(), Rank, Groups);
    }
    return llvm::formatv(
        "// Runs a batch of pipeline '{0}': its items in turn, one per group "
        "of threads, of\n// one of the stages First..Last (the others are "
        "compiled out).\n"
        "template <int First, int Last>\n"
        "__device__ void {0}_runPipelineBatch(const {1} &pipeline,\n"
        "    const cuda_rewrite::pipeline::Batch &batch) {\n"
        "{2}}\n",
        Plan.name(), Struct, Cases);
  }

  std::string persistentWorker() const {
    return llvm::formatv(
        "// Persistent blocks of pipeline '{0}' (megakernel, coarse, fine "
        "and hybrid models):\n// each block stays on its SMs and takes "
        "batches of stages First..Last until\n// no item is left.\n"
        "template <int First, int Last>\n"
        "__global__ void __launch_bounds__({2}) {0}_pipelineWorker(\n"
        "    {1} pipeline, cuda_rewrite::pipeline::Placement placement) {\n"
        "  if (!cuda_rewrite::pipeline::stayOnThisSm(placement))\n"
        "    return;\n"
        "  cuda_rewrite::pipeline::Batch batch;\n"
        "  while (cuda_rewrite::pipeline::nextBatch(*pipeline.control, "
        "placement, First, Last,\n"
        "                                           batch)) {\n"
        "    {0}_runPipelineBatch<First, Last>(pipeline, batch);\n"
        "    cuda_rewrite::pipeline::finishBatch(*pipeline.control, batch);\n"
        "  }\n"
        "}\n",
        Plan.name(), Struct, kPipelineBlockThreads);
  }

  std::string stageKernel() const {
    return llvm::formatv(
        "// One round of stage Stage of pipeline '{0}' (kernel-by-kernel "
        "model): the items\n// [first, first + count) of its queue.\n"
        "template <int Stage>\n"
        "__global__ void __launch_bounds__({2}) {0}_pipelineStage(\n"
        "    {1} pipeline, cuda_rewrite::pipeline::Position first,\n"
        "    cuda_rewrite::pipeline::Position count) {\n"
        "  cuda_rewrite::pipeline::Batch batch =\n"
        "      cuda_rewrite::pipeline::kernelByKernelBatch(*pipeline.control, "
        "Stage, first, count);\n"
        "  {0}_runPipelineBatch<Stage, Stage>(pipeline, batch);\n"
        "  cuda_rewrite::pipeline::finishBatch(*pipeline.control, batch);\n"
        "}\n",
        Plan.name(), Struct, kPipelineBlockThreads);
  }

  /// `const float * in, int n` and `in, n` of the entry's parameters.
  void entryParams(std::string &Decls, std::string &Names) const {
    for (const ParmVarDecl *P : Plan.Entry->parameters()) {
      std::string Name =
          P->getIdentifier()
              ? P->getNameAsString()
              : "arg" + std::to_string(P->getFunctionScopeIndex());
      QualType T = P->getType();
      Decls +=
          ", " +
          TypeName::getFullyQualifiedName(T, Ctx, Ctx.getPrintingPolicy()) +
          " " + Name;
      Names += (Names.empty() ? "" : ", ") + Name;
    }
  }

  std::string launcher() const {
    std::string Decls, Names;
    entryParams(Decls, Names);
    unsigned N = Plan.Stages.size();
    std::string Stages, Queues, Workers, Rounds;
    for (unsigned I = 0; I != N; ++I) {
      const PipelineStage &S = Plan.Stages[I];
      Stages += llvm::formatv("      {\"{0}\", {1}, sizeof({2})},\n", S.name(),
                              S.GroupSize, S.ItemType);
      Queues += llvm::formatv(",\n      runner.queue<{0}>({1})", S.ItemType, I);
      Rounds += llvm::formatv("      (const void *){0}_pipelineStage<{1}>,\n",
                              Plan.name(), I);
      for (unsigned J = 0; J != N; ++J)
        Workers += J < I
                       ? "      nullptr,\n"
                       : llvm::formatv("      (const void *){0}_pipelineWorker"
                                       "<{1}, {2}>,\n",
                                       Plan.name(), I, J)
                             .str();
    }
    std::string Config = Plan.ConfigFile.empty()
                             ? std::string("nullptr")
                             : "\"" + Plan.ConfigFile + "\"";
    return llvm::formatv(
        "// Runs pipeline '{0}' where the program launched "
        "{0}<<<grid, block, sharedBytes, stream>>>:\n"
        "// seeds the queues with the entry kernel, then runs the stages "
        "under the model\n"
        "// that CUDA_REWRITE_PIPELINE_MODEL, CUDA_REWRITE_PIPELINE_CONFIG or "
        "the pragma\n"
        "// names (cuda_rewrite/pipeline.cuh), and waits for the last item.\n"
        "static cudaError_t {1}(dim3 grid, dim3 block, size_t sharedBytes,\n"
        "    cudaStream_t stream{2}) {\n"
        "  static const cuda_rewrite::pipeline::StageDesc stages[] = {\n"
        "{3}  };\n"
        "  static cuda_rewrite::pipeline::Runner runner(\n"
        "      {\"{0}\", {4}, stages, {5}, \"{6}\", {7}});\n"
        "  static const void *const workers[] = {\n"
        "{8}  };\n"
        "  static const void *const rounds[] = {\n"
        "{9}  };\n"
        "  if (cudaError_t error = runner.prepare(stream))\n"
        "    return error;\n"
        "  if (runner.runsOriginal()) {\n"
        "    {0}<<<grid, block, sharedBytes, stream>>>({10});\n"
        "    return runner.ranOriginal(stream);\n"
        "  }\n"
        "  {11} pipeline{runner.deviceControl(){12}};\n"
        "  {0}_seedPipeline<<<grid, block, sharedBytes, stream>>>({13}"
        "pipeline);\n"
        "  return runner.run({{workers, rounds}, &pipeline, stream);\n"
        "}\n",
        Plan.name(), pipelineLauncherName(Plan), Decls, Stages, N,
        kPipelineBlockThreads, Plan.Model, Config, Workers, Rounds, Names,
        Struct, Queues, Names.empty() ? "" : Names + ", ");
  }

  const PipelinePlan &Plan;
  ASTContext &Ctx;
  const SourceManager &SM;
  std::string Struct;
};

} // namespace

std::string generatePipelineCode(const PipelinePlan &Plan, ASTContext &Ctx) {
  return PipelineWriter(Plan, Ctx).run();
}

} // namespace cuda_rewrite
