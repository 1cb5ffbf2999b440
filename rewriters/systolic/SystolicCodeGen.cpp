//===- SystolicCodeGen.cpp - The SSAM kernel and its launcher -------------===//

#include "rewriters/systolic/SystolicCodeGen.h"
#include "rewriters/common/CodeWriter.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include <functional>

using namespace clang;
using llvm::Twine;

namespace cuda_rewrite {

std::string systolicKernelName(const SystolicPlan &Plan) {
  return Plan.Kernel->getNameAsString() + "_systolic";
}

std::string systolicAlignedKernelName(const SystolicPlan &Plan) {
  return systolicKernelName(Plan) + "_aligned";
}

std::string systolicWideKernelName(const SystolicPlan &Plan) {
  return systolicKernelName(Plan) + "_wide";
}

std::string systolicLauncherName(const SystolicPlan &Plan) {
  return systolicKernelName(Plan) + "_launch";
}

namespace {

static const char *const Axis[3] = {"x", "y", "z"};
static const char *const AxisUpper[3] = {"X", "Y", "Z"};

/// "+ 2", "- 1" or "" for an offset added to an expression.
std::string plus(int64_t V) {
  if (V == 0)
    return "";
  return (V > 0 ? " + " : " - ") + std::to_string(V > 0 ? V : -V);
}

/// "one lane", "3 lanes": \p K of \p Noun, in a comment.
std::string amount(unsigned K, llvm::StringRef Noun) {
  return (K == 1 ? "one " : std::to_string(K) + " ") + Noun.str() +
         (K == 1 ? "" : "s");
}

/// `for (int Var = 0; Var < Count; ++Var)`.
std::string loop(const std::string &Var, const Twine &Count) {
  return "for (int " + Var + " = 0; " + Var + " < " + Count.str() + "; ++" +
         Var + ")";
}

/// Where a cached row's value is, given the plane offset dz of the tap and
/// the row index.
using CacheAt = std::function<std::string(int64_t, const std::string &)>;

class Generator {
public:
  Generator(const SystolicPlan &Plan, const SystolicShape &Shape,
            const std::optional<SystolicShape> &Aligned,
            const std::string &Summary)
      : Plan(Plan), Shape(Shape), Aligned(Aligned), Summary(Summary),
        Ctx(Plan.Kernel->getASTContext()) {
    reserveKernelNames();
    // Each kernel and the launcher alias the shape struct they use.
    Alias = Names.name("Shape");
  }

  /// For an instantiation of a template kernel, the primary templates its
  /// specializations specialize, as (key, declaration): the shape and
  /// kernel of each form it uses and the launcher, with the template's own
  /// parameters. Instantiations that use the same form share its key.
  std::vector<std::pair<std::string, std::string>> primaryTemplates() {
    const FunctionDecl *Pattern =
        Plan.Kernel->getTemplateInstantiationPattern();
    std::vector<std::string> Params;
    for (const ParmVarDecl *P : Pattern->parameters())
      Params.push_back(sourceText(P));
    std::vector<std::string> KernelParams = Params;
    for (const std::string &E : extentNames())
      KernelParams.push_back("long long " + E);
    std::string Head = Plan.TemplateHead + "\n";
    auto Form = [&](const std::string &Kernel, const std::string &Shape) {
      return Head + "struct " + Shape + ";\n" + Head + "__global__ void " +
             Kernel + "(" + llvm::join(KernelParams, ", ") + ");\n";
    };
    std::vector<std::pair<std::string, std::string>> Primaries;
    Primaries.push_back(
        {"a-" + kernelName(),
         "/// cuda-rewrite's systolic forms of " +
             Plan.Kernel->getNameAsString() +
             ", specialized below for each instantiation this file "
             "launches.\n" +
             Form(kernelName(), shapeName())});
    if (Aligned)
      Primaries.push_back({"b-" + vectorKernelName(),
                           Form(vectorKernelName(), alignedShapeName())});
    Params.insert(Params.begin(),
                  {"dim3 " + Names.name("grid"), "dim3 " + Names.name("block"),
                   "size_t " + Names.name("sharedBytes"),
                   "cudaStream_t " + Names.name("stream")});
    Primaries.push_back({"c-" + systolicLauncherName(Plan),
                         Head + "static void " + systolicLauncherName(Plan) +
                             "(" + llvm::join(Params, ", ") + ");\n"});
    return Primaries;
  }

  /// The launcher's declaration, for launches before the kernel's
  /// definition.
  std::string declaration() {
    W.line("/// Defined with " + kernelName() + " below.");
    W.line(launcherHead() + ";");
    return W.str();
  }

  std::string run() {
    shapeStruct();
    W.line("");
    kernel();
    if (Aligned && Aligned->WideLanes) {
      W.line("");
      wideShapeStruct();
      W.line("");
      wideKernel();
    } else if (Aligned) {
      W.line("");
      alignedShapeStruct();
      W.line("");
      alignedKernel();
    }
    W.line("");
    launcher();
    return W.str();
  }

private:
  //===-- Names -----------------------------------------------------------===//

  /// Identifiers the generated code must not shadow: the parameters and
  /// every name in the texts taken from the kernel.
  void reserveKernelNames() {
    for (const ParmVarDecl *P : Plan.Kernel->parameters())
      Names.reserve(P->getName());
    Names.reserveIdentifiersIn(Plan.ElementType);
    for (const SystolicTap &T : Plan.Taps)
      for (const WeightTerm &Term : T.Weight)
        if (!Term.Name.empty())
          Names.reserve(Term.Name);
    for (const std::vector<BoxBound> *Bounds : {&Plan.Bounds, &Plan.ReadLimits})
      for (const BoxBound &B : *Bounds)
        Names.reserveIdentifiersIn(B.Value);
    for (const std::string &P : Plan.Periods)
      Names.reserveIdentifiersIn(P);
    if (Plan.Split) {
      Names.reserveIdentifiersIn(Plan.Split->Divisor);
      for (const std::string &L : Plan.Split->Limits)
        Names.reserveIdentifiersIn(L);
    }
    for (const ArrayIndexing *I : {&Plan.Output, &Plan.Input}) {
      for (const auto &S : I->Strides)
        for (const std::string &T : S)
          Names.reserveIdentifiersIn(T);
      for (const std::string &R : I->Rest)
        Names.reserveIdentifiersIn(R);
    }
  }

  /// `Shape::Member` of the shape struct the code at hand uses.
  std::string shape(llvm::StringRef Member) const {
    return Alias + "::" + Member.str();
  }

  std::string kernelName() const { return systolicKernelName(Plan); }
  std::string shapeName() const { return kernelName() + "_shape"; }
  std::string type() const { return Plan.ElementType; }
  int64_t halo() const { return Plan.columns() - 1; }
  bool is3D() const { return Plan.Rank == 3; }
  /// The type of coordinates and indices in the kernel.
  std::string index() const { return Plan.Index32 ? "int" : "long long"; }

  /// The original parameters as written, and the names to forward.
  std::vector<std::string> parameterTexts() const {
    std::vector<std::string> Texts;
    const SourceManager &SM = Ctx.getSourceManager();
    // An instantiation's parameters have the types its arguments give
    // them (`const T *in` of blur<1, float> is `const float *in`).
    if (isSpecialization()) {
      PrintingPolicy Policy = Ctx.getPrintingPolicy();
      for (const ParmVarDecl *P : Plan.Kernel->parameters()) {
        std::string Text;
        llvm::raw_string_ostream OS(Text);
        P->getType().print(OS, Policy, P->getName());
        Texts.push_back(Text);
      }
      return Texts;
    }
    for (const ParmVarDecl *P : Plan.Kernel->parameters())
      Texts.push_back(sourceText(P));
    return Texts;
  }

  std::string sourceText(const Decl *D) const {
    return Lexer::getSourceText(
               CharSourceRange::getTokenRange(D->getSourceRange()),
               Ctx.getSourceManager(), Ctx.getLangOpts())
        .str();
  }

  //===-- Instantiations of template kernels ------------------------------===//

  /// The kernel is an instantiation of a template kernel: the generated
  /// kernels, shapes and launcher are explicit specializations of
  /// templates with the original's parameters (primaryTemplates).
  bool isSpecialization() const { return !Plan.TemplateArgs.empty(); }
  /// \p Name with the instantiation's template arguments, if any.
  std::string spec(const std::string &Name) const {
    return Name + Plan.TemplateArgs;
  }
  /// `template <>` before a definition of a specialization.
  void specializationHead() {
    if (isSpecialization())
      W.line("template <>");
  }
  std::vector<std::string> extentNames() {
    std::vector<std::string> Extents;
    for (unsigned D = 0; D != Plan.Rank; ++D)
      Extents.push_back(Names.name(std::string("extent") + AxisUpper[D]));
    return Extents;
  }

  //===-- The shape -------------------------------------------------------===//

  /// "struct <Name> {" with its comment, for the shape of \p Kernel; the
  /// struct ends with the block.
  CodeWriter::Block shapeOpening(const std::string &Kernel,
                                 const std::string &Name) {
    W.line("/// The shape cuda-rewrite chose for " + spec(Kernel) +
           " (--remarks says why).");
    specializationHead();
    return W.block("struct " + spec(Name) + " {", "};");
  }

  /// A member of a shape struct, what it means on the line above it.
  void member(const Twine &Declaration, const Twine &Meaning) {
    W.comment(Meaning);
    W.line(Declaration);
  }

  /// The Rows (P) and Cached (C) members of a shape struct.
  void rowsAndCached(const SystolicShape &Chosen) {
    member("static constexpr int Rows = " + Twine(Chosen.RowsPerThread) + ";",
           "output rows per thread (P)");
    member("static constexpr int Cached = " +
               Twine(Chosen.RowsPerThread + Plan.rows() - 1) + ";",
           "rows each thread keeps in registers (C = P + N - 1)");
  }

  /// The Warps and MinBlocks members of a vector form's shape struct.
  void blockAndResidency(const SystolicShape &Chosen) {
    member("static constexpr int Warps = " + Twine(Chosen.WarpsPerBlock) + ";",
           "warps per block");
    member("static constexpr int MinBlocks = " + Twine(Chosen.MinBlocksPerSm) +
               ";",
           "blocks resident per SM (~" + Twine(Chosen.EstimatedRegisters) +
               " registers per thread)");
  }

  void shapeStruct() {
    CodeWriter::Block Struct = shapeOpening(kernelName(), shapeName());
    rowsAndCached(Shape);
    member("static constexpr int Halo = " + Twine(halo()) + ";",
           "lanes that only feed their neighbours (M - 1)");
    member("static constexpr int Columns = 32 - Halo;",
           "output columns per warp");
    blockAndResidency(Shape);
    if (is3D()) {
      member("static constexpr int Window = " + Twine(Plan.planes()) + ";",
             "planes in the z window");
      member("static constexpr int Planes = " + Twine(Shape.PlanesPerWarp) +
                 ";",
             Twine("output planes ") + (Shape.ExchangePlanes
                                            ? "per block (Warps - Window + 1)"
                                            : "each warp streams through"));
    }
  }

  //===-- The kernel ------------------------------------------------------===//

  void kernelComment() {
    std::string Name = spec(Plan.Kernel->getNameAsString());
    std::string In = Plan.Input.Array->getNameAsString();
    std::string Window =
        !is3D() ? ""
        : Shape.ExchangePlanes
            ? ", one z plane per warp (section 4.9);\nthe sums of each z "
              "offset reach the warp of their output plane\nthrough shared "
              "memory"
            : ", one per plane of the z window, and\nstreams along z";
    W.comment(spec(kernelName()) + ": " + Name +
              " rewritten by cuda-rewrite as a software systolic array");
    W.comment("(SSAM, Listings 1 and 2). " + Summary + ".");
    W.comment("Each warp keeps a 32-lane x Cached-row window of '" + In +
              "' in registers" + Window + ";");
    W.comment("for each output row, a lane adds up the taps of one column and "
              "passes the");
    W.comment("partial sum one lane up (__shfl_up_sync) to add the next "
              "column's, so");
    W.comment("lanes Halo..31 end with finished points. It writes exactly the "
              "points");
    W.comment(Name +
              " writes, with the same weights (summed in another order).");
  }

  void kernel() {
    kernelComment();
    CodeWriter::Block Body = kernelHead(kernelName(), shapeName());
    stageFilter();
    box();
    if (is3D() && Shape.ExchangePlanes)
      exchangeTile();
    else
      tile();
    if (!is3D())
      body2D();
    else if (Shape.ExchangePlanes)
      body3DExchange();
    else
      body3D();
  }

  /// The signature (\p Name: the original parameters, then the extents of
  /// its launch) and the alias of the shape struct; the body ends with the
  /// block.
  CodeWriter::Block kernelHead(const std::string &Name,
                               const std::string &ShapeName) {
    std::vector<std::string> Params = parameterTexts();
    for (const std::string &E : extentNames())
      Params.push_back("long long " + E);
    specializationHead();
    W.line("__global__ void __launch_bounds__(" + spec(ShapeName) +
           "::Warps * 32, " + spec(ShapeName) + "::MinBlocks)");
    CodeWriter::Block Body =
        W.block(spec(Name) + "(" + llvm::join(Params, ", ") + ") {");
    W.line("using " + Alias + " = " + spec(ShapeName) + ";");
    return Body;
  }

  void stageFilter(bool Transposed = false) {
    if (!Plan.Filter)
      return;
    const StagedFilter &F = *Plan.Filter;
    std::string Filter = Names.name("filter"), I = Names.name("k");
    std::string Reads = "'" + F.Name + "'[" + std::to_string(F.First) + ".." +
                        std::to_string(F.Last) + "]";
    if (Transposed) {
      unsigned PerVector = 16 / (Plan.IsDouble ? 8 : 4);
      unsigned Padded = (Plan.rows() + PerVector - 1) / PerVector * PerVector;
      std::string Rows = std::to_string(Plan.rows());
      std::string Columns = std::to_string(Plan.columns());
      std::string M = I + " / " + Rows, N = I + " % " + Rows;
      W.comment("The filter, shared by the block (SSAM, section 4.6): " +
                Reads + ",");
      W.comment("a row per filter column, so that a column's weights are read "
                "as vectors.");
      W.line("__shared__ __align__(16) " + F.ElementType + " " + Filter + "[" +
             Columns + "][" + Twine(Padded) + "];");
      CodeWriter::Block Copy =
          W.unbraced("for (int " + I + " = threadIdx.x; " + I + " < " +
                     Columns + " * " + Rows + "; " + I + " += blockDim.x)");
      W.line(Filter + "[" + M + "][" + N + "] = " + F.Name + "[" +
             loopIndex("(" + M + ")", "(" + N + ")", "") + plus(F.First) +
             "];");
    } else {
      std::string Count = std::to_string(F.Last - F.First + 1);
      W.comment("The filter, shared by the block (SSAM, section 4.6): " +
                Reads + ".");
      W.line("__shared__ " + F.ElementType + " " + Filter + "[" + Count + "];");
      CodeWriter::Block Copy =
          W.unbraced("for (int " + I + " = threadIdx.x; " + I + " < " + Count +
                     "; " + I + " += blockDim.x)");
      W.line(Filter + "[" + I + "] = " + F.Name + "[" + I + plus(F.First) +
             "];");
    }
    W.line("__syncthreads();");
  }

  /// The box of coordinates the original writes.
  void box() {
    W.comment("The points the original kernel writes: its launch's threads, "
              "cut by its guard.");
    std::vector<std::string> Extents = extentNames();
    for (unsigned D = 0; D != Plan.Rank; ++D) {
      // Numbers fold; other limits are compared at run time.
      int64_t Lowest = 0;
      std::vector<std::string> Lower, Upper = {Extents[D]};
      for (const BoxBound &B : Plan.Bounds) {
        if (B.Dim != D)
          continue;
        if (B.IsLower && B.Constant)
          Lowest = std::max(Lowest, *B.Constant);
        else
          (B.IsLower ? Lower : Upper)
              .push_back(B.Constant ? std::to_string(*B.Constant) + "LL"
                                    : B.Value);
      }
      std::string Lo = std::to_string(Lowest) + "LL", Hi;
      for (const std::string &L : Lower)
        Lo = "::max(" + Lo + ", " + L + ")";
      for (const std::string &U : Upper)
        Hi = Hi.empty() ? U : "::min(" + Hi + ", " + U + ")";
      if (Plan.Index32) {
        // Both ends lie in [0, extent], and the launcher keeps the extent
        // within int.
        Lo = Lower.empty() ? std::to_string(Lowest)
                           : "(int)::min(" + Lo + ", " + Extents[D] + ")";
        Hi = "(int)" + Hi; // An extent or a ::min(...).
      }
      W.line("const " + index() + " " + begin(D) + " = " + Lo + ", " + end(D) +
             " = " + Hi + ";");
    }
  }

  /// Where the stencil has a periodic border along \p D, declares
  /// `<Var>In`: \p Var (a \p What) wrapped into [0, period). It lies within
  /// one period of it: the launcher checks that the period is at least the
  /// stencil's reach.
  void wrappedCopy(const std::string &Var, unsigned D, llvm::StringRef What) {
    const std::string &P = Plan.Periods[D];
    if (P.empty())
      return;
    std::string Period = "(" + P + ")";
    W.line("const " + index() + " " + inPeriod(Var, D) + " = " + Var +
           " < 0 ? " + Var + " + " + Period + " : " + Var + " >= " + Period +
           " ? " + Var + " - " + Period + " : " + Var + "; // The " + What +
           " wrapped into [0, " + P + ").");
  }

  /// The name of \p Var's wrapped copy where \p D is periodic, else \p Var.
  std::string inPeriod(const std::string &Var, unsigned D) {
    return Plan.Periods[D].empty() ? Var : Names.name(Var + "In");
  }

  std::string begin(unsigned D) {
    return Names.name(std::string(Axis[D]) + "Begin");
  }
  std::string end(unsigned D) {
    return Names.name(std::string(Axis[D]) + "End");
  }

  /// \p Var within the box along \p D widened by the reach \p Run:
  /// `Var >= begin + First && Var < end + Last`, and within the zero
  /// borders along \p D, beyond which the original reads nothing.
  std::string within(const std::string &Var, unsigned D, const TapRun &Run) {
    std::string Test = Var + " >= " + begin(D) + plus(Run.First) + " && " +
                       Var + " < " + end(D) + plus(Run.Last);
    for (const BoxBound &B : Plan.ReadLimits)
      if (B.Dim == D)
        Test += " && " + Var + (B.IsLower ? " >= " : " < ") +
                (B.Constant ? std::to_string(*B.Constant) : B.Value);
    return Test;
  }

  /// Returns from \p Who (the warp or the block) when the columns of its
  /// tile are all outside the box.
  void leaveIfOutside(llvm::StringRef Who) {
    std::string TileX = Names.name("tileX");
    CodeWriter::Block Leave =
        W.unbraced("if (" + TileX + " >= " + end(0) + " || " + TileX + " + " +
                   shape("Columns") + " <= " + begin(0) + ")");
    W.line("return; // The whole " + Who + " is outside.");
  }

  /// The warp's first column; warps that write nothing return.
  void warpTile() {
    W.line("const int " + Names.name("lane") + " = threadIdx.x % 32;");
    W.line("const " + index() + " " + Names.name("tileX") + " =\n    ((" +
           index() + ")blockIdx.x * " + shape("Warps") +
           " + threadIdx.x / 32) * " + shape("Columns") + ";");
    leaveIfOutside("warp");
  }

  /// For each read group (groups with the same columns share one), whether
  /// the original reads \p What: \p Test(run) says it for one run of x
  /// offsets.
  void columnFlags(const std::string &What,
                   const std::function<std::string(const TapRun &)> &Test) {
    W.comment("Whether the original reads " + What +
              " (for each group of taps).");
    FlagOfGroup.clear();
    for (size_t G = 0; G != Plan.Reads.size(); ++G) {
      size_t Same = 0;
      while (Plan.Reads[Same].XRuns != Plan.Reads[G].XRuns)
        ++Same;
      FlagOfGroup.push_back(Same);
      if (Same != G)
        continue; // An earlier group reads the same columns.
      std::vector<std::string> Alts;
      for (const TapRun &R : Plan.Reads[G].XRuns)
        Alts.push_back(Test(R));
      W.line("const bool " + columnFlag(G) + " = " + llvm::join(Alts, " || ") +
             ";");
    }
  }

  /// The warp's columns, and the part of the needed-point test that only
  /// depends on the lane's column.
  void tile() {
    warpTile();
    laneColumn();
  }

  /// The lane's input column (one per lane: overlapped blocking) and the
  /// column flags.
  void laneColumn() {
    std::string Col = Names.name("col");
    W.line("const " + index() + " " + Col + " = " + Names.name("tileX") +
           " + " + Names.name("lane") + plus(Plan.Range[0].First) +
           "; // This lane's input column.");
    wrappedCopy(Col, 0, "column");
    columnFlags("this column",
                [&](const TapRun &R) { return "(" + within(Col, 0, R) + ")"; });
  }

  std::string columnFlag(size_t G) {
    return Names.name("readsColumn" + std::to_string(FlagOfGroup[G]));
  }

  /// Whether the original reads the input at (col, Row[, Plane]); the
  /// alternatives after the first go on lines of their own, 4 columns in
  /// from the statement's first line.
  std::string needed(const std::string &Row, const std::string &Plane) {
    std::vector<std::string> Alts;
    for (size_t G = 0; G != Plan.Reads.size(); ++G) {
      const ReadGroup &R = Plan.Reads[G];
      std::string A = "(" + columnFlag(G) + " && " + within(Row, 1, R.Y);
      if (!Plane.empty())
        A += " && " + within(Plane, 2, R.Z);
      Alts.push_back(A + ")");
    }
    return llvm::join(Alts, " ||\n    ");
  }

  /// `for (i) Statement`, unrolled: one statement for each of the P rows.
  void eachRow(const Twine &Statement) {
    W.line("#pragma unroll");
    CodeWriter::Block Rows = W.unbraced(loop(Names.name("i"), shape("Rows")));
    W.line(Statement);
  }

  /// `Sum[P]` (`Sum[P][PerLane]` with \p Wide) = {}.
  void declareSums(bool Wide) {
    W.line(type() + " " + Names.name("sum") + "[" + shape("Rows") + "]" +
           (Wide ? "[" + shape("PerLane") + "]" : "") + " = {};");
  }

  /// sum += Weight * Value, for each of the P rows (each of the P x PerLane
  /// points with \p Wide).
  void fmaEach(const std::string &Weight, const std::string &Value, bool Wide) {
    std::string Target = Names.name("sum") + "[" + Names.name("i") + "]" +
                         (Wide ? "[" + Names.name("j") + "]" : "");
    std::string Fma =
        Target + " = fma(" + Weight + ", " + Value + ", " + Target + ");";
    if (Wide)
      eachPoint(Fma);
    else
      eachRow(Fma);
  }

  /// The partial sums of all P rows, column by column (SSAM, Listing 1
  /// with the row loop innermost, so that each weight is read once per
  /// thread rather than once per row); \p Cache(dz, row) names the cached
  /// value of a row of plane offset dz. With \p OnlyZ, only the taps at that
  /// z offset (each warp of the 3D exchange form sums its plane's share of
  /// each output). With \p Wide, each lane holds PerLane columns
  /// (sum[i][j], Cache(..) ending in [j]) and sums move a column at a time.
  void sums(const CacheAt &Cache, std::optional<int64_t> OnlyZ = std::nullopt,
            bool Wide = false) {
    declareSums(Wide);
    if (Plan.Loop)
      loopSums(Cache, Wide);
    else
      tapSums(Cache, OnlyZ, Wide);
  }

  /// sums() of a filter loop: loops over the filter's columns and rows.
  void loopSums(const CacheAt &Cache, bool Wide) {
    std::string M = Names.name("m"), N = Names.name("n");
    std::string Z = Names.name("dz");
    std::string Weight = loopWeight(Wide && transposedFilter());
    std::string Row = Names.name("i") + " + " + N;
    W.line("#pragma unroll");
    {
      CodeWriter::Block Columns = W.block(
          loop(M, Twine(Plan.columns())) + " { // Columns x" +
          plus(Plan.Range[0].First) + " .. x" + plus(Plan.Range[0].Last) + ".");
      if (Wide) {
        CodeWriter::Block Shift = W.block("if (" + M + " > 0) {");
        shiftColumns(1);
      } else {
        CodeWriter::Block Shift = W.unbraced("if (" + M + " > 0)");
        shiftLanes(1);
      }
      if (is3D()) {
        W.line("#pragma unroll");
        CodeWriter::Block Planes = W.block(loop(Z, shape("Window")) + " {");
        filterColumn(Weight, Names.name("window") + "[" + Z + "][" + Row + "]",
                     Wide);
      } else {
        filterColumn(Weight, Cache(0, Row), Wide);
      }
    }
    if (Wide && wideExtraShift())
      shiftColumns(wideExtraShift());
  }

  /// The taps of filter column m (of plane offset dz, in 3D): for each row
  /// n, its weight times the cached \p Value into every sum.
  void filterColumn(const std::string &Weight, const std::string &Value,
                    bool Wide) {
    std::string N = Names.name("n"), Name = Names.name("weight");
    W.line("#pragma unroll");
    CodeWriter::Block Rows = W.block(loop(N, Twine(Plan.rows())) + " {");
    W.line("const " + type() + " " + Name + " = " + Weight + ";");
    fmaEach(Name, Value, Wide);
  }

  /// sums() tap by tap.
  void tapSums(const CacheAt &Cache, std::optional<int64_t> OnlyZ, bool Wide) {
    std::string I = Names.name("i");
    // Columns with no tap only shift: their shifts merge into the next
    // column's (or the last) shift, and none is needed before the first tap.
    unsigned Pending = 0;
    bool Started = false;
    auto ShiftBy = [&](unsigned K) {
      if (Wide) {
        shiftColumns(K);
        return;
      }
      W.comment("Pass the partial sums " + amount(K, "lane") + " up.");
      shiftLanes(K);
    };
    for (int64_t X = Plan.Range[0].First; X <= Plan.Range[0].Last; ++X) {
      if (X != Plan.Range[0].First)
        ++Pending;
      auto Here = [&](const SystolicTap &T) {
        return T.Offset[0] == X && (!OnlyZ || T.Offset[2] == *OnlyZ);
      };
      if (llvm::none_of(Plan.Taps, Here))
        continue;
      if (Started && Pending)
        ShiftBy(Pending);
      Pending = 0;
      Started = true;
      W.comment("Column x" + plus(X) + ".");
      for (const SystolicTap &T : Plan.Taps)
        if (Here(T))
          fmaEach(
              weight(T),
              Cache(T.Offset[2], I + plus(T.Offset[1] - Plan.Range[1].First)),
              Wide);
    }
    // Wide lanes move the finished sums on to whole output vectors.
    if (Wide)
      Pending += wideExtraShift();
    if (Started && Pending)
      ShiftBy(Pending);
  }

  /// Passes every row's partial sum \p K lanes up.
  void shiftLanes(unsigned K) {
    std::string Sum = Names.name("sum"), I = Names.name("i");
    eachRow(Sum + "[" + I + "] = __shfl_up_sync(0xffffffffu, " + Sum + "[" + I +
            "], " + Twine(K) + ");");
  }

  /// Wide lanes: columns the sums move after the last filter column, so
  /// that column c holds the point c - RightPad (RightPad - max dx).
  unsigned wideExtraShift() const {
    return unsigned(
        int64_t(wideRightPad(Plan.Geometry, Aligned->ColumnsPerLane)) -
        Plan.Range[0].Last);
  }

  /// Wide lanes: moves every partial sum \p K columns right, within the
  /// lane by register and from the lane below by shuffle, one column at a
  /// time.
  void shiftColumns(unsigned K) {
    std::string Sum = Names.name("sum"), I = Names.name("i");
    std::string J = Names.name("j");
    std::string Up = Names.name("fromLane");
    W.comment("Pass the partial sums " + amount(K, "column") +
              " on: within the lane, and from the lane below.");
    std::optional<CodeWriter::Block> Times;
    if (K > 1) {
      W.line("#pragma unroll");
      Times.emplace(W.unbraced(loop(Names.name("k"), Twine(K))));
    }
    W.line("#pragma unroll");
    CodeWriter::Block Rows = W.block(loop(I, shape("Rows")) + " {");
    std::string Row = Sum + "[" + I + "]";
    W.line("const " + type() + " " + Up + " = __shfl_up_sync(0xffffffffu, " +
           Row + "[" + shape("PerLane") + " - 1], 1);");
    W.line("#pragma unroll");
    {
      CodeWriter::Block Columns =
          W.unbraced("for (int " + J + " = " + shape("PerLane") + " - 1; " + J +
                     " > 0; --" + J + ")");
      W.line(Row + "[" + J + "] = " + Row + "[" + J + " - 1];");
    }
    W.line(Row + "[0] = " + Up + ";");
  }

  /// The weight of tap (m, n[, dz]) of a filter loop (offsets from the
  /// first), naming the staged filter.
  std::string loopWeight(bool Transposed = false) {
    const FilterLoop &L = *Plan.Loop;
    bool Staged = !L.Array;
    std::string Weight =
        Transposed ? Names.name("filter") + "[" + Names.name("m") + "][" +
                         Names.name("n") + "]"
                   : (Staged ? Names.name("filter") : *L.Array) + "[" +
                         loopIndex(Names.name("m"), Names.name("n"),
                                   Names.name("dz")) +
                         "]";
    if (!Staged)
      Weight = type() + "(" + Weight + ")";
    if (L.Scale != 1.0)
      Weight = exactLiteral(L.Scale, !Plan.IsDouble) + " * " + Weight;
    return Weight;
  }

  /// The index of filter loop tap (m, n[, dz]) (offsets from the first) in
  /// the loop's source (from the first staged element, when staged).
  std::string loopIndex(const std::string &M, const std::string &N,
                        const std::string &DZ) {
    const FilterLoop &L = *Plan.Loop;
    std::string Index = std::to_string(L.Base);
    auto Term = [&](unsigned D, const std::string &Var, int64_t First) {
      if (L.Stride[D] == 0)
        return;
      Index += " + " + std::to_string(L.Stride[D]) + " * (" + Var +
               plus(First) + ")";
    };
    Term(0, M, Plan.Range[0].First);
    Term(1, N, Plan.Range[1].First);
    if (is3D())
      Term(2, DZ, Plan.Range[2].First);
    return Index;
  }

  /// Wide lanes stage a filter loop's weights column by column (the
  /// transpose), each column padded to whole 16-byte vectors, so that a
  /// column's weights are read with vector loads (2d121pt on an H200:
  /// 0.516 ms against 0.575, bench/experiments/systolic_wide_lanes.cu).
  bool transposedFilter() const {
    return Plan.Loop && Plan.Filter && !Plan.Loop->Array && !is3D();
  }

  /// The tap's weight, naming the staged filter.
  std::string weight(const SystolicTap &T) {
    return weightText(T.Weight, Plan.ElementType, Plan.IsDouble,
                      [&] { return Names.name("filter"); });
  }

  /// Stores the P rows' sums where the original writes.
  void store(const std::string &Plane) {
    std::string OutX = Names.name("outX"), OutY = Names.name("outY");
    std::string I = Names.name("i");
    std::string Lane = Names.name("lane");
    W.line("const " + index() + " " + OutX + " = " + Names.name("tileX") +
           " + " + Lane + " - " + shape("Halo") + ";");
    CodeWriter::Block Columns = W.block(
        "if (" + Lane + " >= " + shape("Halo") + " && " + OutX +
        " >= " + begin(0) + " && " + OutX + " < " + end(0) +
        (Plane.empty() ? "" : " && " + Plane + " >= " + begin(2)) + ") {");
    W.line("#pragma unroll");
    CodeWriter::Block Rows = W.block(loop(I, shape("Rows")) + " {");
    W.line("const " + index() + " " + OutY + " = " + Names.name("tileY") +
           " + " + I + ";");
    CodeWriter::Block Written =
        W.unbraced("if (" + OutY + " >= " + begin(1) + " && " + OutY + " < " +
                   end(1) + ")");
    W.line(Plan.Output.element({OutX, OutY, Plane}) + " = " +
           Names.name("sum") + "[" + I + "];");
  }

  /// The grid-stride loop over the tiles (\p Tile) of coordinate \p D, of
  /// \p Step (a shape member) points each, that reach the box; its body
  /// ends with the block.
  CodeWriter::Block gridStrideLoop(unsigned D, const std::string &Tile,
                                   const std::string &Step) {
    std::string Index = index();
    CodeWriter::Block Body = W.block(
        "for (" + Index + " " + Tile + " = (" + Index + ")blockIdx." + Axis[D] +
        " * " + Step + "; " + Tile + " < " + end(D) + ";\n     " + Tile +
        " += (" + Index + ")gridDim." + Axis[D] + " * " + Step + ") {");
    CodeWriter::Block Skip =
        W.unbraced("if (" + Tile + " + " + Step + " <= " + begin(D) + ")");
    W.line("continue;");
    return Body;
  }

  /// 3D: the loop over the block's chunks of Planes output planes.
  CodeWriter::Block planeLoopHead() {
    return gridStrideLoop(2, Names.name("tileZ"), shape("Planes"));
  }

  /// The loop over the block's tiles of Rows output rows.
  CodeWriter::Block rowLoopHead() {
    return gridStrideLoop(1, Names.name("tileY"), shape("Rows"));
  }

  /// Row tileY + c of the cached rows.
  std::string cachedRow() {
    return Names.name("tileY") + " + " + Names.name("c") +
           plus(Plan.Range[1].First);
  }

  /// The unrolled loop over the C cached rows, with the row of each; its
  /// body ends with the block.
  CodeWriter::Block eachCachedRow() {
    std::string C = Names.name("c");
    W.line("#pragma unroll");
    CodeWriter::Block Body = W.block(loop(C, shape("Cached")) + " {");
    W.line("const " + index() + " " + Names.name("row") + " = " + cachedRow() +
           ";");
    return Body;
  }

  /// Loads the Cached rows of a 2D input into \p Target[c] (3D: loadPlane).
  void loadRows(const std::string &Target) {
    std::string C = Names.name("c"), Row = Names.name("row");
    CodeWriter::Block Rows = eachCachedRow();
    wrappedCopy(Row, 1, "row");
    W.line(Target + "[" + C + "] = " + needed(Row, "") + "\n    ? " +
           Plan.Input.element(
               {inPeriod(Names.name("col"), 0), inPeriod(Row, 1), ""}) +
           "\n    : " + type() + "(0);");
  }

  void body2D() {
    std::string V = Names.name("cache");
    CodeWriter::Block Rows = rowLoopHead();
    W.line(type() + " " + V + "[" + shape("Cached") + "];");
    loadRows(V);
    sums([&](int64_t, const std::string &Row) { return V + "[" + Row + "]"; });
    store("");
  }

  /// 3D: the distinct plane ranges of the read groups; the rows a lane
  /// loads of a plane are those that the ranges it lies in read.
  std::vector<TapRun> planeRanges() const {
    std::vector<TapRun> Ranges;
    for (const ReadGroup &R : Plan.Reads)
      if (!llvm::is_contained(Ranges, R.Z))
        Ranges.push_back(R.Z);
    return Ranges;
  }

  /// 3D: for each plane range, whether the original reads row tileY + c of
  /// this lane's column in a plane of that range, as an array of flags
  /// computed once per tile (\p readsRowK[c]); ranges with the same rows
  /// share one (ConditionOfRange).
  ///
  /// Flags, not bits: an earlier form packed them into one bit mask per
  /// range, and CUDA 13.0's ptxas (V13.0.88, at -O2 and -O3, not -O1)
  /// dropped some of the loads a mask bit selected in the last plane of a
  /// window, so results were wrong (test/regress/systolic/rowmask-3d.cu,
  /// found by test/fuzz/difftest).
  void rowFlags() {
    RowConditions.clear();
    ConditionOfRange.clear();
    std::string C = Names.name("c"), Row = Names.name("row");
    for (const TapRun &Z : planeRanges()) {
      std::vector<std::string> Alts;
      for (size_t G = 0; G != Plan.Reads.size(); ++G) {
        const ReadGroup &R = Plan.Reads[G];
        if (R.Z == Z)
          Alts.push_back("(" + columnFlag(G) + " && " + within(Row, 1, R.Y) +
                         ")");
      }
      std::string E = llvm::join(Alts, " ||\n    ");
      auto Same = llvm::find(RowConditions, E);
      ConditionOfRange.push_back(Same - RowConditions.begin());
      if (Same == RowConditions.end())
        RowConditions.push_back(E);
    }
    std::vector<std::string> Decls;
    for (size_t K = 0; K != RowConditions.size(); ++K)
      Decls.push_back(rowFlag(K) + "[" + shape("Cached") + "]");
    W.comment(rowFlag(0) + "[" + C + "], ...: whether the original reads row " +
              cachedRow() + " of this");
    W.comment("column in the planes of a range of z offsets.");
    W.line("bool " + llvm::join(Decls, ", ") + ";");
    CodeWriter::Block Rows = eachCachedRow();
    for (size_t K = 0; K != RowConditions.size(); ++K)
      W.line(rowFlag(K) + "[" + C + "] = " + RowConditions[K] + ";");
  }

  std::string rowFlag(size_t K) {
    return Names.name("readsRow" + std::to_string(K));
  }

  /// 3D: the statements that load the rows of plane \p PlaneExpr the
  /// original reads into \p Target[c] (to be put in a block).
  void loadPlane(const std::string &Target, const std::string &PlaneExpr) {
    std::vector<TapRun> Ranges = planeRanges();
    std::string C = Names.name("c"), Row = Names.name("row");
    std::string Plane = Names.name("plane");
    std::vector<std::string> InRange, Reads;
    for (size_t K = 0; K != Ranges.size(); ++K) {
      std::string Flag = Names.name("inPlanes" + std::to_string(K));
      InRange.push_back(Flag + " = " + within(Plane, 2, Ranges[K]));
      Reads.push_back("(" + Flag + " && " + rowFlag(ConditionOfRange[K]) + "[" +
                      C + "])");
    }
    std::string ReadsHere = Names.name("reads");
    W.line("const " + index() + " " + Plane + " = " + PlaneExpr + ";");
    W.comment("Which ranges of z offsets read this plane.");
    W.line("const bool " + llvm::join(InRange, ",\n    ") + ";");
    CodeWriter::Block Rows = eachCachedRow();
    W.line("const bool " + ReadsHere + " =\n    " +
           llvm::join(Reads, " ||\n    ") + ";");
    W.line(Target + "[" + C + "] = " + ReadsHere + " ? " +
           Plan.Input.element({Names.name("col"), Row, Plane}) + " : " +
           type() + "(0);");
  }

  /// loadPlane() in a block of its own, which keeps its locals apart.
  void loadPlaneInBlock(const std::string &Target,
                        const std::string &PlaneExpr) {
    CodeWriter::Block Scope = W.block("{");
    loadPlane(Target, PlaneExpr);
  }

  /// 3D (section 4.8 replaced by streaming, docs/systolic.md): each warp
  /// walks Planes output planes along z with a window of the Window planes
  /// the taps reach in registers, plus the next plane, loaded one step
  /// ahead so that its loads overlap this step's arithmetic.
  void body3D() {
    std::string Window = Names.name("window"), Z = Names.name("z");
    std::string K = Names.name("w");
    std::string Next = Names.name("next"), TileZ = Names.name("tileZ");
    std::string C = Names.name("c");
    std::string Slot = Window + "[" + K + "]";
    CodeWriter::Block Rows = rowLoopHead();
    rowFlags();
    CodeWriter::Block Planes = planeLoopHead();
    W.comment(Slot + " holds plane z" + plus(Plan.Range[2].First) + " + " + K +
              " for output plane z; " + Next + " the");
    W.comment("plane after it, loaded one step early.");
    W.line(type() + " " + Window + "[" + shape("Window") + "][" +
           shape("Cached") + "], " + Next + "[" + shape("Cached") + "];");
    W.line("#pragma unroll");
    {
      CodeWriter::Block Fill = W.block("for (int " + K + " = 1; " + K + " < " +
                                       shape("Window") + "; ++" + K + ") {");
      loadPlane(Slot, TileZ + " + " + K + " - 1" + plus(Plan.Range[2].First));
    }
    loadPlaneInBlock(Next, TileZ + plus(Plan.Range[2].Last));
    CodeWriter::Block Steps =
        W.block("for (" + index() + " " + Z + " = " + TileZ + "; " + Z + " < " +
                TileZ + " + " + shape("Planes") + " && " + Z + " < " + end(2) +
                "; ++" + Z + ") {");
    W.comment("Rotate the window, take in the next plane and start loading "
              "the one after.");
    W.line("#pragma unroll");
    {
      CodeWriter::Block Slots = W.unbraced(loop(K, shape("Window")));
      W.line("#pragma unroll");
      CodeWriter::Block Cached = W.unbraced(loop(C, shape("Cached")));
      W.line(Slot + "[" + C + "] = " + K + " + 1 < " + shape("Window") + " ? " +
             Window + "[" + K + " + 1][" + C + "] : " + Next + "[" + C + "];");
    }
    loadPlaneInBlock(Next, Z + " + 1" + plus(Plan.Range[2].Last));
    sums([&](int64_t DZ, const std::string &Row) {
      return Window + "[" + std::to_string(DZ - Plan.Range[2].First) + "][" +
             Row + "]";
    });
    store(Z);
  }

  /// 3D exchange form: all warps of a block share one column tile; warp w
  /// holds plane tileZ + w of the z window's first offset.
  void exchangeTile() {
    W.line("const int " + Names.name("lane") + " = threadIdx.x % 32, " +
           Names.name("warp") + " = threadIdx.x / 32;");
    W.line("const " + index() + " " + Names.name("tileX") + " = (" + index() +
           ")blockIdx.x * " + shape("Columns") + ";");
    leaveIfOutside("block");
    laneColumn();
  }

  /// Whether some tap has z offset \p DZ.
  bool hasTapsAt(int64_t DZ) const {
    return llvm::any_of(
        Plan.Taps, [&](const SystolicTap &T) { return T.Offset[2] == DZ; });
  }

  /// 3D in the paper's form (section 4.9): warp w loads the C rows of plane
  /// tileZ + w + dz_min, sums its taps one z offset at a time (shifting
  /// partial sums across lanes as in 2D), and leaves each sum in shared
  /// memory; after a barrier, warp o adds the sums that planes tileZ + o +
  /// dz left for output plane tileZ + o, and stores. Every loop bound is
  /// the same for the whole block, so all threads reach both barriers.
  void body3DExchange() {
    std::string Exchange = Names.name("exchange"), Warp = Names.name("warp");
    std::string TileZ = Names.name("tileZ"), Cache = Names.name("cache");
    std::string Sum = Names.name("sum"), I = Names.name("i");
    std::string Lane = Names.name("lane"), Z = Names.name("z");
    W.comment(Exchange + "[k][w][i][lane]: warp w's partial sum of row i for "
                         "the taps at z");
    W.comment("offset k" + plus(Plan.Range[2].First) +
              ", which belong to output plane tileZ + w - k.");
    W.line("__shared__ " + type() + " " + Exchange + "[" + shape("Window") +
           "][" + shape("Warps") + "][" + shape("Rows") + "][32];");
    CodeWriter::Block Rows = rowLoopHead();
    rowFlags();
    CodeWriter::Block Planes = planeLoopHead();
    W.line(type() + " " + Cache + "[" + shape("Cached") + "];");
    loadPlaneInBlock(Cache, TileZ + " + " + Warp + plus(Plan.Range[2].First));
    for (int64_t DZ = Plan.Range[2].First; DZ <= Plan.Range[2].Last; ++DZ) {
      if (!hasTapsAt(DZ))
        continue;
      CodeWriter::Block Taps =
          W.block("{ // The taps at z offset " + Twine(DZ > 0 ? "+" : "") +
                  Twine(DZ) + ".");
      sums([&](int64_t,
               const std::string &Row) { return Cache + "[" + Row + "]"; },
           DZ);
      eachRow(Exchange + "[" + Twine(DZ - Plan.Range[2].First) + "][" + Warp +
              "][" + I + "][" + Lane + "] = " + Sum + "[" + I + "];");
    }
    // Offsets with no tap leave nothing to add.
    std::vector<std::string> Terms;
    for (int64_t DZ = Plan.Range[2].First; DZ <= Plan.Range[2].Last; ++DZ)
      if (hasTapsAt(DZ))
        Terms.push_back(Exchange + "[" +
                        std::to_string(DZ - Plan.Range[2].First) + "][" + Warp +
                        " + " + std::to_string(DZ - Plan.Range[2].First) +
                        "][" + I + "][" + Lane + "]");
    W.line("__syncthreads();");
    W.line("const " + index() + " " + Z + " = " + TileZ + " + " + Warp + ";");
    {
      CodeWriter::Block Output =
          W.block("if (" + Warp + " < " + shape("Planes") + " && " + Z + " < " +
                  end(2) + ") {");
      W.line(type() + " " + Sum + "[" + shape("Rows") + "];");
      eachRow(Sum + "[" + I + "] = " + llvm::join(Terms, " +\n    ") + ";");
      store(Z);
    }
    W.line("__syncthreads(); // Before the next tile overwrites the sums.");
  }

  //===-- The aligned form (chooseVectorShape) ----------------------------===//

  /// The vector form's kernel (aligned rows or wide lanes) and shape.
  std::string vectorKernelName() const {
    return Aligned->WideLanes ? systolicWideKernelName(Plan)
                              : systolicAlignedKernelName(Plan);
  }
  std::string alignedShapeName() const { return vectorKernelName() + "_shape"; }
  /// The lane's columns as a vector type: 16 or 8 bytes.
  std::string vectorType() const {
    return (Plan.IsDouble ? "double" : "float") +
           std::to_string(Aligned->ColumnsPerLane);
  }
  unsigned left() const { return Plan.Geometry.Left; }
  unsigned right() const { return Plan.Geometry.Right; }

  /// The end of a vector form kernel's comment: why its loads are exact.
  void vectorLoadNote() {
    W.comment("A vector is loaded when the original reads one of its "
              "elements: aligned,");
    W.comment("it lies in the same 16-byte block as that element, so it "
              "cannot fault,");
    W.comment("and its other elements feed no point that is written. It "
              "writes exactly");
    W.comment("the points " + spec(Plan.Kernel->getNameAsString()) +
              " writes, with the same weights (summed in another order).");
  }

  /// A vector form's shape struct up to its Rows and Cached members; the
  /// struct ends with the block.
  CodeWriter::Block vectorShapeOpening() {
    CodeWriter::Block Struct =
        shapeOpening(vectorKernelName(), alignedShapeName());
    member("using Vector = " + vectorType() + ";",
           "PerLane elements: one load or store");
    member("static constexpr int PerLane = " + Twine(Aligned->ColumnsPerLane) +
               ";",
           "consecutive columns per lane (V)");
    rowsAndCached(*Aligned);
    return Struct;
  }

  void alignedShapeStruct() {
    CodeWriter::Block Struct = vectorShapeOpening();
    member("static constexpr int Left = " + Twine(left()) +
               ", Right = " + Twine(right()) + ";",
           "columns the taps reach beyond a lane's");
    member("static constexpr int Span = Left + PerLane + Right;",
           "columns of a cached row");
    member("static constexpr int Columns = 32 * PerLane;",
           "output columns per warp");
    blockAndResidency(*Aligned);
  }

  /// The first of the lane's PerLane columns, \p First, and the column
  /// flags.
  void laneColumns(const std::string &First) {
    std::string Col = Names.name("col");
    W.line("const " + index() + " " + Col + " = " + First +
           "; // The first of this lane's columns.");
    columnFlags("one of this lane's columns", [&](const TapRun &R) {
      return "(" + Col + " < " + end(0) + plus(R.Last) + " && " + Col + " + " +
             shape("PerLane") + " > " + begin(0) + plus(R.First) + ")";
    });
  }

  void alignedKernel() {
    W.comment(spec(systolicAlignedKernelName(Plan)) + ": " +
              spec(Plan.Kernel->getNameAsString()) +
              " rewritten by cuda-rewrite as a register cache with aligned "
              "rows");
    W.comment("(SSAM's, with the lanes of a warp on consecutive columns). " +
              Summary + ".");
    W.comment(
        "Each lane keeps PerLane consecutive columns of Cached rows of '" +
        Plan.Input.Array->getNameAsString() + "' in");
    W.comment("registers, one Vector load per row, so a warp's rows start on a "
              "cache");
    W.comment("line; the columns its taps reach left and right of them come "
              "from the");
    W.comment("neighbour lanes (__shfl_up/down_sync), or are loaded by the "
              "warp's edge");
    W.comment("lanes.");
    vectorLoadNote();
    CodeWriter::Block Body =
        kernelHead(systolicAlignedKernelName(Plan), alignedShapeName());
    stageFilter();
    box();
    warpTile();
    laneColumns(Names.name("tileX") + " + " + shape("PerLane") + " * " +
                Names.name("lane"));
    std::string Col = Names.name("col");
    W.comment("Whether the original writes all of them (one vector store).");
    W.line("const bool " + Names.name("writesAll") + " = " + Col +
           " >= " + begin(0) + " && " + Col + " + " + shape("PerLane") +
           " <= " + end(0) + ";");
    CodeWriter::Block Rows = rowLoopHead();
    alignedLoads();
    alignedHalo();
    alignedSums();
    alignedStore();
  }

  //===-- The wide-lane form (chooseVectorShape) --------------------------===//

  void wideShapeStruct() {
    const SystolicShape &A = *Aligned;
    CodeWriter::Block Struct = vectorShapeOpening();
    member("static constexpr int LeftPad = " +
               Twine(wideLeftPad(Plan.Geometry, A.ColumnsPerLane)) + ";",
           "columns loaded left of a warp's outputs (whole vectors)");
    member("static constexpr int RightPad = " +
               Twine(wideRightPad(Plan.Geometry, A.ColumnsPerLane)) + ";",
           "columns loaded right of them (whole vectors)");
    member("static constexpr int Columns = 32 * PerLane - LeftPad - RightPad;",
           "output columns per warp");
    blockAndResidency(A);
  }

  void wideKernel() {
    W.comment(spec(vectorKernelName()) + ": " +
              spec(Plan.Kernel->getNameAsString()) +
              " rewritten by cuda-rewrite as a software systolic array with");
    W.comment("wide lanes (SSAM's, with PerLane columns per lane). " + Summary +
              ".");
    W.comment(
        "Each lane keeps PerLane consecutive columns of Cached rows of '" +
        Plan.Input.Array->getNameAsString() + "' in");
    W.comment("registers, one Vector load per row. For each filter column, a "
              "lane adds");
    W.comment("that column's taps to the partial sums of its columns, then the "
              "sums move");
    W.comment("one column on: within the lane by register, from the lane below "
              "by");
    W.comment("__shfl_up_sync. After the last filter column they move on to "
              "whole");
    W.comment("vectors: column c ends with the point c - RightPad.");
    vectorLoadNote();
    CodeWriter::Block Body = kernelHead(vectorKernelName(), alignedShapeName());
    stageFilter(transposedFilter());
    box();
    warpTile();
    laneColumns(Names.name("tileX") + " - " + shape("LeftPad") + " + " +
                shape("PerLane") + " * " + Names.name("lane"));
    CodeWriter::Block Rows = rowLoopHead();
    alignedLoads(/*Wide=*/true);
    std::string Cache = Names.name("cache"), J = Names.name("j");
    sums(
        [&](int64_t, const std::string &Row) {
          return Cache + "[" + Row + "][" + J + "]";
        },
        std::nullopt, /*Wide=*/true);
    wideStore();
  }

  /// Stores what the original writes of the warp's Columns output columns:
  /// a lane's PerLane points as one vector where it writes them all.
  void wideStore() {
    std::string OutX = Names.name("outX"), J = Names.name("j");
    std::string TileX = Names.name("tileX");
    std::string Writes = Names.name("writes");
    std::string WritesAll = Names.name("writesAll");
    std::string Point = OutX + " + " + J;
    W.comment("The lane's sums are the points " + OutX + " .. " + OutX +
              " + PerLane - 1.");
    W.line("const " + index() + " " + OutX + " = " + Names.name("col") + " - " +
           shape("RightPad") + ";");
    {
      CodeWriter::Block Lambda =
          W.block("auto " + Writes + " = [&](int " + J +
                      ") { // whether this lane writes point " + Point,
                  "};");
      W.line("return " + Point + " >= " + TileX + " && " + Point + " < " +
             TileX + " + " + shape("Columns") + " &&\n       " + Point +
             " >= " + begin(0) + " && " + Point + " < " + end(0) + ";");
    }
    W.line("const bool " + WritesAll + " = " + Writes + "(0) && " + Writes +
           "(" + shape("PerLane") + " - 1);");
    storeRows(WritesAll, OutX, Writes + "(" + J + ")");
  }

  /// For each of the P rows the original writes, the lane's PerLane points
  /// from column \p First: as one vector where \p WritesAll, else each
  /// point where \p WritesPoint (of j) holds.
  void storeRows(const std::string &WritesAll, const std::string &First,
                 const std::string &WritesPoint) {
    std::string I = Names.name("i"), J = Names.name("j");
    std::string OutY = Names.name("outY");
    std::string Sum = Names.name("sum"), Vector = shape("Vector");
    std::vector<std::string> Parts;
    for (unsigned K = 0; K != Aligned->ColumnsPerLane; ++K)
      Parts.push_back(Sum + "[" + I + "][" + std::to_string(K) + "]");
    W.line("#pragma unroll");
    CodeWriter::Block Rows = W.block(loop(I, shape("Rows")) + " {");
    W.line("const " + index() + " " + OutY + " = " + Names.name("tileY") +
           " + " + I + ";");
    {
      CodeWriter::Block Skip =
          W.unbraced("if (" + OutY + " < " + begin(1) + " || " + OutY +
                     " >= " + end(1) + ")");
      W.line("continue;");
    }
    CodeWriter::Block All = W.block("if (" + WritesAll + ") {");
    W.line("*reinterpret_cast<" + Vector + " *>(&" +
           Plan.Output.element({First, OutY, ""}) + ") =\n    " + Vector + "{" +
           llvm::join(Parts, ", ") + "};");
    All.continueWith("} else {");
    W.line("#pragma unroll");
    CodeWriter::Block Each = W.unbraced(loop(J, shape("PerLane")));
    CodeWriter::Block Written = W.unbraced("if (" + WritesPoint + ")");
    W.line(Plan.Output.element({First + " + " + J, OutY, ""}) + " = " + Sum +
           "[" + I + "][" + J + "];");
  }

  /// Each cached row's PerLane columns, one vector load.
  void alignedLoads(bool Wide = false) {
    static const char *const Component = "xyzw";
    std::string V = Names.name("cache"), C = Names.name("c");
    std::string Row = Names.name("row");
    std::string Vec = Names.name("v"), Col = Names.name("col");
    std::string Vector = shape("Vector");
    std::string Of = "column " + Col + " + k of row " + Names.name("tileY") +
                     " + c" + plus(Plan.Range[1].First);
    if (Wide) {
      W.comment(V + "[c][k]: " + Of + ".");
      W.line(type() + " " + V + "[" + shape("Cached") + "][" +
             shape("PerLane") + "];");
    } else {
      W.comment(V + "[c][Left + k]: " + Of + "; the Left columns");
      W.comment("before and the Right after them are the taps' reach.");
      W.line(type() + " " + V + "[" + shape("Cached") + "][" + shape("Span") +
             "];");
    }
    CodeWriter::Block Rows = eachCachedRow();
    W.line(Vector + " " + Vec + " = {};");
    {
      CodeWriter::Block Load = W.unbraced("if (" + needed(Row, "") + ")");
      W.line(Vec + " = *reinterpret_cast<const " + Vector + " *>(&" +
             Plan.Input.element({Col, Row, ""}) + ");");
    }
    std::string Slot = Wide ? "" : shape("Left") + " + ";
    for (unsigned K = 0; K != Aligned->ColumnsPerLane; ++K)
      W.line(V + "[" + C + "][" + Slot + Twine(K) + "] = " + Vec + "." +
             Twine(Component[K]) + ";");
  }

  /// Whether the original reads the input at (\p Col, \p Row) (2D); the
  /// alternatives after the first go on lines of their own, \p Continued
  /// in from the statement's first line.
  std::string readsAt(const std::string &Col, const std::string &Row,
                      const std::string &Continued) {
    std::vector<std::string> Alts;
    for (const ReadGroup &R : Plan.Reads) {
      std::vector<std::string> Runs;
      for (const TapRun &X : R.XRuns)
        Runs.push_back("(" + within(Col, 0, X) + ")");
      std::string X = llvm::join(Runs, " || ");
      if (Runs.size() > 1)
        X = "(" + X + ")";
      Alts.push_back("(" + X + " && " + within(Row, 1, R.Y) + ")");
    }
    return llvm::join(Alts, " ||\n" + Continued);
  }

  /// The cached rows in which column offset \p Column (relative to a lane's
  /// first) feeds a sum: as a condition on the row index, "" when all do.
  std::string rowsUsingColumn(int64_t Column) {
    unsigned V = Aligned->ColumnsPerLane, P = Aligned->RowsPerThread;
    unsigned Cached = P + Plan.rows() - 1;
    std::vector<bool> Used(Cached, false);
    for (const SystolicTap &T : Plan.Taps) {
      // Point j of the lane reads column j + dx.
      if (Column - T.Offset[0] < 0 || Column - T.Offset[0] >= int64_t(V))
        continue;
      unsigned First = unsigned(T.Offset[1] - Plan.Range[1].First);
      for (unsigned I = 0; I != P; ++I)
        Used[First + I] = true;
    }
    std::vector<std::string> Ranges;
    std::string C = Names.name("c");
    for (unsigned I = 0; I != Cached;) {
      if (!Used[I]) {
        ++I;
        continue;
      }
      unsigned J = I;
      while (J != Cached && Used[J])
        ++J;
      if (I == 0 && J == Cached)
        return "";
      std::string From = C + " >= " + std::to_string(I);
      std::string To = C + " < " + std::to_string(J);
      Ranges.push_back(I == 0        ? To
                       : J == Cached ? From
                                     : "(" + From + " && " + To + ")");
      I = J;
    }
    if (Ranges.size() == 1 && Ranges[0].front() == '(')
      return Ranges[0].substr(1, Ranges[0].size() - 2);
    return Ranges.empty() ? "false" : llvm::join(Ranges, " || ");
  }

  /// A column beyond the lane's, Offset from its first, in the rows When
  /// (all for ""): slot Slot of a cached row, taken from slot Source of the
  /// lane Shift away (below it when Up).
  struct HaloColumn {
    int64_t Offset;
    unsigned Slot, Shift, Source;
    bool Up;
    std::string When;
  };

  /// The columns beyond the lane's that some row uses: from the lane Shift
  /// away (up for the left ones), or loaded by the lanes that have none
  /// there.
  std::vector<HaloColumn> haloColumns() {
    unsigned V = Aligned->ColumnsPerLane;
    std::vector<HaloColumn> Columns;
    auto Add = [&](int64_t Offset, unsigned Slot, unsigned Shift,
                   unsigned Source, bool Up) {
      std::string When = rowsUsingColumn(Offset);
      if (When != "false")
        Columns.push_back({Offset, Slot, Shift, Source, Up, When});
    };
    for (unsigned K = 1; K <= left(); ++K) {
      unsigned Shift = (K + V - 1) / V;
      Add(-int64_t(K), left() - K, Shift, Shift * V - K, true);
    }
    for (unsigned K = 0; K != right(); ++K)
      Add(int64_t(V + K), left() + V + K, K / V + 1, K % V, false);
    return Columns;
  }

  /// The columns beyond the lane's, in the rows that use them.
  void alignedHalo() {
    std::vector<HaloColumn> Columns = haloColumns();
    if (Columns.empty())
      return;
    W.comment("The columns beyond the lane's, in the rows that use them.");
    CodeWriter::Block Rows = eachCachedRow();
    for (const HaloColumn &H : Columns)
      haloColumn(H);
  }

  /// Column \p H of the cached row: from the lane that holds it, else
  /// loaded where the original reads it.
  void haloColumn(const HaloColumn &H) {
    std::string Cache = Names.name("cache"), C = Names.name("c");
    std::string Row = Names.name("row"), Lane = Names.name("lane");
    std::string From = Names.name("fromLane"), Col = Names.name("col");
    std::string At = Col + plus(H.Offset);
    unsigned Edge = H.Up ? H.Shift : 32 - H.Shift;
    W.comment("Column " + At + ": lane " + (H.Up ? "-" : "+") + " " +
              Twine(H.Shift) + "'s; lanes " + (H.Up ? "below " : "from ") +
              Twine(Edge) + " load it.");
    CodeWriter::Block Body =
        W.block(H.When.empty() ? "{" : "if (" + H.When + ") {");
    W.line("const " + type() + " " + From + " = __shfl_" +
           (H.Up ? "up" : "down") + "_sync(0xffffffffu, " + Cache + "[" + C +
           "][" + Twine(H.Source + left()) + "], " + Twine(H.Shift) + ");");
    std::string Load = readsAt(At, Row, "        ") + "\n        ? " +
                       Plan.Input.element({"(" + At + ")", Row, ""}) + " : " +
                       type() + "(0)";
    W.line(Cache + "[" + C + "][" + Twine(H.Slot) + "] = " + Lane +
           (H.Up ? " >= " : " < ") + Twine(Edge) + " ? " + From +
           "\n    : " + Load + ";");
  }

  /// `for (i) for (j) Statement`, unrolled: each of the P x PerLane points.
  void eachPoint(const Twine &Statement) {
    W.line("#pragma unroll");
    CodeWriter::Block Rows = W.unbraced(loop(Names.name("i"), shape("Rows")));
    W.line("#pragma unroll");
    CodeWriter::Block Columns =
        W.unbraced(loop(Names.name("j"), shape("PerLane")));
    W.line(Statement);
  }

  /// The P x PerLane sums, tap by tap (each weight read once per thread).
  void alignedSums() {
    std::string Cache = Names.name("cache"), I = Names.name("i");
    std::string J = Names.name("j");
    declareSums(/*Wide=*/true);
    if (Plan.Loop) {
      std::string M = Names.name("m"), N = Names.name("n");
      W.line("#pragma unroll");
      CodeWriter::Block Columns = W.unbraced(
          loop(M, Twine(Plan.columns())) + " // Columns x" +
          plus(Plan.Range[0].First) + " .. x" + plus(Plan.Range[0].Last) + ".");
      filterColumn(loopWeight(),
                   Cache + "[" + I + " + " + N + "][" + J + " + " + M +
                       plus(int64_t(left()) + Plan.Range[0].First) + "]",
                   /*Wide=*/true);
      return;
    }
    for (const SystolicTap &T : Plan.Taps)
      fmaEach(weight(T),
              Cache + "[" + I + plus(T.Offset[1] - Plan.Range[1].First) + "][" +
                  J + plus(int64_t(left()) + T.Offset[0]) + "]",
              /*Wide=*/true);
  }

  void alignedStore() {
    std::string Col = Names.name("col"), J = Names.name("j");
    storeRows(Names.name("writesAll"), Col,
              Col + " + " + J + " >= " + begin(0) + " && " + Col + " + " + J +
                  " < " + end(0));
  }

  //===-- The launcher ----------------------------------------------------===//

  /// `static void K_systolic_launch(grid, block, sharedBytes, stream, the
  /// kernel's parameters)`.
  std::string launcherHead() {
    std::vector<std::string> Params = {"dim3 " + Names.name("grid"),
                                       "dim3 " + Names.name("block"),
                                       "size_t " + Names.name("sharedBytes"),
                                       "cudaStream_t " + Names.name("stream")};
    std::vector<std::string> Texts = parameterTexts();
    Params.insert(Params.end(), Texts.begin(), Texts.end());
    // An explicit specialization takes the primary template's linkage.
    return (isSpecialization() ? "template <>\nvoid " : "static void ") +
           spec(systolicLauncherName(Plan)) + "(" + llvm::join(Params, ", ") +
           ")";
  }

  void launcher() {
    std::string Grid = Names.name("grid"), BlockDim = Names.name("block");
    std::string Shared = Names.name("sharedBytes");
    std::string Stream = Names.name("stream");
    std::vector<std::string> Args;
    for (const ParmVarDecl *P : Plan.Kernel->parameters())
      Args.push_back(P->getNameAsString());
    std::vector<std::string> Extents = extentNames();
    std::string Name = spec(Plan.Kernel->getNameAsString());
    W.line("/// Launches " + spec(kernelName()) + " over the points that");
    W.line("/// " + Name + "<<<" + Grid + ", " + BlockDim + ", " + Shared +
           ", " + Stream + ">>>(...) computes (" + Name + " uses no dynamic");
    W.line("/// shared memory, so " + Shared + " is not needed).");
    CodeWriter::Block Body = W.block(launcherHead() + " {");
    W.line("using " + Alias + " = " + spec(shapeName()) + ";");
    W.line("(void)" + Shared + ";");
    if (Plan.Split)
      splitExtents(Grid, BlockDim);
    else
      for (unsigned D = 0; D != Plan.Rank; ++D)
        W.line("const long long " + Extents[D] + " = (long long)" + Grid + "." +
               Axis[D] + " * " + BlockDim + "." + Axis[D] + ";");
    fallBack(Name + "<<<" + Grid + ", " + BlockDim + ", " + Shared + ", " +
             Stream + ">>>(" + llvm::join(Args, ", ") + ");");
    std::vector<std::string> CallArgs = Args;
    CallArgs.insert(CallArgs.end(), Extents.begin(), Extents.end());
    if (Aligned)
      vectorLaunch(CallArgs, Stream);
    // The exchange form's warps share one column tile.
    launch(spec(kernelName()), Alias, /*OneTile=*/Shape.ExchangePlanes,
           CallArgs, Stream);
  }

  /// The extents of a kernel that splits its thread number L into x = L %
  /// Divisor and y = L / Divisor: the points are L below the launch's
  /// threads and the guard's limits; whole rows of them are a box
  /// (fallBack runs the original where they are not).
  void splitExtents(const std::string &Grid, const std::string &BlockDim) {
    std::vector<std::string> Extents = extentNames();
    std::string Points = Names.name("points");
    std::string Divisor = "(long long)(" + Plan.Split->Divisor + ")";
    W.comment(spec(Plan.Kernel->getNameAsString()) +
              " numbers its threads along x and splits each number L into "
              "x = L % (" +
              Plan.Split->Divisor + ") and y = L / (" + Plan.Split->Divisor +
              "): its points are the L below the launch's threads" +
              (Plan.Split->Limits.empty() ? "" : " and its guard's limits") +
              ".");
    W.line("long long " + Points + " = (long long)" + Grid + ".x * " +
           BlockDim + ".x;");
    for (const std::string &Limit : Plan.Split->Limits) {
      std::string Value = "(long long)(" + Limit + ")";
      CodeWriter::Block Cut = W.unbraced("if (" + Value + " < " + Points + ")");
      W.line(Points + " = " + Value + ";");
    }
    W.line("const long long " + Extents[0] + " = " + Divisor + ";");
    W.line("const long long " + Extents[1] + " = " + Extents[0] + " > 0 ? " +
           Points + " / " + Extents[0] + " : 0;");
  }

  /// Launches the systolic kernel cannot cover exactly run the original
  /// (\p Original, the launch as it was).
  void fallBack(const std::string &Original) {
    std::string BlockDim = Names.name("block");
    std::string Name = spec(Plan.Kernel->getNameAsString());
    std::vector<std::string> Fallback, Why;
    // A coordinate that steps by a constant per block covers the launch's
    // threads without gaps or overlaps only when the block is that wide.
    for (unsigned D = 0; D != (Plan.Split ? 1 : Plan.Rank); ++D)
      if (Plan.BlockFactor[D] != std::string("blockDim.") + Axis[D])
        Fallback.push_back(BlockDim + "." + Axis[D] +
                           " != " + Plan.BlockFactor[D]);
    if (Fallback.size())
      Why.push_back("blocks of another width than " + Name + " steps by");
    bool Periodic = false;
    for (unsigned D = 0; D != Plan.Rank; ++D) {
      if (Plan.Periods[D].empty())
        continue;
      Periodic = true;
      std::string Period = "(long long)(" + Plan.Periods[D] + ")";
      int64_t Reach = std::max(std::llabs(Plan.Range[D].First),
                               std::llabs(Plan.Range[D].Last));
      Fallback.push_back(Period + " < " + std::to_string(Reach));
      if (!Plan.PeriodBoundsPoints[D])
        Fallback.push_back(extentNames()[D] + " > " + Period);
    }
    if (Periodic)
      Why.push_back("a period shorter than the stencil's reach, or points "
                    "past it (a wrapped read is an offset within one "
                    "period)");
    if (Plan.Split) {
      std::string Points = Names.name("points");
      std::string ExtentX = extentNames()[0];
      Fallback.push_back(ExtentX + " <= 0 || " + Points + " <= 0 || " + Points +
                         " % " + ExtentX + " != 0");
      Why.push_back("points that are no whole rows of " + Plan.Split->Divisor);
    }
    if (Plan.Index32) {
      for (const std::string &E : extentNames())
        Fallback.push_back(E + " > (1LL << 30)");
      Why.push_back("extents beyond what int indices reach with headroom "
                    "(this kernel, like " +
                    Name + ", indexes with int)");
    }
    if (Fallback.empty())
      return;
    W.comment("The original runs where this kernel cannot cover the launch "
              "exactly:");
    for (size_t I = 0; I != Why.size(); ++I)
      W.comment("- " + Why[I] + (I + 1 == Why.size() ? "." : ";"));
    CodeWriter::Block Then =
        W.block("if (" + llvm::join(Fallback, " || ") + ") {");
    W.line(Original);
    W.line("return;");
  }

  /// Where the arrays' rows are aligned, launches the vector form.
  void vectorLaunch(const std::vector<std::string> &CallArgs,
                    const std::string &Stream) {
    // Both ends of row 0 and row 1 aligned: every row is.
    std::vector<std::string> Rows;
    for (const ArrayIndexing *A : {&Plan.Input, &Plan.Output})
      for (const char *Row : {"0", "1"})
        Rows.push_back("(size_t)&" + A->element({"0", Row, ""}));
    std::string AlignedShape = Names.name("Aligned");
    W.comment(std::string("The ") +
              (Aligned->WideLanes ? "wide-lane" : "aligned") +
              " kernel moves whole vectors: it runs where every row of");
    W.comment("'" + Plan.Input.Array->getNameAsString() + "' and '" +
              Plan.Output.Array->getNameAsString() +
              "' starts on a vector boundary.");
    W.line("using " + AlignedShape + " = " + spec(alignedShapeName()) + ";");
    CodeWriter::Block Then =
        W.block("if (((" + llvm::join(Rows, " |\n     ") + ") % sizeof(" +
                AlignedShape + "::Vector)) == 0) {");
    launch(spec(vectorKernelName()), AlignedShape, /*OneTile=*/false, CallArgs,
           Stream);
    W.line("return;");
  }

  /// The grid of \p Kernel (shape \p ShapeName; with \p OneTile, all its
  /// warps share one column tile) over the launch's extents, and the
  /// launch. Rows and planes past grid limit 65535 are reached by the
  /// kernel's grid-stride loops.
  void launch(const std::string &Kernel, const std::string &ShapeName,
              bool OneTile, const std::vector<std::string> &CallArgs,
              const std::string &Stream) {
    std::vector<std::string> Extents = extentNames();
    std::string PerBlock = Names.name("perBlock");
    std::string New = Names.name("systolicGrid");
    auto Blocks = [](const std::string &Extent, const std::string &Per,
                     bool Capped) {
      std::string N = "(" + Extent + " + " + Per + " - 1) / " + Per;
      return Capped ? "(unsigned)(" + N + " < 65535 ? " + N + " : 65535)"
                    : "(unsigned)(" + N + ")";
    };
    std::string Continue = ",\n             ";
    W.line("const long long " + PerBlock + " = " +
           (OneTile ? "" : "(long long)" + ShapeName + "::Warps * ") +
           ShapeName + "::Columns;");
    W.line("const dim3 " + New + "(" + Blocks(Extents[0], PerBlock, false) +
           Continue + Blocks(Extents[1], ShapeName + "::Rows", true) +
           (is3D() ? Continue + Blocks(Extents[2], ShapeName + "::Planes", true)
                   : "") +
           ");");
    W.line(Kernel + "<<<" + New + ", " + ShapeName + "::Warps * 32, 0, " +
           Stream + ">>>(" + llvm::join(CallArgs, ", ") + ");");
  }

  const SystolicPlan &Plan;
  const SystolicShape &Shape;
  const std::optional<SystolicShape> &Aligned;
  const std::string &Summary;
  const ASTContext &Ctx;
  /// The names of generated locals, apart from those the kernel uses.
  NameAllocator Names;
  std::string Alias; ///< The local alias of the shape struct in use.
  CodeWriter W;      ///< The code generated so far.
  std::vector<size_t> FlagOfGroup; ///< The column flag each read group uses.
  std::vector<std::string> RowConditions; ///< 3D: see rowFlags.
  std::vector<size_t> ConditionOfRange;   ///< 3D: per plane range.
};

} // namespace

std::vector<std::pair<std::string, std::string>>
systolicPrimaryTemplates(const SystolicPlan &Plan, const SystolicShape &Shape,
                         const std::optional<SystolicShape> &Aligned) {
  return Generator(Plan, Shape, Aligned, "").primaryTemplates();
}

std::string systolicLauncherDeclaration(const SystolicPlan &Plan,
                                        const SystolicShape &Shape) {
  return Generator(Plan, Shape, std::nullopt, "").declaration();
}

std::string generateSystolicCode(const SystolicPlan &Plan,
                                 const SystolicShape &Shape,
                                 const std::optional<SystolicShape> &Aligned,
                                 const std::string &Summary) {
  return Generator(Plan, Shape, Aligned, Summary).run();
}

} // namespace cuda_rewrite
