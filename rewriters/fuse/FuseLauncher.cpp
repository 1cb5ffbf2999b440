//===- FuseLauncher.cpp - The host side of a fused group ------------------===//

#include "rewriters/fuse/FuseLauncher.h"
#include "rewriters/common/SourceLines.h"

#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;

namespace cuda_rewrite {

namespace {

const char *const AxisName[] = {"x", "y", "z"};

/// The extent of grid \p K along \p D, in the launcher.
std::string extentOf(unsigned K, unsigned D) {
  if (K == 0)
    return D ? "extentY" : "extentX";
  return "(long long)grid" + std::to_string(K) + "." + AxisName[D] +
         " * block." + AxisName[D];
}

/// \p B, a bound along \p D, in the launcher's names: a parameter or the
/// fused launch's extent, plus a constant.
std::string boundText(const HostBound &B, unsigned D,
                      const HostParams &Params) {
  if (B.LaunchExtent)
    return plusConstant(extentOf(0, D), B.Constant);
  if (B.Arg.empty())
    return std::to_string(B.Constant);
  return plusConstant(Params.of(B.Arg).Name, B.Constant);
}

/// `if (!(a && b)) return false;` after \p Comment, where there are
/// \p Conditions.
void failUnless(CodeWriter &W, const std::vector<std::string> &Conditions,
                const llvm::Twine &Comment) {
  if (Conditions.empty())
    return;
  W.comment(Comment);
  CodeWriter::Block Fails =
      W.unbraced("if (!(" + llvm::join(Conditions, " && ") + "))");
  W.line("return false;");
}

/// The checks under which the fused kernel computes what the stages'
/// launches compute, but for the tiles' coverage (coverageCheck).
void launchChecks(CodeWriter &W, const FuseGroup &G, const HostParams &Params) {
  std::vector<std::string> Extents, Relations;
  for (const ExtentCheck &C : G.ExtentChecks)
    Extents.push_back(extentOf(C.Grid, C.Axis) +
                      " >= " + boundText(C.Bound, C.Axis, Params));
  for (unsigned K = 1; K < G.Grids.size(); ++K)
    Extents.push_back("grid" + std::to_string(K) + ".z == grid.z");
  for (const RelationCheck &R : G.RelationChecks)
    Relations.push_back(
        R.print([&](const std::string &Text) { return Params.of(Text).Name; }));
  failUnless(
      W, Extents,
      "The stages' guards lie inside their launches (the fused kernel's\n"
      "regions rely on what they write).");
  failUnless(
      W, Relations,
      "The launch arguments are related as the reads need: every point a\n"
      "stage reads (a scaled read's base point) lies inside what its\n"
      "producer writes.");
  if (G.GlobalWrites.empty())
    return;
  std::vector<std::string> Written, Others;
  for (const std::string &B : G.GlobalWrites)
    Written.push_back(Params.of(B).Name);
  for (const std::string &B : G.OtherBuffers)
    Others.push_back(Params.of(B).Name);
  W.comment("What the kernel stores must not change what it reads.");
  CodeWriter::Block Overlap = W.unbraced(
      "if (!cuda_rewrite::fuse::separateAllocations({" +
      llvm::join(Written, ", ") + "}, {" + llvm::join(Others, ", ") + "}))");
  W.line("return false;");
}

/// The check that the warps' tiles reach what the stages of other grids
/// (or scales) store.
void coverageCheck(CodeWriter &W, const FuseGroup &G, const FuseTile &T,
                   const HostParams &Params) {
  std::vector<std::string> Covered;
  for (const CoverageCheck &C : G.CoverageChecks) {
    std::string Points = std::string("tiles") + (C.Axis ? "Y" : "X") + " * " +
                         std::to_string(C.Axis ? T.Rows * T.Warps : T.width());
    if (C.Scale.Num != 1)
      Points = std::to_string(C.Scale.Num) + " * " + Points;
    if (C.Scale.Den != 1)
      Points += " / " + std::to_string(C.Scale.Den);
    Covered.push_back(Points + " >= " + boundText(C.Bound, C.Axis, Params));
  }
  failUnless(W, Covered,
             "The warps' tiles reach every point the stages of other grids "
             "store.");
}

/// The launcher's lookups of the staged tables' device addresses (each
/// launch: the address is the current device's).
void tableLookups(CodeWriter &W, llvm::ArrayRef<StagedTable> Tables) {
  if (Tables.empty())
    return;
  W.comment("The constant tables the kernel copies to shared memory, as "
            "device\naddresses.");
  for (const StagedTable &T : Tables) {
    W.line("const " + T.ElementType + " *" + T.sourceName() + " = nullptr;");
    CodeWriter::Block Missing =
        W.unbraced("if (cudaGetSymbolAddress((void **)&" + T.sourceName() +
                   ", " + T.Var->getNameAsString() + ") != cudaSuccess)");
    W.line("return false;");
  }
}

/// The fused grid, within CUDA's limits (2^31 - 1 blocks along x,
/// 65535 along y and z), channels first where there are channels. Braces:
/// `dim3 g(unsigned(a), ..)` would declare a function.
void fusedGrid(CodeWriter &W, const FuseGroup &G) {
  bool Channels = channelsFirst(G);
  {
    CodeWriter::Block TooLarge = W.unbraced(
        Channels ? "if (extentX > INT_MAX || extentY > INT_MAX || tilesX > "
                   "65535 || tilesY > 65535 || extentZ > INT_MAX)"
                 : "if (extentX > INT_MAX || extentY > INT_MAX || tilesY > "
                   "65535 || extentZ > 65535)");
    W.line("return false;");
  }
  if (!Channels) {
    W.line("const dim3 fusedGrid{unsigned(tilesX), unsigned(tilesY), "
           "unsigned(extentZ)};");
    return;
  }
  W.comment("The channels of a tile run one after another (see the kernel).");
  W.line("const dim3 fusedGrid{unsigned(extentZ), unsigned(tilesX), "
         "unsigned(tilesY)};");
}

} // namespace

HostParams::HostParams(const FuseGroup &G, ASTContext &Ctx) {
  // The names the kernel and the launcher declare themselves: a host
  // argument `c` must not become a parameter the row loops' `c` hides.
  NameAllocator Names;
  for (const char *Generated :
       {"grid",   "block",  "stream",  "extentX", "extentY",   "extentZ",
        "kernel", "launch", "tilesX",  "tilesY",  "fusedGrid", "kTileW",
        "kTileH", "kWarps", "kChunks", "warp",    "lane",      "x0",
        "y0",     "x",      "y",       "z",       "i",         "j",
        "r",      "c",      "sx",      "sy",      "own",       "interior"})
    Names.reserve(Generated);
  for (unsigned K = 1; K < G.Grids.size(); ++K)
    Names.reserve("grid" + std::to_string(K));
  for (const FuseStage &S : G.Stages)
    for (unsigned P = 0; P != S.ArgText.size(); ++P) {
      if (Index.count(S.ArgText[P]))
        continue;
      const Expr *Arg = S.Launch->getArg(P)->IgnoreParenImpCasts();
      QualType Ty = Arg->getType();
      if (Ty->isArrayType())
        Ty = Ctx.getDecayedType(Ty);
      HostParam H;
      H.Text = S.ArgText[P];
      H.Type = Ty.getUnqualifiedType().getAsString(Ctx.getPrintingPolicy());
      // The argument's text as a name where it reads as one (`img.width`:
      // img_width), else argN.
      std::string Id;
      for (char C : H.Text)
        Id += isalnum((unsigned char)C) || C == '_' ? C : '_';
      while (Id.find("__") != std::string::npos)
        Id.replace(Id.find("__"), 2, "_");
      if (Id.empty() || isdigit((unsigned char)Id[0]) || Id.back() == '_')
        Id = "arg" + std::to_string(Params.size());
      H.Name = Names.fresh(Id);
      Index[H.Text] = Params.size();
      Params.push_back(H);
    }
}

const HostParam &HostParams::of(const std::string &Text) const {
  return Params[Index.at(Text)];
}

std::string HostParams::declared() const {
  std::vector<std::string> Decls;
  for (const HostParam &P : Params)
    Decls.push_back(
        P.Type + (llvm::StringRef(P.Type).ends_with("*") ? "" : " ") + P.Name);
  return llvm::join(Decls, ", ");
}

std::string HostParams::names() const {
  std::vector<std::string> Names;
  for (const HostParam &P : Params)
    Names.push_back(P.Name);
  return llvm::join(Names, ", ");
}

std::string HostParams::launchArgs(const FuseGroup &G, ASTContext &Ctx) const {
  const CallExpr *Config = G.Stages.front().Launch->getConfig();
  std::vector<std::string> Args = {
      G.Grids.front(), sourceText(Ctx, Config->getArg(1)->getSourceRange())};
  const Expr *Stream =
      Config->getNumArgs() > 3 && !isa<CXXDefaultArgExpr>(Config->getArg(3))
          ? Config->getArg(3)
          : nullptr;
  Args.push_back(Stream ? sourceText(Ctx, Stream->getSourceRange()) : "0");
  Args.insert(Args.end(), G.Grids.begin() + 1, G.Grids.end());
  for (const HostParam &P : Params)
    Args.push_back(P.Text);
  return llvm::join(Args, ", ");
}

/// Whether the fused grid puts the channels (z) first: where the stages
/// have a z coordinate and a stage at the output's scale reads a plane
/// that does not follow it (a single-plane buffer, or a fixed plane:
/// alpha), which every channel then reads. Otherwise neighbouring tiles
/// of one channel run one after another, sharing their halos' rows in L2
/// (unsharp measured 3% slower channels first). Pyramid's collapse,
/// whose only such plane is the coarsest level's mask, stays channels
/// last: that plane is 1/64 of the output.
bool channelsFirst(const FuseGroup &G) {
  if (!G.Stages.front().Access.CoordinateVar[2])
    return false;
  for (const FuseStage &S : G.Stages)
    for (const StageRead &R : S.Access.Reads)
      if (S.Scale[0].unit() && S.Scale[1].unit())
        if (R.Coordinates.size() < 3 || R.Coordinates[2].Scale == 0)
          return true;
  return false;
}

void writeFusedLauncher(CodeWriter &W, const FuseGroup &G, const FuseTile &T,
                        const HostParams &Params,
                        llvm::ArrayRef<StagedTable> Tables) {
  W.comment("Runs the stages' launches as one fused launch, or returns "
            "false,\nlaunching nothing, where the fused kernel might not "
            "compute what they do.");
  std::string Grids;
  for (unsigned K = 1; K < G.Grids.size(); ++K)
    Grids += "dim3 grid" + std::to_string(K) + ", ";
  CodeWriter::Block Launch = W.block(
      "static bool launch(dim3 grid, dim3 block, cudaStream_t stream, " +
      Grids + Params.declared() + ") {");
  bool ZGlobal = G.Stages.front().Access.Form[2] == CoordinateForm::Global;
  W.line("const long long extentX = (long long)grid.x * block.x;");
  W.line("const long long extentY = (long long)grid.y * block.y;");
  W.line(std::string("const long long extentZ = ") +
         (ZGlobal ? "(long long)grid.z * block.z" : "grid.z") + ";");
  launchChecks(W, G, Params);
  std::string Width = std::to_string(T.width());
  std::string Height = std::to_string(T.Rows * T.Warps);
  W.line("const long long tilesX = (extentX + " + Width + " - 1) / " + Width +
         ";");
  W.line("const long long tilesY = (extentY + " + Height + " - 1) / " + Height +
         ";");
  fusedGrid(W, G);
  coverageCheck(W, G, T, Params);
  tableLookups(W, Tables);
  W.line("kernel<<<fusedGrid, " + std::to_string(32 * T.Warps) +
         ", 0, stream>>>(" + Params.names() +
         stagedTableSources(Tables, false) + ", int(extentX), int(extentY));");
  W.line("return true;");
}

} // namespace cuda_rewrite
