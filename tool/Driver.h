//===- Driver.h - cuda-rewrite from argv to exit status ---------*- C++ -*-===//
#ifndef CUDA_REWRITE_TOOL_DRIVER_H
#define CUDA_REWRITE_TOOL_DRIVER_H

namespace cuda_rewrite {

/// Runs the tool; returns the process exit status (see ExitCode).
int runCudaRewrite(int Argc, const char **Argv);

} // namespace cuda_rewrite

#endif
