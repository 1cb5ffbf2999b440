//===- FileProcessor.cpp - Parse, analyse and rewrite one file ------------===//

#include "tool/FileProcessor.h"
#include "analysis/Candidates.h"
#include "analysis/CudaArchRegions.h"
#include "analysis/Pragmas.h"
#include "rewriters/PassManager.h"
#include "rewriters/common/EditSet.h"
#include "rewriters/common/GeneratedLayout.h"
#include "rewriters/common/Remarks.h"
#include "tool/CompilationDatabase.h"
#include "tool/LineDirectives.h"
#include "tool/LineEndings.h"
#include "tool/ParsePrelude.h"
#include "tool/RdcCheck.h"
#include "tool/RemovedApis.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <chrono>

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

namespace {

/// What one parse of the file produced.
struct SideOutput {
  bool Ok = false;
  CudaArchRegions ArchRegions;
  std::vector<unsigned> PragmaOffsets;
  std::vector<ListEntry> Listing;
  std::vector<CoverageEntry> Coverage;
  tooling::Replacements Edits;
  RewriteCounts Counts;
  std::string MainFileText;
};

struct SideSettings {
  const ToolOptions &Opts;
  const GpuSpec &Gpu;
  /// This file's diagnostics buffer: printed in input order once all files
  /// are done, so that -j does not interleave them.
  raw_ostream &DiagStream;
  /// Set for the device-side parse: it takes only the candidates inside
  /// these __CUDA_ARCH__ blocks, the host-side parse all the others.
  const CudaArchRegions *OnlyIn = nullptr;

  bool keeps(unsigned Offset) const {
    return !OnlyIn || OnlyIn->contains(Offset);
  }
};

void reportError(DiagnosticsEngine &Diags, SourceLocation Loc,
                 const Twine &Message) {
  Diags.Report(Loc, Diags.getCustomDiagID(DiagnosticsEngine::Error, "%0"))
      << Message.str();
}

/// What the parse found, for the passes.
struct ParseFindings {
  llvm::ArrayRef<PragmaDirective> Pragmas;
  llvm::ArrayRef<AttachedPragma> Attached;
  llvm::ArrayRef<Candidate> Candidates;
  const CudaArchRegions &Regions;
};

/// Everything a rewrite does to the parse short of finalising the edits:
/// the pragmas' removal, the unused-pragma warnings and the passes. The
/// rewrite and --list both call it, so that --list's verdicts are the
/// rewrite's. False if an edit failed (diagnosed).
bool rewriteParse(ASTContext &Ctx, const ParseFindings &Found,
                  const SideSettings &Settings, const PassOptions &PassOpts,
                  Remarks &Remark, EditSet &Edits) {
  DiagnosticsEngine &Diags = Ctx.getDiagnostics();
  // An included file's pragmas stay there: that file is not written.
  for (const PragmaDirective &P : Found.Pragmas)
    if (!P.inMainFile(Ctx.getSourceManager()))
      continue;
    else if (Error E = Edits.removeLines(P.HashLoc, P.EndLoc)) {
      reportError(Diags, P.HashLoc,
                  "cannot remove this pragma: " + toString(std::move(E)));
      return false;
    }
  PassContext Context{Ctx, Settings.Gpu, Edits, Remark};
  if (!Settings.OnlyIn)
    reportUnusedPragmas(Context, Found.Attached, Found.Candidates, PassOpts,
                        Found.Regions);
  return runPasses(Context, Found.Candidates, PassOpts);
}

/// Collects the errors reported while it is the diagnostics' client: the
/// edits a pass could not make during a --list run, which the rewrite would
/// fail on.
class ErrorCollector : public DiagnosticConsumer {
public:
  explicit ErrorCollector(std::vector<RewriteError> &Errors) : Errors(Errors) {}

  void HandleDiagnostic(DiagnosticsEngine::Level Level,
                        const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level < DiagnosticsEngine::Error)
      return;
    SmallString<128> Message;
    Info.FormatDiagnostic(Message);
    Errors.push_back({Info.getLocation(), std::string(Message)});
  }

private:
  std::vector<RewriteError> &Errors;
};

/// Makes \p Into the client of \p Diags for its lifetime, then puts the
/// previous client back.
class ClientSwap {
public:
  ClientSwap(DiagnosticsEngine &Diags, DiagnosticConsumer &Into)
      : Diags(Diags), Previous(Diags.getClient()), Owned(Diags.takeClient()) {
    Diags.setClient(&Into, /*ShouldOwnClient=*/false);
  }
  ~ClientSwap() {
    if (Owned)
      Diags.setClient(Owned.release(), /*ShouldOwnClient=*/true);
    else
      Diags.setClient(Previous, /*ShouldOwnClient=*/false);
  }

private:
  DiagnosticsEngine &Diags;
  DiagnosticConsumer *Previous;
  std::unique_ptr<DiagnosticConsumer> Owned;
};

/// A rewrite of the parse with \p PassOpts whose edits are thrown away and
/// whose remarks, warnings and errors are recorded rather than printed.
RewriteReport rehearseRewrite(ASTContext &Ctx, const ParseFindings &Found,
                              const SideSettings &Settings,
                              const PassOptions &PassOpts) {
  RewriteReport Report;
  ErrorCollector Collector(Report.Errors);
  ClientSwap Swap(Ctx.getDiagnostics(), Collector);
  EditSet Throwaway(Ctx.getSourceManager());
  Remarks::Settings Quiet;
  Quiet.Auto = PassOpts.Auto;
  Quiet.Log = &Report.Remarks;
  Remarks Remark(Ctx.getDiagnostics(), Quiet);
  rewriteParse(Ctx, Found, Settings, PassOpts, Remark, Throwaway);
  return Report;
}

/// Runs when the whole file is parsed: pragmas, candidates, passes, edits.
class AnalysisConsumer : public ASTConsumer {
public:
  AnalysisConsumer(const SideSettings &Settings,
                   std::vector<PragmaDirective> &Pragmas, SideOutput &Out)
      : Settings(Settings), Pragmas(Pragmas), Out(Out) {}

  void HandleTranslationUnit(ASTContext &Ctx) override {
    DiagnosticsEngine &Diags = Ctx.getDiagnostics();
    const SourceManager &SM = Ctx.getSourceManager();
    Out.MainFileText = SM.getBufferData(SM.getMainFileID()).str();
    if (Diags.hasErrorOccurred())
      return;
    // Only the main file's pragma lines leave the output; an included
    // file's stay in that file, which is not written.
    for (const PragmaDirective &P : Pragmas)
      if (P.inMainFile(SM))
        Out.PragmaOffsets.push_back(P.Offset);

    std::vector<AttachedPragma> Attached = attachPragmas(Ctx, Pragmas);
    if (Diags.hasErrorOccurred())
      return;
    const ToolOptions &Opts = Settings.Opts;
    // Calls of functions CUDA 13 removed: errors, or renames with
    // --fix-removed-apis (the host side sees every host call; a listing
    // with the option reports on the file as it would be fixed).
    EditSet Edits(SM);
    if (!Settings.OnlyIn && !(Opts.FixRemovedApis && Opts.rewritesNothing()) &&
        reportRemovedApis(Ctx, Opts.FixRemovedApis ? &Edits : nullptr,
                          Opts.Remarks))
      return;
    if (!Settings.OnlyIn && !mainFileHasCudaCode(Ctx))
      Diags.Report(SM.getLocForStartOfFile(SM.getMainFileID()),
                   Diags.getCustomDiagID(
                       DiagnosticsEngine::Warning,
                       "no CUDA code in this file (no __global__ or "
                       "__device__ code, no kernel launch): nothing to "
                       "rewrite"));
    const CudaArchRegions &Regions =
        Settings.OnlyIn ? *Settings.OnlyIn : Out.ArchRegions;
    std::vector<Candidate> Candidates;
    for (Candidate &C : collectCandidates(Ctx, Attached, Regions))
      if (Settings.keeps(C.Offset))
        Candidates.push_back(std::move(C));

    PassOptions PassOpts{Opts.Passes, Opts.Auto,
                         parseGranularity(Opts.AggregateGranularity)};
    ParseFindings Found{Pragmas, Attached, Candidates, Regions};
    auto Rehearse = [&](const PassOptions &With) {
      return rehearseRewrite(Ctx, Found, Settings, With);
    };
    if (Opts.List || Opts.Coverage) {
      if (Opts.List)
        Out.Listing =
            listEntries(Ctx, Candidates, Attached, PassOpts, Rehearse);
      else
        Out.Coverage =
            coverageEntries(Ctx, Candidates, Attached, PassOpts, Rehearse);
      Out.Ok = true;
      return;
    }

    Remarks Remark(Diags, {Opts.Remarks, Opts.Auto, Opts.WarningsAsErrors});
    bool Ran = rewriteParse(Ctx, Found, Settings, PassOpts, Remark, Edits);
    Out.Counts = Remark.counts();
    if (!Ran)
      return;
    Expected<tooling::Replacements> Final = Edits.finalize();
    if (!Final)
      return reportError(Diags, SM.getLocForStartOfFile(SM.getMainFileID()),
                         toString(Final.takeError()));
    Out.Edits = std::move(*Final);
    Out.Ok = !Diags.hasErrorOccurred();
  }

private:
  const SideSettings &Settings;
  std::vector<PragmaDirective> &Pragmas;
  SideOutput &Out;
};

class SideAction : public ASTFrontendAction {
public:
  SideAction(const SideSettings &Settings, SideOutput &Out)
      : Settings(Settings), Out(Out) {}

  bool BeginSourceFileAction(CompilerInstance &CI) override {
    // "N errors generated." belongs with the file's other diagnostics.
    CI.setVerboseOutputStream(Settings.DiagStream);
    Preprocessor &PP = CI.getPreprocessor();
    // The device side records every pragma too: a pragma outside the
    // __CUDA_ARCH__ blocks may annotate a launch inside one. Its removal
    // edit and listing line duplicate the host side's and are merged away.
    PP.AddPragmaHandler(
        new CudaRewritePragmaHandler(registeredDirectives(), Pragmas));
    PP.addPPCallbacks(std::make_unique<CudaArchRegionRecorder>(
        CI.getSourceManager(), Out.ArchRegions));
    return true;
  }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    return std::make_unique<AnalysisConsumer>(Settings, Pragmas, Out);
  }

private:
  const SideSettings &Settings;
  SideOutput &Out;
  std::vector<PragmaDirective> Pragmas;
};

class SideActionFactory : public tooling::FrontendActionFactory {
public:
  SideActionFactory(const SideSettings &Settings, SideOutput &Out)
      : Settings(Settings), Out(Out) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<SideAction>(Settings, Out);
  }

private:
  const SideSettings &Settings;
  SideOutput &Out;
};

/// A database that answers with the first command only: a file the build
/// compiles twice (say, for two targets) is still rewritten once.
class FirstCommandDatabase : public tooling::CompilationDatabase {
public:
  explicit FirstCommandDatabase(const tooling::CompilationDatabase &Base)
      : Base(Base) {}
  std::vector<tooling::CompileCommand>
  getCompileCommands(StringRef File) const override {
    std::vector<tooling::CompileCommand> Commands =
        Base.getCompileCommands(File);
    if (Commands.size() > 1)
      Commands.resize(1);
    return Commands;
  }

private:
  const tooling::CompilationDatabase &Base;
};

/// Parses \p Path once for \p Side, rendering diagnostics into \p DiagText.
SideOutput runSide(const ToolOptions &Opts,
                   const tooling::CompilationDatabase &DB,
                   const CudaToolchain &Toolchain, const GpuSpec &Gpu,
                   StringRef Path, CudaSide Side, const CudaArchRegions *OnlyIn,
                   std::string &DiagText, double &Seconds) {
  auto Start = std::chrono::steady_clock::now();
  raw_string_ostream DiagStream(DiagText);
  SideSettings Settings{Opts, Gpu, DiagStream, OnlyIn};
  SideOutput Out;
  FirstCommandDatabase FirstOnly(DB);
  // A file system of its own: ClangTool enters each compile command's
  // directory, and on the process-wide one that is chdir(), which would move
  // every other thread's relative paths (inputs, --output-dir, -o) with it.
  // ClangTool enters the directory before it adjusts the command, so nvcc
  // options files are read relative to it.
  IntrusiveRefCntPtr<vfs::FileSystem> FS = vfs::createPhysicalFileSystem();
  tooling::ClangTool Tool(FirstOnly, {Path.str()},
                          std::make_shared<PCHContainerOperations>(), FS);
  Tool.mapVirtualFile(ParsePreludePath, parsePreludeText());
  static const std::optional<PatchedHeader> Wrapper =
      patchedCudaRuntimeWrapper(Toolchain.ResourceDir);
  if (Wrapper)
    Tool.mapVirtualFile(Wrapper->Path, Wrapper->Text);
  Tool.clearArgumentsAdjusters();
  Tool.appendArgumentsAdjuster(commandAdjuster(Opts, Toolchain, Side, FS));
  Tool.setPrintErrorMessage(false);

  DiagnosticOptions DiagOpts;
  TextDiagnosticPrinter Printer(DiagStream, DiagOpts);
  Tool.setDiagnosticConsumer(&Printer);

  SideActionFactory Factory(Settings, Out);
  if (Tool.run(&Factory) != 0)
    Out.Ok = false;
  Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  return Out;
}

/// The directory of \p File's compile command when it does not exist, else
/// "": ClangTool would stop the whole process with a fatal error entering
/// it.
std::string missingCommandDirectory(const tooling::CompilationDatabase &DB,
                                    StringRef File) {
  std::vector<tooling::CompileCommand> Commands = DB.getCompileCommands(File);
  if (Commands.empty() || sys::fs::is_directory(Commands.front().Directory))
    return "";
  return Commands.front().Directory;
}

/// Adds the device side's edits to the host side's; an edit both made is
/// kept once, and a conflict fails the file.
Error mergeEdits(tooling::Replacements &Into,
                 const tooling::Replacements &From) {
  for (const tooling::Replacement &R : From) {
    if (llvm::is_contained(Into, R))
      continue;
    if (Error E = Into.add(R))
      return E;
  }
  return Error::success();
}

/// \p Edits with their generated text laid out in the file's clang-format
/// style; LLVM's, with a warning in \p Diagnostics, where the file's style
/// cannot be read.
Expected<tooling::Replacements> layOut(const RewrittenFile &Output,
                                       const tooling::Replacements &Edits,
                                       StringRef Path,
                                       std::string &Diagnostics) {
  Expected<format::FormatStyle> Style =
      generatedCodeStyle(Output.AbsolutePath, Output.Original);
  if (!Style) {
    Diagnostics += Path.str() +
                   ": warning: generated code laid out in LLVM style: " +
                   toString(Style.takeError()) + "\n";
    Style = format::getLLVMStyle();
  }
  return layOutGeneratedCode(Output.Original, Edits, *Style,
                             Output.AbsolutePath);
}

} // namespace

FileResult processFile(const ToolOptions &Opts,
                       const tooling::CompilationDatabase &DB,
                       const CudaToolchain &Toolchain, const GpuSpec &Gpu,
                       StringRef Path) {
  FileResult Result;
  Result.Output.InputPath = Path.str();
  SmallString<256> Absolute(Path);
  sys::fs::make_absolute(Absolute);
  sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
  Result.Output.AbsolutePath = std::string(Absolute);
  if (!sys::fs::is_regular_file(Path)) {
    Result.Failed = true;
    Result.Diagnostics = "error: no such file: '" + Path.str() + "'\n";
    return Result;
  }
  if (std::string Missing = missingCommandDirectory(DB, Absolute);
      !Missing.empty()) {
    Result.Failed = true;
    Result.Diagnostics = Path.str() +
                         ": error: the compile command's directory '" +
                         Missing + "' does not exist\n";
    return Result;
  }

  SideOutput Host =
      runSide(Opts, DB, Toolchain, Gpu, Path, CudaSide::Host, nullptr,
              Result.Diagnostics, Result.HostParseSeconds);
  if (!Host.Ok) {
    Result.Failed = true;
    return Result;
  }
  Result.Listing = std::move(Host.Listing);
  Result.Coverage = std::move(Host.Coverage);
  Result.Counts = Host.Counts;
  tooling::Replacements Edits = std::move(Host.Edits);

  if (!Host.ArchRegions.empty()) {
    Result.ParsedDeviceSide = true;
    SideOutput Device = runSide(Opts, DB, Toolchain, Gpu, Path,
                                CudaSide::Device, &Host.ArchRegions,
                                Result.Diagnostics, Result.DeviceParseSeconds);
    if (!Device.Ok) {
      Result.Failed = true;
      return Result;
    }
    mergeCoverage(Result.Coverage, std::move(Device.Coverage));
    Result.Counts.Rewritten += Device.Counts.Rewritten;
    Result.Counts.Refused += Device.Counts.Refused;
    // A pragma both sides list keeps the host side's line, the one with
    // the verdict of the unused-pragma check.
    for (ListEntry &Entry : Device.Listing)
      if (!llvm::any_of(Result.Listing, [&](const ListEntry &E) {
            return E.Offset == Entry.Offset &&
                   (E.Text == Entry.Text || (E.IsPragma && Entry.IsPragma));
          }))
        Result.Listing.push_back(std::move(Entry));
    llvm::stable_sort(Result.Listing,
                      [](const ListEntry &A, const ListEntry &B) {
                        return A.Offset < B.Offset;
                      });
    if (Error E = mergeEdits(Edits, Device.Edits)) {
      Result.Failed = true;
      Result.Diagnostics += Path.str() +
                            ": error: host-side and device-side "
                            "rewrites conflict: " +
                            toString(std::move(E)) + "\n";
      return Result;
    }
  }

  Result.Output.Original = std::move(Host.MainFileText);
  Expected<tooling::Replacements> LaidOut =
      layOut(Result.Output, Edits, Path, Result.Diagnostics);
  if (!LaidOut) {
    Result.Failed = true;
    Result.Diagnostics += Path.str() + ": error: cannot lay out the edits: " +
                          toString(LaidOut.takeError()) + "\n";
    return Result;
  }
  // Generated text takes the file's line ending (a CRLF file stays CRLF).
  Edits = withLineEndingsOf(Result.Output.Original, *LaidOut);
  Expected<std::string> Rewritten =
      Opts.LineDirectives
          ? applyWithLineDirectives(Result.Output.Original, Edits,
                                    Result.Output.AbsolutePath)
          : tooling::applyAllReplacements(Result.Output.Original, Edits);
  if (!Rewritten) {
    Result.Failed = true;
    Result.Diagnostics += Path.str() + ": error: cannot apply the edits: " +
                          toString(Rewritten.takeError()) + "\n";
    return Result;
  }
  Result.Output.Rewritten = std::move(*Rewritten);
  if (!Opts.BuildPath.empty())
    Result.Diagnostics += rdcWarning(Path, Absolute, Edits, DB);
  Result.Output.Edits = std::move(Edits);
  return Result;
}

} // namespace cuda_rewrite
