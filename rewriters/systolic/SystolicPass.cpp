//===- SystolicPass.cpp - Stencils as software systolic arrays ------------===//

#include "rewriters/systolic/SystolicPass.h"
#include "analysis/LaunchSites.h"
#include "analysis/MainFile.h"
#include "analysis/StencilAccess.h"
#include "gpu/GpuSpec.h"
#include "rewriters/common/GeneratedCode.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/common/TemplateSpelling.h"
#include "rewriters/systolic/SystolicCodeGen.h"
#include "rewriters/systolic/SystolicModel.h"
#include "rewriters/systolic/SystolicPlan.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

class SystolicRewriter {
public:
  SystolicRewriter(PassContext &Context,
                   llvm::ArrayRef<const Candidate *> FuseBlocks)
      : Context(Context), Ctx(Context.Ctx), SM(Ctx.getSourceManager()),
        Launches(findLaunchSites(Ctx)) {
    // What the fuse pass plans: an annotated block, or the run of a
    // block's statements a chain lies in (a stencil launched elsewhere in
    // the block is this pass's).
    for (const Candidate *B : FuseBlocks)
      if (B->FirstStatement && B->LastStatement)
        FuseRanges.push_back(SourceRange(B->FirstStatement->getBeginLoc(),
                                         B->LastStatement->getEndLoc()));
      else if (B->Statement)
        FuseRanges.push_back(B->Statement->getSourceRange());
  }

  bool rewrite(const Candidate &C) {
    const FunctionDecl *Kernel = C.Function;
    LeftToFuse = 0;
    StencilResult Analysis = analyzeStencil(*Kernel);
    if (!Analysis)
      return refuse(C, "no stencil shape: " + Analysis.Refusal);
    SystolicPlanResult Planned = planSystolic(*Analysis.Shape);
    if (!Planned.Plan)
      return refuse(C, Planned.Refused.Reason);
    SystolicPlan &Plan = *Planned.Plan;
    if (std::string Why = templateProblem(Kernel, Plan); !Why.empty())
      return refuse(C, Why);
    if (std::string Why = signatureProblem(Kernel); !Why.empty())
      return refuse(C, Why);
    std::vector<const LaunchSite *> Sites;
    DeclareAfter = nullptr;
    if (std::string Why = hostLaunches(Kernel, Sites); !Why.empty())
      return refuse(C, Why);
    ConfigPins TemplatePins;
    if (std::string Why = pinTemplateArguments(Kernel, Sites, TemplatePins);
        !Why.empty())
      return refuse(C, Why);
    // A clause this kernel cannot take is the annotation's mistake: an
    // error at the clause, not a refusal.
    std::optional<unsigned> P, Block, Vector;
    if (std::string Why = clauses(C, Plan, P, Block, Vector); !Why.empty())
      return badClause(C, Why);
    std::optional<ZForm> Z;
    if (std::string Why = zClause(C, Plan, Z); !Why.empty())
      return badClause(C, Why);
    SystolicShape Shape =
        chooseSystolicShape(Plan.Geometry, Context.Gpu, P, Block, Z);
    if (std::string Why = sharedMemoryProblem(Plan, Shape); !Why.empty())
      return refuse(C, Why);
    std::optional<SystolicShape> Aligned =
        chooseVectorShape(Plan.Geometry, Context.Gpu, P, Block, Vector);
    std::string Summary = describeOffsets(*Analysis.Shape);
    // The shapes and vector types are chosen for the element's size: an
    // element type spelled through a typedef or macro (`real`) is pinned.
    ConfigPins Pins = Analysis.Shape->Pins;
    Pins.merge(TemplatePins);
    if (Plan.ElementType != "float" && Plan.ElementType != "double")
      Pins.pinSize(Plan.ElementType, Plan.Geometry.ElementBytes);
    std::string Code = pinnedValues(Pins) +
                       generateSystolicCode(Plan, Shape, Aligned, Summary);
    if (!addCode(C, Plan, Shape, Aligned, Code))
      return false;
    if (DeclareAfter &&
        !check(Context.Edits.addDefinition(
                   "systolic/" + Kernel->getNameAsString() + "/declaration",
                   "\n" + systolicLauncherDeclaration(Plan, Shape),
                   lineAfter(Ctx, DeclareAfter->getEndLoc())),
               C.Loc))
      return false;
    for (const LaunchSite *S : Sites)
      if (!rewriteLaunch(*S, Plan))
        return false;
    Context.Remark.applied(
        C, SystolicPass::Name,
        llvm::formatv(
            "'{0}' runs as {1} ({2}; {3} launch{4} rewritten{6}): "
            "{5}",
            nameWithTemplateArguments(*Kernel),
            (!Aligned             ? systolicKernelName(Plan)
             : Aligned->WideLanes ? systolicWideKernelName(Plan)
                                  : systolicAlignedKernelName(Plan)) +
                Plan.TemplateArgs,
            Summary, Sites.size(), Sites.size() == 1 ? "" : "es",
            Aligned ? Aligned->Why + "; overlapped form: " + Shape.Why
                    : Shape.Why,
            LeftToFuse
                ? llvm::formatv(", {0} left to the fuse pass", LeftToFuse).str()
                : ""));
    return true;
  }

private:
  /// Why the kernel's template form keeps it (a specialization the user
  /// wrote; a template whose parameters a new template cannot repeat), or
  /// ""; an instantiation's template head and arguments go into \p Plan.
  static std::string templateProblem(const FunctionDecl *Kernel,
                                     SystolicPlan &Plan) {
    if (Kernel->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
      return "an explicit specialization of a template kernel: its code "
             "would clash with the template's instantiations'";
    if (!isTemplateInstantiation(*Kernel))
      return "";
    std::string Why;
    std::optional<std::string> Head =
        templateHeadText(*Kernel->getPrimaryTemplate(), Why);
    if (!Head)
      return "a template kernel: " + Why;
    Plan.TemplateHead = *Head;
    Plan.TemplateArgs = templateArgumentsText(*Kernel);
    return "";
  }

  /// Pins the template arguments the launches of an instantiation write
  /// (`box<RADIUS>` names the instantiation this build's RADIUS gives), or
  /// says why one cannot be.
  std::string pinTemplateArguments(const FunctionDecl *Kernel,
                                   llvm::ArrayRef<const LaunchSite *> Sites,
                                   ConfigPins &Pins) {
    if (!isTemplateInstantiation(*Kernel))
      return "";
    for (const LaunchSite *S : Sites) {
      std::vector<const Expr *> Written;
      templateArgumentsAsCalled(*Kernel, S->Call->getCallee(), Written);
      for (const Expr *E : Written)
        if (!Pins.pin(E, Ctx))
          return "a template argument of the launch at line " +
                 std::to_string(
                     SM.getPresumedLineNumber(S->Call->getBeginLoc())) +
                 ": " + Pins.why();
    }
    return "";
  }

  /// Adds the kernel's generated \p Code after its definition (after the
  /// #include that brings in a kernel of an included file); an
  /// instantiation's code specializes templates declared once for all of
  /// them, which the definitions' keys sort first.
  bool addCode(const Candidate &C, const SystolicPlan &Plan,
               const SystolicShape &Shape,
               const std::optional<SystolicShape> &Aligned,
               const std::string &Code) {
    const FunctionDecl *Def = C.Function->getDefinition();
    SourceLocation After =
        lineAfter(Ctx, mainFileLocation(SM, Def->getEndLoc()));
    std::string Key = "systolic/" + C.Function->getNameAsString();
    if (!Plan.TemplateArgs.empty()) {
      for (const auto &[Form, Declaration] :
           systolicPrimaryTemplates(Plan, Shape, Aligned))
        if (!check(Context.Edits.addDefinition(Key + "/" + Form,
                                               "\n" + Declaration, After),
                   C.Loc))
          return false;
      Key += "/d-" + Plan.TemplateArgs;
    }
    return check(Context.Edits.addDefinition(Key, "\n" + Code, After), C.Loc);
  }

  bool refuse(const Candidate &C, const std::string &Why) {
    Context.Remark.refused(C, SystolicPass::Name, Why);
    return true;
  }

  /// \p Why starts with the clause it is about ("vector(4) ...").
  bool badClause(const Candidate &C, const std::string &Why) {
    const PragmaClause *Clause = nullptr;
    for (const PragmaClause &Each : C.Annotation->Clauses)
      if (llvm::StringRef(Why).starts_with(Each.Name + "("))
        Clause = &Each;
    Context.Remark.badClause(Clause ? Clause->Loc : C.Annotation->HashLoc,
                             SystolicPass::Name, Why);
    return true;
  }

  bool check(llvm::Error E, SourceLocation Loc) {
    return checkEdit(Ctx, std::move(E), Loc, "systolic");
  }

  /// Why the generated kernel and launcher could not take the kernel's
  /// parameters as written, or where the launcher could not be named.
  static std::string signatureProblem(const FunctionDecl *Kernel) {
    for (const ParmVarDecl *P : Kernel->parameters()) {
      std::string Which =
          "parameter " + std::to_string(P->getFunctionScopeIndex() + 1);
      if (P->getName().empty())
        return Which + " has no name, so the launcher cannot pass it on";
      if (P->hasDefaultArg())
        return Which + " ('" + P->getNameAsString() +
               "') has a default argument";
    }
    if (!Kernel->getDeclContext()->getRedeclContext()->isFileContext())
      return "the kernel is a class member";
    return "";
  }

  /// The host launches of \p Kernel, or why they cannot all be rewritten.
  std::string hostLaunches(const FunctionDecl *Kernel,
                           std::vector<const LaunchSite *> &Sites) {
    const FunctionDecl *Def = Kernel->getDefinition();
    for (const LaunchSite &S : Launches) {
      if (!S.Callee ||
          S.Callee->getCanonicalDecl() != Kernel->getCanonicalDecl())
        continue;
      unsigned Line = SM.getPresumedLineNumber(S.Call->getBeginLoc());
      std::string At = " (line " + std::to_string(Line) + ")";
      if (S.FromDevice)
        return "it is launched from device code" + At +
               "; only host launches are rewritten";
      if (S.InMacro || S.InTemplate)
        return std::string("a launch") + At + " is inside a " +
               (S.InMacro ? "macro" : "template");
      // A launch in a block the fuse pass takes stays for it (it runs the
      // original kernel if fusion is refused): rewriting it here too made
      // the two passes' edits clash under --auto
      // (test/regress/fuse/auto-stencil-stage.cu).
      if (inFuseBlock(S.Call->getBeginLoc())) {
        ++LeftToFuse;
        continue;
      }
      if (SM.isBeforeInTranslationUnit(S.Call->getBeginLoc(),
                                       Def->getEndLoc())) {
        // The launcher is declared after a declaration of the kernel that
        // comes first (`__global__ void k(...);` above main).
        const FunctionDecl *First = Kernel->getFirstDecl();
        if (First == Def || !SM.isWrittenInMainFile(First->getLocation()) ||
            First->getLexicalDeclContext() != Def->getLexicalDeclContext() ||
            !SM.isBeforeInTranslationUnit(First->getEndLoc(),
                                          S.Call->getBeginLoc()))
          return "a launch" + At +
                 " comes before the kernel's definition and every "
                 "declaration of it in the same scope, where the generated "
                 "launcher is not yet declared";
        DeclareAfter = First;
      }
      Sites.push_back(&S);
    }
    if (Sites.empty() && LeftToFuse)
      return "its launches are in blocks the fuse pass rewrites";
    if (Sites.empty())
      return "no host launch of '" + Kernel->getNameAsString() +
             "' in this file to rewrite";
    return "";
  }

  /// The declaration of the kernel after which the launcher is declared,
  /// where launches come before the kernel's definition.
  const FunctionDecl *DeclareAfter = nullptr;

  bool inFuseBlock(SourceLocation Loc) const {
    return llvm::any_of(FuseRanges, [&](SourceRange R) {
      return SM.isPointWithin(SM.getExpansionLoc(Loc), R.getBegin(),
                              R.getEnd());
    });
  }

  /// The p(..), block(..) and vector(..) clauses, checked.
  static std::string clauses(const Candidate &C, const SystolicPlan &Plan,
                             std::optional<unsigned> &P,
                             std::optional<unsigned> &Block,
                             std::optional<unsigned> &Vector) {
    if (!C.Annotation)
      return "";
    std::string Bad;
    auto Value = [&](llvm::StringRef Name) -> std::optional<unsigned> {
      const PragmaClause *Clause = C.Annotation->clause(Name);
      if (!Clause)
        return std::nullopt;
      unsigned V;
      if (Clause->Args.size() != 1 ||
          llvm::StringRef(Clause->Args[0]).getAsInteger(10, V)) {
        Bad = Name.str() + "(" + llvm::join(Clause->Args, ",") +
              ") is not a number the pass can use";
        return std::nullopt;
      }
      return V;
    };
    P = Value("p");
    Block = Value("block");
    Vector = Value("vector");
    if (!Bad.empty())
      return Bad;
    unsigned MaxVector = 16 / Plan.Geometry.ElementBytes;
    if (Vector && *Vector != 1 && *Vector != 2 && *Vector != MaxVector)
      return "vector(" + std::to_string(*Vector) + ") is not 1" +
             (MaxVector > 2 ? ", 2 or " : " or ") + std::to_string(MaxVector) +
             " (columns per lane: a " + Plan.ElementType +
             " vector of at most 16 bytes)";
    if (Vector && *Vector > 1 && Plan.Geometry.PointLoads)
      return "vector(" + std::to_string(*Vector) +
             ") asks for a vector form, whose whole-vector loads would read "
             "across the stencil's zero or periodic borders; vector(1) is "
             "the overlapped form, which keeps them";
    if (Vector && *Vector > 1 &&
        !chooseVectorShape(Plan.Geometry, GpuSpec(), P, Block, Vector))
      return "vector(" + std::to_string(*Vector) +
             ") asks for a vector form, which needs a 2D stencil that reads "
             "and writes parameter arrays with unit x stride and leaves a "
             "warp of " +
             std::to_string(*Vector) + "-column lanes output columns";
    // The pragma's grammar checked the ranges of p(..) and block(..).
    return "";
  }

  /// The exchange form's partial sums must fit the shared memory a kernel
  /// declares statically; the model keeps them there unless p(..) or
  /// block(..) say otherwise (difftest found p(16) z(shared) asking for
  /// 80 KiB: test/regress/systolic/exchange-too-large.cu).
  static std::string sharedMemoryProblem(const SystolicPlan &Plan,
                                         const SystolicShape &Shape) {
    if (!Shape.ExchangePlanes)
      return "";
    unsigned Bytes =
        exchangeBytes(Plan.Geometry, Shape.WarpsPerBlock, Shape.RowsPerThread);
    if (Bytes <= MaxStaticSharedBytes)
      return "";
    return llvm::formatv(
        "z(shared) with {0} rows per thread and {1} warps per block needs {2} "
        "bytes of shared memory for its partial sums, more than the {3} a "
        "kernel can declare; lower p(..) or block(..)",
        Shape.RowsPerThread, Shape.WarpsPerBlock, Bytes, MaxStaticSharedBytes);
  }

  /// The z(stream|shared) clause: how a 3D stencil meets its z taps.
  static std::string zClause(const Candidate &C, const SystolicPlan &Plan,
                             std::optional<ZForm> &Z) {
    const PragmaClause *Clause =
        C.Annotation ? C.Annotation->clause("z") : nullptr;
    if (!Clause)
      return "";
    if (Plan.Rank != 3)
      return "z(" + Clause->Args[0] + ") applies to 3D stencils, and '" +
             C.Function->getNameAsString() + "' is 2D";
    Z = Clause->Args[0] == "shared" ? ZForm::Shared : ZForm::Stream;
    if (*Z == ZForm::Shared && Plan.Loop)
      return "z(shared) sums each z offset's taps apart, which a filter "
             "loop over the whole box does not spell out";
    return "";
  }

  /// `K<<<g, b, s, t>>>(args)` becomes `K_systolic_launch(g, b, s, t, args)`.
  bool rewriteLaunch(const LaunchSite &S, const SystolicPlan &Plan) {
    const CallExpr *Config = S.Call->getConfig();
    std::vector<std::string> Args;
    const char *Defaults[4] = {"", "", "0", "0"};
    for (unsigned I = 0; I != 4; ++I) {
      const Expr *A = I < Config->getNumArgs() ? Config->getArg(I) : nullptr;
      if (!A || isa<CXXDefaultArgExpr>(A))
        Args.push_back(Defaults[I]);
      else
        Args.push_back(text(A));
    }
    for (const Expr *A : S.Call->arguments())
      Args.push_back(text(A));
    std::string Call =
        namespacePrefix(Plan.Kernel) + systolicLauncherName(Plan) +
        launcherTemplateArgs(S, Plan) + "(" + llvm::join(Args, ", ") + ")";
    return check(
        Context.Edits.replace(
            CharSourceRange::getTokenRange(S.Call->getSourceRange()), Call),
        S.Call->getBeginLoc());
  }

  /// The template arguments a launch of an instantiation names the
  /// launcher with: those the launch writes, as written.
  static std::string launcherTemplateArgs(const LaunchSite &S,
                                          const SystolicPlan &Plan) {
    if (Plan.TemplateArgs.empty())
      return "";
    std::vector<const Expr *> Written;
    return templateArgumentsAsCalled(*Plan.Kernel, S.Call->getCallee(),
                                     Written);
  }

  /// "a::b::" for a kernel in namespace a::b (anonymous ones need no
  /// name), so that a launch from elsewhere finds the launcher.
  static std::string namespacePrefix(const FunctionDecl *Kernel) {
    std::string Prefix;
    for (const DeclContext *DC = Kernel->getDeclContext(); DC;
         DC = DC->getParent())
      if (const auto *NS = dyn_cast<NamespaceDecl>(DC);
          NS && !NS->isAnonymousNamespace())
        Prefix = NS->getNameAsString() + "::" + Prefix;
    return Prefix.empty() ? "" : "::" + Prefix;
  }

  std::string text(const Expr *E) const {
    return sourceText(Ctx, E->getSourceRange());
  }

  PassContext &Context;
  ASTContext &Ctx;
  const SourceManager &SM;
  std::vector<LaunchSite> Launches;
  std::vector<SourceRange> FuseRanges; ///< Blocks the fuse pass takes.
  unsigned LeftToFuse = 0;             ///< The current kernel's, left to fuse.
};

} // namespace

namespace {
std::string rowsPerThread(llvm::ArrayRef<unsigned> V) {
  return V[0] <= 64 ? "" : "takes 1..64 rows per thread";
}
std::string threadsPerBlock(llvm::ArrayRef<unsigned> V) {
  return V[0] % 32 == 0 && V[0] <= 1024
             ? ""
             : "takes a multiple of 32 between 32 and 1024 threads per block";
}
std::string columnsPerLane(llvm::ArrayRef<unsigned> V) {
  return V[0] == 1 || V[0] == 2 || V[0] == 4
             ? ""
             : "takes 1, 2 or 4 columns per lane (a vector of at most 16 "
               "bytes)";
}
const llvm::StringLiteral ZForms[] = {"stream", "shared"};
const ClauseSpec SystolicClauses[] = {
    {"p", ClauseArgs::PositiveInt, {}, rowsPerThread},
    {"block", ClauseArgs::PositiveInt, {}, threadsPerBlock},
    {"vector", ClauseArgs::PositiveInt, {}, columnsPerLane},
    {"z", ClauseArgs::OneOf, ZForms}};
} // namespace

// Read in included project files too: the pass rewrites the stencils
// defined there (its code goes into the main file).
const DirectiveSpec SystolicPass::Directive = {"systolic", SystolicClauses,
                                               PragmaTarget::Kernel,
                                               /*InIncludedFiles=*/true};
const CandidateKind SystolicPass::Stencil = {"stencil"};

SystolicPass::SystolicPass()
    : Pass(Name, "stencils and convolutions as software systolic arrays (SSAM)",
           {&Stencil}, {&Directive}) {}

bool SystolicPass::rewrite(PassContext &Context, const PassWork &Work) const {
  SystolicRewriter R(Context, Work.LeftToOthers);
  for (const Candidate *C : Work.Candidates)
    if (!R.rewrite(*C))
      return false;
  return true;
}

} // namespace cuda_rewrite
