//===- NvccArgs.cpp - nvcc command lines translated for clang -------------===//
//
// The nvcc 13.0 options (`nvcc --help`, plus the hidden -Xcudafe, -Xcicc and
// -Xfatbin) are listed in one table below, each with what it becomes for
// clang. nvcc's own parsing rules, checked against nvcc 13.0:
//   - every option is written `-short` or `--long`; a value follows as the
//     next argv element or after '=' (`-arch sm_90`, `-arch=sm_90`,
//     `--gpu-architecture=sm_90`); -I, -D, -U, -l, -L, -O and -t also take
//     it joined (`-I/usr/include`, `-O3`, `-t4`);
//   - the value of a list option is split on commas, `\,` being a literal
//     comma (`-DA=1,B=2` defines A and B);
//   - with -forward-unknown-to-host-compiler (CMake always adds it), an
//     option nvcc does not know goes to the host compiler on its own (the
//     argv element after it is not taken as its value);
//   - `--options-file <f>,...` (-optf) stands for the options in each file,
//     in place: they are split on whitespace, double quotes group (and are
//     removed), a backslash takes the next character literally, single
//     quotes are ordinary characters; a relative file name, in a file too,
//     is relative to the working directory (the compile command's); a file
//     may name another, 15 files deep at most.
// This translation accepts both `-name` and `--name` for every name.
//
//===----------------------------------------------------------------------===//

#include "tool/NvccArgs.h"

#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/OffloadArch.h"
#include "clang/Options/Options.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <mutex>
#include <set>

using namespace llvm;

namespace cuda_rewrite {

namespace {

/// How an option takes its value. A value is the next argv element or
/// follows '=' (`-arch sm_90`, `-arch=sm_90`, `--gpu-architecture=sm_90`);
/// it is always consumed, also when the option is dropped, so that none is
/// left behind to be taken for an input file.
enum Arity : uint8_t {
  Flag,       ///< No value.
  One,        ///< One value.
  List,       ///< A comma-separated list, split as nvcc does.
  JoinedOne,  ///< One value, which may also be joined: -O3, -t4.
  JoinedList, ///< A list, which may also be joined: -I/dir, -DA=1,B.
};

/// What an option becomes for clang.
enum Action : uint8_t {
  Drop,          ///< Nothing: it does not change how the source parses.
  Emit,          ///< The fixed arguments in Clang (space-separated).
  EmitIf,        ///< The fixed arguments in Clang if the value is When.
  EmitJoined,    ///< Clang + item, one argument per value item.
  EmitSeparate,  ///< Clang, item: two arguments per value item.
  HostOptions,   ///< Host compiler options: keep those clang takes.
  ForwardToHost, ///< Nothing; unknown options become host options.
  Language,      ///< -x: cu becomes cuda.
  Arch,          ///< Virtual architectures: decide GpuArch.
  Code,          ///< Real architectures: decide GpuArch if no Arch does.
  GenCode,       ///< arch=<virtual>,code=<real or [list]>.
  OptionsFile,   ///< Options files: read, their options put in place.
};

/// One nvcc option, a row of the table below. Columns:
///   Name    nvcc's short name (written `-name`), or its only name;
///   Alias   nvcc's long name (written `--alias`) if it has another one;
///           both are recognised with one dash or two;
///   Takes   whether and how it takes a value, see Arity;
///   Act     what clang gets, see Action;
///   Clang   the clang spelling for the Emit actions, e.g. "-I", "-std=";
///   When    the value for which EmitIf emits Clang.
struct NvccOption {
  StringLiteral Name;
  StringLiteral Alias;
  Arity Takes;
  Action Act;
  StringLiteral Clang = "";
  StringLiteral When = "";
};

constexpr StringLiteral Rdc = "-fgpu-rdc -D__CUDACC_RDC__=1";
constexpr StringLiteral RdcCompile = "-fgpu-rdc -D__CUDACC_RDC__=1 -c";

// clang-format off
const NvccOption Options[] = {
  // Compilation phase. The tool parses (-fsyntax-only); -c and -o stay for
  // its later adjusters, which strip them; the rest only chooses outputs.
  {"c",        "compile",             Flag, Emit, "-c"},
  {"dc",       "device-c",            Flag, Emit, RdcCompile},
  {"dw",       "device-w",            Flag, Emit, "-c"},
  {"o",        "output-file",         One,  EmitSeparate, "-o"},
  {"cuda",     "",                    Flag, Drop},
  {"cubin",    "",                    Flag, Drop},
  {"fatbin",   "",                    Flag, Drop},
  {"ptx",      "",                    Flag, Drop},
  {"optix-ir", "",                    Flag, Drop},
  {"ltoir",    "",                    Flag, Drop},
  {"E",        "preprocess",          Flag, Drop},
  {"dlink",    "device-link",         Flag, Drop},
  {"link",     "",                    Flag, Drop},
  {"lib",      "",                    Flag, Drop},
  {"run",      "",                    Flag, Drop},
  {"r",        "relocatable-link",    Flag, Drop},
  // Dependency files.
  {"M",        "generate-dependencies", Flag, Drop},
  {"MM",       "generate-nonsystem-dependencies", Flag, Drop},
  {"MD",       "generate-dependencies-with-compile", Flag, Drop},
  {"MMD",      "generate-nonsystem-dependencies-with-compile", Flag, Drop},
  {"MP",       "generate-dependency-targets", Flag, Drop},
  {"MF",       "dependency-output",   One,  Drop},
  {"MT",       "dependency-target-name", One, Drop},
  // Preprocessor and language.
  {"D",        "define-macro",        JoinedList, EmitJoined, "-D"},
  {"U",        "undefine-macro",      JoinedList, EmitJoined, "-U"},
  {"I",        "include-path",        JoinedList, EmitJoined, "-I"},
  {"isystem",  "system-include",      List, EmitSeparate, "-isystem"},
  {"include",  "pre-include",         List, EmitSeparate, "-include"},
  {"x",        "",                    One,  Language},
  {"std",      "",                    One,  EmitJoined, "-std="},
  {"O",        "optimize",            JoinedOne, EmitJoined, "-O"},
  {"g",        "debug",               Flag, Emit, "-g"},
  {"w",        "disable-warnings",    Flag, Emit, "-w"},
  {"noeh",     "no-exceptions",       Flag, Emit, "-fno-exceptions"},
  {"ftemplate-depth", "",             One,  EmitJoined, "-ftemplate-depth="},
  {"ftemplate-backtrace-limit", "",   One,  EmitJoined,
                                      "-ftemplate-backtrace-limit="},
  {"Wreorder", "",                    Flag, Emit, "-Wreorder"},
  {"Wno-deprecated-declarations", "", Flag, Emit,
                                      "-Wno-deprecated-declarations"},
  // Options nvcc implements by defining a macro (nvcc -E -dM shows it).
  // Clang takes extended lambdas and relaxed constexpr without options.
  {"G",        "device-debug",        Flag, Emit, "-D__CUDACC_DEBUG__=1"},
  {"expt-relaxed-constexpr", "",      Flag, Emit,
                                      "-D__CUDACC_RELAXED_CONSTEXPR__=1"},
  {"extended-lambda", "",             Flag, Emit,
                                      "-D__CUDACC_EXTENDED_LAMBDA__=1"},
  {"expt-extended-lambda", "",        Flag, Emit,
                                      "-D__CUDACC_EXTENDED_LAMBDA__=1"},
  {"ewp",      "extensible-whole-program", Flag, Emit, "-D__CUDACC_EWP__=1"},
  // Clang's -fgpu-default-stream= is for HIP only (unused for CUDA).
  {"default-stream", "",              One,  EmitIf,
                                      "-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1",
                                      "per-thread"},
  // Relocatable device code (-dc above; LTO implies it).
  {"rdc",      "relocatable-device-code", One, EmitIf, Rdc, "true"},
  {"dlto",     "dlink-time-opt",      Flag, Emit, Rdc},
  {"lto",      "",                    Flag, Emit, Rdc},
  // GPU architecture (--cuda-gpu-arch is clang's spelling).
  {"arch",     "gpu-architecture",    List, Arch},
  {"cuda-gpu-arch", "",               List, Arch},
  {"code",     "gpu-code",            List, Code},
  {"gencode",  "generate-code",       One,  GenCode},
  // Host compiler.
  {"Xcompiler", "compiler-options",   List, HostOptions},
  {"forward-unknown-to-host-compiler", "", Flag, ForwardToHost},
  {"forward-unknown-opts", "",        Flag, ForwardToHost},
  {"forward-unknown-to-host-linker", "", Flag, Drop},
  {"ccbin",    "compiler-bindir",     One,  Drop},
  {"allow-unsupported-compiler", "",  Flag, Drop},
  {"use-local-env", "",               Flag, Drop},
  {"force-cl-env-setup", "",          Flag, Drop},
  {"qpp-config", "",                  One,  Drop},
  {"m",        "machine",             One,  Drop},
  {"m64",      "",                    Flag, Drop},
  {"optf",     "options-file",        List, OptionsFile},
  // Other tools' options (-Xcudafe, -Xcicc and -Xfatbin are undocumented).
  {"Xlinker",  "linker-options",      List, Drop},
  {"Xarchive", "archive-options",     List, Drop},
  {"Xptxas",   "ptxas-options",       List, Drop},
  {"Xnvlink",  "nvlink-options",      List, Drop},
  {"Xcudafe",  "",                    List, Drop},
  {"Xcicc",    "",                    List, Drop},
  {"Xfatbin",  "",                    List, Drop},
  // Linking and files.
  {"l",        "library",             JoinedList, Drop},
  {"L",        "library-path",        JoinedList, Drop},
  {"shared",   "",                    Flag, Drop},
  {"odir",     "output-directory",    One,  Drop},
  {"objtemp",  "objdir-as-tempdir",   Flag, Drop},
  {"arbin",    "archiver-binary",     One,  Drop},
  {"cudart",   "",                    One,  Drop},
  {"cudadevrt", "",                   One,  Drop},
  {"ldir",     "libdevice-directory", One,  Drop},
  {"target-dir", "target-directory",  One,  Drop},
  {"nodlink",  "no-device-link",      Flag, Drop},
  {"hls",      "host-linker-script",  One,  Drop},
  {"aug-hls",  "augment-host-linker-script", Flag, Drop},
  {"noprof",   "dont-use-profile",    Flag, Drop},
  // Device code generation.
  {"pg",       "profile",             Flag, Drop},
  {"lineinfo", "generate-line-info",  Flag, Drop},
  {"opt-info", "optimization-info",   List, Drop},
  {"Ofc",      "Ofast-compile",       One,  Drop},
  {"dopt",     "",                    One,  Drop},
  {"gen-opt-lto", "",                 Flag, Drop},
  {"e",        "entries",             List, Drop},
  {"maxrregcount", "",                One,  Drop},
  {"use_fast_math", "",               Flag, Drop},
  {"ftz",      "",                    One,  Drop},
  {"prec-div", "",                    One,  Drop},
  {"prec-sqrt", "",                   One,  Drop},
  {"fmad",     "",                    One,  Drop},
  {"extra-device-vectorization", "",  Flag, Drop},
  {"keep-device-functions", "",       Flag, Drop},
  {"src-in-ptx", "source-in-ptx",     Flag, Drop},
  {"restrict", "",                    Flag, Drop},
  {"static-global-template-stub", "", One,  Drop},
  {"device-entity-has-hidden-visibility", "", One, Drop},
  {"nohdinitlist", "no-host-device-initializer-list", Flag, Drop},
  {"nohdmoveforward", "no-host-device-move-forward", Flag, Drop},
  {"no-align-double", "",             Flag, Drop},
  {"no-compress", "",                 Flag, Drop},
  {"compress-mode", "",               One,  Drop},
  {"astoolspatch", "compile-as-tools-patch", Flag, Drop},
  {"jtd",      "jump-table-density",  One,  Drop},
  {"reloc-ptx", "relocatable-ptx",    Flag, Drop},
  {"device-stack-protector", "",      One,  Drop},
  {"frandom-seed", "",                One,  Drop},
  {"sanitize", "",                    One,  Drop},
  // nvcc's diagnostics (the tool parses with clang's own).
  {"Wdefault-stream-launch", "",      Flag, Drop},
  {"Wmissing-launch-bounds", "",      Flag, Drop},
  {"Wext-lambda-captures-this", "",   Flag, Drop},
  {"Wno-deprecated-gpu-targets", "",  Flag, Drop},
  {"Werror",   "",                    List, Drop},
  {"res-usage", "resource-usage",     Flag, Drop},
  {"err-no",   "display-error-number", Flag, Drop},
  {"no-err-no", "no-display-error-number", Flag, Drop},
  {"diag-error", "",                  List, Drop},
  {"diag-suppress", "",               List, Drop},
  {"diag-warn", "",                   List, Drop},
  {"brief-diag", "brief-diagnostics", One,  Drop},
  // The nvcc driver itself.
  {"dryrun",   "",                    Flag, Drop},
  {"v",        "verbose",             Flag, Drop},
  {"t",        "threads",             JoinedOne, Drop},
  {"split-compile", "",               One,  Drop},
  {"split-compile-extended", "",      One,  Drop},
  {"fdevice-syntax-only", "",         Flag, Drop},
  {"fdevice-time-trace", "",          One,  Drop},
  {"keep",     "",                    Flag, Drop},
  {"keep-dir", "",                    One,  Drop},
  {"save-temps", "",                  Flag, Drop},
  {"clean",    "clean-targets",       Flag, Drop},
  {"time",     "",                    One,  Drop},
  {"run-args", "",                    List, Drop},
  {"idp",      "input-drive-prefix",  One,  Drop},
  {"ddp",      "dependency-drive-prefix", One, Drop},
  {"dp",       "drive-prefix",        One,  Drop},
  {"code-ls",  "list-gpu-code",       Flag, Drop},
  {"arch-ls",  "list-gpu-arch",       Flag, Drop},
  {"jobserver", "",                   Flag, Drop},
  {"h",        "help",                Flag, Drop},
  {"V",        "version",             Flag, Drop},
};
// clang-format on

bool takesValue(Arity A) { return A != Flag; }
bool isList(Arity A) { return A == List || A == JoinedList; }
bool mayBeJoined(Arity A) { return A == JoinedOne || A == JoinedList; }

/// Every short and long name of the table.
const StringMap<const NvccOption *> &optionsByName() {
  static const StringMap<const NvccOption *> Map = [] {
    StringMap<const NvccOption *> M;
    for (const NvccOption &O : Options)
      for (StringRef Name : {StringRef(O.Name), StringRef(O.Alias)})
        if (!Name.empty()) {
          [[maybe_unused]] bool New = M.try_emplace(Name, &O).second;
          assert((New || M.lookup(Name) == &O) && "nvcc option named twice");
        }
    return M;
  }();
  return Map;
}

/// An argv element that names a table option.
struct Recognized {
  const NvccOption *Opt = nullptr;
  std::optional<StringRef> Attached; ///< `=value` or a joined value.
};

Recognized recognize(StringRef Arg) {
  const StringMap<const NvccOption *> &Map = optionsByName();
  bool DoubleDash = Arg.starts_with("--");
  StringRef Body = Arg.drop_front(DoubleDash ? 2 : 1);
  if (Body.empty())
    return {};
  if (const NvccOption *O = Map.lookup(Body))
    return {O, std::nullopt};
  auto [Name, Value] = Body.split('=');
  if (Name.size() != Body.size())
    if (const NvccOption *O = Map.lookup(Name); O && takesValue(O->Takes))
      return {O, Value};
  if (!DoubleDash)
    if (const NvccOption *O = Map.lookup(Body.take_front(1));
        O && mayBeJoined(O->Takes))
      return {O, Body.drop_front(1)};
  return {};
}

/// Splits an nvcc list value on commas; `\,` is a comma inside an item.
SmallVector<std::string, 4> splitList(StringRef Value) {
  SmallVector<std::string, 4> Items(1);
  for (size_t I = 0; I < Value.size(); ++I) {
    if (Value[I] == '\\' && I + 1 < Value.size() && Value[I + 1] == ',') {
      Items.back() += ',';
      ++I;
    } else if (Value[I] == ',') {
      Items.emplace_back();
    } else {
      Items.back() += Value[I];
    }
  }
  llvm::erase_if(Items, [](const std::string &S) { return S.empty(); });
  return Items;
}

/// "sm_90" for sm_90, compute_90 or lto_90; "sm_90a" for sm_90a etc.
/// std::nullopt if \p Name is no architecture.
std::optional<std::string> normalizeArch(StringRef Name) {
  StringRef Rest = Name;
  if (!Rest.consume_front("sm_") && !Rest.consume_front("compute_") &&
      !Rest.consume_front("lto_"))
    return std::nullopt;
  StringRef Digits = Rest.take_while(isDigit);
  StringRef Suffix = Rest.drop_front(Digits.size());
  if (Digits.empty() || Digits.size() > 4 ||
      !(Suffix.empty() || Suffix == "a" || Suffix == "f"))
    return std::nullopt;
  // sm_XXXf code runs on the family; clang 22 has no such target, and the
  // base architecture is what every member supports.
  return ("sm_" + Digits + (Suffix == "a" ? "a" : "")).str();
}

/// Orders "sm_90" < "sm_90a" < "sm_100".
bool archLess(StringRef A, StringRef B) {
  auto Key = [](StringRef S) {
    StringRef Digits = S.drop_front(3).take_while(isDigit);
    unsigned N = 0;
    Digits.getAsInteger(10, N);
    return std::make_pair(N, S.ends_with("a"));
  };
  return Key(A) < Key(B);
}

/// True if clang would accept \p Arg, a -W option, without complaining
/// about an unknown warning: GCC-only warnings are dropped. -Werror and
/// -Werror=<w> are dropped as well: the host compiler's diagnostics are not
/// clang's, and a warning must not stop the tool from parsing.
bool isUsefulWarningOption(StringRef Arg) {
  StringRef Name = Arg.drop_front(2);
  if (Name.empty())
    return true;
  bool Negated = Name.consume_front("no-");
  if (Name == "error" || Name.starts_with("error=")) {
    if (!Negated)
      return false;
    Name.consume_front("error");
    Name.consume_front("=");
    return Name.empty() ||
           clang::DiagnosticIDs::getGroupForWarningOption(Name).has_value();
  }
  if (Name == "everything" || Name == "system-headers" ||
      Name.starts_with("fatal-errors"))
    return true;
  return clang::DiagnosticIDs::getGroupForWarningOption(Name).has_value();
}

/// True if a host compiler option, parsed by clang's driver as \p A and
/// written \p Spelled, is one clang accepts and that matters to a parse.
bool isUsefulHostOption(const opt::Arg &A, StringRef Spelled) {
  namespace co = clang::options;
  const opt::Option &O = A.getOption();
  if (O.getKind() == opt::Option::UnknownClass ||
      O.getKind() == opt::Option::InputClass || O.hasFlag(co::LinkerInput) ||
      O.hasFlag(co::Unsupported))
    return false;
  // What changes the action or the outputs, the linker's and assembler's
  // options, and clang's offloading options (the tool sets those).
  for (unsigned Denied :
       {co::OPT_Action_Group, co::OPT_M_Group, co::OPT_Link_Group,
        co::OPT_offload_Group, co::OPT_cuda_Group, co::OPT_o, co::OPT_x,
        co::OPT_v, co::OPT__HASH_HASH_HASH, co::OPT_Xclang, co::OPT_Xassembler,
        co::OPT_Xpreprocessor, co::OPT_Wa_COMMA, co::OPT_Wp_COMMA,
        co::OPT_save_temps, co::OPT_save_temps_EQ, co::OPT_pedantic_errors})
    if (O.matches(Denied))
      return false;
  if (O.matches(co::OPT_W_Joined))
    return isUsefulWarningOption(Spelled);
  return true;
}

/// The file name of \p Path without ".exe", for either kind of separator.
StringRef programName(StringRef Path) {
  StringRef Name = Path.substr(Path.find_last_of("/\\") + 1);
  if (Name.size() > 4 && Name.take_back(4).equals_insensitive(".exe"))
    Name = Name.drop_back(4);
  return Name;
}

/// True if \p Path names nvcc (any case: Windows file names ignore it).
bool isNvcc(StringRef Path) {
  return programName(Path).equals_insensitive("nvcc");
}

/// Compiler launchers that run the command after them (CMake's
/// CMAKE_CUDA_COMPILER_LAUNCHER).
bool isLauncher(StringRef Path) {
  StringRef Name = programName(Path);
  return Name == "ccache" || Name == "sccache" || Name == "distcc";
}

/// Options files nvcc 13.0 has open at once at most: a 16th named from the
/// 15th is "Too many options file opened".
constexpr unsigned MaxOptionsFileDepth = 15;

class Translator {
public:
  explicit Translator(vfs::FileSystem &FS) : FS(FS) {}
  TranslatedCommand run(ArrayRef<std::string> Argv);

private:
  void expandOptionsFiles(ArrayRef<std::string> Args, unsigned Depth,
                          std::vector<std::string> &Into);
  void readOptionsFile(StringRef File, unsigned Depth,
                       std::vector<std::string> &Into);
  void handle(const NvccOption &Opt, StringRef Spelled, StringRef Value);
  void emit(StringRef Arg) { Out.Args.push_back(Arg.str()); }
  void emitFixed(StringRef Args);
  void flushHostItems();
  void noteArch(StringRef Name, bool Virtual);
  void noteGenCode(StringRef Spelled, StringRef Value);
  void warn(const Twine &Message);

  vfs::FileSystem &FS;
  TranslatedCommand Out;
  StringSet<> EmittedFixed;
  std::vector<std::string> HostItems; ///< Pending host compiler options.
  bool ForwardUnknown = false;
  bool KeptHostOption = false;
  std::vector<std::string> VirtualArchs, RealArchs;
  StringSet<> SeenWarnings;
};

void Translator::warn(const Twine &Message) {
  std::string S = Message.str();
  if (SeenWarnings.insert(S).second)
    Out.Warnings.push_back(std::move(S));
}

/// Fixed arguments (macros, -fgpu-rdc, -c) are emitted once: -dc after
/// -rdc=true, or --expt-extended-lambda with --extended-lambda, add nothing.
void Translator::emitFixed(StringRef Args) {
  SmallVector<StringRef, 4> Parts;
  Args.split(Parts, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef Part : Parts)
    if (EmittedFixed.insert(Part).second)
      emit(Part);
}

/// Host compiler options (from -Xcompiler, or unknown options forwarded to
/// the host compiler) are collected while they come one after another, so
/// that `-Xcompiler -isystem -Xcompiler /dir` keeps its value, then parsed
/// with clang's own option table: what clang accepts and matters to a parse
/// is kept as written, the rest (GCC-only options, linker options) is
/// dropped without a warning, since the host compiler has them for itself.
void Translator::flushHostItems() {
  if (HostItems.empty())
    return;
  SmallVector<const char *, 8> Ptrs;
  for (const std::string &Item : HostItems)
    Ptrs.push_back(Item.c_str());
  opt::InputArgList Parsed(Ptrs.begin(), Ptrs.end());
  const opt::OptTable &Table = clang::getDriverOptTable();
  unsigned Index = 0;
  while (Index < Ptrs.size()) {
    unsigned Start = Index;
    std::unique_ptr<opt::Arg> A = Table.ParseOneArg(
        Parsed, Index, opt::Visibility(clang::options::ClangOption));
    if (!A)
      break; // The last option lacks its value: drop it.
    if (Index <= Start)
      Index = Start + 1;
    if (!isUsefulHostOption(*A, HostItems[Start]))
      continue;
    for (unsigned I = Start; I < Index && I < HostItems.size(); ++I)
      emit(HostItems[I]);
    KeptHostOption = true;
  }
  HostItems.clear();
}

void Translator::noteArch(StringRef Name, bool Virtual) {
  Name = Name.trim().trim("\"'[]");
  if (Name.empty() || Name == "native" || Name == "all" || Name == "all-major")
    return;
  std::optional<std::string> Normalized = normalizeArch(Name);
  if (!Normalized) {
    warn("unrecognized GPU architecture '" + Name + "' ignored");
    return;
  }
  if (clang::StringToOffloadArch(*Normalized) == clang::OffloadArch::UNKNOWN) {
    warn("GPU architecture '" + Name +
         "' is not supported by clang; cuda-rewrite parses for another "
         "architecture");
    return;
  }
  (Virtual ? VirtualArchs : RealArchs).push_back(std::move(*Normalized));
}

/// `arch=compute_90,code=sm_90`, `arch=compute_90,code=[compute_90,sm_90]`
/// or with the code list in quotes.
void Translator::noteGenCode(StringRef Spelled, StringRef Value) {
  std::string Clean = Value.str();
  llvm::erase_if(Clean, [](char C) { return C == '"' || C == '\''; });
  // Split on the commas outside brackets.
  SmallVector<StringRef, 4> Fields;
  StringRef Rest = Clean;
  int Depth = 0;
  size_t Begin = 0;
  for (size_t I = 0; I <= Rest.size(); ++I) {
    if (I == Rest.size() || (Rest[I] == ',' && Depth == 0)) {
      Fields.push_back(Rest.slice(Begin, I));
      Begin = I + 1;
    } else if (Rest[I] == '[') {
      ++Depth;
    } else if (Rest[I] == ']') {
      --Depth;
    }
  }
  bool HasArch = false;
  for (StringRef Field : Fields) {
    auto [Key, Val] = Field.split('=');
    Key = Key.trim();
    if (Key == "arch") {
      HasArch = true;
      noteArch(Val, /*Virtual=*/true);
    } else if (Key == "code") {
      for (const std::string &Real : splitList(Val.trim().trim("[]")))
        noteArch(Real, /*Virtual=*/false);
    }
  }
  if (!HasArch)
    warn("malformed nvcc option '" + Spelled + "' ignored (expected " +
         "arch=<arch>,code=<code>)");
}

void Translator::handle(const NvccOption &Opt, StringRef Spelled,
                        StringRef Value) {
  SmallVector<std::string, 4> Items;
  if (isList(Opt.Takes))
    Items = splitList(Value);
  else if (takesValue(Opt.Takes))
    Items.push_back(Value.str());

  switch (Opt.Act) {
  case Drop:
  case ForwardToHost:
    return;
  case Emit:
    return emitFixed(Opt.Clang);
  case EmitIf:
    if (Value.trim() == Opt.When)
      emitFixed(Opt.Clang);
    return;
  case EmitJoined:
    for (const std::string &Item : Items)
      emit((Opt.Clang + Item).str());
    return;
  case EmitSeparate:
    for (const std::string &Item : Items) {
      emit(Opt.Clang);
      emit(Item);
    }
    return;
  case HostOptions:
    for (const std::string &Item : Items) {
      // nvcc hands the items to the host compiler through a shell, so
      // `-Xcompiler "-Wall -Wextra"` is two options.
      if (StringRef(Item).find_first_of(" \t\"'") == StringRef::npos) {
        HostItems.push_back(Item);
        continue;
      }
      BumpPtrAllocator Alloc;
      StringSaver Saver(Alloc);
      SmallVector<const char *, 4> Words;
      cl::TokenizeGNUCommandLine(Item, Saver, Words);
      for (const char *Word : Words)
        HostItems.emplace_back(Word);
    }
    return;
  case Language: {
    StringRef Lang = Value.trim();
    if (Lang == "cu")
      Lang = "cuda";
    if (Lang != "cuda" && Lang != "c++" && Lang != "c") {
      warn("unknown nvcc input language in '" + Spelled + "' ignored");
      return;
    }
    emit("-x");
    emit(Lang);
    return;
  }
  case Arch:
  case Code:
    for (const std::string &Item : Items)
      noteArch(Item, Opt.Act == Arch);
    return;
  case GenCode:
    return noteGenCode(Spelled, Value);
  case OptionsFile:
    return; // expandOptionsFiles() put their options in place.
  }
}

/// Copies \p Args into \p Into with each options file option replaced by
/// the options in its files. Values are copied with their options, so that
/// none is taken for an options file option (`-o -optf`).
void Translator::expandOptionsFiles(ArrayRef<std::string> Args, unsigned Depth,
                                    std::vector<std::string> &Into) {
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef Arg = Args[I];
    Recognized R;
    if (Arg.starts_with("-") && Arg != "-")
      R = recognize(Arg);
    if (!R.Opt || R.Opt->Act != OptionsFile) {
      Into.push_back(Arg.str());
      if (R.Opt && takesValue(R.Opt->Takes) && !R.Attached &&
          I + 1 < Args.size())
        Into.push_back(Args[++I]);
      continue;
    }
    StringRef Value;
    if (R.Attached) {
      Value = *R.Attached;
    } else if (I + 1 < Args.size()) {
      Value = Args[++I];
    } else {
      warn("nvcc option '" + Arg + "' lacks its value; ignored");
      continue;
    }
    for (const std::string &File : splitList(Value))
      readOptionsFile(File, Depth, Into);
  }
}

void Translator::readOptionsFile(StringRef File, unsigned Depth,
                                 std::vector<std::string> &Into) {
  if (Depth >= MaxOptionsFileDepth) {
    warn("nvcc options file '" + File + "' is nested more than " +
         Twine(MaxOptionsFileDepth) +
         " files deep (does a file name itself?); ignored");
    return;
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = FS.getBufferForFile(File);
  if (!Buffer) {
    std::string Where;
    if (sys::path::is_relative(File))
      if (ErrorOr<std::string> Dir = FS.getCurrentWorkingDirectory())
        Where = " in '" + *Dir + "'";
    warn("cannot read nvcc options file '" + File + "'" + Where + ": " +
         Buffer.getError().message() + "; the options in it are ignored");
    return;
  }
  expandOptionsFiles(splitNvccOptionsFile((*Buffer)->getBuffer()), Depth + 1,
                     Into);
}

TranslatedCommand Translator::run(ArrayRef<std::string> Argv) {
  // Skip the launcher, if any, and nvcc itself.
  size_t First = !Argv.empty() && isLauncher(Argv[0]) ? 2 : 1;
  std::vector<std::string> Expanded;
  expandOptionsFiles(Argv.drop_front(std::min(First, Argv.size())), 0,
                     Expanded);
  Argv = Expanded;

  // -forward-unknown-to-host-compiler applies wherever it is written.
  for (const std::string &Arg : Argv)
    if (StringRef(Arg).starts_with("-"))
      if (const NvccOption *O = recognize(Arg).Opt;
          O && O->Act == ForwardToHost)
        ForwardUnknown = true;

  emit("clang++");
  for (size_t I = 0; I < Argv.size(); ++I) {
    StringRef Arg = Argv[I];
    if (Arg.empty())
      continue;
    if (!Arg.starts_with("-") || Arg == "-") {
      flushHostItems();
      emit(Arg); // An input file.
      continue;
    }
    Recognized R = recognize(Arg);
    if (!R.Opt) {
      if (ForwardUnknown) {
        HostItems.push_back(Arg.str());
      } else {
        flushHostItems();
        warn("unknown nvcc option '" + Arg + "' ignored");
      }
      continue;
    }
    std::string Spelled = Arg.str();
    StringRef Value;
    if (takesValue(R.Opt->Takes)) {
      if (R.Attached) {
        Value = *R.Attached;
      } else if (I + 1 < Argv.size()) {
        Value = Argv[++I];
        Spelled += " " + Argv[I];
      } else {
        flushHostItems();
        warn("nvcc option '" + Arg + "' lacks its value; ignored");
        continue;
      }
    }
    if (R.Opt->Act != HostOptions)
      flushHostItems();
    handle(*R.Opt, Spelled, Value);
  }
  flushHostItems();

  // Host compiler options that mean something for code generation only
  // (-fstack-protector, -fno-plt) would each make clang warn that they are
  // unused by a parse.
  if (KeptHostOption)
    Out.Args.insert(Out.Args.begin() + 1, "-Qunused-arguments");

  Out.RelocatableDeviceCode = EmittedFixed.contains("-fgpu-rdc");
  std::vector<std::string> &Archs =
      VirtualArchs.empty() ? RealArchs : VirtualArchs;
  if (!Archs.empty())
    Out.GpuArch = *std::max_element(Archs.begin(), Archs.end(), archLess);
  return std::move(Out);
}

} // namespace

bool isNvccCommand(ArrayRef<std::string> Argv) {
  if (Argv.empty())
    return false;
  if (isNvcc(Argv[0]))
    return true;
  return isLauncher(Argv[0]) && Argv.size() > 1 && isNvcc(Argv[1]);
}

std::vector<std::string> splitNvccOptionsFile(StringRef Contents) {
  std::vector<std::string> Words;
  std::string Word;
  bool InWord = false, Quoted = false;
  for (size_t I = 0; I < Contents.size(); ++I) {
    char C = Contents[I];
    if (C == '\\' && I + 1 < Contents.size()) {
      Word += Contents[++I];
      InWord = true;
    } else if (C == '"') {
      Quoted = !Quoted;
      InWord = true; // "" is an empty word.
    } else if (isSpace(C) && !Quoted) {
      if (InWord)
        Words.push_back(std::move(Word));
      Word.clear();
      InWord = false;
    } else {
      Word += C;
      InWord = true;
    }
  }
  if (InWord)
    Words.push_back(std::move(Word));
  return Words;
}

TranslatedCommand translateNvccCommand(ArrayRef<std::string> Argv,
                                       vfs::FileSystem *FS) {
  if (!FS)
    return Translator(*vfs::getRealFileSystem()).run(Argv);
  return Translator(*FS).run(Argv);
}

clang::tooling::ArgumentsAdjuster
nvccArgumentsAdjuster(NvccWarningHandler OnWarning,
                      IntrusiveRefCntPtr<vfs::FileSystem> FS) {
  if (!OnWarning)
    OnWarning = [](StringRef File, StringRef Message) {
      errs() << "cuda-rewrite: warning: " << File << ": " << Message << "\n";
    };
  if (!FS)
    FS = vfs::getRealFileSystem();
  return [OnWarning, FS](const clang::tooling::CommandLineArguments &Args,
                         StringRef File) {
    if (!isNvccCommand(Args))
      return Args;
    TranslatedCommand T = translateNvccCommand(Args, FS.get());
    // Shared by every adjuster: the tool makes one per side.
    static std::mutex Mutex;
    static std::set<std::pair<std::string, std::string>> Reported;
    for (const std::string &Message : T.Warnings) {
      {
        std::lock_guard<std::mutex> Lock(Mutex);
        if (!Reported.emplace(File.str(), Message).second)
          continue;
      }
      OnWarning(File, Message);
    }
    return std::move(T.Args);
  };
}

} // namespace cuda_rewrite
