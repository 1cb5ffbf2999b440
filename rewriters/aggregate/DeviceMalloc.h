//===- DeviceMalloc.h - Aggregating device-side cudaMalloc ------*- C++ -*-===//
//
// KLAP section II-C: the device-side cudaMalloc calls in a parent whose
// launches are aggregated become one heap allocation per warp (the lanes
// that reach the call together) or, where every thread of the block reaches
// the call, per block; each thread gets its part. Parts of one allocation
// cannot be freed one by one, so nothing is aggregated in a file whose
// device code frees memory.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_AGGREGATE_DEVICEMALLOC_H
#define CUDA_REWRITE_REWRITERS_AGGREGATE_DEVICEMALLOC_H

#include "clang/AST/Decl.h"

namespace cuda_rewrite {

struct PassContext;

/// How far a parent's cudaMalloc calls may be aggregated.
enum class MallocScope {
  Warp,  ///< Only among the lanes that reach a call together.
  Block, ///< Per block, where every thread of the block reaches the call.
};

/// Rewrites the device-side cudaMalloc calls in \p Parent's body, with a
/// remark for each (rewritten, or why not). Returns false if an edit failed.
bool aggregateDeviceMallocs(PassContext &Context,
                            const clang::FunctionDecl &Parent,
                            MallocScope Scope);

} // namespace cuda_rewrite

#endif
