//===- RdcCheck.cpp - Rewrites that need relocatable device code ----------===//

#include "tool/RdcCheck.h"
#include "tool/NvccArgs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace llvm;
using namespace clang::tooling;

namespace cuda_rewrite {

namespace {

/// The runtime headers that passes include, and whether code including one
/// needs relocatable device code (checked with nvcc 13.0: compiled without
/// -rdc=true, runtime.cuh and pipeline.cuh fail on error.cuh's
/// static_assert; test/lit/rdc-warning.test compiles each). A header not
/// listed needs none.
struct RuntimeHeader {
  StringLiteral Name;
  bool NeedsRdc;
};
const RuntimeHeader RuntimeHeaders[] = {
    // aggregate, promote: device-side launches; the memory pool and the
    // recorded device error are program-wide device state.
    {"runtime", true},
    // pipeline: the recorded device error.
    {"pipeline", true},
    // fuse: stateless helpers.
    {"fuse", false},
};

constexpr StringLiteral IncludePrefix = "#include \"cuda_rewrite/";

} // namespace

std::vector<std::string> runtimeHeadersNeedingRdc(const Replacements &Edits) {
  std::vector<std::string> Headers;
  for (const Replacement &R : Edits) {
    StringRef Text = R.getReplacementText();
    for (size_t At = Text.find(IncludePrefix); At != StringRef::npos;
         At = Text.find(IncludePrefix, At + 1)) {
      StringRef Name = Text.substr(At + IncludePrefix.size());
      Name = Name.take_until([](char C) { return C == '"' || C == '\n'; });
      if (!Name.consume_back(".cuh"))
        continue;
      const RuntimeHeader *H =
          find_if(RuntimeHeaders,
                  [&](const RuntimeHeader &H) { return H.Name == Name; });
      if (H != std::end(RuntimeHeaders) && H->NeedsRdc &&
          !is_contained(Headers, Name))
        Headers.push_back(Name.str());
    }
  }
  return Headers;
}

bool nvccCommandLacksRdc(const CompileCommand &Command) {
  if (!isNvccCommand(Command.CommandLine))
    return false;
  IntrusiveRefCntPtr<vfs::FileSystem> FS = vfs::createPhysicalFileSystem();
  if (FS->setCurrentWorkingDirectory(Command.Directory))
    return false; // The parse reports the missing directory.
  return !translateNvccCommand(Command.CommandLine, FS.get())
              .RelocatableDeviceCode;
}

std::string rdcWarning(StringRef File, StringRef AbsolutePath,
                       const Replacements &Edits,
                       const CompilationDatabase &DB) {
  if (runtimeHeadersNeedingRdc(Edits).empty())
    return "";
  std::vector<CompileCommand> Commands = DB.getCompileCommands(AbsolutePath);
  if (Commands.empty() || !nvccCommandLacksRdc(Commands.front()))
    return "";
  return (File + ": warning: the rewrite needs relocatable device code (nvcc "
                 "-rdc=true) but the compile command has none "
                 "[-Wcuda-rewrite-rdc]\n")
      .str();
}

} // namespace cuda_rewrite
