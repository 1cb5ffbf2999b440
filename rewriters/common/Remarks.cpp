//===- Remarks.cpp - --remarks: what each pass did and why ----------------===//

#include "rewriters/common/Remarks.h"

using namespace clang;

namespace cuda_rewrite {

void Remarks::emit(SourceLocation Loc, PassId Pass, const llvm::Twine &Text) {
  if (!Enabled)
    return;
  unsigned ID = Diags.getCustomDiagID(DiagnosticsEngine::Remark, "%0 [%1]");
  Diags.Report(Loc, ID) << Text.str() << passInfo(Pass).Name;
}

void Remarks::applied(SourceLocation Loc, PassId Pass,
                      const llvm::Twine &Message) {
  emit(Loc, Pass, "rewritten: " + Message);
}

void Remarks::refused(SourceLocation Loc, PassId Pass,
                      const llvm::Twine &Reason) {
  emit(Loc, Pass, "not rewritten: " + Reason);
}

} // namespace cuda_rewrite
