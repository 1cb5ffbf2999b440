//===- Output.cpp - Where rewritten files go ------------------------------===//

#include "tool/Output.h"
#include "tool/UnifiedDiff.h"

#include "clang/Tooling/ReplacementsYaml.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/YAMLTraits.h"
#include <map>

using namespace llvm;

namespace cuda_rewrite {

namespace {

Error cannotWrite(StringRef Path, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(),
                           "cannot write '" + Path + "': " + Why);
}

Error refuseLink(StringRef Path, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(),
                           "refusing to write '" + Path + "': " + Why +
                               "; pass --follow-symlinks to write through it");
}

/// Refuses a symbolic link among the directories between W.OutputDir and
/// W.Path: following it would write wherever it points, possibly outside
/// the directory the user named. The output directory itself may be a link:
/// the user named it.
Error checkNoLinkBelowOutputDir(const FileWrite &W) {
  StringRef Relative = W.Path;
  if (W.OutputDir.empty() || !Relative.consume_front(W.OutputDir))
    return Error::success();
  while (!Relative.empty() && sys::path::is_separator(Relative.front()))
    Relative = Relative.drop_front();
  StringRef Parent = sys::path::parent_path(Relative);
  SmallString<256> Dir(W.OutputDir);
  for (StringRef Component :
       make_range(sys::path::begin(Parent), sys::path::end(Parent))) {
    sys::path::append(Dir, Component);
    sys::fs::file_status Status;
    if (sys::fs::status(Dir, Status, /*Follow=*/false))
      break; // Missing: it and all below are created as directories.
    if (sys::fs::is_symlink_file(Status))
      return refuseLink(W.Path, "'" + Dir +
                                    "' is a symbolic link inside "
                                    "--output-dir '" +
                                    W.OutputDir + "'");
  }
  return Error::success();
}

/// The deepest existing ancestor of \p Target must be a directory the
/// process may write in; otherwise creating the directories, the temporary
/// file or the rename would fail after other files were written.
Error checkParentWritable(StringRef Target, StringRef Shown) {
  std::string Dir = sys::path::parent_path(Target).str();
  while (!Dir.empty() && !sys::fs::exists(Dir))
    Dir = sys::path::parent_path(Dir).str();
  if (Dir.empty())
    Dir = ".";
  if (!sys::fs::is_directory(Dir))
    return cannotWrite(Shown, "'" + Dir + "' is not a directory");
  if (sys::fs::access(Dir, sys::fs::AccessMode::Write))
    return cannotWrite(Shown, "directory '" + Dir + "' is not writable");
  return Error::success();
}

/// Checks one write and returns the file it replaces: W.Path, or what the
/// symbolic link W.Path points to when \p FollowSymlinks. A rename onto a
/// link would silently replace the link by a regular file; onto a directory
/// or a device it would fail or do harm.
Expected<std::string> checkTarget(const FileWrite &W, bool FollowSymlinks) {
  if (!FollowSymlinks)
    if (Error E = checkNoLinkBelowOutputDir(W))
      return E;
  std::string Target = W.Path;
  sys::fs::file_status Status;
  std::error_code EC = sys::fs::status(Target, Status, /*Follow=*/false);
  if (!EC && sys::fs::is_symlink_file(Status)) {
    if (!FollowSymlinks)
      return refuseLink(W.Path, "it is a symbolic link");
    SmallString<256> Real;
    if (std::error_code RealEC = sys::fs::real_path(W.Path, Real))
      return cannotWrite(W.Path, "it is a symbolic link to no file (" +
                                     RealEC.message() + ")");
    Target = std::string(Real);
    EC = sys::fs::status(Target, Status);
  }
  if (!EC && !sys::fs::is_regular_file(Status))
    return cannotWrite(W.Path, sys::fs::is_directory(Status)
                                   ? "it is a directory"
                                   : "it is not a regular file");
  // A missing file, or an ancestor that is no directory, which
  // checkParentWritable names.
  if (EC && EC != std::errc::no_such_file_or_directory &&
      EC != std::errc::not_a_directory)
    return cannotWrite(W.Path, EC.message());
  if (Error E = checkParentWritable(Target, W.Path))
    return E;
  return Target;
}

/// Gives the temporary file \p FD what the file it replaces had: its mode
/// (the file is the same file to its users) and, where the process may
/// (root, or a group it is in), its owner and group, as sed -i does.
Error copyOwnerAndMode(int FD, const sys::fs::file_status &Replaced,
                       StringRef Shown) {
#ifdef LLVM_ON_UNIX
  sys::fs::file_status Temp;
  if (!sys::fs::status(FD, Temp) && (Temp.getUser() != Replaced.getUser() ||
                                     Temp.getGroup() != Replaced.getGroup()))
    (void)sys::fs::changeFileOwnership(FD, Replaced.getUser(),
                                       Replaced.getGroup());
#endif
  // After the owner: chown clears the set-user-ID and set-group-ID bits.
  if (std::error_code EC = sys::fs::setPermissions(FD, Replaced.permissions()))
    return cannotWrite(Shown, "cannot set its mode: " + EC.message());
  return Error::success();
}

/// Files written beside their targets and renamed into place only by
/// commit(); whatever was not renamed is removed on destruction, and so are
/// the directories made for them that stayed empty, so a failure leaves no
/// temporary file or new directory behind.
class PendingFiles {
public:
  PendingFiles() = default;
  PendingFiles(const PendingFiles &) = delete;
  PendingFiles &operator=(const PendingFiles &) = delete;
  ~PendingFiles() {
    for (size_t I = Committed; I < Files.size(); ++I) {
      sys::fs::remove(Files[I].Temp);
      sys::DontRemoveFileOnSignal(Files[I].Temp);
    }
    removeEmptyCreatedDirectories();
  }

  /// Writes \p W's contents to a temporary file beside \p Target.
  Error add(StringRef Target, const FileWrite &W) {
    StringRef Dir = sys::path::parent_path(Target);
    if (Error E = createDirectories(Dir))
      return E;
    sys::fs::file_status Replaced;
    bool Replaces = !sys::fs::status(Target, Replaced);
    // open() applies the umask to a new file's mode, as cp does; special
    // bits are not copied to a new file.
    unsigned Mode = sys::fs::all_read | sys::fs::all_write;
    sys::fs::file_status From;
    if (!Replaces && !W.ModeFrom.empty() && !sys::fs::status(W.ModeFrom, From))
      Mode = From.permissions() & sys::fs::all_all;
    // A short name of its own, so that a target name near NAME_MAX fits.
    SmallString<256> Model(Dir);
    sys::path::append(Model, ".cuda-rewrite-%%%%%%%%.tmp");
    int FD;
    SmallString<256> Temp;
    if (std::error_code EC =
            sys::fs::createUniqueFile(Model, FD, Temp, sys::fs::OF_None, Mode))
      return cannotWrite(W.Path,
                         "cannot create a temporary file: " + EC.message());
    sys::RemoveFileOnSignal(Temp);
    Files.push_back({std::string(Temp), Target.str(), W.Path});
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    if (Replaces)
      if (Error E = copyOwnerAndMode(FD, Replaced, W.Path))
        return E;
    OS << W.Contents;
    OS.close();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      return cannotWrite(W.Path, EC.message());
    }
    return Error::success();
  }

  /// Renames every file into place, in order.
  Error commit() {
    for (; Committed < Files.size(); ++Committed) {
      const Pending &F = Files[Committed];
      if (std::error_code EC = sys::fs::rename(F.Temp, F.Target)) {
        // Only a failing file system gets here: every check passed.
        std::string Why = EC.message();
        if (Committed)
          Why += " (" + std::to_string(Committed) +
                 " other file(s) were already written)";
        return cannotWrite(F.Shown, Why);
      }
      sys::DontRemoveFileOnSignal(F.Temp);
    }
    return Error::success();
  }

private:
  /// Creates \p Dir and its missing ancestors, remembering which were made.
  Error createDirectories(StringRef Dir) {
    std::vector<std::string> Missing;
    for (StringRef D = Dir; !D.empty() && !sys::fs::exists(D);
         D = sys::path::parent_path(D))
      Missing.push_back(D.str());
    if (Missing.empty())
      return Error::success();
    // All bits, less the umask, as mkdir -p gives (LLVM's default leaves
    // out the other users' bits).
    std::error_code EC = sys::fs::create_directories(
        Dir, /*IgnoreExisting=*/true, sys::fs::all_all);
    // Made before a failure, they are removed as well.
    for (std::string &D : Missing)
      if (sys::fs::is_directory(D))
        CreatedDirs.push_back(std::move(D));
    if (EC)
      return createStringError(EC, "cannot create directory '%s': %s",
                               Dir.str().c_str(), EC.message().c_str());
    return Error::success();
  }

  /// Removes, deepest first, the directories this made that hold nothing:
  /// after a failure, those of the files not renamed. Removing a directory
  /// that is not empty fails, which keeps every file committed or not ours.
  void removeEmptyCreatedDirectories() {
    llvm::sort(CreatedDirs, [](const std::string &A, const std::string &B) {
      return A.size() > B.size(); // A child's path is longer than its parent's.
    });
    for (const std::string &D : CreatedDirs)
      (void)sys::fs::remove(D);
  }

  struct Pending {
    std::string Temp, Target, Shown;
  };
  std::vector<Pending> Files;
  std::vector<std::string> CreatedDirs;
  size_t Committed = 0;
};

/// A key under which two paths naming the same file (lexically) are equal.
std::string samePathKey(StringRef Path) {
  SmallString<256> Key(Path);
  sys::fs::make_absolute(Key);
  sys::path::remove_dots(Key, /*remove_dot_dot=*/true);
  return std::string(Key);
}

/// Handles the names llvm::writeToOutput treated specially, which -o and
/// --export-fixes have always accepted: `-` is stdout, /dev/null discards.
bool writeSpecialOutput(StringRef Path, StringRef Contents,
                        raw_ostream &Stdout) {
  if (Path == "-")
    Stdout << Contents;
  return Path == "-" || Path == "/dev/null";
}

/// Refuses a set of outputs where one lies below another's path: the first
/// would be written as a directory and the second as a file, so the second
/// rename would fail after the first was made. \p Keys are samePathKey()s.
Error checkNoOutputBelowAnother(
    const std::map<std::string, const FileWrite *> &Keys) {
  for (const auto &[Key, W] : Keys) {
    // The paths below Key, if any, sort first among those from Key + "/".
    std::string Prefix = Key + sys::path::get_separator().str();
    auto Below = Keys.lower_bound(Prefix);
    if (Below != Keys.end() && StringRef(Below->first).starts_with(Prefix))
      return cannotWrite(Below->second->Path,
                         "'" + W->Path +
                             "', a directory on its path, is another output");
  }
  return Error::success();
}

/// Refuses an output of -o or --output-dir that is its own input: only -i
/// may replace an input. Both a lexically equal path and another name of
/// the same file (a link, `--output-dir .`) count.
Error checkNotTheInput(StringRef Output, StringRef Input) {
  bool Same = samePathKey(Output) == samePathKey(Input);
  if (!Same)
    (void)sys::fs::equivalent(Output, Input, Same);
  if (!Same)
    return Error::success();
  return createStringError(inconvertibleErrorCode(),
                           "the output '%s' is the input file '%s', which "
                           "cuda-rewrite replaces only with -i",
                           Output.str().c_str(), Input.str().c_str());
}

/// True if \p Path lies strictly below the directory \p Dir (both absolute
/// and free of dots).
bool isBelow(StringRef Path, StringRef Dir) {
  std::string Prefix = Dir.str();
  if (!sys::path::is_separator(Prefix.back()))
    Prefix += sys::path::get_separator();
  return Path.starts_with(Prefix) && Path.size() > Prefix.size();
}

/// The directory the inputs' paths are kept relative to under --output-dir
/// with -p, whose files come with absolute paths: the database's directory
/// where every input lies below it, else the deepest directory holding
/// every input. Without -p: "" (paths as the user gave them).
std::string outputDirBase(const ToolOptions &Opts,
                          ArrayRef<RewrittenFile> Files) {
  if (Opts.BuildPath.empty() || Files.empty())
    return "";
  std::string Database = samePathKey(Opts.BuildPath);
  if (llvm::all_of(Files, [&](const RewrittenFile &F) {
        return isBelow(F.AbsolutePath, Database);
      }))
    return Database;
  std::string Root = sys::path::parent_path(Files.front().AbsolutePath).str();
  for (const RewrittenFile &F : Files)
    while (!Root.empty() && !isBelow(F.AbsolutePath, Root))
      Root = sys::path::parent_path(Root).str();
  return Root;
}

} // namespace

std::string displayPath(StringRef Path) {
  if (sys::path::is_relative(Path))
    return Path.str();
  SmallString<256> Cwd;
  if (sys::fs::current_path(Cwd))
    return Path.str();
  std::string Key = samePathKey(Path);
  if (!isBelow(Key, Cwd))
    return Path.str();
  return StringRef(Key).drop_front(Cwd.size()).ltrim("/").str();
}

Error writeFilesAtomically(ArrayRef<FileWrite> Writes, bool FollowSymlinks) {
  // Check every file before writing any, so that a refusal touches nothing.
  std::vector<std::string> Targets;
  std::map<std::string, const FileWrite *> Seen;
  for (const FileWrite &W : Writes) {
    Expected<std::string> Target = checkTarget(W, FollowSymlinks);
    if (!Target)
      return Target.takeError();
    auto [It, New] = Seen.emplace(samePathKey(*Target), &W);
    if (!New && !W.OutputDir.empty() && !It->second->OutputDir.empty())
      return createStringError(inconvertibleErrorCode(),
                               "two inputs map to '%s' under --output-dir",
                               W.Path.c_str());
    if (!New)
      return createStringError(inconvertibleErrorCode(),
                               "two outputs would write '%s'", W.Path.c_str());
    Targets.push_back(std::move(*Target));
  }
  if (Error E = checkNoOutputBelowAnother(Seen))
    return E;
  PendingFiles Pending;
  for (size_t I = 0; I < Writes.size(); ++I)
    if (Error E = Pending.add(Targets[I], Writes[I]))
      return E;
  return Pending.commit();
}

std::string outputDirPath(StringRef Dir, StringRef InputPath) {
  SmallString<256> Normal(InputPath);
  sys::path::remove_dots(Normal, /*remove_dot_dot=*/true);
  // In a normalised relative path, `..` can only lead: those leave the
  // current directory, and under Dir they would leave Dir.
  bool StaysBelow = sys::path::is_relative(Normal) && !Normal.empty() &&
                    *sys::path::begin(Normal) != "..";
  StringRef Below =
      StaysBelow ? StringRef(Normal) : sys::path::filename(Normal);
  if (Below.empty() || Below == "." || Below == ".." ||
      sys::path::is_separator(Below.back()))
    return "";
  SmallString<256> Out(Dir);
  sys::path::append(Out, Below);
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

  // Paths below the current directory are relative, so that `patch -p0`
  // applies the diff of -p's absolute paths too.
  if (Opts.Diff)
    for (const RewrittenFile &F : Files)
      Stdout << unifiedDiff(displayPath(F.InputPath), F.Original, F.Rewritten);

  // Every file goes through one writeFilesAtomically call, so that all are
  // checked before any is written.
  std::vector<FileWrite> Writes;
  std::string Yaml;
  if (!Opts.ExportFixes.empty()) {
    Yaml = exportFixesYaml(Files);
    if (!writeSpecialOutput(Opts.ExportFixes, Yaml, Stdout))
      Writes.push_back({Opts.ExportFixes, Yaml, "", ""});
  }

  // -o has one input; it is absent here when it failed to parse. A new
  // output file gets its input's mode, as cp gives a copy.
  if (!Opts.OutputFile.empty() && !Files.empty()) {
    const RewrittenFile &F = Files.front();
    if (!writeSpecialOutput(Opts.OutputFile, F.Rewritten, Stdout)) {
      if (Error E = checkNotTheInput(Opts.OutputFile, F.InputPath))
        return E;
      Writes.push_back({Opts.OutputFile, F.Rewritten, F.InputPath, ""});
    }
  }

  if (!Opts.OutputDir.empty()) {
    std::string Base = outputDirBase(Opts, Files);
    for (const RewrittenFile &F : Files) {
      std::string Relative = Base.empty() ? F.InputPath
                                          : StringRef(F.AbsolutePath)
                                                .drop_front(Base.size())
                                                .ltrim("/")
                                                .str();
      std::string Path = outputDirPath(Opts.OutputDir, Relative);
      if (Path.empty())
        return createStringError(inconvertibleErrorCode(),
                                 "'%s' names no file to write under "
                                 "--output-dir",
                                 F.InputPath.c_str());
      if (Error E = checkNotTheInput(Path, F.InputPath))
        return E;
      Writes.push_back({Path, F.Rewritten, F.InputPath, Opts.OutputDir});
    }
  }

  if (Opts.InPlace)
    for (const RewrittenFile &F : Files)
      if (F.Rewritten != F.Original) // Untouched files keep their mtime.
        Writes.push_back({F.InputPath, F.Rewritten, "", ""});

  return writeFilesAtomically(Writes, Opts.FollowSymlinks);
}

} // namespace cuda_rewrite
