//===- FusePass.cpp - Stage chains as fused overlapped tiles --------------===//

#include "rewriters/fuse/FusePass.h"
#include "analysis/StageGraph.h"
#include "rewriters/common/CodeWriter.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/fuse/FuseClauses.h"
#include "rewriters/fuse/FuseCodeGen.h"
#include "rewriters/fuse/FuseCostInput.h"
#include "rewriters/fuse/FuseCostModel.h"
#include "rewriters/fuse/FusePlan.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <set>

using namespace clang;

namespace cuda_rewrite {

namespace {

/// Shared memory a warp's tiles may take when the pass picks the tile: 14
/// KiB leaves room for 16 warps (a quarter of an SM's) in 228 KiB.
constexpr unsigned kSharedPerWarp = 14 * 1024;

class FuseRewriter {
public:
  explicit FuseRewriter(PassContext &Context)
      : Context(Context), Ctx(Context.Ctx), SM(Ctx.getSourceManager()) {
    // The fused namespaces go into the main file beside the user's names.
    Names.reserveIdentifiersOfSource(SM.getBufferData(SM.getMainFileID()),
                                     Ctx.getLangOpts());
  }

  bool rewrite(const Candidate &C) {
    const auto *Block = dyn_cast_or_null<CompoundStmt>(C.Statement);
    if (!Block || !C.Function)
      return refuse(C, "not a { } block of launches");
    // The generated namespace goes right before the enclosing function.
    if (!C.Function->getLexicalDeclContext()->isFileContext())
      return refuse(C, "the block is in a function defined inside a class, "
                       "where the fused kernel's namespace cannot go");
    FuseClauses Clauses = parseFuseClauses(C);
    std::vector<CostConfig> Candidates = fuseCandidates(Clauses);
    StageGraph Graph = buildStageGraph(*Block, *C.Function, Ctx,
                                       C.FirstStatement, C.LastStatement);
    // While logging for the calibration, the groups are the maximal runs:
    // the calibration sweep measures the model's terms against fixed
    // groups (bench/experiments/fuse_cost_terms.sh).
    PlanOrRefusal<FusePlan> Planned =
        planFusion(Graph, Ctx,
                   costLogPath() ? GroupCostFn()
                                 : fuseGroupCost(Ctx, Context.Gpu, Candidates));
    if (!Planned)
      return refuse(C, Planned.Refused.Reason);
    FusePlan Plan = std::move(*Planned.Plan);
    for (const UnfusedStage &U : Plan.Unfused)
      Context.Remark.refusedPart(Graph.Stages[U.Index].Launch->getBeginLoc(),
                                 FusePass::Name,
                                 "stage '" + kernelName(Graph, U.Index) +
                                     "' stays a launch of its "
                                     "own: " +
                                     U.Why);
    if (Plan.Groups.empty())
      return true;
    for (const FuseGroup &G : Plan.Groups) {
      for (const FuseStage &S : G.Stages)
        if (!SM.isBeforeInTranslationUnit(S.Kernel->getEndLoc(),
                                          C.Function->getBeginLoc()))
          return refuse(C, "stage '" + S.Kernel->getNameAsString() +
                               "' is defined after '" +
                               C.Function->getNameAsString() +
                               "', where the fused kernel goes");
    }
    std::string Where = llvm::sys::path::filename(SM.getFilename(C.Loc)).str() +
                        ":" + std::to_string(SM.getPresumedLineNumber(C.Loc));
    std::optional<CostConfig> Config = chooseForBlock(Plan.Groups, Candidates);
    std::vector<std::string> Calls;
    for (const FuseGroup &G : Plan.Groups) {
      Calls.emplace_back();
      // Where no configuration suits every group (interpolate's deep
      // levels need small tiles), each takes its own.
      std::optional<CostConfig> Own = Config;
      if (!Own)
        if (std::optional<CostChoice> Best = chooseConfig(
                costStagesOf(G, Ctx), ImageExtent(), Context.Gpu,
                CostWeights::defaults(), Candidates, kFuseSharedPerBlock))
          Own = Best->Config;
      if (!rewriteGroup(C, G, Clauses, Own, Where, movedNote(Graph, G),
                        Calls.back()))
        return false;
    }
    return placeSchedule(Graph, Plan, Calls) &&
           includeRuntimeHeader(Context, "fuse", C.Loc, "fuse");
  }

private:
  bool refuse(const Candidate &C, const std::string &Why) {
    Context.Remark.refused(C, FusePass::Name, Why);
    return true;
  }

  bool check(llvm::Error E, SourceLocation Loc) {
    return checkEdit(Ctx, std::move(E), Loc, "fuse");
  }

  static std::string kernelName(const StageGraph &G, unsigned I) {
    const FunctionDecl *K = G.Stages[I].Launch->getDirectCallee();
    return K ? K->getNameAsString() : "?";
  }

  CostTerms cost(const FuseGroup &G, const CostConfig &K) {
    return estimateGroupCost(costStagesOf(G, Ctx), ImageExtent(), K,
                             Context.Gpu, CostWeights::defaults(),
                             kFuseSharedPerBlock);
  }

  /// One configuration for all groups of a block: the candidate of least
  /// summed cost (Algorithm 2, FuseCostModel.h) among those every group
  /// can use. The weights were fitted to whole blocks run with one
  /// configuration; per group, the picks drift from what was measured.
  /// None where no candidate suits every group (ModelWhy says why).
  std::optional<CostConfig>
  chooseForBlock(const std::vector<FuseGroup> &Groups,
                 const std::vector<CostConfig> &Candidates) {
    std::optional<CostConfig> Best;
    double BestTotal = 0;
    ModelWhy = "no candidate";
    for (const CostConfig &K : Candidates) {
      double Total = 0;
      bool Feasible = true;
      for (const FuseGroup &G : Groups) {
        CostTerms T = cost(G, K);
        if (!T.Feasible) {
          ModelWhy = T.Why;
          Feasible = false;
          break;
        }
        Total += T.Total;
      }
      if (Feasible && (!Best || Total < BestTotal)) {
        Best = K;
        BestTotal = Total;
      }
    }
    return Best;
  }

  static std::optional<std::string> costLogPath() {
    return llvm::sys::Process::GetEnv("CUDA_REWRITE_FUSE_COST_LOG");
  }

  /// For the calibration (bench/experiments/fuse_calibrate.py): where
  /// CUDA_REWRITE_FUSE_COST_LOG names a file, one CSV line per group with
  /// the configuration and the model's seven unweighted terms.
  static void logCost(const std::string &Where, const std::string &Name,
                      const CostChoice &Choice) {
    std::optional<std::string> Path = costLogPath();
    if (!Path)
      return;
    std::error_code EC;
    llvm::raw_fd_ostream OS(*Path, EC, llvm::sys::fs::OF_Append);
    if (EC)
      return;
    const CostConfig &K = Choice.Config;
    OS << Where << "," << Name << ",tile" << K.ColumnsPerLane << "-" << K.Rows
       << "-w" << K.Warps << "-f" << K.RegisterFraction
       << (K.SplitAxis ? "y" : "");
    for (double T : Choice.Terms.terms())
      OS << "," << T;
    OS << "\n";
  }

  /// The tile the pass picks: as many rows as the shared memory budget of
  /// a warp allows, up to 16 (fewer rows recompute more of the overlap).
  FuseTile chooseTile(const FuseGroup &G, std::string &Why) {
    for (unsigned Rows : {16u, 8u, 4u, 2u, 1u}) {
      FuseTile T{1, Rows, 4};
      unsigned Bytes = sharedBytesPerWarp(G, T, Ctx);
      if (Bytes <= kSharedPerWarp) {
        Why = llvm::formatv("{0} rows per warp: the most of 16, 8, 4, 2, 1 "
                            "whose tiles fit {1} KiB per warp ({2} bytes)",
                            Rows, kSharedPerWarp / 1024, Bytes);
        return T;
      }
    }
    Why = "even one row per warp needs more than the shared memory budget";
    return FuseTile{1, 1, 4};
  }

  /// "; line 12 and lines 14-16 now run before it (...)" for the host
  /// statements between \p G's first and last launch, which stay where
  /// they are while the group's launch goes where its last one was.
  std::string movedNote(const StageGraph &Graph, const FuseGroup &G) const {
    SourceLocation Begin = G.Stages.front().Launch->getBeginLoc(),
                   End = G.Stages.back().Launch->getBeginLoc();
    for (const FuseStage &S : G.Stages) {
      SourceLocation L = S.Launch->getBeginLoc();
      if (SM.isBeforeInTranslationUnit(L, Begin))
        Begin = L;
      if (SM.isBeforeInTranslationUnit(End, L))
        End = L;
    }
    std::vector<unsigned> Lines;
    for (const Stmt *S : Graph.MovedStatements)
      if (SM.isBeforeInTranslationUnit(Begin, S->getBeginLoc()) &&
          SM.isBeforeInTranslationUnit(S->getBeginLoc(), End))
        Lines.push_back(SM.getExpansionLineNumber(S->getBeginLoc()));
    if (Lines.empty())
      return "";
    std::vector<std::string> Ranges;
    for (size_t I = 0; I != Lines.size();) {
      size_t J = I;
      while (J + 1 != Lines.size() && Lines[J + 1] <= Lines[J] + 1)
        ++J;
      Ranges.push_back(
          Lines[I] == Lines[J]
              ? std::to_string(Lines[I])
              : llvm::formatv("{0}-{1}", Lines[I], Lines[J]).str());
      I = J + 1;
    }
    return llvm::formatv("; the host statements between its launches (line{0} "
                         "{1}) touch none of their memory and now run before "
                         "it",
                         Lines.size() == 1 ? "" : "s", llvm::join(Ranges, ", "))
        .str();
  }

  bool rewriteGroup(const Candidate &C, const FuseGroup &G,
                    const FuseClauses &Clauses,
                    const std::optional<CostConfig> &Config,
                    const std::string &Where, const std::string &Moved,
                    std::string &Call) {
    std::optional<CostChoice> Model;
    if (Config)
      Model = CostChoice{*Config, cost(G, *Config)};
    const std::optional<FuseTile> &Clause = Clauses.Tile;
    std::string Why = Clause ? "from tile(..)" : "";
    FuseTile T;
    CostConfig Split; // The split dimension and fraction.
    if (Model) {
      Split = Model->Config;
      T = FuseTile{Split.ColumnsPerLane, Split.Rows, Split.Warps};
      Why += (Why.empty() ? "chosen by the cost model: " : "; cost model: ") +
             describeCost(*Model);
    } else {
      T = Clause ? *Clause : chooseTile(G, Why);
      Split.ColumnsPerLane = T.ColumnsPerLane;
      Split.Rows = T.Rows;
      Split.RegisterFraction = Clauses.Fraction.value_or(0);
      Split.SplitAxis = Clauses.SplitAxis.value_or(0);
      Why += (Why.empty() ? "" : "; ") +
             std::string("no configuration is feasible under the cost "
                         "model (") +
             ModelWhy + ")";
    }
    T.RegisterChunks = Split.registerChunks();
    T.RegisterRows = Split.registerRows();
    SourceLocation First = G.Stages.front().Launch->getBeginLoc();
    std::string Wanted = "fused_" + G.Stages.front().Kernel->getNameAsString() +
                         "_to_" + G.Stages.back().Kernel->getNameAsString();
    // Groups of the same first and last kernels differ by their line.
    if (!GroupNames.insert(Wanted).second)
      Wanted += "_" + std::to_string(SM.getPresumedLineNumber(First));
    std::string Name = Names.fresh(Wanted);
    FuseCode Code = generateFusedGroup(G, T, Name, Where, Ctx);
    if (Code.Refused)
      return refuse(C, Code.Refused->Reason);
    unsigned Bytes = Code.SharedBytesPerWarp * T.Warps + Code.StagedBytes;
    if (Bytes > 48 * 1024)
      return refuse(C, llvm::formatv("the group of '{0}' needs {1} bytes of "
                                     "shared memory per block, more than "
                                     "48 KiB",
                                     G.Stages.front().Kernel->getNameAsString(),
                                     Bytes));
    ConfigPins Pins;
    for (const FuseStage &S : G.Stages)
      Pins.merge(S.Access.Pins);
    if (!check(
            Context.Edits.addDefinition(
                // Keyed by position: groups appear in the block's order.
                llvm::formatv("fuse/{0:d8}/{1}", SM.getFileOffset(First), Name)
                    .str(),
                pinnedValues(Pins) + Code.Definitions,
                lineStart(Ctx, C.Function->getBeginLoc())),
            C.Loc))
      return false;
    Call = Code.Call;
    std::vector<std::string> Stages, OnChip;
    for (const FuseStage &S : G.Stages)
      Stages.push_back(S.Kernel->getNameAsString());
    std::vector<std::string> Inlined;
    for (const FuseBuffer &B : G.Written)
      if (B.Inlined)
        Inlined.push_back("'" + B.Name + "'");
      else if (B.OnChip)
        OnChip.push_back("'" + B.Name + "'" +
                         (B.Global ? " (also stored)" : ""));
    if (!Inlined.empty())
      OnChip.push_back("inlined where read: " + llvm::join(Inlined, ", "));
    for (const std::string &Table : Code.StagedTables)
      OnChip.push_back("constant table '" + Table +
                       "' (read at indices that differ within a warp)");
    std::string Registers = hybridNote(T, Split, Code);
    if (Model)
      logCost(Where, Name, *Model);

    Context.Remark.applied(
        First, FusePass::Name,
        llvm::formatv("{0} stages ({1}) run as {2}::kernel: warp tile {3} x "
                      "{4}, {5} warps per block, {6} bytes of shared memory "
                      "per block; on chip: {7}{9}; {8}{10}",
                      G.Stages.size(), llvm::join(Stages, ", "), Name,
                      T.width(), T.Rows, T.Warps, Bytes,
                      OnChip.empty() ? "nothing" : llvm::join(OnChip, ", "),
                      Why, Registers, Moved));
    return true;
  }

  /// "; in registers: 1 of 2 chunks of 32 columns of 'a' (hybrid tiling);
  /// shared memory only: 'b': why", or "" without hybrid(..).
  static std::string hybridNote(const FuseTile &T, const CostConfig &Split,
                                const FuseCode &Code) {
    const double Fraction = Split.RegisterFraction;
    if (Fraction == 0)
      return "";
    std::string Parts =
        Split.SplitAxis
            ? llvm::formatv("{0} of {1} rows", T.RegisterRows, T.Rows).str()
            : llvm::formatv("{0} of {1} chunks of 32 columns", T.RegisterChunks,
                            T.ColumnsPerLane)
                  .str();
    if (!T.hybrid())
      return llvm::formatv("; hybrid({0}) of a {1}-column, {2}-row tile "
                           "rounds to none in registers",
                           Fraction, T.width(), T.Rows);
    std::vector<std::string> Names;
    for (const std::string &N : Code.InRegisters)
      Names.push_back("'" + N + "'");
    std::string Note =
        Names.empty()
            ? "; in registers: nothing"
            : llvm::formatv("; in registers (hybrid tiling): {0} of {1}", Parts,
                            llvm::join(Names, ", "))
                  .str();
    if (!Code.KeptShared.empty())
      Note += "; shared memory only: " + llvm::join(Code.KeptShared, "; ");
    return Note;
  }

  /// The block's launches in the plan's order (FusePlan::Schedule): each
  /// group as `if (!launch(..)) { <its launches> }`, the others as
  /// written. The k-th step goes where the k-th of the steps' last
  /// launches was, so that a plan in launch order keeps every launch in
  /// its place; a launch where no step goes is removed. \p Calls holds
  /// each group's fused launch, empty where the group was refused (its
  /// launches then run as written, in the group's order).
  bool placeSchedule(const StageGraph &Graph, const FusePlan &Plan,
                     const std::vector<std::string> &Calls) {
    struct Step {
      std::vector<unsigned> Launches; ///< Stage indices, in the order run.
      std::string Call;               ///< Empty: the launches as written.
    };
    std::vector<Step> Steps;
    for (const FuseStep &S : Plan.Schedule) {
      if (!S.IsGroup) {
        Steps.push_back({{S.Index}, ""});
        continue;
      }
      const FuseGroup &G = Plan.Groups[S.Index];
      if (Calls[S.Index].empty()) {
        for (const FuseStage &St : G.Stages)
          Steps.push_back({{St.Index}, ""});
        continue;
      }
      Steps.push_back({{}, Calls[S.Index]});
      for (const FuseStage &St : G.Stages)
        Steps.back().Launches.push_back(St.Index);
    }
    std::vector<unsigned> Slots;
    for (const Step &S : Steps)
      Slots.push_back(*llvm::max_element(S.Launches));
    llvm::sort(Slots);
    std::map<unsigned, const Step *> StepAt;
    for (unsigned K = 0; K != Steps.size(); ++K)
      StepAt[Slots[K]] = &Steps[K];
    for (unsigned I = 0; I != Graph.Stages.size(); ++I) {
      const CUDAKernelCallExpr *Launch = Graph.Stages[I].Launch;
      SourceLocation Begin = Launch->getBeginLoc();
      SourceLocation End = afterSemicolon(Launch);
      if (Begin.isMacroID() || End.isInvalid())
        return check(llvm::createStringError("the launches are in a macro"),
                     Begin);
      auto It = StepAt.find(I);
      if (It == StepAt.end()) {
        if (!check(Context.Edits.removeLines(Begin, End), Begin))
          return false;
        continue;
      }
      const Step &S = *It->second;
      if (S.Call.empty() && S.Launches.front() == I)
        continue; // In place.
      std::string Text = stepText(Graph, S.Launches, S.Call,
                                  SM.getPresumedColumnNumber(Begin) - 1);
      if (!check(Context.Edits.replace(
                     CharSourceRange::getCharRange(Begin, End), Text),
                 Begin))
        return false;
    }
    return true;
  }

  /// The launches \p Launches, indented by \p Indent after the first line;
  /// with a fused launch \p Call, inside its fallback.
  std::string stepText(const StageGraph &Graph,
                       const std::vector<unsigned> &Launches,
                       const std::string &Call, unsigned Indent) {
    std::string Pad(Indent, ' '), Inner = Call.empty() ? "" : "  ";
    std::string Text;
    for (unsigned I : Launches) {
      const CUDAKernelCallExpr *Launch = Graph.Stages[I].Launch;
      std::string Original =
          textBetween(Launch->getBeginLoc(), afterSemicolon(Launch));
      bool First = true;
      for (llvm::StringRef Line : llvm::split(Original, '\n')) {
        // The replacement starts where the slot's launch did, indented;
        // continued lines keep their own indentation.
        if (First)
          Text += Text.empty() && Call.empty()
                      ? Line.str()
                      : "\n" + Pad + Inner + Line.str();
        else
          Text += "\n" + (Line.empty() ? "" : Inner + Line.str());
        First = false;
      }
    }
    if (Call.empty())
      return Text;
    // The block that runs the original launches where the fused one does
    // not.
    return "if (!" + Call + ") {" + Text + "\n" + Pad + "}";
  }

  /// Just past the semicolon that ends \p Launch's statement (invalid if
  /// none).
  SourceLocation afterSemicolon(const CUDAKernelCallExpr *Launch) {
    return Lexer::findLocationAfterToken(Launch->getEndLoc(), tok::semi, SM,
                                         Ctx.getLangOpts(), false);
  }

  std::string textBetween(SourceLocation Begin, SourceLocation End) {
    return Lexer::getSourceText(CharSourceRange::getCharRange(Begin, End), SM,
                                Ctx.getLangOpts())
        .str();
  }

  PassContext &Context;
  ASTContext &Ctx;
  const SourceManager &SM;
  NameAllocator Names;
  std::set<std::string> GroupNames; ///< fused_<first>_to_<last>, as wanted.
  std::string ModelWhy; ///< Why the last group had no feasible candidate.
};

} // namespace

namespace {
std::string warpTile(llvm::ArrayRef<unsigned> V) {
  return V[0] <= 8 && V[1] <= 64 && (V.size() < 3 || V[2] <= 32)
             ? ""
             : "takes x (points per lane along x) in 1..8, y (rows per "
               "warp) in 1..64 and w (warps per block) in 1..32";
}
const ClauseSpec FuseDirectiveClauses[] = {
    {"tile", ClauseArgs::AutoOrIntPair, {}, warpTile},
    {"hybrid", ClauseArgs::AutoOrFraction}};
} // namespace

const DirectiveSpec FusePass::Directive = {"fuse", FuseDirectiveClauses,
                                           PragmaTarget::HostLaunchBlock};
const CandidateKind FusePass::Chain = {"stage-chain"};

FusePass::FusePass()
    : Pass(Name,
           "fuse image-processing stage chains into overlapped tiles "
           "(PolyMage-GPU)",
           {&Chain}, {&Directive}) {}

std::string FusePass::whyNothingToRewrite(const AttachedPragma &) const {
  return "the block launches no chain of kernels that feed each other";
}

bool FusePass::rewrite(PassContext &Context, const PassWork &Work) const {
  // A plan covers a block's statements from a chain's first launch to its
  // last (all of an annotated block's): rewrite each such run once
  // (difftest: test/regress/fuse/auto-two-chains.cu).
  std::vector<const Candidate *> Unique;
  std::set<std::pair<const Stmt *, const Stmt *>> Seen;
  for (const Candidate *C : Work.Candidates)
    if (!C->Statement || Seen.insert({C->Statement, C->FirstStatement}).second)
      Unique.push_back(C);
  return rewriteEach<FuseRewriter>(Context, Unique);
}

} // namespace cuda_rewrite
