//===- FileProcessor.h - Parse, analyse and rewrite one file ----*- C++ -*-===//
//
// One input file goes through the host-side parse, and through the
// device-side parse too when its code has #if blocks that test
// __CUDA_ARCH__ (the host side cannot see what those hide). Each parse
// yields plain data (listing lines, edits, rendered diagnostics), merged
// here; nothing refers to an AST once a parse ends, so files are processed
// in parallel safely.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_TOOL_FILEPROCESSOR_H
#define CUDA_REWRITE_TOOL_FILEPROCESSOR_H

#include "gpu/GpuSpec.h"
#include "rewriters/common/Remarks.h"
#include "tool/CompilerArgs.h"
#include "tool/CoverageReport.h"
#include "tool/ListPrinter.h"
#include "tool/Options.h"
#include "tool/Output.h"
#include "clang/Tooling/CompilationDatabase.h"

namespace cuda_rewrite {

struct FileResult {
  bool Failed = false;
  /// Clang's and the tool's diagnostics for this file, rendered.
  std::string Diagnostics;
  RewrittenFile Output;
  std::vector<ListEntry> Listing;
  std::vector<CoverageEntry> Coverage;
  /// Candidates rewritten and refused, over both parses.
  RewriteCounts Counts;
  double HostParseSeconds = 0, DeviceParseSeconds = 0;
  bool ParsedDeviceSide = false;
};

FileResult processFile(const ToolOptions &Opts,
                       const clang::tooling::CompilationDatabase &DB,
                       const CudaToolchain &Toolchain, const GpuSpec &Gpu,
                       llvm::StringRef Path);

} // namespace cuda_rewrite

#endif
