//===- Remarks.h - --remarks: what each pass did and why --------*- C++ -*-===//
//
// Remarks use clang's diagnostic format, `file:line:col: remark: ...
// [pass]`, so that editors and CI logs pick them up like any diagnostic.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_REMARKS_H
#define CUDA_REWRITE_REWRITERS_COMMON_REMARKS_H

#include "rewriters/common/PassRegistry.h"
#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/Twine.h"

namespace cuda_rewrite {

class Remarks {
public:
  Remarks(clang::DiagnosticsEngine &Diags, bool Enabled)
      : Diags(Diags), Enabled(Enabled) {}

  /// A candidate that was rewritten: what, with which parameters and why.
  void applied(clang::SourceLocation Loc, PassId Pass,
               const llvm::Twine &Message);
  /// A candidate left unchanged, and the reason.
  void refused(clang::SourceLocation Loc, PassId Pass,
               const llvm::Twine &Reason);

private:
  void emit(clang::SourceLocation Loc, PassId Pass, const llvm::Twine &Text);

  clang::DiagnosticsEngine &Diags;
  bool Enabled;
};

} // namespace cuda_rewrite

#endif
