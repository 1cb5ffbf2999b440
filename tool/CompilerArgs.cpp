//===- CompilerArgs.cpp - The arguments cuda-rewrite gives clang ----------===//

#include "tool/CompilerArgs.h"
#include "tool/ParsePrelude.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

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
  return TC;
}

std::vector<std::string> cudaParseArgs(const CudaToolchain &TC, CudaSide Side) {
  SmallString<256> Cccl(TC.CudaPath);
  sys::path::append(Cccl, "include", "cccl");
  return {"-x",
          "cuda",
          Side == CudaSide::Host ? "--cuda-host-only" : "--cuda-device-only",
          "--cuda-path=" + TC.CudaPath,
          "--cuda-gpu-arch=" + TC.GpuArch,
          "-fgpu-rdc",
          "-Wno-unknown-cuda-version",
          // nvcc takes C++17 code with `register` locals (with a warning);
          // clang rejects it.
          "-Wno-register",
          "-isystem",
          std::string(Cccl),
          "-resource-dir=" + TC.ResourceDir};
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
