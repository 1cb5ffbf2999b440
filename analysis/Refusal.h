//===- Refusal.h - Why a candidate is not rewritten -------------*- C++ -*-===//
//
// The one shape of "no, and why" that plans and analyses hand back: the
// reason a user reads in the remark (a warning where the candidate was
// annotated) and, where one part of the source is to blame, where it is.
// A plan comes as PlanOrRefusal<Plan>: the plan, or the refusal in its
// place. Passes report refusals with Remarks::refused.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_REFUSAL_H
#define CUDA_REWRITE_ANALYSIS_REFUSAL_H

#include "clang/Basic/SourceLocation.h"
#include <optional>
#include <string>
#include <utility>

namespace cuda_rewrite {

struct Refusal {
  /// "the kernel is a template": what stops the rewrite, in the user's
  /// terms.
  std::string Reason;
  /// The part of the source the reason is about; invalid where it is the
  /// candidate as a whole.
  clang::SourceLocation Loc;
};

/// A plan, or why there is none.
template <class PlanT> struct PlanOrRefusal {
  std::optional<PlanT> Plan;
  Refusal Refused; ///< Set where Plan is not.

  static PlanOrRefusal refuse(std::string Reason,
                              clang::SourceLocation Loc = {}) {
    PlanOrRefusal R;
    R.Refused = {std::move(Reason), Loc};
    return R;
  }
  static PlanOrRefusal accept(PlanT Plan) {
    PlanOrRefusal R;
    R.Plan = std::move(Plan);
    return R;
  }
  explicit operator bool() const { return Plan.has_value(); }
};

} // namespace cuda_rewrite

#endif
