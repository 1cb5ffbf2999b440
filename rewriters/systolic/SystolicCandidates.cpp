//===- SystolicCandidates.cpp - Kernels with a stencil shape -------------===//

#include "analysis/StencilAccess.h"
#include "rewriters/systolic/SystolicPass.h"

using namespace clang;
using namespace llvm;

namespace cuda_rewrite {

/// What the stencil analysis says of \p Kernel: "" for a stencil.
static std::string stencilVerdict(const FunctionDecl &Kernel) {
  StencilResult Analysis = analyzeStencil(Kernel);
  if (Analysis)
    return Analysis.Shape->radius() == 0
               ? "no stencil: every read is at offset 0 (a point-wise map)"
               : "";
  return "no stencil: " + Analysis.Refusal;
}

std::string SystolicPass::whyNotACandidate(const FunctionDecl &Kernel) const {
  const FunctionTemplateDecl *Template = Kernel.getDescribedFunctionTemplate();
  if (!Template)
    return stencilVerdict(Kernel);
  // A template is rewritten by none of the passes yet (issue 28); what its
  // instantiations are says whether that is what keeps it.
  std::string First;
  for (const FunctionDecl *Instance : Template->specializations()) {
    if (!Instance->hasBody())
      continue;
    std::string Verdict = stencilVerdict(*Instance);
    if (Verdict.empty())
      return "a template kernel, which is not rewritten yet; its "
             "instantiations are stencils";
    if (First.empty())
      First = "a template kernel; its instantiations: " + Verdict;
  }
  return First.empty() ? "a template kernel that this file never instantiates"
                       : First;
}

// Kernels with a stencil shape (a point-wise map, radius 0, is none); an
// annotated kernel without one is listed too, with the reason, since the
// user asked for its rewrite.
void SystolicPass::findCandidates(CandidateFinder &Find) const {
  for (const FunctionDecl *Kernel : Find.mainFileKernels()) {
    StencilResult Analysis = analyzeStencil(*Kernel);
    if (Analysis && Analysis.Shape->radius() == 0) {
      Analysis.Shape.reset();
      Analysis.Refusal = "every read is at offset 0: a point-wise map, "
                         "not a stencil";
    }
    const PragmaDirective *Pragma =
        Find.annotation(SystolicPass::Directive, Kernel);
    if (!Analysis && !Pragma)
      continue;
    Candidate &C = Find.add(SystolicPass::Stencil, Kernel->getLocation());
    C.Function = Kernel;
    C.Annotation = Pragma;
    C.Description = "kernel '" + Kernel->getNameAsString() + "': " +
                    (Analysis ? describeOffsets(*Analysis.Shape)
                              : "no stencil shape: " + Analysis.Refusal);
  }
}

} // namespace cuda_rewrite
