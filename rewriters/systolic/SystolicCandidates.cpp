//===- SystolicCandidates.cpp - Kernels with a stencil shape -------------===//

#include "analysis/StencilAccess.h"
#include "rewriters/common/TemplateSpelling.h"
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
  // What its instantiations are (those that are stencils are candidates
  // of their own).
  std::string First;
  for (const FunctionDecl *Instance : Template->specializations()) {
    if (!Instance->hasBody())
      continue;
    std::string Verdict = stencilVerdict(*Instance);
    if (First.empty() && !Verdict.empty())
      First = "a template kernel; its instantiations: " + Verdict;
  }
  return First.empty() ? "a template kernel that this file never instantiates"
                       : First;
}

/// Adds \p Kernel (at \p Loc: an instantiation's is its template's) when
/// it has a stencil shape (a point-wise map, radius 0, is none) or a
/// pragma: an annotated kernel without one is listed too, with the reason,
/// since the user asked for its rewrite.
static void addStencil(CandidateFinder &Find, const FunctionDecl &Kernel,
                       SourceLocation Loc, const PragmaDirective *Pragma) {
  StencilResult Analysis = analyzeStencil(Kernel);
  if (Analysis && Analysis.Shape->radius() == 0) {
    Analysis.Shape.reset();
    Analysis.Refusal = "every read is at offset 0: a point-wise map, "
                       "not a stencil";
  }
  if (!Analysis && !Pragma)
    return;
  Candidate &C = Find.add(SystolicPass::Stencil, Loc);
  C.Function = &Kernel;
  C.Annotation = Pragma;
  C.Description = "kernel '" + nameWithTemplateArguments(Kernel) + "': " +
                  (Analysis ? describeOffsets(*Analysis.Shape)
                            : "no stencil shape: " + Analysis.Refusal);
}

// A template kernel's candidates are its instantiations (each analysed
// with its arguments), at the template.
void SystolicPass::findCandidates(CandidateFinder &Find) const {
  for (const FunctionDecl *Kernel : Find.projectKernels()) {
    const PragmaDirective *Pragma =
        Find.annotation(SystolicPass::Directive, Kernel);
    const FunctionTemplateDecl *Template =
        Kernel->getDescribedFunctionTemplate();
    bool Instantiated = false;
    if (Template)
      for (const FunctionDecl *Instance : Template->specializations())
        if (Instance->hasBody() && isTemplateInstantiation(*Instance)) {
          addStencil(Find, *Instance, Kernel->getLocation(), Pragma);
          Instantiated = true;
        }
    if (!Instantiated)
      addStencil(Find, *Kernel, Kernel->getLocation(), Pragma);
  }
}

} // namespace cuda_rewrite
