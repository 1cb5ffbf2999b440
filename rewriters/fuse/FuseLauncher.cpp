//===- FuseLauncher.cpp - The host side of a fused group ------------------===//

#include "rewriters/fuse/FuseLauncher.h"
#include "rewriters/common/SourceLines.h"

#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <set>

using namespace clang;

namespace cuda_rewrite {

namespace {

const char *const AxisName[] = {"x", "y", "z"};

/// `(Arg) + k` in host terms.
std::string hostBound(const HostBound &B) {
  if (B.Arg.empty())
    return std::to_string(B.Constant);
  return plusConstant("(" + B.Arg + ")", B.Constant);
}

/// The extent of grid \p K along \p D, in the launcher.
std::string extentOf(unsigned K, unsigned D) {
  if (K == 0)
    return D ? "extentY" : "extentX";
  return llvm::formatv("(long long)grid{0}.{1} * block.{1}", K, AxisName[D]);
}

/// The launcher's lookups of the staged tables' device addresses (each
/// launch: the address is the current device's).
std::string tableLookups(llvm::ArrayRef<StagedTable> Tables) {
  std::string Text;
  for (const StagedTable &T : Tables)
    Text += llvm::formatv(
        "  const {0} *{1} = nullptr;\n"
        "  if (cudaGetSymbolAddress((void **)&{1}, {2}) != cudaSuccess)\n"
        "    return false;\n",
        T.ElementType, T.sourceName(), T.Var->getNameAsString());
  return Text.empty() ? ""
                      : "  // The constant tables the kernel copies to "
                        "shared memory, as device\n  // addresses.\n" +
                            Text;
}

/// The fused grid, within CUDA's limits (2^31 - 1 blocks along x,
/// 65535 along y and z), channels first where there are channels. Braces:
/// `dim3 g(unsigned(a), ..)` would declare a function.
std::string fusedGrid(const FuseGroup &G) {
  if (channelsFirst(G))
    return "  if (extentX > INT_MAX || extentY > INT_MAX || tilesX > 65535 "
           "||\n"
           "      tilesY > 65535 || extentZ > INT_MAX)\n"
           "    return false;\n"
           "  // The channels of a tile run one after another (see the "
           "kernel).\n"
           "  const dim3 fusedGrid{unsigned(extentZ), unsigned(tilesX), "
           "unsigned(tilesY)};\n";
  return "  if (extentX > INT_MAX || extentY > INT_MAX || tilesY > 65535 ||\n"
         "      extentZ > 65535)\n"
         "    return false;\n"
         "  const dim3 fusedGrid{unsigned(tilesX), unsigned(tilesY), "
         "unsigned(extentZ)};\n";
}

} // namespace

HostParams::HostParams(const FuseGroup &G, ASTContext &Ctx) {
  // The names the kernel and the launcher declare themselves: a host
  // argument `c` must not become a parameter the row loops' `c` hides.
  std::set<std::string> Taken = {
      "grid",   "block",  "stream",  "extentX", "extentY",   "extentZ",
      "kernel", "launch", "tilesX",  "tilesY",  "fusedGrid", "kTileW",
      "kTileH", "kWarps", "kChunks", "warp",    "lane",      "x0",
      "y0",     "x",      "y",       "z",       "i",         "j",
      "r",      "c",      "sx",      "sy",      "own",       "interior"};
  for (unsigned K = 1; K < G.Grids.size(); ++K)
    Taken.insert("grid" + std::to_string(K));
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
      std::string Id;
      for (char C : H.Text)
        Id += isalnum((unsigned char)C) || C == '_' ? C : '_';
      while (Id.find("__") != std::string::npos)
        Id.replace(Id.find("__"), 2, "_");
      if (Id.empty() || isdigit((unsigned char)Id[0]) || Id.back() == '_' ||
          Taken.count(Id))
        Id = "arg" + std::to_string(Params.size());
      Taken.insert(Id);
      H.Name = Id;
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

std::string HostParams::hostTerms(std::string Text) const {
  auto ReplaceAll = [&](const std::string &From, const std::string &To) {
    for (size_t At = Text.find(From); At != std::string::npos;
         At = Text.find(From, At + To.size()))
      Text.replace(At, From.size(), To);
  };
  ReplaceAll("(@extent.x)", "extentX");
  ReplaceAll("(@extent.y)", "extentY");
  for (const HostParam &P : Params)
    ReplaceAll("(" + P.Text + ")", P.Name);
  return Text;
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

std::string fusedLauncher(const FuseGroup &G, const FuseTile &T,
                          const HostParams &Params,
                          llvm::ArrayRef<StagedTable> Tables) {
  std::vector<std::string> Written, Others;
  for (const std::string &B : G.GlobalWrites)
    Written.push_back(Params.of(B).Name);
  for (const std::string &B : G.OtherBuffers)
    Others.push_back(Params.of(B).Name);
  std::string Checks;
  std::vector<std::string> Extents, Relations, Covered;
  for (const ExtentCheck &C : G.ExtentChecks)
    Extents.push_back(Params.hostTerms(extentOf(C.Grid, C.Axis) +
                                       " >= " + hostBound(C.Bound)));
  for (unsigned K = 1; K < G.Grids.size(); ++K)
    Extents.push_back(llvm::formatv("grid{0}.z == grid.z", K));
  for (const std::string &R : G.RelationChecks)
    Relations.push_back(Params.hostTerms(R));
  for (const CoverageCheck &C : G.CoverageChecks) {
    std::string Points = llvm::formatv("tiles{0} * {1}", C.Axis ? "Y" : "X",
                                       C.Axis ? T.Rows * T.Warps : T.width());
    if (C.Scale.Num != 1)
      Points = std::to_string(C.Scale.Num) + " * " + Points;
    if (C.Scale.Den != 1)
      Points += " / " + std::to_string(C.Scale.Den);
    Covered.push_back(Params.hostTerms(Points + " >= " + hostBound(C.Bound)));
  }
  auto Check = [&](const std::vector<std::string> &Conditions,
                   const std::string &Comment) {
    if (Conditions.empty())
      return;
    Checks += Comment + "  if (!(" + llvm::join(Conditions, " &&\n        ") +
              "))\n    return false;\n";
  };
  Check(Extents, "  // The stages' guards lie inside their launches (the "
                 "fused kernel's\n  // regions rely on what they write).\n");
  Check(Relations, "  // The launch arguments are related as the reads "
                   "need: every point a\n  // stage reads (a scaled read's "
                   "base point) lies inside what its\n  // producer "
                   "writes.\n");
  if (!Written.empty())
    Checks += "  // What the kernel stores must not change what it reads.\n"
              "  if (!cuda_rewrite::fuse::separateAllocations({" +
              llvm::join(Written, ", ") + "}, {" + llvm::join(Others, ", ") +
              "}))\n    return false;\n";
  std::string CoverageChecks;
  if (!Covered.empty())
    CoverageChecks = "  // The warps' tiles reach every point the stages "
                     "of other grids store.\n  if (!(" +
                     llvm::join(Covered, " &&\n        ") +
                     "))\n    return false;\n";
  std::string Grids;
  for (unsigned K = 1; K < G.Grids.size(); ++K)
    Grids += llvm::formatv("dim3 grid{0}, ", K);
  bool ZGlobal = G.Stages.front().Access.Form[2] == CoordinateForm::Global;
  return llvm::formatv(
             "// Runs the stages' launches as one fused launch, or returns "
             "false,\n"
             "// launching nothing, where the fused kernel might not compute "
             "what they do.\n"
             "static bool launch(dim3 grid, dim3 block, cudaStream_t stream, "
             "{7}{0}) {{\n"
             "  const long long extentX = (long long)grid.x * block.x;\n"
             "  const long long extentY = (long long)grid.y * block.y;\n"
             "  const long long extentZ = {1};\n"
             "{2}"
             "  const long long tilesX = (extentX + {4} - 1) / {4};\n"
             "  const long long tilesY = (extentY + {3} - 1) / {3};\n"
             "{9}"
             "{8}"
             "{10}"
             "  kernel<<<fusedGrid, {5}, 0, stream>>>({6}{11}, int(extentX), "
             "int(extentY));\n"
             "  return true;\n"
             "}\n",
             Params.declared(),
             ZGlobal ? "(long long)grid.z * block.z" : "grid.z", Checks,
             T.Rows * T.Warps, T.width(), 32 * T.Warps, Params.names(), Grids,
             CoverageChecks, fusedGrid(G), tableLookups(Tables),
             stagedTableSources(Tables, false))
      .str();
}

} // namespace cuda_rewrite
