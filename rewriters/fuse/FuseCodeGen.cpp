//===- FuseCodeGen.cpp - Fused kernels for groups of stages ---------------===//

#include "rewriters/fuse/FuseCodeGen.h"
#include "rewriters/common/SourceLines.h"
#include "rewriters/fuse/HybridTiles.h"
#include "rewriters/fuse/StagedTables.h"

#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Format/Format.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <map>
#include <set>
#include <tuple>

using namespace clang;

namespace cuda_rewrite {

namespace {

const char *const AxisName[] = {"x", "y", "z"};

/// Shared memory for staged constant tables per block (StagedTables.h):
/// the tiles' budget (48 KiB per block) less what keeps a tile of
/// 16 rows by 64 columns of floats for each of 4 warps.
constexpr uint64_t kMaxStagedBytes = 16 * 1024;

/// `v + k` for a constant k, as a C++ expression.
std::string plus(const std::string &V, int64_t K) {
  if (K == 0)
    return V;
  return V + (K > 0 ? " + " : " - ") + std::to_string(K < 0 ? -K : K);
}

/// Where stage \p S's region starts along \p D, over the warp's tile
/// origin (x0, y0): `x0 - 1`, `2 * y0 - 2`.
std::string regionStart(const FuseStage &S, unsigned D) {
  return plus(scaledOrigin(S, D, D ? "y0" : "x0"), S.RegionLo[D]);
}

/// An on-chip buffer's tile: its producer's region around the warp tile.
struct TileShape {
  std::string Origin[2];
  int64_t Width = 0, Height = 0;
};

TileShape tileOf(const FuseGroup &G, const FuseBuffer &B, const FuseTile &T) {
  const FuseStage &P = G.Stages[B.Producer];
  TileShape S;
  S.Origin[0] = regionStart(P, 0);
  S.Origin[1] = regionStart(P, 1);
  S.Width = std::max<int64_t>(0, regionExtent(P, 0, T.width()));
  S.Height = std::max<int64_t>(0, regionExtent(P, 1, T.Rows));
  return S;
}

/// The size of \p B's elements.
unsigned elementBytes(const FuseGroup &G, const FuseBuffer &B,
                      ASTContext &Ctx) {
  const FuseStage &P = G.Stages[B.Producer];
  for (const ParmVarDecl *Param : P.Kernel->parameters())
    if (P.ArgText[Param->getFunctionScopeIndex()] == B.Name)
      return unsigned(Ctx.getTypeSizeInChars(Param->getType()->getPointeeType())
                          .getQuantity());
  return 4;
}

/// A host argument of the group's launches, passed on as a parameter.
struct HostParam {
  std::string Text, Name, Type;
};

/// Edits of a stage's body, in file offsets; outer edits replace the inner
/// ones they cover.
struct TextEdit {
  unsigned Begin, End;
  std::string Text;
};

class GroupWriter {
public:
  GroupWriter(const FuseGroup &G, const FuseTile &T, const std::string &Name,
              ASTContext &Ctx)
      : G(G), T(T), Name(Name), Ctx(Ctx), SM(Ctx.getSourceManager()) {}

  FuseCode run(const std::string &Where) {
    FuseCode Code;
    collectParams();
    findUnclamped();
    Tables = findStagedTables(G, Ctx, kMaxStagedBytes);
    std::string TableDecls;
    for (const StagedTable &T : Tables) {
      Code.StagedTables.push_back(T.Var->getNameAsString());
      Code.StagedBytes += unsigned(T.Bytes);
      TableDecls += llvm::formatv("__shared__ {0} {1}[{2}];\n", T.ElementType,
                                  T.Name, T.Elements);
    }
    if (!TableDecls.empty())
      TableDecls = "// Constant tables read at indices that differ within a "
                   "warp, copied here by\n// each block (the constant cache "
                   "would replay every distinct index).\n" +
                   TableDecls + "\n";
    Hybrid = planHybridTiles(
        G, T.RegisterChunks, T.Rows,
        [&](const FuseStage &S, const std::optional<ParamPlusConstant> &V) {
          return boundText(S, V);
        });
    for (const FuseBuffer *B : Hybrid.InRegisters)
      Code.InRegisters.push_back(B->Name);
    Code.KeptShared = Hybrid.Kept;
    for (const FuseBuffer &B : G.Written)
      if (B.OnChip && !B.Inlined)
        Code.SharedBytesPerWarp += unsigned(shape(B).Width * shape(B).Height) *
                                   elementBytes(G, B, Ctx);
    std::string Stages;
    for (unsigned I = 0; I != G.Stages.size(); ++I) {
      if (!G.Stages[I].Needed)
        continue;
      std::string F = pointFunction(I);
      if (F.empty()) {
        Code.Why = Why;
        return Code;
      }
      Stages += F + "\n";
    }
    std::vector<std::string> Kernels;
    for (const FuseStage &S : G.Stages)
      Kernels.push_back(S.Kernel->getNameAsString());
    std::string OnChip;
    for (const FuseBuffer &B : G.Written)
      if (B.OnChip && !B.Inlined) {
        TileShape S = shape(B);
        OnChip += llvm::formatv(
            "{0}{1} {2} x {3}{4}{5}", OnChip.empty() ? "" : ", ", B.Name,
            S.Width, S.Height,
            Hybrid.inRegisters(&B)
                ? llvm::formatv(" and {0} x 32 x {1} in registers",
                                Hybrid.Chunks, S.Height)
                      .str()
                : "",
            B.Global ? " (also stored)" : "");
      }
    Code.Definitions =
        llvm::formatv(
            "// Generated by cuda-rewrite (fuse) from the launches of {0} at "
            "{1}:\n"
            "// one kernel, in which each warp computes a {2} x {3} tile of "
            "the\n"
            "// stages' outputs and, around it, the points of the "
            "intermediates that\n"
            "// its stages read (overlapped tile per warp, PolyMage-GPU "
            "section 4).\n"
            "//\n// On chip, in shared memory per warp: {4}.\n"
            "namespace {5} {{\n\n{6}{7}\n{8}}  // namespace {5}\n\n",
            llvm::join(Kernels, ", "), Where, T.width(), T.Rows,
            OnChip.empty() ? "nothing" : OnChip, Name, TableDecls + Stages,
            kernel(), launcher())
            .str();
    Code.Call = Name + "::launch(" + launchArgs() + ")";
    return Code;
  }

private:
  //===-- Parameters ------------------------------------------------------===//

  void collectParams() {
    std::set<std::string> Taken = {"grid",    "block",  "stream", "extentX",
                                   "extentY", "kernel", "launch"};
    for (const FuseStage &S : G.Stages)
      for (unsigned P = 0; P != S.ArgText.size(); ++P) {
        if (Param.count(S.ArgText[P]))
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
        Param[H.Text] = Params.size();
        Params.push_back(H);
      }
  }

  const HostParam &param(const std::string &Text) {
    return Params[Param.at(Text)];
  }

  std::string declaredParams() {
    std::vector<std::string> Decls;
    for (const HostParam &P : Params)
      Decls.push_back(P.Type +
                      (llvm::StringRef(P.Type).ends_with("*") ? "" : " ") +
                      P.Name);
    return llvm::join(Decls, ", ");
  }

  std::string paramNames() {
    std::vector<std::string> Names;
    for (const HostParam &P : Params)
      Names.push_back(P.Name);
    return llvm::join(Names, ", ");
  }

  std::string launchArgs() {
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

  //===-- Point functions -------------------------------------------------===//

  /// The group's buffer a stage's parameter passes, if it is written in the
  /// group.
  const FuseBuffer *bufferOf(const FuseStage &S, const ParmVarDecl *P) {
    return G.bufferPassedAs(S, P);
  }

  bool offsets(SourceRange R, unsigned &Begin, unsigned &End) {
    if (R.getBegin().isMacroID() || R.getEnd().isMacroID()) {
      Why = "a stage's body uses a macro where the fused kernel changes it";
      return false;
    }
    SourceLocation E =
        Lexer::getLocForEndOfToken(R.getEnd(), 0, SM, Ctx.getLangOpts());
    Begin = SM.getFileOffset(R.getBegin());
    End = SM.getFileOffset(E);
    return true;
  }

  /// Whether evaluating \p E does nothing but compute its value: no
  /// assignments, increments or volatile reads, and calls only of functions
  /// whose body is one `return` of such an expression (image::clamp).
  bool pure(const Stmt *E) const {
    if (const auto *Call = dyn_cast<CallExpr>(E)) {
      const FunctionDecl *F = Call->getDirectCallee();
      const FunctionDecl *Def = F ? F->getDefinition() : nullptr;
      const auto *Body = Def ? dyn_cast<CompoundStmt>(Def->getBody()) : nullptr;
      const auto *Ret = Body && Body->size() == 1
                            ? dyn_cast<ReturnStmt>(Body->body_front())
                            : nullptr;
      if (!Ret || !Ret->getRetValue() || !pure(Ret->getRetValue()))
        return false;
    } else if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      if (BO->isAssignmentOp())
        return false;
    } else if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
      if (UO->isIncrementDecrementOp())
        return false;
    } else if (const auto *Ex = dyn_cast<Expr>(E)) {
      if (Ex->getType().isVolatileQualified())
        return false;
    }
    return llvm::all_of(E->children(),
                        [&](const Stmt *C) { return !C || pure(C); });
  }

  unsigned offsetOf(SourceLocation Loc) const {
    return SM.getFileOffset(SM.getExpansionLoc(Loc));
  }

  /// How often \p Name occurs in \p Text as an identifier.
  static unsigned usesOf(llvm::StringRef Text, llvm::StringRef Name) {
    unsigned Uses = 0;
    auto IsIdent = [](char C) { return isalnum((unsigned char)C) || C == '_'; };
    for (size_t At = Text.find(Name); At != llvm::StringRef::npos;
         At = Text.find(Name, At + 1)) {
      bool Before = At > 0 && IsIdent(Text[At - 1]);
      bool After =
          At + Name.size() < Text.size() && IsIdent(Text[At + Name.size()]);
      Uses += !Before && !After;
    }
    return Uses;
  }

  /// Removes statement \p D (with its semicolon), with its whole line or
  /// lines when it is alone on them.
  bool removeStatement(const Stmt *D, FileID File,
                       std::vector<TextEdit> &Edits) {
    unsigned B, E;
    if (!offsets(D->getSourceRange(), B, E))
      return false;
    llvm::StringRef Buffer = SM.getBufferData(File);
    unsigned Semi = E;
    while (Semi < Buffer.size() &&
           (Buffer[Semi] == ' ' || Buffer[Semi] == '\t'))
      ++Semi;
    if (!isa<DeclStmt>(D) && Semi < Buffer.size() && Buffer[Semi] == ';')
      E = Semi + 1;
    unsigned LineBegin = B;
    while (LineBegin > 0 &&
           (Buffer[LineBegin - 1] == ' ' || Buffer[LineBegin - 1] == '\t'))
      --LineBegin;
    unsigned LineEnd = E;
    while (LineEnd < Buffer.size() &&
           (Buffer[LineEnd] == ' ' || Buffer[LineEnd] == '\t'))
      ++LineEnd;
    if ((LineBegin == 0 || Buffer[LineBegin - 1] == '\n') &&
        LineEnd < Buffer.size() && Buffer[LineEnd] == '\n') {
      B = LineBegin;
      E = LineEnd + 1;
    }
    Edits.push_back({B, E, ""});
    return true;
  }

  /// The text of [Begin, End) of the stage's file with \p Edits applied
  /// (those inside it; an edit inside another is dropped).
  std::string applied(FileID File, unsigned Begin, unsigned End,
                      std::vector<TextEdit> Edits) {
    llvm::sort(Edits, [](const TextEdit &A, const TextEdit &B) {
      return A.Begin < B.Begin || (A.Begin == B.Begin && A.End > B.End);
    });
    llvm::StringRef Buffer = SM.getBufferData(File);
    std::string Out;
    unsigned At = Begin;
    for (const TextEdit &E : Edits) {
      if (E.Begin < At || E.End > End)
        continue;
      Out += Buffer.slice(At, E.Begin).str() + E.Text;
      At = E.End;
    }
    return Out + Buffer.slice(At, End).str();
  }

  /// `(Scale * V + Add) / Divisor + Offset` for read coordinate \p C,
  /// without the parts that are 1 or 0 (C division, as the stage's).
  static std::string readCoordinate(const CoordinateRead &C,
                                    const std::string &V) {
    if (C.Scale == 1 && C.Divisor == 1)
      return plus(V, C.Offset + C.Add);
    // V is a name or parenthesized; Scale * V / Divisor divides the
    // product.
    std::string Text = C.Scale == 1 ? V : std::to_string(C.Scale) + " * " + V;
    if (C.Add != 0)
      Text = "(" + plus(Text, C.Add) + ")";
    if (C.Divisor != 1)
      Text += " / " + std::to_string(C.Divisor);
    return plus(Text, C.Offset);
  }

  /// How a read's coordinate along \p D is written at the stage's point.
  std::string coordinate(const FuseStage &S, const CoordinateRead &C,
                         unsigned D) {
    std::string V =
        readCoordinate(C, S.Access.CoordinateVar[D]->getNameAsString());
    if (C.Clamped) {
      std::string Clamp =
          C.ClampFunction + "(" + V + ", " + C.Lo + ", " + C.Hi + ")";
      V = Unclamped.count(C.ClampCall)
              ? "(Interior ? " + V + " : " + Clamp + ")"
              : Clamp;
    }
    return V;
  }

  std::string tileArg(const ParmVarDecl *P) {
    return P->getNameAsString() + "_tile";
  }

  std::string valueArg(const ParmVarDecl *P) {
    return P->getNameAsString() + "_at";
  }

  /// The point function of stage \p I, or "" (with Why).
  std::string pointFunction(unsigned I) {
    const FuseStage &S = G.Stages[I];
    const FunctionDecl *K = S.Kernel;
    FileID File = SM.getFileID(SM.getExpansionLoc(K->getBody()->getBeginLoc()));
    std::vector<TextEdit> Reads, Edits;
    // The prologue's coordinate declarations go: they are parameters now.
    std::vector<std::string> Params;
    // An inlined stage takes the reader's Interior as an argument: its
    // lambda is called from both forms of the reader.
    if (S.Inlined)
      Params.push_back("bool Interior");
    for (unsigned D = 0; D != 3; ++D) {
      const VarDecl *V = S.Access.CoordinateVar[D];
      if (!V)
        continue;
      Params.push_back("int " + V->getNameAsString());
    }
    if (S.NeedsOwn)
      Params.push_back("bool own");
    for (const ParmVarDecl *P : K->parameters())
      Params.push_back(sourceText(Ctx, P->getSourceRange()));
    std::set<const ParmVarDecl *> Tiles;
    std::vector<std::string> Templates;
    if (!S.Inlined)
      Templates.push_back("bool Interior");
    for (const ParmVarDecl *P : K->parameters()) {
      const FuseBuffer *B = bufferOf(S, P);
      if (!B || !B->OnChip)
        continue;
      Tiles.insert(P);
      if (B->Inlined && B->Producer == I)
        continue; // Returned, not stored.
      if (B->Inlined) {
        // The producer's value at a point, computed where it is read.
        Templates.push_back("typename " + P->getNameAsString() + "_At");
        Params.push_back("const " + P->getNameAsString() + "_At &" +
                         valueArg(P));
        continue;
      }
      if (Hybrid.inRegisters(B)) {
        // A shared tile, a register slot, or the gathered register points.
        std::string Type = P->getNameAsString() + "_Tile";
        Templates.push_back("typename " + Type);
        Params.push_back(Type + " " + tileArg(P));
        continue;
      }
      Params.push_back(llvm::formatv("cuda_rewrite::fuse::Tile<{0}, {1}> {2}",
                                     B->ElementType, shape(*B).Width,
                                     tileArg(P)));
    }
    for (const Stmt *St : cast<CompoundStmt>(K->getBody())->body()) {
      const auto *If = dyn_cast<IfStmt>(St);
      if (!If)
        continue;
      if (S.Inlined) {
        // Guards: consumers read only points it writes.
        if (!removeStatement(St, File, Edits))
          return "";
        continue;
      }
      // In an interior warp every point passes the guards.
      unsigned B, E;
      if (!offsets(If->getCond()->getSourceRange(), B, E))
        return "";
      const Stmt *Then = If->getThen();
      if (const auto *C = dyn_cast<CompoundStmt>(Then); C && C->size() == 1)
        Then = C->body_front();
      std::string Cond = SM.getBufferData(File).slice(B, E).str();
      Edits.push_back({B, E,
                       isa<ReturnStmt>(Then) ? "!Interior && (" + Cond + ")"
                                             : "Interior || (" + Cond + ")"});
    }
    if (!walk(S, K->getBody(), /*InExpr=*/false, Tiles, Reads, Edits))
      return "";
    for (const DeclStmt *D : CoordinateDecls)
      if (!removeStatement(D, File, Edits))
        return "";
    CoordinateDecls.clear();
    Edits.insert(Edits.end(), Reads.begin(), Reads.end());
    unsigned BodyBegin, BodyEnd;
    if (!offsets(K->getBody()->getSourceRange(), BodyBegin, BodyEnd))
      return "";
    std::string Body = applied(File, BodyBegin, BodyEnd, Edits);
    // Locals only the rewritten indices used (`const int plane = c * H;`)
    // would be unused now: their declarations go too.
    bool Removed = false;
    for (const DeclStmt *D : LocalDecls) {
      const auto *V = cast<VarDecl>(D->getSingleDecl());
      if (V->getInit() && !pure(V->getInit()))
        continue;
      std::string Decl = applied(File, offsetOf(D->getBeginLoc()),
                                 offsetOf(D->getEndLoc()) + 1, Edits);
      if (usesOf(Body, V->getName()) == usesOf(Decl, V->getName())) {
        if (!removeStatement(D, File, Edits))
          return "";
        Removed = true;
      }
    }
    LocalDecls.clear();
    if (Removed)
      Body = applied(File, BodyBegin, BodyEnd, Edits);
    unsigned Line = SM.getPresumedLineNumber(K->getLocation());
    std::string Template =
        Templates.empty() ? ""
                          : "template <" + llvm::join(Templates, ", ") + ">\n";
    if (S.Inlined)
      return llvm::formatv(
                 "// Stage '{0}' (line {1}), computed where it is read: a "
                 "point-wise\n// stage, its guards dropped (its consumers read "
                 "only points it writes).\n"
                 "{5}__device__ __forceinline__ {6} {4}({2}) {3}\n",
                 K->getNameAsString(), Line, llvm::join(Params, ", "), Body,
                 pointName(I), Template, writtenBy(I).ElementType)
          .str();
    return llvm::formatv("// Stage '{0}' (line {1}) at one point.\n"
                         "{5}__device__ __forceinline__ void {4}({2}) {3}\n",
                         K->getNameAsString(), Line, llvm::join(Params, ", "),
                         Body, pointName(I), Template)
        .str();
  }

  const FuseBuffer &writtenBy(unsigned I) const {
    for (const FuseBuffer &B : G.Written)
      if (B.Producer == I)
        return B;
    llvm_unreachable("an inlined stage writes a buffer");
  }

  /// `<kernel>_point`, numbered when the kernel is two stages of the group.
  std::string pointName(unsigned I) const {
    std::string Kernel = G.Stages[I].Kernel->getNameAsString();
    unsigned Same = 0;
    for (const FuseStage &S : G.Stages)
      Same += S.Kernel == G.Stages[I].Kernel;
    return Kernel + (G.Stages[I].Inlined ? "_at" : "_point") +
           (Same > 1 ? std::to_string(I) : "");
  }

  /// Collects the edits of a stage's body: reads of on-chip buffers become
  /// tile reads, stores go where the plan sends them, coordinate
  /// declarations go.
  bool walk(const FuseStage &S, const Stmt *St, bool InExpr,
            const std::set<const ParmVarDecl *> &Tiles,
            std::vector<TextEdit> &Reads, std::vector<TextEdit> &Edits) {
    if (!St)
      return true;
    if (const auto *DS = dyn_cast<DeclStmt>(St)) {
      bool Coordinate = false, Other = false;
      for (const Decl *D : DS->decls())
        (llvm::is_contained(S.Access.CoordinateVar, D) ? Coordinate : Other) =
            true;
      if (Coordinate && Other) {
        Why = "a coordinate is declared together with other variables";
        return false;
      }
      if (Coordinate) {
        CoordinateDecls.push_back(DS);
        return true;
      }
      if (DS->isSingleDecl() && isa<VarDecl>(DS->getSingleDecl()))
        LocalDecls.push_back(DS);
    }
    if (const auto *BO = dyn_cast<BinaryOperator>(St);
        BO && BO->isAssignmentOp()) {
      if (const auto *ASE =
              dyn_cast<ArraySubscriptExpr>(BO->getLHS()->IgnoreParenImpCasts()))
        if (const ParmVarDecl *P = param(ASE))
          if (!store(S, BO, ASE, P, InExpr, Tiles, Reads, Edits))
            return false;
    }
    if (const auto *Call = dyn_cast<CallExpr>(St);
        Call && Unclamped.count(Call)) {
      unsigned Begin, End, ArgBegin, ArgEnd;
      if (!offsets(Call->getSourceRange(), Begin, End) ||
          !offsets(Call->getArg(0)->getSourceRange(), ArgBegin, ArgEnd))
        return false;
      llvm::StringRef Text = SM.getBufferData(
          SM.getFileID(SM.getExpansionLoc(Call->getBeginLoc())));
      Reads.push_back({Begin, End,
                       "(Interior ? " + Text.slice(ArgBegin, ArgEnd).str() +
                           " : " + Text.slice(Begin, End).str() + ")"});
    }
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(St))
      if (const StagedTable *Table = stagedTableOf(ASE, Tables)) {
        unsigned Begin, End;
        if (!offsets(ASE->getBase()->getSourceRange(), Begin, End))
          return false;
        Reads.push_back({Begin, End, Table->Name});
      }
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(St))
      if (const ParmVarDecl *P = param(ASE); P && Tiles.count(P)) {
        const FuseBuffer *B = bufferOf(S, P);
        if (B && B->Producer != indexOf(S)) {
          const StageRead *R = readAt(S, ASE, P);
          if (!R) {
            Why = "a read of '" + P->getNameAsString() + "' was not analysed";
            return false;
          }
          unsigned Begin, End;
          if (!offsets(ASE->getSourceRange(), Begin, End))
            return false;
          Reads.push_back(
              {Begin, End,
               (B->Inlined ? valueArg(P) + "(Interior, " : tileArg(P) + "(") +
                   coordinate(S, R->Coordinates[0], 0) + ", " +
                   coordinate(S, R->Coordinates[1], 1) + ")"});
        }
      }
    bool ChildInExpr = isa<Expr>(St);
    for (const Stmt *C : St->children())
      if (!walk(S, C, ChildInExpr, Tiles, Reads, Edits))
        return false;
    return true;
  }

  unsigned indexOf(const FuseStage &S) const {
    for (unsigned I = 0; I != G.Stages.size(); ++I)
      if (&G.Stages[I] == &S)
        return I;
    return ~0u;
  }

  static const ParmVarDecl *param(const ArraySubscriptExpr *ASE) {
    const auto *Ref =
        dyn_cast<DeclRefExpr>(ASE->getBase()->IgnoreParenImpCasts());
    return Ref ? dyn_cast<ParmVarDecl>(Ref->getDecl()) : nullptr;
  }

  static const StageRead *readAt(const FuseStage &S,
                                 const ArraySubscriptExpr *ASE,
                                 const ParmVarDecl *P) {
    for (const StageRead &R : S.Access.Reads)
      if (R.Buffer == P && R.Loc == ASE->getExprLoc())
        return &R;
    return nullptr;
  }

  /// A store `P[i] = v`: to the tile, to global memory, or both.
  bool store(const FuseStage &S, const BinaryOperator *BO,
             const ArraySubscriptExpr *LHS, const ParmVarDecl *P, bool InExpr,
             const std::set<const ParmVarDecl *> &Tiles,
             std::vector<TextEdit> &Reads, std::vector<TextEdit> &Edits) {
    bool OnChip = Tiles.count(P);
    if (!OnChip && !S.NeedsOwn)
      return true; // Stored as written.
    if (BO->isCompoundAssignmentOp() || InExpr) {
      Why = "a store to '" + P->getNameAsString() +
            "' is not a statement of its own '" + P->getNameAsString() +
            "[..] = ..;'";
      return false;
    }
    FileID File = SM.getFileID(SM.getExpansionLoc(BO->getBeginLoc()));
    unsigned LB, LE, RB, RE, B, E;
    if (!offsets(LHS->getSourceRange(), LB, LE) ||
        !offsets(BO->getRHS()->getSourceRange(), RB, RE) ||
        !offsets(BO->getSourceRange(), B, E))
      return false;
    // The reads inside the value are rewritten first (walk() visits the
    // children after this).
    std::vector<TextEdit> ValueReads;
    if (!walk(S, BO->getRHS(), true, Tiles, ValueReads, Edits))
      return false;
    std::string Value = applied(File, RB, RE, ValueReads);
    std::string Global = applied(File, LB, LE, {});
    std::string Coords = S.Access.CoordinateVar[0]->getNameAsString() + ", " +
                         S.Access.CoordinateVar[1]->getNameAsString();
    const FuseBuffer *Buf = bufferOf(S, P);
    std::string Text;
    if (S.Inlined)
      Text = "return " + Value;
    else if (OnChip && Buf && Buf->Global)
      Text = "cuda_rewrite::fuse::keepAndStore(" + tileArg(P) + "(" + Coords +
             "), " +
             (S.NeedsOwn ? "own ? &" + Global + " : nullptr" : "&" + Global) +
             ", " + Value + ")";
    else if (OnChip)
      Text = tileArg(P) + "(" + Coords + ") = " + Value;
    else
      Text = "cuda_rewrite::fuse::storeIf(own, &" + Global + ", " + Value + ")";
    // The value's reads are part of this edit: applied() drops the copies
    // walk() adds when it reaches the children, as they lie inside it.
    Edits.push_back({B, E, Text});
    (void)Reads;
    return true;
  }

  //===-- The kernel and the launcher
  //--------------------------------------===//

  /// Stage \p I's arguments at the kernel's (x, y, z); \p Views replaces
  /// the kernel's tile or value of a buffer.
  std::vector<std::string>
  callArgs(unsigned I,
           const std::map<const FuseBuffer *, std::string> &Views = {}) {
    const FuseStage &S = G.Stages[I];
    std::vector<std::string> Args = pointArgs(I);
    if (S.NeedsOwn)
      Args.push_back(ownTile(S));
    for (const std::string &A : S.ArgText)
      Args.push_back(param(A).Name);
    for (const ParmVarDecl *P : S.Kernel->parameters())
      if (const FuseBuffer *B = bufferOf(S, P);
          B && B->OnChip && !(B->Inlined && B->Producer == I)) {
        auto View = Views.find(B);
        Args.push_back(View != Views.end() ? View->second
                       : B->Inlined        ? valueName(*B)
                                           : tileName(*B));
      }
    return Args;
  }

  /// Whether (x, y) is in the warp's own tile at stage \p S's scale: the
  /// points it stores.
  std::string ownTile(const FuseStage &S) {
    std::string Text;
    for (unsigned D : {0u, 1u}) {
      const char *V = AxisName[D];
      std::string Origin = scaledOrigin(S, D, D ? "y0" : "x0");
      std::string Extent = D ? "kTileH" : "kTileW";
      if (!S.Scale[D].unit())
        Extent = std::to_string(regionExtent(S, D, D ? T.Rows : T.width()) -
                                S.RegionHi[D] + S.RegionLo[D]);
      Text += llvm::formatv("{0}{1} >= {2} && {1} < {2} + {3}", D ? " && " : "",
                            V, Origin, Extent)
                  .str();
    }
    return Text;
  }

  /// The condition border warps test before computing a point of stages
  /// \p Is: inside the launch. A stage of another grid than the last
  /// stage's has guards along both axes (FusePlan), which its point
  /// function tests, so only the coordinates' signs are left.
  std::string insideLaunch(const std::vector<unsigned> &Is) {
    if (G.Stages[Is.front()].Grid != 0)
      return "x >= 0 && y >= 0";
    return "x >= 0 && y >= 0 && x < extentX && y < extentY";
  }

  /// `f<Form>(args);` for each stage of \p Is, one per line.
  std::string calls(const std::vector<unsigned> &Is, const char *Form,
                    const std::string &Indent) {
    std::string Text;
    for (unsigned I : Is)
      Text += Indent + pointName(I) + "<" + Form + ">(" +
              llvm::join(callArgs(I), ", ") + ");\n";
    return Text;
  }

  /// `if (interior) f<true>(..); else if (inside) f<false>(..);`, braced
  /// when several stages share the loop.
  std::string pointCalls(const std::vector<unsigned> &Is,
                         const std::string &Indent) {
    const char *Open = Is.size() > 1 ? " {" : "";
    std::string Close = Is.size() > 1 ? Indent + "}" : "";
    std::string Inner = Indent + "  ";
    return Indent + "if (interior)" + Open + "\n" + calls(Is, "true", Inner) +
           Close + (Is.size() > 1 ? " " : Indent) + "else if (" +
           insideLaunch(Is) + ")" + Open + "\n" + calls(Is, "false", Inner) +
           (Is.size() > 1 ? Close + "\n" : "");
  }

  /// Stages \p Is (one region) over columns ColumnLo + [0, Width) of
  /// their rows (ColumnLo relative to the region's scaled origin), each
  /// point computed by each stage in turn.
  std::string linearLoop(const std::vector<unsigned> &Is, int64_t ColumnLo,
                         int64_t Width, const std::string &What) {
    const FuseStage &S = G.Stages[Is.front()];
    int64_t H = regionExtent(S, 1, T.Rows);
    std::string XStart = plus(scaledOrigin(S, 0, "x0"), ColumnLo);
    std::vector<std::string> Names;
    for (unsigned I : Is)
      Names.push_back(G.Stages[I].Kernel->getNameAsString());
    std::string Who = llvm::join(Names, " and ");
    if (Width % 32 == 0)
      // Whole rows of lanes: one column per lane. Interior warps run the
      // rows unrolled and branch-free, so that reads neighbouring rows
      // share are loaded once; border warps loop.
      return llvm::formatv(
                 "  // {0} {1}.\n"
                 "  if (interior) {{\n"
                 "#pragma unroll\n"
                 "    for (int r = 0; r < {3}; ++r)\n"
                 "#pragma unroll\n"
                 "      for (int c = 0; c < {2}; c += 32) {{\n"
                 "        const int x = {4} + c + lane, y = {5} + r;\n"
                 "{6}"
                 "      }\n"
                 "  } else {{\n"
                 "    for (int r = 0; r < {3}; ++r)\n"
                 "      for (int c = 0; c < {2}; c += 32) {{\n"
                 "        const int x = {4} + c + lane, y = {5} + r;\n"
                 "        if ({10}){8}\n"
                 "{7}"
                 "{9}"
                 "      }\n"
                 "  }\n",
                 Who, What, Width, H, XStart, regionStart(S, 1),
                 calls(Is, "true", "        "),
                 calls(Is, "false", "          "), Is.size() > 1 ? " {" : "",
                 Is.size() > 1 ? "        }\n" : "", insideLaunch(Is))
          .str();
    return llvm::formatv("  // {0} {1}.\n"
                         "  for (int i = lane; i < {2} * {3}; i += 32) {{\n"
                         "    const int x = {4} + i % {2}, y = {5} + i / {2};\n"
                         "{6}"
                         "  }\n",
                         Who, What, Width, H, XStart, regionStart(S, 1),
                         pointCalls(Is, "    "))
        .str();
  }

  /// The loops of stages \p Is: one stage (split into a shared and a
  /// register part with hybrid tiling), or several of one region that
  /// share the loop (see kernel()).
  std::string stageLoop(const std::vector<unsigned> &Is) {
    unsigned I = Is.front();
    const FuseStage &S = G.Stages[I];
    int64_t W = regionExtent(S, 0, T.width());
    auto Rows = [&](int64_t Lo, int64_t Hi) {
      return llvm::formatv("columns {0} + [{1}, {2}), rows {3} + [{4}, {5})",
                           scaledOrigin(S, 0, "x0"), Lo, Hi,
                           scaledOrigin(S, 1, "y0"), S.RegionLo[1],
                           S.RegionLo[1] + regionExtent(S, 1, T.Rows))
          .str();
    };
    if (Hybrid.splits(G, I)) {
      int64_t Split = registerBase(I);
      std::string Loops;
      if (Split > S.RegionLo[0])
        Loops += linearLoop({I}, S.RegionLo[0], Split - S.RegionLo[0],
                            "over " + Rows(S.RegionLo[0], Split) +
                                " (shared memory part)");
      return Loops + registerLoop(I);
    }
    bool Global = false;
    for (const FuseBuffer &B : G.Written)
      if (llvm::is_contained(Is, B.Producer))
        Global |= B.Global;
    std::string What = Global && S.RegionLo[0] == 0 && S.RegionLo[1] == 0 &&
                               S.RegionHi[0] == 0 && S.RegionHi[1] == 0
                           ? "over the warp's tile"
                           : "over " + Rows(S.RegionLo[0], S.RegionLo[0] + W);
    return linearLoop(Is, S.RegionLo[0], W, What);
  }

  //===-- Hybrid tiling ---------------------------------------------------===//

  /// Where stage \p I's register chunks start, from x0: parallelograms
  /// follow the right edge of its region.
  int64_t registerBase(unsigned I) const {
    return int64_t(T.width()) - 32 * int64_t(Hybrid.Chunks) +
           G.Stages[I].RegionHi[0];
  }

  std::string regsName(const FuseBuffer &B) {
    return param(B.Name).Name + "_regs";
  }

  /// The inlined stages stage \p I reads, directly or through others.
  void inlinedReadBy(unsigned I, std::set<unsigned> &Out) {
    const FuseStage &S = G.Stages[I];
    for (const ParmVarDecl *P : S.Kernel->parameters())
      if (const FuseBuffer *B = bufferOf(S, P);
          B && B->Inlined && B->Producer != I && Out.insert(B->Producer).second)
        inlinedReadBy(B->Producer, Out);
  }

  /// Gathers the register points stage \p I reads at (x, y) into one
  /// Gathered view per register buffer, named in \p Views.
  std::string gather(unsigned I,
                     std::map<const FuseBuffer *, std::string> &Views) {
    auto It = Hybrid.Sources.find(I);
    if (It == Hybrid.Sources.end() || It->second.empty())
      return "";
    const std::vector<RegisterSource> &Sources = It->second;
    std::map<const FuseBuffer *, unsigned> Count;
    for (const RegisterSource &Src : Sources)
      ++Count[Src.Buffer];
    std::string Decls, Interior, Border;
    for (const auto &[B, N] : Count) {
      Views[B] = param(B->Name).Name + "_read";
      Decls +=
          llvm::formatv("      cuda_rewrite::fuse::Gathered<{0}, {1}> {2};\n",
                        B->ElementType, N, Views[B]);
    }
    std::map<const FuseBuffer *, unsigned> Next;
    const FuseStage &C = G.Stages[I];
    for (const RegisterSource &Src : Sources) {
      const FuseBuffer &B = *Src.Buffer;
      const FuseStage &P = G.Stages[B.Producer];
      unsigned N = Next[&B]++;
      int64_t Lag = P.RegionHi[0] - C.RegionHi[0];
      int64_t RowShift = C.RegionLo[1] - P.RegionLo[1];
      std::string X = plus("x", Src.offset(0)), Y = plus("y", Src.offset(1));
      Interior += llvm::formatv(
          "        {0}.set({1}, {2}, {3},\n"
          "                cuda_rewrite::fuse::registerRead({4}, j, {5}, {6}, "
          "lane, {7}, {2}, {3}));\n",
          Views[&B], N, X, Y, regsName(B), plus("r", RowShift + Src.offset(1)),
          Src.offset(0) - Lag, tileName(B));
      Border += llvm::formatv(
          "        {{\n"
          "          const int sx = {0}, sy = {1};\n"
          "          {2}.set({3}, sx, sy,\n"
          "                  cuda_rewrite::fuse::registerReadAt<{4}>({5}, j, "
          "{6}, {7}, {8}, {9}, sx, sy));\n"
          "        }\n",
          Src.text(0, "x"), Src.text(1, "y"), Views[&B], N,
          Src.highest(1) - Src.lowest(1), regsName(B),
          plus("r", RowShift + Src.lowest(1)),
          plus("x0", registerBase(B.Producer)), plus("y0", P.RegionLo[1]),
          tileName(B));
    }
    return Decls + "      if (interior) {\n" + Interior + "      } else {\n" +
           Border + "      }\n";
  }

  /// Stage \p I over its register chunks, the loops unrolled so that every
  /// register index is a constant and every lane takes part in every
  /// shuffle.
  std::string registerLoop(unsigned I) {
    const FuseStage &S = G.Stages[I];
    int64_t H = int64_t(T.Rows) + S.RegionHi[1] - S.RegionLo[1];
    int64_t Base = registerBase(I);
    std::map<const FuseBuffer *, std::string> Views;
    std::string Body = gather(I, Views);
    // Inlined stages it reads that read register points take the gathered
    // views: their lambdas are defined again here, hiding the kernel's.
    std::set<unsigned> Inlined;
    inlinedReadBy(I, Inlined);
    for (unsigned K : Inlined)
      if (readsRegisters(K))
        Body += indented(valueLambda(K, Views), "    ");
    for (const FuseBuffer &B : G.Written)
      if (B.Producer == I && Hybrid.inRegisters(&B)) {
        Views[&B] = param(B.Name).Name + "_slot";
        Body += llvm::formatv(
            "      const cuda_rewrite::fuse::Slot<{0}> {1}{{{2}[j][r]};\n",
            B.ElementType, Views[&B], regsName(B));
      }
    Body += "      if (interior)\n        " + pointName(I) + "<true>(" +
            llvm::join(callArgs(I, Views), ", ") + ");\n" +
            "      else if (x >= 0 && y >= 0 && x < extentX && y < extentY)\n"
            "        " +
            pointName(I) + "<false>(" + llvm::join(callArgs(I, Views), ", ") +
            ");\n";
    return llvm::formatv(
               "  // {0} over columns x0 + [{1}, {2}), rows y0 + [{3}, {4}) in "
               "registers:\n"
               "  // lane l of chunk j is column {6} + 32 * j + l "
               "(hybrid tiling).\n"
               "#pragma unroll\n"
               "  for (int j = 0; j < kChunks; ++j) {{\n"
               "#pragma unroll\n"
               "    for (int r = 0; r < {5}; ++r) {{\n"
               "      const int x = {6} + 32 * j + lane, y = {7} + r;\n"
               "{8}"
               "    }\n"
               "  }\n",
               S.Kernel->getNameAsString(), Base,
               Base + 32 * int64_t(Hybrid.Chunks), S.RegionLo[1],
               T.Rows + S.RegionHi[1], H, plus("x0", Base),
               plus("y0", S.RegionLo[1]), Body)
        .str();
  }

  /// Whether inlined stage \p K reads a register buffer, directly or
  /// through other inlined stages.
  bool readsRegisters(unsigned K) {
    return llvm::any_of(tilesRead(K), [&](const FuseBuffer *B) {
      return Hybrid.inRegisters(B);
    });
  }

  static std::string indented(const std::string &Text,
                              const std::string &Indent) {
    std::string Out;
    for (llvm::StringRef Line :
         llvm::split(llvm::StringRef(Text).rtrim('\n'), '\n'))
      Out += (Line.empty() ? "" : Indent + Line.str()) + "\n";
    return Out;
  }

  std::string tileName(const FuseBuffer &B) {
    const HostParam &P = param(B.Name);
    return P.Name + "_tile";
  }

  std::string valueName(const FuseBuffer &B) {
    return param(B.Name).Name + "_at";
  }

  /// Whether stage \p I can join the loop of stages \p Loop: same region,
  /// no register part, and no inlined stage read (its lambda may come
  /// after the loop). Reads of tiles the loop writes are ruled out by the
  /// caller (they wait for a __syncwarp).
  bool sharesLoop(const std::vector<unsigned> &Loop, unsigned I) {
    if (Loop.empty())
      return false;
    const FuseStage &A = G.Stages[Loop.front()], &B = G.Stages[I];
    std::set<unsigned> Inlined;
    inlinedReadBy(I, Inlined);
    return Inlined.empty() && !Hybrid.splits(G, Loop.front()) &&
           !Hybrid.splits(G, I) && A.Grid == B.Grid &&
           A.Scale[0] == B.Scale[0] && A.Scale[1] == B.Scale[1] &&
           A.RegionLo[0] == B.RegionLo[0] && A.RegionLo[1] == B.RegionLo[1] &&
           A.RegionHi[0] == B.RegionHi[0] && A.RegionHi[1] == B.RegionHi[1];
  }

  /// The tiles stage \p I reads, directly or through the inlined stages it
  /// reads.
  std::set<const FuseBuffer *> tilesRead(unsigned I) {
    std::set<const FuseBuffer *> Tiles;
    const FuseStage &S = G.Stages[I];
    for (const ParmVarDecl *P : S.Kernel->parameters()) {
      const FuseBuffer *B = bufferOf(S, P);
      if (!B || !B->OnChip || B->Producer == I)
        continue;
      if (!B->Inlined) {
        Tiles.insert(B);
        continue;
      }
      std::set<const FuseBuffer *> Inner = tilesRead(B->Producer);
      Tiles.insert(Inner.begin(), Inner.end());
    }
    return Tiles;
  }

  /// `const bool interior = ..;`: whether every point of every stage's
  /// region in this warp lies inside the launch and the stage's guards,
  /// and every clamp the point functions skip when it holds leaves its
  /// coordinate as it is. Interior warps, the most, then run the point
  /// functions without guards, bounds checks or those clamps (Halide
  /// partitions its loops likewise).
  std::string interiorFlag() {
    // `origin + offset op limit`, keeping per (origin, op, limit) only the
    // offset that implies the others.
    std::vector<std::tuple<std::string, std::string, std::string>> Keys;
    std::map<std::tuple<std::string, std::string, std::string>, int64_t> Offset;
    auto Add = [&](const std::string &Origin, int64_t K, const std::string &Op,
                   const std::string &Limit) {
      auto Key = std::make_tuple(Origin, Op, Limit);
      auto [It, New] = Offset.try_emplace(Key, K);
      if (New)
        Keys.push_back(Key);
      else
        It->second =
            Op == ">=" ? std::min(It->second, K) : std::max(It->second, K);
    };
    auto Bound = [&](const FuseStage &S,
                     const std::optional<ParamPlusConstant> &V) {
      return boundText(S, V);
    };
    // Conditions on scaled reads, which do not combine that way.
    std::vector<std::string> Scaled;
    for (const FuseStage &S : G.Stages) {
      if (!S.Needed)
        continue;
      for (unsigned D : {0u, 1u}) {
        std::string Origin = scaledOrigin(S, D, D ? "y0" : "x0");
        int64_t Extent = regionExtent(S, D, D ? T.Rows : T.width());
        int64_t First = S.RegionLo[D], Last = First + Extent - 1;
        // An inlined stage has no loop and no guards (its readers read only
        // points it writes): only its clamps matter. A stage of another
        // grid than the last's has guards that bound it instead of the
        // launch (FusePlan).
        if (!S.Inlined) {
          Add(Origin, First, ">=", "0");
          if (S.Grid == 0)
            Add(Origin, Last, "<", D ? "extentY" : "extentX");
        }
        for (const StageBound &B : S.Access.Bounds) {
          if (B.Axis != D || S.Inlined)
            continue;
          std::optional<std::string> L = Bound(S, B.LimitValue);
          if (!L)
            return "  const bool interior = false;\n";
          std::string Limit = plus(*L, B.Add);
          if (B.Upper)
            Add(Origin, Last, "<", Limit);
          else
            Add(Origin, First, ">=", Limit);
        }
        for (const StageRead &R : S.Access.Reads)
          for (const CoordinateRead &C : R.Coordinates) {
            if (C.Axis != D || !Unclamped.count(C.ClampCall))
              continue;
            if (C.Scale == 1 && C.Divisor == 1) {
              int64_t K = C.Offset + C.Add;
              Add(Origin, First + K, ">=", *Bound(S, C.LoValue));
              Add(Origin, Last + K, "<=", *Bound(S, C.HiValue));
              continue;
            }
            // The read's coordinate grows with the point's: its values at
            // the region's ends bound the others.
            for (auto [End, Op, Limit] :
                 {std::make_tuple(First, ">=", *Bound(S, C.LoValue)),
                  std::make_tuple(Last, "<=", *Bound(S, C.HiValue))}) {
              std::string Point = plus(Origin, End);
              if (Point.find(' ') != std::string::npos)
                Point = "(" + Point + ")";
              if (C.Divisor == 1) {
                // Linear: reads that differ by a constant combine.
                Add(std::to_string(C.Scale) + " * " + Point, C.Add + C.Offset,
                    Op, Limit);
                continue;
              }
              std::string Text =
                  readCoordinate(C, Point) + " " + Op + " " + Limit;
              if (!llvm::is_contained(Scaled, Text))
                Scaled.push_back(Text);
            }
          }
      }
    }
    std::vector<std::string> Conditions;
    for (const auto &Key : Keys)
      Conditions.push_back(plus(std::get<0>(Key), Offset[Key]) + " " +
                           std::get<1>(Key) + " " + std::get<2>(Key));
    Conditions.insert(Conditions.end(), Scaled.begin(), Scaled.end());
    return "  // Every region of this warp inside the image, its guards and "
           "its clamps.\n  const bool interior = " +
           llvm::join(Conditions, " && ") + ";\n";
  }

  /// A bound of stage \p S (a parameter plus a constant) in the kernel's
  /// names.
  std::optional<std::string>
  boundText(const FuseStage &S, const std::optional<ParamPlusConstant> &V) {
    if (!V)
      return std::nullopt;
    if (!V->Param)
      return std::to_string(V->Constant);
    unsigned I = V->Param->getFunctionScopeIndex();
    if (I >= S.ArgText.size())
      return std::nullopt;
    return plus(param(S.ArgText[I]).Name, V->Constant);
  }

  /// The shared part of \p B's tile: all of it, or what the register
  /// chunks leave.
  TileShape shape(const FuseBuffer &B) const {
    TileShape S = tileOf(G, B, T);
    if (Hybrid.inRegisters(&B))
      S.Width -= 32 * int64_t(Hybrid.Chunks);
    return S;
  }

  /// The clamps an interior warp skips: those of reads at the point's own
  /// coordinate plus a constant, whose bounds are parameters plus
  /// constants.
  void findUnclamped() {
    for (const FuseStage &S : G.Stages)
      for (const StageRead &R : S.Access.Reads)
        for (const CoordinateRead &C : R.Coordinates) {
          auto Mappable = [&](const std::optional<ParamPlusConstant> &V) {
            return V && (!V->Param ||
                         V->Param->getFunctionScopeIndex() < S.ArgText.size());
          };
          if (C.Clamped && C.ClampCall && C.Axis < 2 && Mappable(C.LoValue) &&
              Mappable(C.HiValue))
            Unclamped.insert(C.ClampCall);
        }
  }

  /// The arguments of stage \p I's point or value function at the kernel's
  /// (x, y, z), up to its tiles.
  std::vector<std::string> pointArgs(unsigned I) {
    const FuseStage &S = G.Stages[I];
    std::vector<std::string> Args;
    for (unsigned D = 0; D != 3; ++D)
      if (S.Access.CoordinateVar[D])
        Args.push_back(AxisName[D]);
    return Args;
  }

  /// `const auto Ixx_at = [&](int x, int y) { return productXX_at(..); };`
  std::string
  valueLambda(unsigned I,
              const std::map<const FuseBuffer *, std::string> &Views = {}) {
    const FuseStage &S = G.Stages[I];
    std::vector<std::string> Args = callArgs(I, Views);
    std::vector<std::string> Readers;
    for (unsigned C = I + 1; C != G.Stages.size(); ++C)
      for (const ParmVarDecl *P : G.Stages[C].Kernel->parameters())
        if (const FuseBuffer *B = bufferOf(G.Stages[C], P);
            B && B->Producer == I &&
            !llvm::is_contained(Readers, G.Stages[C].Kernel->getNameAsString()))
          Readers.push_back(G.Stages[C].Kernel->getNameAsString());
    return llvm::formatv("  // {0}, computed where {1} read{2} it.\n"
                         "  const auto {3} = [&](bool interior, int x, int y) "
                         "{{\n    return {4}(interior, {5});\n  };\n",
                         S.Kernel->getNameAsString(), llvm::join(Readers, ", "),
                         Readers.size() == 1 ? "s" : "",
                         valueName(writtenBy(I)), pointName(I),
                         llvm::join(Args, ", "))
        .str();
  }

  std::string kernel() {
    std::string Tiles, Views;
    for (const FuseBuffer &B : G.Written) {
      if (!B.OnChip || B.Inlined)
        continue;
      TileShape S = shape(B);
      std::string N = param(B.Name).Name;
      if (S.Width > 0)
        Tiles +=
            llvm::formatv("  __shared__ {0} {1}_tiles[kWarps][{2} * {3}];\n",
                          B.ElementType, N, S.Height, S.Width);
      if (Hybrid.inRegisters(&B))
        Tiles += llvm::formatv("  {0} {1}[kChunks][{2}];\n", B.ElementType,
                               regsName(B), S.Height);
      Views += llvm::formatv("  const cuda_rewrite::fuse::Tile<{0}, {1}> "
                             "{2}_tile{{{3}, {4}, {5}};\n",
                             B.ElementType, S.Width, N,
                             S.Width > 0 ? N + "_tiles[warp]" : "nullptr",
                             S.Origin[0], S.Origin[1]);
    }
    std::string Z;
    if (G.Stages.front().Access.CoordinateVar[2])
      Z = "  const int z = blockIdx.z;\n";
    // A stage's loop waits (__syncwarp) only for tiles written since the
    // last wait that it reads, itself or through inlined stages; tiles are
    // never reused, so no read waits for a later write.
    std::string Body, Deferred;
    std::set<const FuseBuffer *> Unsynced;
    // Stages of one region that read nothing the loop writes share it
    // (Harris's two gradients: their reads of the input load once).
    std::vector<unsigned> Loop;
    auto Flush = [&] {
      if (!Loop.empty())
        Body += stageLoop(Loop);
      Body += Deferred;
      Loop.clear();
      Deferred.clear();
    };
    for (unsigned I = 0; I != G.Stages.size(); ++I) {
      if (!G.Stages[I].Needed)
        continue;
      if (G.Stages[I].Inlined) {
        (Loop.empty() ? Body : Deferred) += valueLambda(I);
        continue;
      }
      std::set<const FuseBuffer *> Reads = tilesRead(I);
      bool Waits = llvm::any_of(
          Reads, [&](const FuseBuffer *B) { return Unsynced.count(B) != 0; });
      if (Waits || !sharesLoop(Loop, I)) {
        Flush();
        if (Waits) {
          Body += "  __syncwarp();\n";
          Unsynced.clear();
        }
      }
      Loop.push_back(I);
      for (const FuseBuffer &B : G.Written)
        if (B.Producer == I && B.OnChip && !B.Inlined)
          Unsynced.insert(&B);
    }
    Flush();
    return llvm::formatv(
               "__global__ void __launch_bounds__({0}) kernel({1}, int "
               "extentX, "
               "int extentY) {{\n"
               "  constexpr int kTileW = {2}, kTileH = {3}, kWarps = {4}{10};\n"
               "{5}"
               "{11}"
               "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;\n"
               "  const int x0 = blockIdx.x * kTileW;\n"
               "  const int y0 = (blockIdx.y * kWarps + warp) * kTileH;\n"
               "{6}{7}{9}\n{8}}\n",
               32 * T.Warps, declaredParams(), T.width(), T.Rows, T.Warps,
               Tiles, Z, Views, Body, interiorFlag(),
               Hybrid.InRegisters.empty()
                   ? ""
                   : ", kChunks = " + std::to_string(Hybrid.Chunks),
               tableCopies())
        .str();
  }

  /// \p Text (host C++ with each host argument's text in parentheses,
  /// "@extent.x" for the last stage's launch extent) over the launcher's
  /// parameter names.
  std::string launcherTerms(std::string Text) {
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

  /// `(Arg) + k` in host terms.
  static std::string hostBound(const HostBound &B) {
    if (B.Arg.empty())
      return std::to_string(B.Constant);
    return plus("(" + B.Arg + ")", B.Constant);
  }

  /// The extent of grid \p K along \p D, in the launcher.
  static std::string extentOf(unsigned K, unsigned D) {
    if (K == 0)
      return D ? "extentY" : "extentX";
    return llvm::formatv("(long long)grid{0}.{1} * block.{1}", K, AxisName[D]);
  }

  /// The block's copies of the staged tables, before any thread reads
  /// them: every thread reaches the barrier.
  std::string tableCopies() {
    std::string Text;
    for (const StagedTable &T : Tables)
      Text += llvm::formatv("  for (int i = threadIdx.x; i < {0}; i += "
                            "blockDim.x)\n    {1}[i] = {2}[i];\n",
                            T.Elements, T.Name, T.Var->getNameAsString());
    return Text.empty() ? "" : Text + "  __syncthreads();\n";
  }

  std::string launcher() {
    std::vector<std::string> Written, Others;
    for (const std::string &B : G.GlobalWrites)
      Written.push_back(param(B).Name);
    for (const std::string &B : G.OtherBuffers)
      Others.push_back(param(B).Name);
    std::string Checks;
    std::vector<std::string> Extents, Relations, Covered;
    for (const ExtentCheck &C : G.ExtentChecks)
      Extents.push_back(launcherTerms(extentOf(C.Grid, C.Axis) +
                                      " >= " + hostBound(C.Bound)));
    for (unsigned K = 1; K < G.Grids.size(); ++K)
      Extents.push_back(llvm::formatv("grid{0}.z == grid.z", K));
    for (const std::string &R : G.RelationChecks)
      Relations.push_back(launcherTerms(R));
    for (const CoverageCheck &C : G.CoverageChecks) {
      std::string Points =
          llvm::formatv("(long long)fusedGrid.{0} * {1}", AxisName[C.Axis],
                        C.Axis ? T.Rows * T.Warps : T.width());
      if (C.Scale.Num != 1)
        Points = std::to_string(C.Scale.Num) + " * " + Points;
      if (C.Scale.Den != 1)
        Points += " / " + std::to_string(C.Scale.Den);
      Covered.push_back(launcherTerms(Points + " >= " + hostBound(C.Bound)));
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
    Check(Relations, "  // The levels' sizes are related as the scaled reads "
                     "need: every base\n  // point they read around lies "
                     "inside what the producer writes.\n");
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
               "  const long long tilesY = (extentY + {3} - 1) / {3};\n"
               "  if (extentX > INT_MAX || extentY > INT_MAX || tilesY > 65535 "
               "||\n      extentZ > 65535)\n"
               "    return false;\n"
               "  const dim3 fusedGrid(unsigned((extentX + {4} - 1) / {4}), "
               "unsigned(tilesY),\n                       unsigned(extentZ));\n"
               "{8}"
               "  kernel<<<fusedGrid, {5}, 0, stream>>>({6}, int(extentX), "
               "int(extentY));\n"
               "  return true;\n"
               "}\n",
               declaredParams(),
               ZGlobal ? "(long long)grid.z * block.z" : "grid.z", Checks,
               T.Rows * T.Warps, T.width(), 32 * T.Warps, paramNames(), Grids,
               CoverageChecks)
        .str();
  }

  const FuseGroup &G;
  const FuseTile &T;
  std::string Name;
  ASTContext &Ctx;
  const SourceManager &SM;
  std::vector<HostParam> Params;
  std::map<std::string, unsigned> Param;
  std::vector<const DeclStmt *> CoordinateDecls, LocalDecls;
  std::set<const CallExpr *> Unclamped;
  std::vector<StagedTable> Tables;
  HybridPlan Hybrid;
  std::string Why;
};

} // namespace

unsigned sharedBytesPerWarp(const FuseGroup &G, const FuseTile &T,
                            ASTContext &Ctx) {
  unsigned Bytes = 0;
  for (const FuseBuffer &B : G.Written)
    if (B.OnChip && !B.Inlined) {
      TileShape S = tileOf(G, B, T);
      Bytes += unsigned(S.Width * S.Height) * elementBytes(G, B, Ctx);
    }
  return Bytes;
}

/// \p Code laid out in LLVM style: the point functions' signatures and the
/// launch lines are long, and reviewers read the generated code.
static std::string formatted(const std::string &Code) {
  format::FormatStyle Style = format::getLLVMStyle();
  Style.Language = format::FormatStyle::LK_Cpp;
  tooling::Replacements Changes = format::reformat(
      Style, Code, {tooling::Range(0, unsigned(Code.size()))}, "fused.cu");
  llvm::Expected<std::string> Result =
      tooling::applyAllReplacements(Code, Changes);
  if (!Result) {
    llvm::consumeError(Result.takeError());
    return Code; // Unformatted, but the same code.
  }
  return *Result;
}

FuseCode generateFusedGroup(const FuseGroup &G, const FuseTile &T,
                            const std::string &Name, const std::string &Where,
                            ASTContext &Ctx) {
  FuseCode Code = GroupWriter(G, T, Name, Ctx).run(Where);
  if (Code.Why.empty())
    Code.Definitions = formatted(Code.Definitions);
  return Code;
}

} // namespace cuda_rewrite
