//===- SystolicCodeGen.cpp - The SSAM kernel and its launcher -------------===//

#include "rewriters/systolic/SystolicCodeGen.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <set>

using namespace clang;
using llvm::formatv;

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

class Generator {
public:
  Generator(const SystolicPlan &Plan, const SystolicShape &Shape,
            const std::optional<SystolicShape> &Aligned,
            const std::string &Summary)
      : Plan(Plan), Shape(Shape), Aligned(Aligned), Summary(Summary),
        Ctx(Plan.Kernel->getASTContext()) {
    collectTakenNames();
  }

  std::string run() {
    std::string Out;
    Out += shapeStruct();
    Out += "\n" + kernel();
    if (Aligned && Aligned->WideLanes) {
      Out += "\n" + wideShapeStruct();
      Out += "\n" + wideKernel();
    } else if (Aligned) {
      Out += "\n" + alignedShapeStruct();
      Out += "\n" + alignedKernel();
    }
    Out += "\n" + launcher();
    // "@S" stands for the alias of the shape struct in generated code.
    std::string Alias = local("Shape");
    for (size_t At; (At = Out.find("@S")) != std::string::npos;)
      Out.replace(At, 2, Alias);
    return Out;
  }

private:
  //===-- Names -----------------------------------------------------------===//

  /// Identifiers the generated code must not shadow: the parameters and
  /// every name in the texts taken from the kernel.
  void collectTakenNames() {
    for (const ParmVarDecl *P : Plan.Kernel->parameters())
      Taken.insert(P->getNameAsString());
    auto Scan = [this](llvm::StringRef Text) {
      for (size_t I = 0; I < Text.size();) {
        if (llvm::isAlpha(Text[I]) || Text[I] == '_' || Text[I] == '$') {
          size_t J = I + 1;
          while (J < Text.size() && (llvm::isAlnum(Text[J]) || Text[J] == '_'))
            ++J;
          if (Text[I] != '$') // StagedFilterToken is ours.
            Taken.insert(Text.substr(I, J - I).str());
          I = J;
        } else {
          ++I;
        }
      }
    };
    for (const SystolicTap &T : Plan.Taps)
      Scan(T.Weight);
    for (const BoxBound &B : Plan.Bounds)
      Scan(B.Value);
    for (const ArrayIndexing *I : {&Plan.Output, &Plan.Input}) {
      for (const auto &S : I->Strides)
        for (const std::string &T : S)
          Scan(T);
      for (const std::string &R : I->Rest)
        Scan(R);
    }
  }

  /// \p Name, or Name_ (repeatedly) when the kernel already uses it.
  std::string local(llvm::StringRef Name) {
    auto Known = Locals.find(Name.str());
    if (Known != Locals.end())
      return Known->second;
    std::string N = Name.str();
    while (Taken.count(N))
      N += "_";
    Taken.insert(N);
    return Locals[Name.str()] = N;
  }

  std::string kernelName() const { return systolicKernelName(Plan); }
  std::string shapeName() const { return kernelName() + "_shape"; }
  std::string type() const { return Plan.ElementType; }
  int64_t halo() const { return Plan.columns() - 1; }
  bool is3D() const { return Plan.Rank == 3; }
  /// The type of coordinates and indices in the kernel.
  const char *index() const { return Plan.Index32 ? "int" : "long long"; }

  /// The original parameters as written, and the names to forward.
  std::vector<std::string> parameterTexts() const {
    std::vector<std::string> Texts;
    const SourceManager &SM = Ctx.getSourceManager();
    for (const ParmVarDecl *P : Plan.Kernel->parameters())
      Texts.push_back(Lexer::getSourceText(
                          CharSourceRange::getTokenRange(P->getSourceRange()),
                          SM, Ctx.getLangOpts())
                          .str());
    return Texts;
  }
  std::vector<std::string> extentNames() {
    std::vector<std::string> Names;
    for (unsigned D = 0; D != Plan.Rank; ++D)
      Names.push_back(local(std::string("extent") + AxisUpper[D]));
    return Names;
  }

  //===-- The shape -------------------------------------------------------===//

  /// "struct <Name> {" with its comment, for the shape of \p Kernel.
  static std::string shapeOpening(const std::string &Kernel,
                                  const std::string &Name) {
    return formatv("/// The shape cuda-rewrite chose for {0} "
                   "(--remarks says why).\n"
                   "struct {1} {{\n",
                   Kernel, Name);
  }

  /// The Rows (P) and Cached (C) members of a shape struct.
  std::string rowsAndCached(const SystolicShape &Chosen) const {
    return formatv("  static constexpr int Rows = {0};   // P: output rows per "
                   "thread\n"
                   "  static constexpr int Cached = {1}; // C = P + N - 1: "
                   "rows each thread keeps in registers\n",
                   Chosen.RowsPerThread,
                   Chosen.RowsPerThread + Plan.rows() - 1);
  }

  /// The Warps and MinBlocks members of a vector form's shape struct.
  static std::string blockAndResidency(const SystolicShape &Chosen) {
    return formatv("  static constexpr int Warps = {0};   // per block\n"
                   "  static constexpr int MinBlocks = {1}; // resident per "
                   "SM (~{2} registers per thread)\n",
                   Chosen.WarpsPerBlock, Chosen.MinBlocksPerSm,
                   Chosen.EstimatedRegisters);
  }

  std::string shapeStruct() {
    std::string S = shapeOpening(kernelName(), shapeName());
    S += rowsAndCached(Shape);
    S += formatv("  static constexpr int Halo = {0};   // M - 1: lanes that "
                 "only feed their neighbours\n",
                 halo());
    S += formatv("  static constexpr int Columns = 32 - Halo; // output "
                 "columns per warp\n");
    S += formatv("  static constexpr int Warps = {0};  // per block\n",
                 Shape.WarpsPerBlock);
    S += formatv("  static constexpr int MinBlocks = {0}; // resident per "
                 "SM (~{1} registers per thread)\n",
                 Shape.MinBlocksPerSm, Shape.EstimatedRegisters);
    if (is3D()) {
      S += formatv("  static constexpr int Window = {0}; // planes in the z "
                   "window\n",
                   Plan.planes());
      S += formatv("  static constexpr int Planes = {0}; // output planes "
                   "{1}\n",
                   Shape.PlanesPerWarp,
                   Shape.ExchangePlanes ? "per block (Warps - Window + 1)"
                                        : "each warp streams through");
    }
    S += "};\n";
    return S;
  }

  //===-- The kernel ------------------------------------------------------===//

  std::string comment() const {
    std::string Name = Plan.Kernel->getNameAsString();
    std::string In = Plan.Input.Array->getNameAsString();
    std::string C = formatv(
        "// {0}: {1} rewritten by cuda-rewrite as a software systolic array\n"
        "// (SSAM, Listings 1 and 2). {2}.\n"
        "// Each warp keeps a 32-lane x Cached-row window of '{3}' in "
        "registers{4};\n"
        "// for each output row, a lane adds up the taps of one column and "
        "passes the\n"
        "// partial sum one lane up (__shfl_up_sync) to add the next "
        "column's, so\n"
        "// lanes Halo..31 end with finished points. It writes exactly the "
        "points\n"
        "// {1} writes, with the same weights (summed in another order).\n",
        kernelName(), Name, Summary, In,
        !is3D() ? ""
        : Shape.ExchangePlanes
            ? ", one z plane per warp (section 4.9);\n// the sums of each z "
              "offset reach the warp of their output plane\n// through "
              "shared memory"
            : ", one per plane of the z window, and\n// streams along z");
    return C;
  }

  std::string kernel() {
    std::string K = comment();
    K += kernelHead(kernelName(), shapeName());
    K += stageFilter();
    K += box();
    K += is3D() && Shape.ExchangePlanes ? exchangeTile() : tile();
    K += !is3D()                ? body2D()
         : Shape.ExchangePlanes ? body3DExchange()
                                : body3D();
    K += "}\n";
    return K;
  }

  /// The signature (\p Name: the original parameters, then the extents of
  /// its launch) and the alias of the shape struct.
  std::string kernelHead(const std::string &Name,
                         const std::string &ShapeName) {
    std::vector<std::string> Params = parameterTexts();
    for (const std::string &E : extentNames())
      Params.push_back("long long " + E);
    return formatv("__global__ void __launch_bounds__({0}::Warps * 32, "
                   "{0}::MinBlocks)\n"
                   "{1}({2}) {{\n"
                   "  using @S = {0};\n",
                   ShapeName, Name, llvm::join(Params, ", "));
  }

  std::string stageFilter(bool Transposed = false) {
    if (!Plan.Filter)
      return "";
    const StagedFilter &F = *Plan.Filter;
    int64_t Count = F.Last - F.First + 1;
    std::string Filter = local("filter");
    std::string I = local("k");
    if (Transposed) {
      unsigned PerVector = 16 / (Plan.IsDouble ? 8 : 4);
      unsigned Padded = (Plan.rows() + PerVector - 1) / PerVector * PerVector;
      std::string M = "(" + I + " / " + std::to_string(Plan.rows()) + ")";
      std::string N = "(" + I + " % " + std::to_string(Plan.rows()) + ")";
      return formatv(
          "  // The filter, shared by the block (SSAM, section 4.6): "
          "'{0}'[{1}..{2}],\n"
          "  // a row per filter column, so that a column's weights are read "
          "as vectors.\n"
          "  __shared__ __align__(16) {3} {4}[{5}][{6}];\n"
          "  for (int {7} = threadIdx.x; {7} < {5} * {8}; {7} += "
          "blockDim.x)\n"
          "    {4}[{9}][{10}] = {0}[{11}{12}];\n"
          "  __syncthreads();\n",
          F.Name, F.First, F.Last, F.ElementType, Filter, Plan.columns(),
          Padded, I, Plan.rows(), M.substr(1, M.size() - 2),
          N.substr(1, N.size() - 2), loopIndex(M, N, ""), plus(F.First));
    }
    return formatv(
        "  // The filter, shared by the block (SSAM, section 4.6): "
        "'{0}'[{1}..{2}].\n"
        "  __shared__ {3} {4}[{5}];\n"
        "  for (int {6} = threadIdx.x; {6} < {5}; {6} += blockDim.x)\n"
        "    {4}[{6}] = {0}[{6}{7}];\n"
        "  __syncthreads();\n",
        F.Name, F.First, F.Last, F.ElementType, Filter, Count, I,
        plus(F.First));
  }

  /// The box of coordinates the original writes.
  std::string box() {
    std::string S = "  // The points the original kernel writes: its "
                    "launch's threads, cut by its guard.\n";
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
      S += formatv("  const {0} {1} = {2}, {3} = {4};\n", index(),
                   local(std::string(Axis[D]) + "Begin"), Lo,
                   local(std::string(Axis[D]) + "End"), Hi);
    }
    return S;
  }

  std::string begin(unsigned D) {
    return local(std::string(Axis[D]) + "Begin");
  }
  std::string end(unsigned D) { return local(std::string(Axis[D]) + "End"); }

  /// The warp's first column; warps that write nothing return.
  std::string warpTile() {
    std::string S;
    S += formatv("  const int {0} = threadIdx.x % 32;\n", local("lane"));
    S += formatv("  const {1} {0} =\n"
                 "      (({1})blockIdx.x * @S::Warps + threadIdx.x / "
                 "32) * @S::Columns;\n",
                 local("tileX"), index());
    S += formatv("  if ({0} >= {1} || {0} + @S::Columns <= {2})\n"
                 "    return; // The whole warp is outside.\n",
                 local("tileX"), end(0), begin(0));
    return S;
  }

  /// For each read group (groups with the same columns share one), whether
  /// the original reads \p What: \p Test(run) says it for one run of x
  /// offsets.
  std::string
  columnFlags(const std::string &What,
              const std::function<std::string(const TapRun &)> &Test) {
    std::string S = "  // Whether the original reads " + What +
                    " (for each group of taps).\n";
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
      S += formatv("  const bool {0} = {1};\n", columnFlag(G),
                   llvm::join(Alts, " || "));
    }
    return S;
  }

  /// The warp's columns, and the part of the needed-point test that only
  /// depends on the lane's column.
  std::string tile() { return warpTile() + laneColumn(); }

  /// The lane's input column (one per lane: overlapped blocking) and the
  /// column flags.
  std::string laneColumn() {
    std::string S = formatv("  const {4} {0} = {1} + {2}{3}; // This lane's "
                            "input column.\n",
                            local("col"), local("tileX"), local("lane"),
                            plus(Plan.Range[0].First), index());
    S += columnFlags("this column", [&](const TapRun &R) {
      return formatv("({0} >= {1}{2} && {0} < {3}{4})", local("col"), begin(0),
                     plus(R.First), end(0), plus(R.Last))
          .str();
    });
    return S;
  }

  std::string columnFlag(size_t G) {
    return local("readsColumn" + std::to_string(FlagOfGroup[G]));
  }

  /// Whether the original reads the input at (col, Row[, Plane]).
  std::string needed(const std::string &Row, const std::string &Plane,
                     const std::string &Indent) {
    std::vector<std::string> Alts;
    for (size_t G = 0; G != Plan.Reads.size(); ++G) {
      const ReadGroup &R = Plan.Reads[G];
      std::string A =
          formatv("({0} && {1} >= {2}{3} && {1} < {4}{5}", columnFlag(G), Row,
                  begin(1), plus(R.Y.First), end(1), plus(R.Y.Last));
      if (!Plane.empty())
        A += formatv(" && {0} >= {1}{2} && {0} < {3}{4}", Plane, begin(2),
                     plus(R.Z.First), end(2), plus(R.Z.Last));
      Alts.push_back(A + ")");
    }
    return llvm::join(Alts, " ||\n" + Indent);
  }

  /// `for (i) Statement`, unrolled: one statement for each of the P rows.
  std::string eachRow(const std::string &Indent, const std::string &Statement) {
    return formatv("{0}#pragma unroll\n"
                   "{0}for (int {1} = 0; {1} < @S::Rows; ++{1})\n"
                   "{0}  {2}\n",
                   Indent, local("i"), Statement);
  }

  /// The partial sums of all P rows, column by column (SSAM, Listing 1
  /// with the row loop innermost, so that each weight is read once per
  /// thread rather than once per row); \p Cache(dz, row) names the cached
  /// value of a row of plane offset dz. With \p OnlyZ, only the taps at that
  /// z offset (each warp of the 3D exchange form sums its plane's share of
  /// each output). With \p Wide, each lane holds PerLane columns
  /// (sum[i][j], Cache(..) ending in [j]) and sums move a column at a time.
  std::string
  sums(const std::function<std::string(int64_t, const std::string &)> &Cache,
       const std::string &Indent, std::optional<int64_t> OnlyZ = std::nullopt,
       bool Wide = false) {
    std::string Sum = local("sum"), I = local("i"), J = local("j");
    std::string S = formatv("{0}{1} {2}[@S::Rows]{3} = {{};\n", Indent, type(),
                            Sum, Wide ? "[@S::PerLane]" : "");
    std::string Target =
        Wide ? Sum + "[" + I + "][" + J + "]" : Sum + "[" + I + "]";
    // One fma for each row (and each of the lane's columns).
    auto EachFma = [&](const std::string &In, const std::string &Weight,
                       const std::string &Value) {
      std::string Fma =
          formatv("{0} = fma({1}, {2}, {0});", Target, Weight, Value);
      return Wide ? eachPoint(In, Fma) : eachRow(In, Fma);
    };
    if (Plan.Loop) {
      std::string M = local("m"), N = local("n"), Z = local("dz");
      std::string Weight = loopWeight(Wide && transposedFilter());
      std::string In = Indent + "  ";
      S += formatv("{0}#pragma unroll\n"
                   "{0}for (int {1} = 0; {1} < {2}; ++{1}) {{ // Columns "
                   "x{3} .. x{4}.\n"
                   "{5}if ({1} > 0)",
                   Indent, M, Plan.columns(), plus(Plan.Range[0].First),
                   plus(Plan.Range[0].Last), In);
      S += Wide
               ? " {\n" + shiftColumns(In + "  ", 1) + In + "}\n"
               : "\n" + eachRow(In + "  ", formatv("{0}[{1}] = "
                                                   "__shfl_up_sync(0xffffffffu,"
                                                   " {0}[{1}], 1);",
                                                   Sum, I));
      std::string Row = I + " + " + N;
      std::string Value = Cache(0, Row);
      if (is3D()) {
        S += formatv("{0}#pragma unroll\n"
                     "{0}for (int {1} = 0; {1} < @S::Window; ++{1}) {{\n",
                     In, Z);
        Value = local("window") + "[" + Z + "][" + Row + "]";
        In += "  ";
      }
      std::string W = local("weight");
      S += formatv("{0}#pragma unroll\n"
                   "{0}for (int {1} = 0; {1} < {2}; ++{1}) {{\n"
                   "{0}  const {3} {4} = {5};\n",
                   In, N, Plan.rows(), type(), W, Weight);
      S += EachFma(In + "  ", W, Value);
      S += In + "}\n";
      if (is3D())
        S += Indent + "  }\n";
      S += Indent + "}\n";
      if (Wide && wideExtraShift())
        S += shiftColumns(Indent, wideExtraShift());
      return S;
    }
    // Columns with no tap only shift: their shifts merge into the next
    // column's (or the last) shift, and none is needed before the first tap.
    unsigned Pending = 0;
    bool Started = false;
    auto ShiftBy = [&](unsigned K) {
      if (Wide) {
        S += shiftColumns(Indent, K);
        return;
      }
      S += formatv("{0}// Pass the partial sums {1} lane{2} up.\n", Indent,
                   K == 1 ? "one" : std::to_string(K), K == 1 ? "" : "s");
      S += eachRow(Indent, formatv("{0}[{1}] = __shfl_up_sync(0xffffffffu, "
                                   "{0}[{1}], {2});",
                                   Sum, I, K));
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
      S += formatv("{0}// Column x{1}.\n", Indent, plus(X));
      for (const SystolicTap &T : Plan.Taps)
        if (Here(T))
          S += EachFma(
              Indent, weight(T),
              Cache(T.Offset[2], I + plus(T.Offset[1] - Plan.Range[1].First)));
    }
    // Wide lanes move the finished sums on to whole output vectors.
    if (Wide)
      Pending += wideExtraShift();
    if (Started && Pending)
      ShiftBy(Pending);
    return S;
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
  std::string shiftColumns(const std::string &Indent, unsigned K) {
    std::string Sum = local("sum"), I = local("i"), J = local("j");
    std::string Up = local("fromLane");
    std::string S = formatv(
        "{0}// Pass the partial sums {1} column{2} on: within the lane, and "
        "from the lane below.\n",
        Indent, K == 1 ? "one" : std::to_string(K), K == 1 ? "" : "s");
    std::string In = Indent;
    if (K > 1) {
      S += formatv("{0}#pragma unroll\n"
                   "{0}for (int {1} = 0; {1} < {2}; ++{1})\n",
                   Indent, local("k"), K);
      In += "  ";
    }
    S += formatv("{0}#pragma unroll\n"
                 "{0}for (int {1} = 0; {1} < @S::Rows; ++{1}) {{\n"
                 "{0}  const {2} {3} = __shfl_up_sync(0xffffffffu, "
                 "{4}[{1}][@S::PerLane - 1], 1);\n"
                 "{0}  #pragma unroll\n"
                 "{0}  for (int {5} = @S::PerLane - 1; {5} > 0; --{5})\n"
                 "{0}    {4}[{1}][{5}] = {4}[{1}][{5} - 1];\n"
                 "{0}  {4}[{1}][0] = {3};\n"
                 "{0}}\n",
                 In, I, type(), Up, Sum, J);
    return S;
  }

  /// The weight of tap (m, n[, dz]) of a filter loop (offsets from the
  /// first), naming the staged filter.
  std::string loopWeight(bool Transposed = false) {
    const FilterLoop &L = *Plan.Loop;
    bool Staged = L.Source == StagedFilterToken;
    std::string Weight =
        Transposed
            ? local("filter") + "[" + local("m") + "][" + local("n") + "]"
            : (Staged ? local("filter") : L.Source) + "[" +
                  loopIndex(local("m"), local("n"), local("dz")) + "]";
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
      Index += formatv(" + {0} * ({1}{2})", L.Stride[D], Var, plus(First));
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
    return Plan.Loop && Plan.Filter && Plan.Loop->Source == StagedFilterToken &&
           !is3D();
  }

  /// The tap's weight, naming the staged filter.
  std::string weight(const SystolicTap &T) {
    std::string W = T.Weight;
    llvm::StringRef Token = StagedFilterToken;
    for (size_t At; (At = W.find(Token.str())) != std::string::npos;)
      W.replace(At, Token.size(), local("filter"));
    return W;
  }

  /// Stores the P rows' sums where the original writes.
  std::string store(const std::string &Plane, const std::string &Indent) {
    std::string OutX = local("outX"), OutY = local("outY"), I = local("i");
    std::array<std::string, 3> At = {OutX, OutY, Plane};
    std::string S = formatv("{0}const {6} {1} = {2} + {3} - @S::Halo;\n"
                            "{0}if ({3} >= @S::Halo && {1} >= {4} && "
                            "{1} < {5}",
                            Indent, OutX, local("tileX"), local("lane"),
                            begin(0), end(0), index());
    if (!Plane.empty())
      S += formatv(" && {0} >= {1}", Plane, begin(2));
    S += ") {\n";
    S += formatv("{0}  #pragma unroll\n"
                 "{0}  for (int {1} = 0; {1} < @S::Rows; ++{1}) {{\n"
                 "{0}    const {8} {2} = {3} + {1};\n"
                 "{0}    if ({2} >= {4} && {2} < {5})\n"
                 "{0}      {6} = {7}[{1}];\n"
                 "{0}  }\n"
                 "{0}}\n",
                 Indent, I, OutY, local("tileY"), begin(1), end(1),
                 Plan.Output.element(At), local("sum"), index());
    return S;
  }

  /// 3D: the loop over the block's chunks of Planes output planes.
  std::string planeLoopHead() {
    return formatv(
        "    for ({3} {0} = ({3})blockIdx.z * @S::Planes; {0} < {1};\n"
        "         {0} += ({3})gridDim.z * @S::Planes) {{\n"
        "      if ({0} + @S::Planes <= {2})\n"
        "        continue;\n",
        local("tileZ"), end(2), begin(2), index());
  }

  std::string rowLoopHead() {
    std::string TileY = local("tileY");
    return formatv("  for ({3} {0} = ({3})blockIdx.y * @S::Rows; {0} < {1};\n"
                   "       {0} += ({3})gridDim.y * @S::Rows) {{\n"
                   "    if ({0} + @S::Rows <= {2})\n"
                   "      continue;\n",
                   TileY, end(1), begin(1), index());
  }

  /// Loads @S::Cached rows of one plane into \p Target[c].
  std::string loadRows(const std::string &Target, const std::string &PlaneExpr,
                       const std::string &Indent) {
    std::string C = local("c"), Row = local("row"), Plane = local("plane");
    std::string S = formatv("{0}#pragma unroll\n"
                            "{0}for (int {1} = 0; {1} < @S::Cached; ++{1}) "
                            "{{\n"
                            "{0}  const {5} {2} = {3} + {1}{4};\n",
                            Indent, C, Row, local("tileY"),
                            plus(Plan.Range[1].First), index());
    if (!PlaneExpr.empty())
      S += formatv("{0}  const {3} {1} = {2};\n", Indent, Plane, PlaneExpr,
                   index());
    std::array<std::string, 3> At = {local("col"), Row, Plane};
    S += formatv("{0}  {1}[{2}] = {3}\n"
                 "{0}      ? {4}\n"
                 "{0}      : {5}(0);\n"
                 "{0}}\n",
                 Indent, Target, C,
                 needed(Row, PlaneExpr.empty() ? "" : Plane, Indent + "      "),
                 Plan.Input.element(At), type());
    return S;
  }

  std::string body2D() {
    std::string V = local("cache");
    std::string S = rowLoopHead();
    S += formatv("    {0} {1}[@S::Cached];\n", type(), V);
    S += loadRows(V, "", "    ");
    S += sums(
        [&](int64_t, const std::string &Row) { return V + "[" + Row + "]"; },
        "    ");
    S += store("", "    ");
    S += "  }\n";
    return S;
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
  std::string rowFlags() {
    RowConditions.clear();
    ConditionOfRange.clear();
    std::string C = local("c"), Row = local("row");
    for (const TapRun &Z : planeRanges()) {
      std::vector<std::string> Alts;
      for (size_t G = 0; G != Plan.Reads.size(); ++G) {
        const ReadGroup &R = Plan.Reads[G];
        if (R.Z == Z)
          Alts.push_back(formatv("({0} && {1} >= {2}{3} && {1} < {4}{5})",
                                 columnFlag(G), Row, begin(1), plus(R.Y.First),
                                 end(1), plus(R.Y.Last)));
      }
      std::string E = llvm::join(Alts, " ||\n          ");
      auto Same = llvm::find(RowConditions, E);
      ConditionOfRange.push_back(Same - RowConditions.begin());
      if (Same == RowConditions.end())
        RowConditions.push_back(E);
    }
    std::vector<std::string> Decls;
    for (size_t K = 0; K != RowConditions.size(); ++K)
      Decls.push_back(rowFlag(K) + "[@S::Cached]");
    std::string S = formatv(
        "    // {0}[{1}], ...: whether the original reads row {2} + {1}{3} of "
        "this\n"
        "    // column in the planes of a range of z offsets.\n"
        "    bool {4};\n"
        "    #pragma unroll\n"
        "    for (int {1} = 0; {1} < @S::Cached; ++{1}) {{\n"
        "      const {5} {6} = {2} + {1}{3};\n",
        rowFlag(0), C, local("tileY"), plus(Plan.Range[1].First),
        llvm::join(Decls, ", "), index(), Row);
    for (size_t K = 0; K != RowConditions.size(); ++K)
      S += formatv("      {0}[{1}] = {2};\n", rowFlag(K), C, RowConditions[K]);
    S += "    }\n";
    return S;
  }

  std::string rowFlag(size_t K) {
    return local("readsRow" + std::to_string(K));
  }

  /// 3D: the statements that load the rows of plane \p PlaneExpr the
  /// original reads into \p Target[c] (to be put in a block).
  std::string loadPlane(const std::string &Target, const std::string &PlaneExpr,
                        const std::string &Indent) {
    std::vector<TapRun> Ranges = planeRanges();
    std::string C = local("c"), Row = local("row"), Plane = local("plane");
    std::vector<std::string> InRange, Reads;
    for (size_t K = 0; K != Ranges.size(); ++K) {
      std::string Flag = local("inPlanes" + std::to_string(K));
      InRange.push_back(formatv("{0} = {1} >= {2}{3} && {1} < {4}{5}", Flag,
                                Plane, begin(2), plus(Ranges[K].First), end(2),
                                plus(Ranges[K].Last)));
      Reads.push_back(
          formatv("({0} && {1}[{2}])", Flag, rowFlag(ConditionOfRange[K]), C));
    }
    std::array<std::string, 3> At = {local("col"), Row, Plane};
    return formatv("{0}const {1} {2} = {3};\n"
                   "{0}// Which ranges of z offsets read this plane.\n"
                   "{0}const bool {4};\n"
                   "{0}#pragma unroll\n"
                   "{0}for (int {5} = 0; {5} < @S::Cached; ++{5}) {{\n"
                   "{0}  const {1} {6} = {7} + {5}{8};\n"
                   "{0}  const bool {13} =\n"
                   "{0}      {9};\n"
                   "{0}  {10}[{5}] = {13} ? {11} : {12}(0);\n"
                   "{0}}\n",
                   Indent, index(), Plane, PlaneExpr,
                   llvm::join(InRange, ",\n" + Indent + "    "), C, Row,
                   local("tileY"), plus(Plan.Range[1].First),
                   llvm::join(Reads, " ||\n" + Indent + "      "), Target,
                   Plan.Input.element(At), type(), local("reads"));
  }

  /// 3D (section 4.8 replaced by streaming, docs/systolic.md): each warp
  /// walks Planes output planes along z with a window of the Window planes
  /// the taps reach in registers, plus the next plane, loaded one step
  /// ahead so that its loads overlap this step's arithmetic.
  std::string body3D() {
    std::string W = local("window"), Z = local("z"), K = local("w");
    std::string Next = local("next"), TileZ = local("tileZ");
    std::string S = rowLoopHead();
    S += rowFlags();
    S += planeLoopHead();
    S += formatv(
        "      // {0}[{1}] holds plane z{2} + {1} for output plane z; {3} the\n"
        "      // plane after it, loaded one step early.\n"
        "      {4} {0}[@S::Window][@S::Cached], {3}[@S::Cached];\n"
        "      #pragma unroll\n"
        "      for (int {1} = 1; {1} < @S::Window; ++{1}) {{\n",
        W, K, plus(Plan.Range[2].First), Next, type());
    S += loadPlane(
        W + "[" + K + "]",
        formatv("{0} + {1} - 1{2}", TileZ, K, plus(Plan.Range[2].First)),
        "        ");
    S += "      }\n      {\n";
    S += loadPlane(Next, formatv("{0}{1}", TileZ, plus(Plan.Range[2].Last)),
                   "        ");
    S += "      }\n";
    S += formatv("      for ({3} {0} = {1}; {0} < {1} + @S::Planes && "
                 "{0} < {2}; ++{0}) {{\n",
                 Z, TileZ, end(2), index());
    S += formatv("        // Rotate the window, take in the next plane and "
                 "start loading the one after.\n"
                 "        #pragma unroll\n"
                 "        for (int {0} = 0; {0} < @S::Window; ++{0})\n"
                 "          #pragma unroll\n"
                 "          for (int {1} = 0; {1} < @S::Cached; ++{1})\n"
                 "            {2}[{0}][{1}] = {0} + 1 < @S::Window ? "
                 "{2}[{0} + 1][{1}] : {3}[{1}];\n"
                 "        {{\n",
                 K, local("c"), W, Next);
    S += loadPlane(Next, formatv("{0} + 1{1}", Z, plus(Plan.Range[2].Last)),
                   "          ");
    S += "        }\n";
    S += sums(
        [&](int64_t DZ, const std::string &Row) {
          return W + "[" + std::to_string(DZ - Plan.Range[2].First) + "][" +
                 Row + "]";
        },
        "        ");
    S += store(Z, "        ");
    S += "      }\n    }\n  }\n";
    return S;
  }

  /// 3D exchange form: all warps of a block share one column tile; warp w
  /// holds plane tileZ + w of the z window's first offset.
  std::string exchangeTile() {
    std::string S;
    S +=
        formatv("  const int {0} = threadIdx.x % 32, {1} = threadIdx.x / 32;\n",
                local("lane"), local("warp"));
    S += formatv("  const {1} {0} = ({1})blockIdx.x * @S::Columns;\n",
                 local("tileX"), index());
    S += formatv("  if ({0} >= {1} || {0} + @S::Columns <= {2})\n"
                 "    return; // The whole block is outside.\n",
                 local("tileX"), end(0), begin(0));
    return S + laneColumn();
  }

  /// 3D in the paper's form (section 4.9): warp w loads the C rows of plane
  /// tileZ + w + dz_min, sums its taps one z offset at a time (shifting
  /// partial sums across lanes as in 2D), and leaves each sum in shared
  /// memory; after a barrier, warp o adds the sums that planes tileZ + o +
  /// dz left for output plane tileZ + o, and stores. Every loop bound is
  /// the same for the whole block, so all threads reach both barriers.
  std::string body3DExchange() {
    std::string Exchange = local("exchange"), Warp = local("warp");
    std::string TileZ = local("tileZ"), Cache = local("cache");
    std::string Sum = local("sum"), I = local("i");
    std::string Lane = local("lane"), Z = local("z");
    std::string S = formatv(
        "  // {0}[k][w][i][lane]: warp w's partial sum of row i for the taps "
        "at z\n"
        "  // offset k{1}, which belong to output plane tileZ + w - k.\n"
        "  __shared__ {2} {0}[@S::Window][@S::Warps][@S::Rows][32];\n",
        Exchange, plus(Plan.Range[2].First), type());
    S += rowLoopHead();
    S += rowFlags();
    S += planeLoopHead();
    S += formatv("      {0} {1}[@S::Cached];\n      {{\n", type(), Cache);
    S += loadPlane(
        Cache, formatv("{0} + {1}{2}", TileZ, Warp, plus(Plan.Range[2].First)),
        "        ");
    S += "      }\n";
    for (int64_t DZ = Plan.Range[2].First; DZ <= Plan.Range[2].Last; ++DZ) {
      if (llvm::none_of(Plan.Taps, [&](const SystolicTap &T) {
            return T.Offset[2] == DZ;
          }))
        continue;
      S += formatv("      {{ // The taps at z offset {0}{1}.\n",
                   DZ > 0 ? "+" : "", DZ);
      S += sums([&](int64_t,
                    const std::string &Row) { return Cache + "[" + Row + "]"; },
                "        ", DZ);
      S += eachRow("        ",
                   formatv("{0}[{1}][{2}][{3}][{4}] = {5}[{3}];", Exchange,
                           DZ - Plan.Range[2].First, Warp, I, Lane, Sum));
      S += "      }\n";
    }
    // Offsets with no tap leave nothing to add.
    std::vector<std::string> Terms;
    for (int64_t DZ = Plan.Range[2].First; DZ <= Plan.Range[2].Last; ++DZ)
      if (llvm::any_of(Plan.Taps,
                       [&](const SystolicTap &T) { return T.Offset[2] == DZ; }))
        Terms.push_back(formatv("{0}[{1}][{2} + {1}][{3}][{4}]", Exchange,
                                DZ - Plan.Range[2].First, Warp, I, Lane));
    S += formatv("      __syncthreads();\n"
                 "      const {0} {1} = {2} + {3};\n"
                 "      if ({3} < @S::Planes && {1} < {4}) {{\n"
                 "        {5} {6}[@S::Rows];\n",
                 index(), Z, TileZ, Warp, end(2), type(), Sum);
    S += eachRow("        ", formatv("{0}[{1}] = {2};", Sum, I,
                                     llvm::join(Terms, " +\n              ")));
    S += store(Z, "        ");
    S += "      }\n"
         "      __syncthreads(); // Before the next tile overwrites the sums.\n"
         "    }\n  }\n";
    return S;
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
  std::string vectorLoadNote() const {
    return formatv(
        "// A vector is loaded when the original reads one of its elements: "
        "aligned,\n"
        "// it lies in the same 16-byte block as that element, so it cannot "
        "fault,\n"
        "// and its other elements feed no point that is written. It writes "
        "exactly\n"
        "// the points {0} writes, with the same weights (summed in another "
        "order).\n",
        Plan.Kernel->getNameAsString());
  }

  /// A vector form's shape struct up to its Rows and Cached members.
  std::string vectorShapeOpening() {
    std::string S = shapeOpening(vectorKernelName(), alignedShapeName());
    S += formatv("  using Vector = {0}; // PerLane elements: one load or "
                 "store\n",
                 vectorType());
    S += formatv("  static constexpr int PerLane = {0}; // V: consecutive "
                 "columns per lane\n",
                 Aligned->ColumnsPerLane);
    return S + rowsAndCached(*Aligned);
  }

  std::string alignedShapeStruct() {
    const SystolicShape &A = *Aligned;
    std::string S = vectorShapeOpening();
    S += formatv("  static constexpr int Left = {0}, Right = {1}; // columns "
                 "the taps reach beyond a lane's\n",
                 left(), right());
    S += "  static constexpr int Span = Left + PerLane + Right; // columns of "
         "a cached row\n";
    S += "  static constexpr int Columns = 32 * PerLane; // output columns per "
         "warp\n";
    S += blockAndResidency(A) + "};\n";
    return S;
  }

  std::string alignedKernel() {
    std::string K = formatv(
        "// {0}: {1} rewritten by cuda-rewrite as a register cache with "
        "aligned rows\n"
        "// (SSAM's, with the lanes of a warp on consecutive "
        "columns). {2}.\n"
        "// Each lane keeps PerLane consecutive columns of Cached rows of "
        "'{3}' in\n"
        "// registers, one Vector load per row, so a warp's rows start on a "
        "cache\n"
        "// line; the columns its taps reach left and right of them come from "
        "the\n"
        "// neighbour lanes (__shfl_up/down_sync), or are loaded by the "
        "warp's edge\n"
        "// lanes.\n",
        systolicAlignedKernelName(Plan), Plan.Kernel->getNameAsString(),
        Summary, Plan.Input.Array->getNameAsString());
    K += vectorLoadNote();
    K += kernelHead(systolicAlignedKernelName(Plan), alignedShapeName());
    K += stageFilter();
    K += box();
    K += warpTile();
    K += formatv("  const {0} {1} = {2} + @S::PerLane * {3}; // The first of "
                 "this lane's columns.\n",
                 index(), local("col"), local("tileX"), local("lane"));
    K += columnFlags("one of this lane's columns", [&](const TapRun &R) {
      return formatv("({0} < {1}{2} && {0} + @S::PerLane > {3}{4})",
                     local("col"), end(0), plus(R.Last), begin(0),
                     plus(R.First))
          .str();
    });
    K += formatv("  // Whether the original writes all of them (one vector "
                 "store).\n"
                 "  const bool {0} = {1} >= {2} && {1} + @S::PerLane <= {3};\n",
                 local("writesAll"), local("col"), begin(0), end(0));
    K += rowLoopHead();
    K += alignedLoads();
    K += alignedHalo();
    K += alignedSums();
    K += alignedStore();
    K += "  }\n}\n";
    return K;
  }

  //===-- The wide-lane form (chooseVectorShape) --------------------------===//

  std::string wideShapeStruct() {
    const SystolicShape &A = *Aligned;
    std::string S = vectorShapeOpening();
    S += formatv("  static constexpr int LeftPad = {0}; // columns loaded "
                 "left of a warp's outputs (whole vectors)\n",
                 wideLeftPad(Plan.Geometry, A.ColumnsPerLane));
    S += formatv("  static constexpr int RightPad = {0}; // columns loaded "
                 "right of them (whole vectors)\n",
                 wideRightPad(Plan.Geometry, A.ColumnsPerLane));
    S += "  static constexpr int Columns = 32 * PerLane - LeftPad - RightPad; "
         "// output columns per warp\n";
    S += blockAndResidency(A) + "};\n";
    return S;
  }

  std::string wideKernel() {
    std::string K = formatv(
        "// {0}: {1} rewritten by cuda-rewrite as a software systolic array "
        "with\n"
        "// wide lanes (SSAM's, with PerLane columns per lane). "
        "{2}.\n"
        "// Each lane keeps PerLane consecutive columns of Cached rows of "
        "'{3}' in\n"
        "// registers, one Vector load per row. For each filter column, a "
        "lane adds\n"
        "// that column's taps to the partial sums of its columns, then the "
        "sums move\n"
        "// one column on: within the lane by register, from the lane below "
        "by\n"
        "// __shfl_up_sync. After the last filter column they move on to "
        "whole\n"
        "// vectors: column c ends with the point c - RightPad.\n"
        "",
        vectorKernelName(), Plan.Kernel->getNameAsString(), Summary,
        Plan.Input.Array->getNameAsString());
    K += vectorLoadNote();
    K += kernelHead(vectorKernelName(), alignedShapeName());
    K += stageFilter(transposedFilter());
    K += box();
    K += warpTile();
    K += formatv("  const {0} {1} = {2} - @S::LeftPad + @S::PerLane * {3}; // "
                 "The first of this lane's columns.\n",
                 index(), local("col"), local("tileX"), local("lane"));
    K += columnFlags("one of this lane's columns", [&](const TapRun &R) {
      return formatv("({0} < {1}{2} && {0} + @S::PerLane > {3}{4})",
                     local("col"), end(0), plus(R.Last), begin(0),
                     plus(R.First))
          .str();
    });
    K += rowLoopHead();
    K += alignedLoads(/*Wide=*/true);
    std::string Cache = local("cache"), J = local("j");
    K += sums(
        [&](int64_t, const std::string &Row) {
          return Cache + "[" + Row + "][" + J + "]";
        },
        "    ", std::nullopt, /*Wide=*/true);
    K += wideStore();
    K += "  }\n}\n";
    return K;
  }

  /// Stores what the original writes of the warp's Columns output columns:
  /// a lane's PerLane points as one vector where it writes them all.
  std::string wideStore() {
    std::string OutX = local("outX"), OutY = local("outY"), I = local("i");
    std::string J = local("j"), TileX = local("tileX"), Sum = local("sum");
    std::string Writes = local("writes"), WritesAll = local("writesAll");
    std::vector<std::string> Parts;
    for (unsigned K = 0; K != Aligned->ColumnsPerLane; ++K)
      Parts.push_back(formatv("{0}[{1}][{2}]", Sum, I, K));
    return formatv(
        "    // The lane's sums are the points {0} .. {0} + PerLane - 1.\n"
        "    const {1} {0} = {2} - @S::RightPad;\n"
        "    auto {3} = [&](int {4}) {{ // whether this lane writes point "
        "{0} + {4}\n"
        "      return {0} + {4} >= {5} && {0} + {4} < {5} + @S::Columns &&\n"
        "             {0} + {4} >= {6} && {0} + {4} < {7};\n"
        "    };\n"
        "    const bool {8} = {3}(0) && {3}(@S::PerLane - 1);\n"
        "    #pragma unroll\n"
        "    for (int {9} = 0; {9} < @S::Rows; ++{9}) {{\n"
        "      const {1} {10} = {11} + {9};\n"
        "      if ({10} < {12} || {10} >= {13})\n"
        "        continue;\n"
        "      if ({8}) {{\n"
        "        *reinterpret_cast<@S::Vector *>(&{14}) =\n"
        "            @S::Vector{{{15}};\n"
        "      } else {{\n"
        "        #pragma unroll\n"
        "        for (int {4} = 0; {4} < @S::PerLane; ++{4})\n"
        "          if ({3}({4}))\n"
        "            {16} = {17}[{9}][{4}];\n"
        "      }\n"
        "    }\n",
        OutX, index(), local("col"), Writes, J, TileX, begin(0), end(0),
        WritesAll, I, OutY, local("tileY"), begin(1), end(1),
        Plan.Output.element({OutX, OutY, ""}), llvm::join(Parts, ", "),
        Plan.Output.element({OutX + " + " + J, OutY, ""}), Sum);
  }

  /// Each cached row's PerLane columns, one vector load.
  std::string alignedLoads(bool Wide = false) {
    static const char *const Component = "xyzw";
    std::string V = local("cache"), C = local("c"), Row = local("row");
    std::string Vec = local("v");
    std::string Head =
        Wide ? "    // {0}[c][k]: column {1} + k of row {2} + c{3}.\n"
               "    {4} {0}[@S::Cached][@S::PerLane];\n"
             : "    // {0}[c][Left + k]: column {1} + k of row {2} + c{3}; the "
               "Left columns\n"
               "    // before and the Right after them are the taps' reach.\n"
               "    {4} {0}[@S::Cached][@S::Span];\n";
    std::string S = formatv(
        (Head + "    #pragma unroll\n"
                "    for (int {5} = 0; {5} < @S::Cached; ++{5}) {{\n"
                "      const {6} {7} = {2} + {5}{3};\n"
                "      @S::Vector {8} = {{};\n"
                "      if ({9})\n"
                "        {8} = *reinterpret_cast<const @S::Vector *>(&{10});\n")
            .c_str(),
        V, local("col"), local("tileY"), plus(Plan.Range[1].First), type(), C,
        index(), Row, Vec, needed(Row, "", "          "),
        Plan.Input.element({local("col"), Row, ""}));
    for (unsigned K = 0; K != Aligned->ColumnsPerLane; ++K)
      S += formatv("      {0}[{1}][{5}{2}] = {3}.{4};\n", V, C, K, Vec,
                   Component[K], Wide ? "" : "@S::Left + ");
    S += "    }\n";
    return S;
  }

  /// Whether the original reads the input at (\p Col, \p Row) (2D).
  std::string readsAt(const std::string &Col, const std::string &Row,
                      const std::string &Indent) {
    std::vector<std::string> Alts;
    for (const ReadGroup &R : Plan.Reads) {
      std::vector<std::string> Runs;
      for (const TapRun &X : R.XRuns)
        Runs.push_back(formatv("({0} >= {1}{2} && {0} < {3}{4})", Col, begin(0),
                               plus(X.First), end(0), plus(X.Last)));
      std::string X = llvm::join(Runs, " || ");
      if (Runs.size() > 1)
        X = "(" + X + ")";
      Alts.push_back(formatv("({0} && {1} >= {2}{3} && {1} < {4}{5})", X, Row,
                             begin(1), plus(R.Y.First), end(1),
                             plus(R.Y.Last)));
    }
    return llvm::join(Alts, " ||\n" + Indent);
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
    std::string C = local("c");
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
      Ranges.push_back(
          I == 0        ? formatv("{0} < {1}", C, J).str()
          : J == Cached ? formatv("{0} >= {1}", C, I).str()
                        : formatv("({0} >= {1} && {0} < {2})", C, I, J).str());
      I = J;
    }
    if (Ranges.size() == 1 && Ranges[0].front() == '(')
      return Ranges[0].substr(1, Ranges[0].size() - 2);
    return Ranges.empty() ? "false" : llvm::join(Ranges, " || ");
  }

  /// The columns beyond the lane's: from the lane Shift away (up for the
  /// left ones), or loaded by the lanes that have none there.
  std::string alignedHalo() {
    unsigned V = Aligned->ColumnsPerLane;
    std::string Cache = local("cache"), C = local("c"), Row = local("row");
    std::string Lane = local("lane"), Col = local("col");
    std::string From = local("fromLane");
    std::string Body;
    auto Column = [&](int64_t Offset, unsigned Slot, unsigned Shift,
                      unsigned Source, bool Up) {
      std::string When = rowsUsingColumn(Offset);
      if (When == "false")
        return;
      std::string ColExpr = Col + plus(Offset);
      std::string Load =
          formatv("{0}\n                ? {1} : {2}(0)",
                  readsAt(ColExpr, Row, "                "),
                  Plan.Input.element({"(" + ColExpr + ")", Row, ""}), type());
      std::string S = formatv("      // Column {0}{1}: lane {2} {3}'s; ", Col,
                              plus(Offset), Up ? "-" : "+", Shift);
      S += Up ? formatv("lanes below {0} load it.\n", Shift).str()
              : formatv("lanes from {0} load it.\n", 32 - Shift).str();
      S += When.empty() ? "      {\n" : "      if (" + When + ") {\n";
      S += formatv("        const {0} {1} = __shfl_{2}_sync(0xffffffffu, "
                   "{3}[{4}][{5}], {6});\n"
                   "        {3}[{4}][{7}] = {8} {9} {10} ? {1}\n"
                   "            : {11};\n"
                   "      }\n",
                   type(), From, Up ? "up" : "down", Cache, C, Source + left(),
                   Shift, Slot, Lane, Up ? ">=" : "<", Up ? Shift : 32 - Shift,
                   Load);
      Body += S;
    };
    for (unsigned K = 1; K <= left(); ++K) {
      unsigned Shift = (K + V - 1) / V;
      Column(-int64_t(K), left() - K, Shift, Shift * V - K, true);
    }
    for (unsigned K = 0; K != right(); ++K)
      Column(int64_t(V + K), left() + V + K, K / V + 1, K % V, false);
    if (Body.empty())
      return "";
    std::string S = formatv(
        "    // The columns beyond the lane's, in the rows that use them.\n"
        "    #pragma unroll\n"
        "    for (int {0} = 0; {0} < @S::Cached; ++{0}) {{\n"
        "      const {1} {2} = {3} + {0}{4};\n",
        C, index(), Row, local("tileY"), plus(Plan.Range[1].First));
    return S + Body + "    }\n";
  }

  /// `for (i) for (j) Statement`, unrolled: each of the P x PerLane points.
  std::string eachPoint(const std::string &Indent,
                        const std::string &Statement) {
    return formatv("{0}#pragma unroll\n"
                   "{0}for (int {1} = 0; {1} < @S::Rows; ++{1})\n"
                   "{0}  #pragma unroll\n"
                   "{0}  for (int {2} = 0; {2} < @S::PerLane; ++{2})\n"
                   "{0}    {3}\n",
                   Indent, local("i"), local("j"), Statement);
  }

  /// The P x PerLane sums, tap by tap (each weight read once per thread).
  std::string alignedSums() {
    std::string Sum = local("sum"), Cache = local("cache"), I = local("i"),
                J = local("j");
    std::string S =
        formatv("    {0} {1}[@S::Rows][@S::PerLane] = {{};\n", type(), Sum);
    auto Fma = [&](const std::string &W, const std::string &Row,
                   const std::string &Column) {
      return formatv("{0}[{1}][{2}] = fma({3}, {4}[{1}{5}][{2}{6}], "
                     "{0}[{1}][{2}]);",
                     Sum, I, J, W, Cache, Row, Column)
          .str();
    };
    if (Plan.Loop) {
      std::string M = local("m"), N = local("n");
      S += formatv("    #pragma unroll\n"
                   "    for (int {0} = 0; {0} < {1}; ++{0}) // Columns "
                   "x{2} .. x{3}.\n"
                   "      #pragma unroll\n"
                   "      for (int {4} = 0; {4} < {5}; ++{4}) {{\n"
                   "        const {6} {7} = {8};\n",
                   M, Plan.columns(), plus(Plan.Range[0].First),
                   plus(Plan.Range[0].Last), N, Plan.rows(), type(),
                   local("weight"), loopWeight());
      S += eachPoint(
          "        ",
          Fma(local("weight"), " + " + N,
              " + " + M + plus(int64_t(left()) + Plan.Range[0].First)));
      S += "      }\n";
      return S;
    }
    for (const SystolicTap &T : Plan.Taps)
      S += eachPoint("    ",
                     Fma(weight(T), plus(T.Offset[1] - Plan.Range[1].First),
                         plus(int64_t(left()) + T.Offset[0])));
    return S;
  }

  std::string alignedStore() {
    std::string OutY = local("outY"), I = local("i"), J = local("j");
    std::string Col = local("col"), Sum = local("sum");
    std::vector<std::string> Parts;
    for (unsigned K = 0; K != Aligned->ColumnsPerLane; ++K)
      Parts.push_back(formatv("{0}[{1}][{2}]", Sum, I, K));
    return formatv("    #pragma unroll\n"
                   "    for (int {0} = 0; {0} < @S::Rows; ++{0}) {{\n"
                   "      const {1} {2} = {3} + {0};\n"
                   "      if ({2} < {4} || {2} >= {5})\n"
                   "        continue;\n"
                   "      if ({6}) {{\n"
                   "        *reinterpret_cast<@S::Vector *>(&{7}) =\n"
                   "            @S::Vector{{{8}};\n"
                   "      } else {{\n"
                   "        #pragma unroll\n"
                   "        for (int {9} = 0; {9} < @S::PerLane; ++{9})\n"
                   "          if ({10} + {9} >= {11} && {10} + {9} < {12})\n"
                   "            {13} = {14}[{0}][{9}];\n"
                   "      }\n"
                   "    }\n",
                   I, index(), OutY, local("tileY"), begin(1), end(1),
                   local("writesAll"), Plan.Output.element({Col, OutY, ""}),
                   llvm::join(Parts, ", "), J, Col, begin(0), end(0),
                   Plan.Output.element({Col + " + " + J, OutY, ""}), Sum);
  }

  //===-- The launcher ----------------------------------------------------===//

  std::string launcher() {
    std::string Grid = local("grid"), Block = local("block");
    std::string Shared = local("sharedBytes"), Stream = local("stream");
    std::vector<std::string> Params = {"dim3 " + Grid, "dim3 " + Block,
                                       "size_t " + Shared,
                                       "cudaStream_t " + Stream};
    std::vector<std::string> Texts = parameterTexts();
    Params.insert(Params.end(), Texts.begin(), Texts.end());
    std::vector<std::string> Args;
    for (const ParmVarDecl *P : Plan.Kernel->parameters())
      Args.push_back(P->getNameAsString());
    std::vector<std::string> Extents = extentNames();
    std::string Name = Plan.Kernel->getNameAsString();
    std::string S = formatv(
        "/// Launches {0} over the points that\n"
        "/// {1}<<<{5}, {6}, {7}, {8}>>>(...) computes ({1} uses no "
        "dynamic\n"
        "/// shared memory, so {7} is not needed).\n"
        "static void {2}({3}) {{\n"
        "  using @S = {4};\n"
        "  (void){7};\n",
        kernelName(), Name, systolicLauncherName(Plan),
        llvm::join(Params, ", "), shapeName(), Grid, Block, Shared, Stream);
    for (unsigned D = 0; D != Plan.Rank; ++D)
      S += formatv("  const long long {0} = (long long){1}.{3} * {2}.{3};\n",
                   Extents[D], Grid, Block, Axis[D]);
    // Launches the systolic kernel cannot cover exactly run the original.
    std::vector<std::string> Fallback, Why;
    // A coordinate that steps by a constant per block covers the launch's
    // threads without gaps or overlaps only when the block is that wide.
    for (unsigned D = 0; D != Plan.Rank; ++D)
      if (Plan.BlockFactor[D] != std::string("blockDim.") + Axis[D])
        Fallback.push_back(
            formatv("{0}.{1} != {2}", Block, Axis[D], Plan.BlockFactor[D]));
    if (Fallback.size())
      Why.push_back(formatv("blocks of another width than {0} steps by", Name));
    if (Plan.Index32) {
      for (const std::string &E : Extents)
        Fallback.push_back(formatv("{0} > (1LL << 30)", E));
      Why.push_back(formatv("extents beyond what int indices reach with "
                            "headroom (this kernel, like {0}, indexes with "
                            "int)",
                            Name));
    }
    if (!Fallback.empty()) {
      S += "  // The original runs where this kernel cannot cover the launch "
           "exactly:\n";
      for (size_t I = 0; I != Why.size(); ++I)
        S += "  // - " + Why[I] + (I + 1 == Why.size() ? ".\n" : ";\n");
      S += formatv("  if ({0}) {{\n"
                   "    {1}<<<{2}, {3}, {4}, {5}>>>({6});\n"
                   "    return;\n"
                   "  }\n",
                   llvm::join(Fallback, " || "), Name, Grid, Block, Shared,
                   Stream, llvm::join(Args, ", "));
    }
    std::vector<std::string> CallArgs = Args;
    CallArgs.insert(CallArgs.end(), Extents.begin(), Extents.end());
    if (Aligned) {
      // Both ends of row 0 and row 1 aligned: every row is.
      std::vector<std::string> Rows;
      for (const ArrayIndexing *A : {&Plan.Input, &Plan.Output})
        for (const char *Row : {"0", "1"})
          Rows.push_back("(size_t)&" + A->element({"0", Row, ""}));
      std::string AlignedShape = local("Aligned");
      S += formatv("  // The {5} kernel moves whole vectors: it runs where "
                   "every row of\n"
                   "  // '{0}' and '{1}' starts on a vector boundary.\n"
                   "  using {2} = {3};\n"
                   "  if ((({4}) % sizeof({2}::Vector)) == 0) {{\n",
                   Plan.Input.Array->getNameAsString(),
                   Plan.Output.Array->getNameAsString(), AlignedShape,
                   alignedShapeName(), llvm::join(Rows, " |\n       "),
                   Aligned->WideLanes ? "wide-lane" : "aligned");
      S += launch(vectorKernelName(), AlignedShape, CallArgs, Stream, "    ");
      S += "    return;\n  }\n";
    }
    S += launch(kernelName(), "@S", CallArgs, Stream, "  ");
    S += "}\n";
    return S;
  }

  /// The grid of \p Kernel (shape \p ShapeName) over the launch's extents,
  /// and the launch. Rows and planes past grid limit 65535 are reached by
  /// the kernel's grid-stride loops.
  std::string launch(const std::string &Kernel, const std::string &ShapeName,
                     const std::vector<std::string> &CallArgs,
                     const std::string &Stream, const std::string &Indent) {
    std::vector<std::string> Extents = extentNames();
    std::string PerBlock = local("perBlock"), New = local("systolicGrid");
    auto Blocks = [](const std::string &Extent, const std::string &Per,
                     bool Capped) {
      std::string N = "(" + Extent + " + " + Per + " - 1) / " + Per;
      return Capped ? "(unsigned)(" + N + " < 65535 ? " + N + " : 65535)"
                    : "(unsigned)(" + N + ")";
    };
    std::string Continue = Indent + "             ";
    // The exchange form's warps share one column tile.
    bool OneTile = ShapeName == "@S" && Shape.ExchangePlanes;
    std::string S = formatv(
        "{0}const long long {1} = {2}{3}::Columns;\n", Indent, PerBlock,
        OneTile ? "" : "(long long)" + ShapeName + "::Warps * ", ShapeName);
    S += formatv("{0}const dim3 {1}({2},\n{3}{4}", Indent, New,
                 Blocks(Extents[0], PerBlock, false), Continue,
                 Blocks(Extents[1], ShapeName + "::Rows", true));
    if (is3D())
      S += ",\n" + Continue + Blocks(Extents[2], ShapeName + "::Planes", true);
    S += ");\n";
    S += formatv("{0}{1}<<<{2}, {3}::Warps * 32, 0, {4}>>>({5});\n", Indent,
                 Kernel, New, ShapeName, Stream, llvm::join(CallArgs, ", "));
    return S;
  }

  const SystolicPlan &Plan;
  const SystolicShape &Shape;
  const std::optional<SystolicShape> &Aligned;
  const std::string &Summary;
  const ASTContext &Ctx;
  std::set<std::string> Taken;
  std::vector<size_t> FlagOfGroup; ///< The column flag each read group uses.
  std::vector<std::string> RowConditions; ///< 3D: see rowFlags.
  std::vector<size_t> ConditionOfRange;   ///< 3D: per plane range.
  std::map<std::string, std::string> Locals;
};

} // namespace

std::string generateSystolicCode(const SystolicPlan &Plan,
                                 const SystolicShape &Shape,
                                 const std::optional<SystolicShape> &Aligned,
                                 const std::string &Summary) {
  return Generator(Plan, Shape, Aligned, Summary).run();
}

} // namespace cuda_rewrite
