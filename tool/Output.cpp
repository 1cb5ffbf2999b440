//===- Output.cpp - Where rewritten files go ------------------------------===//

#include "tool/Output.h"
#include "tool/UnifiedDiff.h"

#include "clang/Tooling/ReplacementsYaml.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include <set>

using namespace llvm;

namespace cuda_rewrite {

Error writeFileAtomically(StringRef Path, StringRef Contents) {
  StringRef Dir = sys::path::parent_path(Path);
  if (!Dir.empty())
    if (std::error_code EC = sys::fs::create_directories(Dir))
      return createStringError(EC, "cannot create directory '%s': %s",
                               Dir.str().c_str(), EC.message().c_str());
  // llvm::writeToOutput writes a temporary file beside Path and renames it
  // into place only once everything was written.
  return writeToOutput(Path, [&](raw_ostream &OS) {
    OS << Contents;
    return Error::success();
  });
}

std::string outputDirPath(StringRef Dir, StringRef InputPath) {
  SmallString<256> Relative(InputPath);
  sys::path::remove_dots(Relative, /*remove_dot_dot=*/false);
  bool StaysBelow = sys::path::is_relative(Relative) &&
                    !StringRef(Relative).starts_with("..");
  SmallString<256> Out(Dir);
  sys::path::append(Out, StaysBelow ? StringRef(Relative)
                                    : sys::path::filename(InputPath));
  return std::string(Out);
}

std::string exportFixesYaml(ArrayRef<RewrittenFile> Files) {
  clang::tooling::TranslationUnitReplacements TU;
  if (Files.size() == 1)
    TU.MainSourceFile = Files.front().AbsolutePath;
  for (const RewrittenFile &F : Files)
    for (const clang::tooling::Replacement &R : F.Edits)
      TU.Replacements.emplace_back(F.AbsolutePath, R.getOffset(), R.getLength(),
                                   R.getReplacementText());
  std::string Text;
  raw_string_ostream OS(Text);
  yaml::Output YAML(OS);
  YAML << TU;
  return Text;
}

Error writeOutputs(const ToolOptions &Opts, ArrayRef<RewrittenFile> Files,
                   raw_ostream &Stdout) {
  if (Opts.printsRewrittenToStdout())
    for (const RewrittenFile &F : Files)
      Stdout << F.Rewritten;

  if (Opts.Diff)
    for (const RewrittenFile &F : Files)
      Stdout << unifiedDiff(F.InputPath, F.Original, F.Rewritten);

  if (!Opts.ExportFixes.empty())
    if (Error E = writeFileAtomically(Opts.ExportFixes, exportFixesYaml(Files)))
      return E;

  // -o has one input; it is absent here when it failed to parse.
  if (!Opts.OutputFile.empty() && !Files.empty())
    return writeFileAtomically(Opts.OutputFile, Files.front().Rewritten);

  if (!Opts.OutputDir.empty()) {
    // Check every path before writing any, so a clash writes nothing.
    std::set<std::string> Paths;
    for (const RewrittenFile &F : Files)
      if (!Paths.insert(outputDirPath(Opts.OutputDir, F.InputPath)).second)
        return createStringError(
            inconvertibleErrorCode(),
            "two inputs map to '%s' under --output-dir",
            outputDirPath(Opts.OutputDir, F.InputPath).c_str());
    for (const RewrittenFile &F : Files)
      if (Error E = writeFileAtomically(
              outputDirPath(Opts.OutputDir, F.InputPath), F.Rewritten))
        return E;
  }

  if (Opts.InPlace)
    for (const RewrittenFile &F : Files)
      if (F.Rewritten != F.Original) // Untouched files keep their mtime.
        if (Error E = writeFileAtomically(F.InputPath, F.Rewritten))
          return E;
  return Error::success();
}

} // namespace cuda_rewrite
