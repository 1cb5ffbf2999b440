//===- main.cpp - cuda-rewrite --------------------------------------------===//
//
// Rewrites CUDA code into faster CUDA code. See README.md and
// `cuda-rewrite --help`.
//
//===----------------------------------------------------------------------===//

#include "tool/Driver.h"

#include "llvm/Support/InitLLVM.h"

int main(int Argc, const char **Argv) {
  llvm::InitLLVM Init(Argc, Argv);
  return cuda_rewrite::runCudaRewrite(Argc, Argv);
}
