//===- NvccArgsTest.cpp - nvcc command lines translated for clang ---------===//

#include "tool/NvccArgs.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace {

using Argv = std::vector<std::string>;

/// Splits \p CommandLine on spaces, as JSON compile databases give commands
/// whose arguments have no spaces.
Argv words(llvm::StringRef CommandLine) {
  llvm::SmallVector<llvm::StringRef, 32> Parts;
  CommandLine.split(Parts, ' ', -1, /*KeepEmpty=*/false);
  return Argv(Parts.begin(), Parts.end());
}

/// nvcc, then \p Options, then a.cu.
Argv nvccWith(Argv Options) {
  Argv Args{"nvcc"};
  Args.insert(Args.end(), Options.begin(), Options.end());
  Args.push_back("a.cu");
  return Args;
}

// Commands as CMake 3.25+ writes them into compile_commands.json for the
// Ninja and Makefile generators.

TEST(NvccArgsCMake, SeparableCompilationEntry) {
  TranslatedCommand T = translateNvccCommand(
      words("/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DFOO "
            "-I/src/include -O3 -DNDEBUG "
            "--generate-code=arch=compute_90,code=[compute_90,sm_90] "
            "-Xcompiler=-fPIC -rdc=true -x cu -c /src/a.cu -o "
            "CMakeFiles/a.dir/a.cu.o"));
  EXPECT_EQ(T.Args, words("clang++ -Qunused-arguments -DFOO -I/src/include "
                          "-O3 -DNDEBUG -fPIC -fgpu-rdc -D__CUDACC_RDC__=1 "
                          "-x cuda -c /src/a.cu -o CMakeFiles/a.dir/a.cu.o"));
  EXPECT_EQ(T.GpuArch, "sm_90");
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsCMake, NinjaEntryWithDependencyFileAndTwoArchitectures) {
  TranslatedCommand T = translateNvccCommand(words(
      "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler "
      "-DKERNELS_EXPORTS -I/src/include -isystem=/opt/dep/include -O3 "
      "-DNDEBUG -std=c++17 "
      "--generate-code=arch=compute_80,code=[compute_80,sm_80] "
      "--generate-code=arch=compute_90,code=[compute_90,sm_90] "
      "-Xcompiler=-fPIC --expt-relaxed-constexpr --extended-lambda -MD -MT "
      "src/CMakeFiles/kernels.dir/k.cu.o -MF "
      "src/CMakeFiles/kernels.dir/k.cu.o.d -x cu -c /src/k.cu -o "
      "src/CMakeFiles/kernels.dir/k.cu.o"));
  EXPECT_EQ(T.Args,
            words("clang++ -Qunused-arguments -DKERNELS_EXPORTS "
                  "-I/src/include -isystem /opt/dep/include -O3 -DNDEBUG "
                  "-std=c++17 -fPIC -D__CUDACC_RELAXED_CONSTEXPR__=1 "
                  "-D__CUDACC_EXTENDED_LAMBDA__=1 -x cuda -c /src/k.cu -o "
                  "src/CMakeFiles/kernels.dir/k.cu.o"));
  EXPECT_EQ(T.GpuArch, "sm_90");
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsCMake, DebugEntryWithNativeArchitecture) {
  TranslatedCommand T = translateNvccCommand(
      words("/usr/bin/ccache /usr/local/cuda/bin/nvcc "
            "-forward-unknown-to-host-compiler -I/src -g -arch=native "
            "-Xcompiler=-fPIC -Xcompiler=-Wall -G -std=c++20 -MD -MT a.o "
            "-MF a.o.d -x cu -c /src/a.cu -o a.o"));
  EXPECT_EQ(T.Args, words("clang++ -Qunused-arguments -I/src -g -fPIC -Wall "
                          "-D__CUDACC_DEBUG__=1 -std=c++20 -x cuda -c "
                          "/src/a.cu -o a.o"));
  EXPECT_EQ(T.GpuArch, std::nullopt);
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsCMake, UnknownHostFlagsAreForwardedThenFiltered) {
  // CMAKE_CUDA_FLAGS="-Wall -fno-gnu-unique -pthread": CMake relies on
  // -forward-unknown-to-host-compiler to pass them to the host compiler.
  TranslatedCommand T = translateNvccCommand(
      words("nvcc -forward-unknown-to-host-compiler -Wall -fno-gnu-unique "
            "-Wlogical-op -pthread -Wl,-O1 -fvisibility=hidden -c a.cu"));
  EXPECT_EQ(T.Args, words("clang++ -Qunused-arguments -Wall -pthread "
                          "-fvisibility=hidden -c a.cu"));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsHandWritten, MakefileCommand) {
  TranslatedCommand T = translateNvccCommand(
      words("nvcc -ccbin g++-12 -O2 -arch sm_80 -Xcompiler "
            "-Wall,-Wextra,-fopenmp -Xptxas -v,-O3 -lineinfo --use_fast_math "
            "-maxrregcount 64 -I ../common/inc -DUSE_X -c kern.cu -o kern.o "
            "-lcudadevrt"));
  EXPECT_EQ(T.Args, words("clang++ -Qunused-arguments -O2 -Wall -Wextra "
                          "-fopenmp -I../common/inc -DUSE_X -c kern.cu -o "
                          "kern.o"));
  EXPECT_EQ(T.GpuArch, "sm_80");
  EXPECT_THAT(T.Warnings, IsEmpty());
}

// Option families.

TEST(NvccArgsFamilies, IncludePathsInEverySpelling) {
  TranslatedCommand T = translateNvccCommand(
      nvccWith({"-I/a", "-I", "/b", "-I=/c", "--include-path", "/d",
                "--include-path=/e,/f", "-isystem", "/s1", "-isystem=/s2",
                "--system-include=/s3", "--system-include", "/s4", "-include",
                "pre.h", "--pre-include=p1.h,p2.h", "-include=p3.h"}));
  EXPECT_EQ(
      T.Args,
      Argv({"clang++", "-I/a",     "-I/b", "-I/c",     "-I/d",  "-I/e",
            "-I/f",    "-isystem", "/s1",  "-isystem", "/s2",   "-isystem",
            "/s3",     "-isystem", "/s4",  "-include", "pre.h", "-include",
            "p1.h",    "-include", "p2.h", "-include", "p3.h",  "a.cu"}));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsFamilies, MacrosInEverySpellingAndListsSplitAsNvccDoes) {
  TranslatedCommand T = translateNvccCommand(
      nvccWith({"-DA", "-D", "B=2", "-D=C", "--define-macro", "D",
                "--define-macro=E=5", "-DF=1,G=2", "-DH=f(1\\,2)", "-UX", "-U",
                "Y", "--undefine-macro=Z", "-U=W"}));
  EXPECT_EQ(T.Args,
            Argv({"clang++", "-DA", "-DB=2", "-DC", "-DD", "-DE=5", "-DF=1",
                  "-DG=2", "-DH=f(1,2)", "-UX", "-UY", "-UZ", "-UW", "a.cu"}));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsFamilies, OptimizationAndStandard) {
  TranslatedCommand T = translateNvccCommand(nvccWith(
      {"-O3", "-O", "2", "-O=1", "--optimize=0", "--optimize", "3",
       "-std=c++17", "-std", "c++14", "--std=c++20", "--std", "c++11"}));
  EXPECT_EQ(T.Args,
            Argv({"clang++", "-O3", "-O2", "-O1", "-O0", "-O3", "-std=c++17",
                  "-std=c++14", "-std=c++20", "-std=c++11", "a.cu"}));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsFamilies, RelocatableDeviceCode) {
  const Argv Rdc{"clang++", "-fgpu-rdc", "-D__CUDACC_RDC__=1", "a.cu"};
  for (const Argv &Options :
       std::vector<Argv>{{"-rdc=true"},
                         {"-rdc", "true"},
                         {"--relocatable-device-code=true"},
                         {"--relocatable-device-code", "true"},
                         {"-rdc=true", "--relocatable-device-code=true"},
                         {"-dlto"},
                         {"--dlink-time-opt"}}) {
    TranslatedCommand T = translateNvccCommand(nvccWith(Options));
    EXPECT_EQ(T.Args, Rdc) << llvm::join(Options, " ");
    EXPECT_THAT(T.Warnings, IsEmpty());
  }
  for (const Argv &Options :
       std::vector<Argv>{{"-dc"}, {"--device-c"}, {"-rdc=true", "-dc"}})
    EXPECT_EQ(
        translateNvccCommand(nvccWith(Options)).Args,
        Argv({"clang++", "-fgpu-rdc", "-D__CUDACC_RDC__=1", "-c", "a.cu"}))
        << llvm::join(Options, " ");
  // Without rdc nothing is added (the tool parses with -fgpu-rdc anyway).
  EXPECT_EQ(translateNvccCommand(nvccWith({"-rdc=false"})).Args,
            Argv({"clang++", "a.cu"}));
  EXPECT_EQ(translateNvccCommand(nvccWith({"-dw", "-c"})).Args,
            Argv({"clang++", "-c", "a.cu"}));
}

TEST(NvccArgsFamilies, GpuArchitecture) {
  struct Case {
    Argv Options;
    std::optional<std::string> Arch;
  };
  const Case Cases[] = {
      {{"-arch=sm_80"}, "sm_80"},
      {{"-arch", "sm_86"}, "sm_86"},
      {{"--gpu-architecture=compute_89"}, "sm_89"},
      {{"--gpu-architecture", "sm_90a"}, "sm_90a"},
      {{"-gencode", "arch=compute_90,code=sm_90"}, "sm_90"},
      {{"-gencode=arch=compute_90,code=[compute_90,sm_90]"}, "sm_90"},
      {{"-gencode", "arch=compute_90,code=\"sm_90,compute_90\""}, "sm_90"},
      {{"--generate-code", "arch=compute_80,code=[compute_80,sm_80]"}, "sm_80"},
      {{"--generate-code=arch=compute_75,code=[compute_75,sm_75]",
        "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
        "--generate-code=arch=compute_80,code=[compute_80,sm_80]"},
       "sm_90"},
      // The virtual architecture sets __CUDA_ARCH__.
      {{"-arch=compute_80", "-code=sm_90,compute_80"}, "sm_80"},
      {{"-code=sm_90"}, "sm_90"},
      {{"--gpu-code", "lto_90"}, "sm_90"},
      {{"--cuda-gpu-arch=sm_89"}, "sm_89"},
      {{"-arch=sm_100f"}, "sm_100"},
      {{"-arch=sm_90", "-arch=sm_90a"}, "sm_90a"},
      {{"-arch=sm_100", "-arch=sm_90a"}, "sm_100"},
      {{"-arch=native"}, std::nullopt},
      {{"-arch", "native"}, std::nullopt},
      {{"-arch=all"}, std::nullopt},
      {{"--gpu-architecture=all-major"}, std::nullopt},
      {{}, std::nullopt},
  };
  for (const Case &C : Cases) {
    TranslatedCommand T = translateNvccCommand(nvccWith(C.Options));
    std::string What = llvm::join(C.Options, " ");
    EXPECT_EQ(T.GpuArch, C.Arch) << What;
    EXPECT_EQ(T.Args, Argv({"clang++", "a.cu"})) << What;
    EXPECT_THAT(T.Warnings, IsEmpty()) << What;
  }
}

TEST(NvccArgsFamilies, GpuArchitectureWarnings) {
  TranslatedCommand T = translateNvccCommand(nvccWith({"-arch=sm_999"}));
  EXPECT_EQ(T.GpuArch, std::nullopt);
  EXPECT_THAT(T.Warnings,
              ElementsAre("GPU architecture 'sm_999' is not supported by "
                          "clang; cuda-rewrite parses for another "
                          "architecture"));

  T = translateNvccCommand(nvccWith({"-arch=sm_80", "-arch", "kepler"}));
  EXPECT_EQ(T.GpuArch, "sm_80");
  EXPECT_THAT(T.Warnings,
              ElementsAre("unrecognized GPU architecture 'kepler' ignored"));

  T = translateNvccCommand(nvccWith({"-gencode", "code=sm_90"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "a.cu"}));
  EXPECT_EQ(T.GpuArch, "sm_90");
  EXPECT_THAT(T.Warnings, ElementsAre("malformed nvcc option '-gencode "
                                      "code=sm_90' ignored (expected "
                                      "arch=<arch>,code=<code>)"));
}

TEST(NvccArgsFamilies, HostCompilerOptionsInEverySpelling) {
  TranslatedCommand T = translateNvccCommand(nvccWith(
      {"-Xcompiler", "-fPIC", "-Xcompiler=-Wall,-Wextra", "--compiler-options",
       "-O2", "--compiler-options=-fopenmp", "-Xcompiler", "-DX=1\\,2"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "-Qunused-arguments", "-fPIC", "-Wall",
                          "-Wextra", "-O2", "-fopenmp", "-DX=1,2", "a.cu"}));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsFamilies, HostCompilerOptionsClangCannotUseAreDroppedQuietly) {
  TranslatedCommand T = translateNvccCommand(nvccWith(
      {"-Xcompiler",
       "-Wall,-Werror,-Werror=format-security,-Wno-error=unused-variable,"
       "-Wlogical-op,-Wno-class-memaccess,-fno-gnu-unique,-fvisibility="
       "hidden,-pthread,-Wl\\,-rpath\\,/x,-Wl,--as-needed,-rdynamic,-lfoo,-c,"
       "-E,-MD,-save-temps,-x,c++,-o,b.o,-march=native,/EHsc"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "-Qunused-arguments", "-Wall",
                          "-Wno-error=unused-variable", "-fvisibility=hidden",
                          "-pthread", "-march=native", "a.cu"}));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsFamilies, HostCompilerOptionValueInTheNextXcompiler) {
  TranslatedCommand T = translateNvccCommand(
      nvccWith({"-Xcompiler", "-isystem", "-Xcompiler", "/opt/x", "-Xcompiler",
                "-include,cfg.h"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "-Qunused-arguments", "-isystem", "/opt/x",
                          "-include", "cfg.h", "a.cu"}));
}

TEST(NvccArgsFamilies, HostCompilerOptionsWithSpacesAreShellWords) {
  TranslatedCommand T = translateNvccCommand(
      nvccWith({"-Xcompiler", "-Wall -DMSG=\"a b\"", "-Xcompiler= -fPIC "}));
  EXPECT_EQ(T.Args, Argv({"clang++", "-Qunused-arguments", "-Wall", "-DMSG=a b",
                          "-fPIC", "a.cu"}));
}

TEST(NvccArgsFamilies, OptionsNvccImplementsWithMacros) {
  struct Case {
    Argv Options;
    Argv Expected;
  };
  const Case Cases[] = {
      {{"--expt-relaxed-constexpr"}, {"-D__CUDACC_RELAXED_CONSTEXPR__=1"}},
      {{"-expt-relaxed-constexpr"}, {"-D__CUDACC_RELAXED_CONSTEXPR__=1"}},
      {{"--extended-lambda"}, {"-D__CUDACC_EXTENDED_LAMBDA__=1"}},
      {{"--expt-extended-lambda"}, {"-D__CUDACC_EXTENDED_LAMBDA__=1"}},
      {{"-extended-lambda", "-expt-extended-lambda"},
       {"-D__CUDACC_EXTENDED_LAMBDA__=1"}},
      {{"-G"}, {"-D__CUDACC_DEBUG__=1"}},
      {{"--device-debug"}, {"-D__CUDACC_DEBUG__=1"}},
      {{"-ewp"}, {"-D__CUDACC_EWP__=1"}},
      {{"--default-stream", "per-thread"},
       {"-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"}},
      {{"--default-stream=per-thread"},
       {"-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"}},
      {{"-default-stream", "per-thread"},
       {"-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"}},
      {{"--default-stream", "legacy"}, {}},
      {{"-default-stream=null"}, {}},
  };
  for (const Case &C : Cases) {
    TranslatedCommand T = translateNvccCommand(nvccWith(C.Options));
    Argv Expected{"clang++"};
    Expected.insert(Expected.end(), C.Expected.begin(), C.Expected.end());
    Expected.push_back("a.cu");
    EXPECT_EQ(T.Args, Expected) << llvm::join(C.Options, " ");
    EXPECT_THAT(T.Warnings, IsEmpty());
  }
}

TEST(NvccArgsFamilies, OptionsClangSpellsDifferently) {
  struct Case {
    Argv Options;
    Argv Expected;
  };
  const Case Cases[] = {
      {{"-x", "cu"}, {"-x", "cuda"}},
      {{"-x=cu"}, {"-x", "cuda"}},
      {{"--x=cu"}, {"-x", "cuda"}},
      {{"--x", "cu"}, {"-x", "cuda"}},
      {{"-x", "c++"}, {"-x", "c++"}},
      {{"-x", "c"}, {"-x", "c"}},
      {{"-g"}, {"-g"}},
      {{"--debug"}, {"-g"}},
      {{"-w"}, {"-w"}},
      {{"--disable-warnings"}, {"-w"}},
      {{"-noeh"}, {"-fno-exceptions"}},
      {{"-ftemplate-depth", "2048"}, {"-ftemplate-depth=2048"}},
      {{"--ftemplate-backtrace-limit=0"}, {"-ftemplate-backtrace-limit=0"}},
      {{"-Wno-deprecated-declarations"}, {"-Wno-deprecated-declarations"}},
      {{"--Wreorder"}, {"-Wreorder"}},
      {{"-c"}, {"-c"}},
      {{"--compile"}, {"-c"}},
      {{"-c", "-c"}, {"-c"}},
      {{"-o", "a.o"}, {"-o", "a.o"}},
      {{"-o=a.o"}, {"-o", "a.o"}},
      {{"--output-file", "a.o"}, {"-o", "a.o"}},
      {{"--output-file=a.o"}, {"-o", "a.o"}},
      // A value is taken whatever it looks like.
      {{"-o", "-odd.o"}, {"-o", "-odd.o"}},
  };
  for (const Case &C : Cases) {
    TranslatedCommand T = translateNvccCommand(nvccWith(C.Options));
    Argv Expected{"clang++"};
    Expected.insert(Expected.end(), C.Expected.begin(), C.Expected.end());
    Expected.push_back("a.cu");
    EXPECT_EQ(T.Args, Expected) << llvm::join(C.Options, " ");
    EXPECT_THAT(T.Warnings, IsEmpty());
  }

  TranslatedCommand T = translateNvccCommand(nvccWith({"-x", "fortran"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "a.cu"}));
  EXPECT_THAT(T.Warnings, ElementsAre("unknown nvcc input language in '-x "
                                      "fortran' ignored"));
}

TEST(NvccArgsFamilies, OptionsThatMeanNothingToAParserAreDroppedQuietly) {
  const std::vector<Argv> Dropped = {
      {"-ccbin", "/usr/bin/g++-12"},
      {"-ccbin=g++"},
      {"--compiler-bindir", "/opt/gcc/bin"},
      {"--compiler-bindir=/opt/gcc/bin"},
      {"-lineinfo"},
      {"--generate-line-info"},
      {"-maxrregcount", "32"},
      {"-maxrregcount=32"},
      {"--maxrregcount=32"},
      {"-Xptxas", "-v"},
      {"-Xptxas=-v,-O3"},
      {"--ptxas-options=-v"},
      {"--ptxas-options", "-v"},
      {"-Xcudafe", "--diag_suppress=177"},
      {"-Xcudafe=--display_error_number"},
      {"-Xlinker", "-rpath,/x"},
      {"--linker-options=-z,now"},
      {"-Xnvlink", "--suppress-stack-size-warning"},
      {"--nvlink-options=-v"},
      {"-Xfatbin", "-compress-all"},
      {"-Xcicc", "-O3"},
      {"--diag-suppress", "177,550"},
      {"--diag-suppress=20012"},
      {"-diag-suppress", "177"},
      {"-Wno-deprecated-gpu-targets"},
      {"--Wno-deprecated-gpu-targets"},
      {"-forward-unknown-to-host-compiler"},
      {"--forward-unknown-to-host-compiler"},
      {"-forward-unknown-opts"},
      {"--forward-unknown-opts"},
      {"-forward-unknown-to-host-linker"},
      {"--threads", "4"},
      {"--threads=2"},
      {"-t", "0"},
      {"-t4"},
      {"-t=8"},
      {"-res-usage"},
      {"--resource-usage"},
      {"--keep"},
      {"-keep"},
      {"-keep-dir", "/tmp/k"},
      {"-MD"},
      {"-MMD"},
      {"-M"},
      {"-MF", "a.d"},
      {"-MF=a.d"},
      {"--dependency-output", "a.d"},
      {"-MT", "a.o"},
      {"-MP"},
      {"--use_fast_math"},
      {"-use_fast_math"},
      {"-ftz=true"},
      {"--prec-div", "false"},
      {"-fmad=false"},
      {"-lcudadevrt"},
      {"-l", "cublas"},
      {"-L/usr/local/cuda/lib64"},
      {"--library-path=/x"},
      {"-rdc=false"},
      {"-Werror", "all-warnings"},
      {"-Werror=cross-execution-space-call"},
      {"-m64"},
      {"--machine=64"},
      {"-m", "64"},
      {"-v"},
      {"--dryrun"},
      {"-allow-unsupported-compiler"},
      {"-cudart", "shared"},
      {"--cudart=static"},
      {"-split-compile", "0"},
      {"-static-global-template-stub=false"},
      {"-E"},
      {"-ptx"},
      {"-cubin"},
      {"-dlink"},
      {"--device-link"},
      {"-lib"},
      {"-Ofc", "max"},
      {"-Ofc=max"},
      {"-odir", "out"},
      {"-shared"},
      {"-restrict"},
      {"--no-align-double"},
      {"-err-no"},
  };
  for (const Argv &Options : Dropped) {
    TranslatedCommand T = translateNvccCommand(nvccWith(Options));
    std::string What = llvm::join(Options, " ");
    EXPECT_EQ(T.Args, Argv({"clang++", "a.cu"})) << What;
    EXPECT_THAT(T.Warnings, IsEmpty()) << What;
    EXPECT_EQ(T.GpuArch, std::nullopt) << What;
  }
}

TEST(NvccArgsValues, NoValueIsLeftDangling) {
  TranslatedCommand T = translateNvccCommand(
      words("nvcc -MT a.cu.o -MF a.cu.o.d -ccbin /usr/bin/gcc -Xptxas -v "
            "-maxrregcount 32 --threads 0 -keep-dir tmp -odir obj -t 2 "
            "-Xcudafe --diag_suppress=20012 -c a.cu"));
  EXPECT_EQ(T.Args, words("clang++ -c a.cu"));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsValues, OptionAtTheEndWithoutItsValue) {
  for (llvm::StringRef Option : {"-o", "-ccbin", "-Xcompiler", "-MF", "-arch",
                                 "--gpu-architecture", "-I", "-isystem"}) {
    TranslatedCommand T = translateNvccCommand({"nvcc", "a.cu", Option.str()});
    EXPECT_EQ(T.Args, Argv({"clang++", "a.cu"})) << Option.str();
    EXPECT_THAT(T.Warnings, ElementsAre("nvcc option '" + Option.str() +
                                        "' lacks its value; ignored"));
  }
}

TEST(NvccArgsValues, HostOptionLackingItsValueIsDropped) {
  TranslatedCommand T =
      translateNvccCommand(nvccWith({"-Xcompiler", "-fPIC,-include"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "-Qunused-arguments", "-fPIC", "a.cu"}));
  EXPECT_THAT(T.Warnings, IsEmpty());

  T = translateNvccCommand(nvccWith({"-Xcompiler", "-isystem"}));
  EXPECT_EQ(T.Args, Argv({"clang++", "a.cu"}));
}

TEST(NvccArgsWarnings, UnknownOptionIsDroppedAndNamed) {
  TranslatedCommand T = translateNvccCommand(
      words("nvcc --frobnicate=3 -O2 -Wall -c a.cu --frobnicate=3"));
  EXPECT_EQ(T.Args, words("clang++ -O2 -c a.cu"));
  EXPECT_THAT(T.Warnings,
              ElementsAre("unknown nvcc option '--frobnicate=3' ignored",
                          "unknown nvcc option '-Wall' ignored"));
}

TEST(NvccArgsWarnings, UnknownOptionIsAHostOptionWhenForwarded) {
  TranslatedCommand T = translateNvccCommand(
      words("nvcc -c a.cu --frobnicate=3 -Wall -forward-unknown-opts"));
  EXPECT_EQ(T.Args, words("clang++ -Qunused-arguments -c a.cu -Wall"));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

// Options files (--options-file, -optf), as CMake writes them for include
// paths (CMAKE_CUDA_USE_RESPONSE_FILE_FOR_INCLUDES, on by default).

/// A file system whose working directory is /build, holding \p Files
/// (relative names below /build).
llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem>
buildDir(std::vector<std::pair<std::string, std::string>> Files) {
  auto FS = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  FS->setCurrentWorkingDirectory("/build");
  for (const auto &[Name, Contents] : Files)
    FS->addFile(Name, 0, llvm::MemoryBuffer::getMemBufferCopy(Contents));
  return FS;
}

TEST(NvccArgsOptionsFiles, SplitAsNvccDoes) {
  EXPECT_EQ(splitNvccOptionsFile(" -DA=1\t-I\"dir with space\"\n-DB=\"x y\"  "
                                 "-DE=a\\ b -DF=p\"q r\"s -DH=\\\\z\r\n"
                                 "-DQ=\\\" -DC='q r' \"\""),
            Argv({"-DA=1", "-Idir with space", "-DB=x y", "-DE=a b",
                  "-DF=pq rs", "-DH=\\z", "-DQ=\"", "-DC='q", "r'", ""}));
  EXPECT_THAT(splitNvccOptionsFile(""), IsEmpty());
  EXPECT_THAT(splitNvccOptionsFile(" \n\t\n"), IsEmpty());
}

TEST(NvccArgsOptionsFiles, OptionsAreTranslatedInPlace) {
  auto FS = buildDir({{"CMakeFiles/a.dir/includes_CUDA.rsp",
                       "-I/src/include \"-I/src/dir with space\" "
                       "-isystem=/opt/dep/include\n"}});
  TranslatedCommand T = translateNvccCommand(
      words("/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DFOO "
            "--options-file CMakeFiles/a.dir/includes_CUDA.rsp -O3 -x cu -c "
            "/src/a.cu -o CMakeFiles/a.dir/a.cu.o"),
      FS.get());
  EXPECT_EQ(T.Args,
            Argv({"clang++", "-DFOO", "-I/src/include", "-I/src/dir with space",
                  "-isystem", "/opt/dep/include", "-O3", "-x", "cuda", "-c",
                  "/src/a.cu", "-o", "CMakeFiles/a.dir/a.cu.o"}));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsOptionsFiles, EverySpellingSeveralFilesAndLists) {
  auto FS = buildDir({{"a.rsp", "-DA"}, {"b.rsp", "-DB"}, {"c.rsp", "-DC"}});
  for (llvm::StringRef Options :
       {"-optf a.rsp -optf=b.rsp --options-file c.rsp",
        "--options-file=a.rsp,b.rsp -options-file c.rsp",
        "-optf a.rsp,b.rsp,c.rsp", "--optf=/build/a.rsp,b.rsp -optf c.rsp"}) {
    TranslatedCommand T = translateNvccCommand(
        words(("nvcc " + Options + " -c a.cu").str()), FS.get());
    EXPECT_EQ(T.Args, words("clang++ -DA -DB -DC -c a.cu")) << Options.str();
    EXPECT_THAT(T.Warnings, IsEmpty()) << Options.str();
  }
}

TEST(NvccArgsOptionsFiles, AFileMayNameAnotherRelativeToTheDirectory) {
  // As with nvcc, the name in sub/a.rsp is relative to the working
  // directory, not to sub/.
  auto FS = buildDir({{"sub/a.rsp", "-DA -optf b.rsp -DA2"},
                      {"b.rsp", "-DB"},
                      {"sub/b.rsp", "-DWRONG"}});
  TranslatedCommand T =
      translateNvccCommand(words("nvcc -optf sub/a.rsp -c a.cu"), FS.get());
  EXPECT_EQ(T.Args, words("clang++ -DA -DB -DA2 -c a.cu"));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsOptionsFiles, OptionsInAFileActOnTheWholeCommand) {
  auto FS =
      buildDir({{"flags.rsp", "-rdc=true -forward-unknown-to-host-compiler "
                              "-arch=sm_90 -Xcompiler"}});
  TranslatedCommand T = translateNvccCommand(
      words("nvcc -Wall -optf flags.rsp -fPIC -c a.cu"), FS.get());
  // -Xcompiler at the end of the file takes the value after it.
  EXPECT_EQ(T.Args, words("clang++ -Qunused-arguments -Wall -fgpu-rdc "
                          "-D__CUDACC_RDC__=1 -fPIC -c a.cu"));
  EXPECT_EQ(T.GpuArch, "sm_90");
  EXPECT_TRUE(T.RelocatableDeviceCode);
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsOptionsFiles, AValueThatLooksLikeAnOptionsFileIsAValue) {
  auto FS = buildDir({});
  TranslatedCommand T = translateNvccCommand(
      words("nvcc -MF -optf -Xcompiler -optf -c a.cu"), FS.get());
  EXPECT_EQ(T.Args, words("clang++ -c a.cu"));
  EXPECT_THAT(T.Warnings, IsEmpty());
}

TEST(NvccArgsOptionsFiles, MissingFileIsAWarningNamingIt) {
  auto FS = buildDir({{"b.rsp", "-DB"}});
  TranslatedCommand T = translateNvccCommand(
      words("nvcc --options-file CMakeFiles/a.dir/includes_CUDA.rsp,b.rsp "
            "-optf /elsewhere/c.rsp -c a.cu"),
      FS.get());
  EXPECT_EQ(T.Args, words("clang++ -DB -c a.cu"));
  EXPECT_THAT(T.Warnings,
              ElementsAre("cannot read nvcc options file "
                          "'CMakeFiles/a.dir/includes_CUDA.rsp' in '/build': "
                          "No such file or directory; the options in it are "
                          "ignored",
                          "cannot read nvcc options file '/elsewhere/c.rsp': "
                          "No such file or directory; the options in it are "
                          "ignored"));
}

TEST(NvccArgsOptionsFiles, AFileThatNamesItselfStopsAndWarns) {
  auto FS = buildDir({{"loop.rsp", "-optf loop.rsp -DX"}});
  TranslatedCommand T =
      translateNvccCommand(words("nvcc -optf loop.rsp -c a.cu"), FS.get());
  EXPECT_THAT(T.Warnings,
              ElementsAre("nvcc options file 'loop.rsp' is nested more than "
                          "15 files deep (does a file name itself?); "
                          "ignored"));
  EXPECT_EQ(T.Args.back(), "a.cu");
}

TEST(NvccArgsOptionsFiles, OptionAtTheEndWithoutItsValue) {
  TranslatedCommand T = translateNvccCommand(words("nvcc -c a.cu -optf"));
  EXPECT_EQ(T.Args, words("clang++ -c a.cu"));
  EXPECT_THAT(T.Warnings,
              ElementsAre("nvcc option '-optf' lacks its value; ignored"));
}

TEST(NvccArgsRdc, RelocatableDeviceCodeIsRecognizedInEverySpelling) {
  for (llvm::StringRef Options :
       {"-rdc=true", "-rdc true", "--relocatable-device-code=true", "-dc",
        "--device-c", "-dlto", "-lto", "-rdc=true -dc"})
    EXPECT_TRUE(
        translateNvccCommand(words(("nvcc " + Options + " -c a.cu").str()))
            .RelocatableDeviceCode)
        << Options.str();
  for (llvm::StringRef Options :
       {"", "-rdc=false", "--relocatable-device-code=false", "-dw",
        "-Xcompiler -fgpu-rdc"})
    EXPECT_FALSE(
        translateNvccCommand(words(("nvcc " + Options + " -c a.cu").str()))
            .RelocatableDeviceCode)
        << Options.str();
}

// Which commands are nvcc's.

TEST(NvccArgsDetection, NvccInAnyDirectoryAndBehindALauncher) {
  for (const Argv &Args :
       std::vector<Argv>{{"nvcc"},
                         {"/usr/local/cuda/bin/nvcc", "-c", "a.cu"},
                         {"/usr/local/cuda-13.0/bin/nvcc"},
                         {"C:\\CUDA\\v13.0\\bin\\nvcc.exe", "-c", "a.cu"},
                         {"C:/CUDA/bin/NVCC.EXE"},
                         {"/usr/lib/ccache/nvcc"},
                         {"ccache", "nvcc", "-c", "a.cu"},
                         {"/usr/bin/ccache", "/usr/local/cuda/bin/nvcc"},
                         {"sccache", "/usr/local/cuda/bin/nvcc"}})
    EXPECT_TRUE(isNvccCommand(Args)) << llvm::join(Args, " ");
}

TEST(NvccArgsDetection, OtherCompilersAreNotNvcc) {
  for (const Argv &Args : std::vector<Argv>{{},
                                            {"clang++", "-c", "a.cu"},
                                            {"/usr/bin/g++", "nvcc"},
                                            {"/usr/bin/clang-22"},
                                            {"ccache", "g++", "-c", "a.cc"},
                                            {"ccache"},
                                            {"nvcc-wrapper"},
                                            {"mynvcc"},
                                            {"/opt/nvcc/bin/clang++"},
                                            {"nvc++"}})
    EXPECT_FALSE(isNvccCommand(Args)) << llvm::join(Args, " ");
}

TEST(NvccArgsDetection, LauncherIsRemoved) {
  TranslatedCommand T = translateNvccCommand(
      words("/usr/bin/ccache /usr/local/cuda-13.0/bin/nvcc -arch=sm_90 -c "
            "a.cu"));
  EXPECT_EQ(T.Args, words("clang++ -c a.cu"));
  EXPECT_EQ(T.GpuArch, "sm_90");
}

// The adjuster.

TEST(NvccArgsAdjuster, LeavesOtherCommandsAlone) {
  std::vector<std::string> Reported;
  clang::tooling::ArgumentsAdjuster Adjust = nvccArgumentsAdjuster(
      [&](llvm::StringRef, llvm::StringRef M) { Reported.push_back(M.str()); });
  for (const Argv &Args : std::vector<Argv>{
           words("/usr/bin/c++ -O2 -Wall -Xcompiler -c x.cpp -o x.o"),
           words("clang++ -x cuda --cuda-gpu-arch=sm_90 -c a.cu"),
           words("ccache g++ -rdc=true -c x.cpp")})
    EXPECT_EQ(Adjust(Args, "x.cpp"), Args);
  EXPECT_THAT(Reported, IsEmpty());
}

TEST(NvccArgsAdjuster, TranslatesNvccCommandsAndReportsEachWarningOnce) {
  std::vector<std::string> Reported;
  auto Handler = [&](llvm::StringRef File, llvm::StringRef Message) {
    Reported.push_back((File + ": " + Message).str());
  };
  // The tool makes one adjuster per side; both see every file.
  clang::tooling::ArgumentsAdjuster Host = nvccArgumentsAdjuster(Handler);
  clang::tooling::ArgumentsAdjuster Device = nvccArgumentsAdjuster(Handler);
  Argv Command = words("nvcc -rdc=true --bogus -c adjuster-test.cu");
  Argv Expected =
      words("clang++ -fgpu-rdc -D__CUDACC_RDC__=1 -c adjuster-test.cu");
  EXPECT_EQ(Host(Command, "/src/adjuster-test.cu"), Expected);
  EXPECT_EQ(Device(Command, "/src/adjuster-test.cu"), Expected);
  EXPECT_EQ(Host(Command, "/src/adjuster-test.cu"), Expected);
  EXPECT_THAT(Reported, ElementsAre("/src/adjuster-test.cu: unknown nvcc "
                                    "option '--bogus' ignored"));
  Host(Command, "/src/adjuster-test-2.cu");
  EXPECT_EQ(Reported.size(), 2u);
}

TEST(NvccArgsAdjuster, ReadsOptionsFilesFromItsFileSystem) {
  // The tool gives the adjuster its ClangTool's file system, whose working
  // directory is then the compile command's.
  std::vector<std::string> Reported;
  clang::tooling::ArgumentsAdjuster Adjust = nvccArgumentsAdjuster(
      [&](llvm::StringRef, llvm::StringRef M) { Reported.push_back(M.str()); },
      buildDir({{"includes.rsp", "-I/src/include"}}));
  EXPECT_EQ(Adjust(words("nvcc -optf includes.rsp -c a.cu"), "a.cu"),
            words("clang++ -I/src/include -c a.cu"));
  EXPECT_THAT(Reported, IsEmpty());
}

} // namespace
