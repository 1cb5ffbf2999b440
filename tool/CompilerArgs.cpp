//===- CompilerArgs.cpp - The arguments cuda-rewrite gives clang ----------===//

#include "tool/CompilerArgs.h"
#include "tool/ParsePrelude.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

using namespace llvm;

namespace cuda_rewrite {

static std::string chooseCudaPath(StringRef Explicit) {
  if (!Explicit.empty())
    return Explicit.str();
  for (const char *Var : {"CUDA_PATH", "CUDA_HOME"})
    if (std::optional<std::string> Value = sys::Process::GetEnv(Var))
      if (!Value->empty())
        return *Value;
  return CUDA_REWRITE_DEFAULT_CUDA_PATH;
}

/// Where g++ keeps its own headers (`g++ -print-file-name=include`), or
/// "". nvcc compiles host code with g++, which finds omp.h there whether or
/// not -fopenmp is given; clang's resource directory has no omp.h unless
/// LLVM's OpenMP runtime is installed, so a program that includes it would
/// not parse.
static std::string hostCompilerIncludeDir() {
  ErrorOr<std::string> Gxx = sys::findProgramByName("g++");
  if (!Gxx)
    return "";
  SmallString<128> Output;
  if (sys::fs::createTemporaryFile("cuda-rewrite-gxx", "txt", Output))
    return "";
  FileRemover Remove(Output);
  std::optional<StringRef> Redirects[] = {std::nullopt, StringRef(Output),
                                          StringRef("")};
  if (sys::ExecuteAndWait(*Gxx, {*Gxx, "-print-file-name=include"},
                          std::nullopt, Redirects, /*SecondsToWait=*/10) != 0)
    return "";
  ErrorOr<std::unique_ptr<MemoryBuffer>> Text = MemoryBuffer::getFile(Output);
  if (!Text)
    return "";
  std::string Dir = (*Text)->getBuffer().trim().str();
  return sys::fs::is_directory(Dir) ? Dir : "";
}

Expected<CudaToolchain> findCudaToolchain(StringRef Explicit,
                                          StringRef GpuArch) {
  CudaToolchain TC;
  TC.CudaPath = chooseCudaPath(Explicit);
  TC.ResourceDir = CUDA_REWRITE_RESOURCE_DIR;
  TC.GpuArch = GpuArch.str();

  SmallString<256> RuntimeHeader(TC.CudaPath);
  sys::path::append(RuntimeHeader, "include", "cuda_runtime.h");
  if (!sys::fs::exists(RuntimeHeader))
    return createStringError(
        inconvertibleErrorCode(),
        "no CUDA toolkit at '%s' (%s not found); install the CUDA 13 toolkit "
        "or pass --cuda-path=<dir> (or set CUDA_PATH)",
        TC.CudaPath.c_str(), RuntimeHeader.c_str());

  SmallString<256> Wrappers(TC.ResourceDir);
  sys::path::append(Wrappers, "include", "cuda_wrappers");
  if (!sys::fs::is_directory(Wrappers))
    return createStringError(
        inconvertibleErrorCode(),
        "clang's resource directory '%s' has no include/cuda_wrappers; "
        "install the clang-22 package (Debian: apt-get install clang-22)",
        TC.ResourceDir.c_str());
  TC.HostCompilerIncludeDir = hostCompilerIncludeDir();
  return TC;
}

std::vector<std::string> cudaParseArgs(const CudaToolchain &TC, CudaSide Side) {
  SmallString<256> Cccl(TC.CudaPath);
  sys::path::append(Cccl, "include", "cccl");
  std::vector<std::string> Args = {
      "-x", "cuda",
      Side == CudaSide::Host ? "--cuda-host-only" : "--cuda-device-only",
      "--cuda-path=" + TC.CudaPath, "--cuda-gpu-arch=" + TC.GpuArch,
      "-fgpu-rdc", "-Wno-unknown-cuda-version",
      // nvcc takes C++17 code with `register` locals (with a warning);
      // clang rejects it.
      "-Wno-register", "-isystem", std::string(Cccl),
      "-resource-dir=" + TC.ResourceDir};
  // Last, so that only what no other directory has is found there.
  if (!TC.HostCompilerIncludeDir.empty())
    Args.insert(Args.end(), {"-idirafter", TC.HostCompilerIncludeDir});
  return Args;
}

clang::tooling::ArgumentsAdjuster cudaArgumentsAdjuster(const CudaToolchain &TC,
                                                        CudaSide Side) {
  using namespace clang::tooling;
  std::vector<std::string> Args = cudaParseArgs(TC, Side);
  // nvcc's builtins that clang lacks (ParsePrelude.h); processFile maps the
  // file into the parse's file system.
  Args.insert(Args.end(), {"-include", ParsePreludePath.str()});
  ArgumentsAdjuster Prepend =
      getInsertArgumentAdjuster(Args, ArgumentInsertPosition::BEGIN);
  return combineAdjusters(
      combineAdjusters(getClangStripOutputAdjuster(),
                       getClangStripDependencyFileAdjuster()),
      combineAdjusters(getClangSyntaxOnlyAdjuster(), Prepend));
}

} // namespace cuda_rewrite
