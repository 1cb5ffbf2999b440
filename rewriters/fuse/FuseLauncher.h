//===- FuseLauncher.h - The host side of a fused group ----------*- C++ -*-===//
//
// The host arguments of a fused group's launches, which become the
// parameters of its kernel and launcher, and the launcher itself
// (`static bool launch(...)`): the checks under which the fused kernel
// computes what the stages' launches compute, then the one fused launch
// (FuseCodeGen.h shows where it sits in the generated namespace).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_FUSELAUNCHER_H
#define CUDA_REWRITE_REWRITERS_FUSE_FUSELAUNCHER_H

#include "rewriters/common/CodeWriter.h"
#include "rewriters/fuse/FuseCodeGen.h"
#include "rewriters/fuse/StagedTables.h"

#include "clang/AST/ASTContext.h"
#include "llvm/ADT/ArrayRef.h"
#include <map>
#include <string>
#include <vector>

namespace cuda_rewrite {

/// A host argument of the group's launches, passed on as a parameter.
struct HostParam {
  std::string Text, Name, Type;
};

/// The distinct host arguments of a group's launches, in launch order, each
/// with a parameter name that no name of the generated code hides.
class HostParams {
public:
  HostParams(const FuseGroup &G, clang::ASTContext &Ctx);

  /// The parameter passing the host argument spelled \p Text.
  const HostParam &of(const std::string &Text) const;
  /// `float *a, int n`: the parameters as the kernel and launcher declare
  /// them.
  std::string declared() const;
  /// `a, n`: the parameters as arguments.
  std::string names() const;
  /// The launcher's arguments at the call that replaces the launches: the
  /// first launch's configuration, then every host argument's text.
  std::string launchArgs(const FuseGroup &G, clang::ASTContext &Ctx) const;

private:
  std::vector<HostParam> Params;
  std::map<std::string, unsigned> Index;
};

/// Whether the fused grid runs the channels (z) first (FuseLauncher.cpp
/// says when); the kernel reads its tile coordinates accordingly.
bool channelsFirst(const FuseGroup &G);

/// Writes the group's `static bool launch(...)`.
void writeFusedLauncher(CodeWriter &W, const FuseGroup &G, const FuseTile &T,
                        const HostParams &Params,
                        llvm::ArrayRef<StagedTable> Tables);

} // namespace cuda_rewrite

#endif
