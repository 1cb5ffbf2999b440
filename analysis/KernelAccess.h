//===- KernelAccess.h - How a kernel uses its pointer parameters -*- C++
//-*-===//
//
// Which buffers a kernel reads and which it writes. Passes trust the answer:
// fusion keeps a buffer in registers only if no stage writes it, the systolic
// rewrite needs read-only inputs. The analysis is therefore conservative: a
// pointer that escapes where it cannot be followed (stored to memory, passed
// to a function whose body is not visible, cast to an integer) counts as read
// and written.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_KERNELACCESS_H
#define CUDA_REWRITE_ANALYSIS_KERNELACCESS_H

#include "clang/AST/Decl.h"
#include "clang/Basic/SourceLocation.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// How a function body uses the memory behind one pointer, array or
/// reference parameter.
struct ParamAccess {
  const clang::ParmVarDecl *Param = nullptr;
  bool Read = false;    ///< Some load may read the pointee.
  bool Written = false; ///< Some store (or atomic) may write the pointee.
  /// The pointer leaves what the analysis can follow; Read and Written are
  /// then set as well.
  bool Escapes = false;
  /// Where and why it escapes first (source order), for remarks.
  clang::SourceLocation EscapeLoc;
  std::string EscapeReason;
};

/// For each pointer, array or reference parameter of \p Kernel, in parameter
/// order: whether the body reads, writes or leaks what it points to. Follows
/// local aliases (`float *q = p + off;`, `float &r = p[i];`), atomics
/// (read and write), the load/store intrinsics (`__ldg`, `__stcg`) and calls
/// to functions defined in the same translation unit; anything else escapes.
/// Parameters of other types (scalars, structs passed by value) are not
/// listed. Works for any function with a body, not only for kernels.
std::vector<ParamAccess>
analyzeKernelParamAccess(const clang::FunctionDecl &Kernel);

/// The entry of \p Accesses for \p Param, or null.
const ParamAccess *findParamAccess(const std::vector<ParamAccess> &Accesses,
                                   const clang::ParmVarDecl *Param);

} // namespace cuda_rewrite

#endif
