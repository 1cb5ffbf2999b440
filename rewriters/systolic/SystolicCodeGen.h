//===- SystolicCodeGen.h - The SSAM kernel and its launcher -----*- C++ -*-===//
//
// Writes, for a planned stencil kernel K:
//  - `struct K_systolic_shape`: the chosen P, warps per block and halo;
//  - `__global__ void K_systolic(...)`: K's parameters plus the extent of
//    K's launch. Each warp caches a 32-lane x C-row window of the input in
//    registers, sums each column of taps and shifts the partial sum one lane
//    up (SSAM, Listings 1 and 2); in 3D the window holds a plane per z
//    offset and the warp streams along z, rotating planes through it;
//  - with a vector shape (chooseVectorShape), also its shape struct and
//    `K_systolic_aligned(...)`: each lane keeps V consecutive columns of C
//    rows, one vector load per row, and takes the columns its taps reach
//    beyond them from its neighbours; or `K_systolic_wide(...)`: overlapped
//    blocking with V columns per lane, partial sums passed a column at a
//    time;
//  - `void K_systolic_launch(grid, block, sharedBytes, stream, ...)`: what
//    a launch `K<<<grid, block, sharedBytes, stream>>>(...)` becomes; it
//    runs the aligned kernel where the arrays' rows are aligned.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICCODEGEN_H
#define CUDA_REWRITE_REWRITERS_SYSTOLIC_SYSTOLICCODEGEN_H

#include "rewriters/systolic/SystolicModel.h"
#include "rewriters/systolic/SystolicPlan.h"
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cuda_rewrite {

std::string systolicKernelName(const SystolicPlan &Plan);
std::string systolicAlignedKernelName(const SystolicPlan &Plan);
std::string systolicWideKernelName(const SystolicPlan &Plan);
std::string systolicLauncherName(const SystolicPlan &Plan);

/// The launcher's declaration (with its comment), for launches that come
/// before the kernel's definition.
std::string systolicLauncherDeclaration(const SystolicPlan &Plan,
                                        const SystolicShape &Shape);

/// For a plan of an instantiation of a template kernel (TemplateArgs set),
/// the primary templates that the generated code specializes, as (key,
/// declaration); the same form of two instantiations has the same key.
std::vector<std::pair<std::string, std::string>>
systolicPrimaryTemplates(const SystolicPlan &Plan, const SystolicShape &Shape,
                         const std::optional<SystolicShape> &Aligned);

/// The shape struct, the kernel and the launcher, in that order.
/// \p Summary describes the stencil (describeOffsets) for the comment.
std::string generateSystolicCode(const SystolicPlan &Plan,
                                 const SystolicShape &Shape,
                                 const std::optional<SystolicShape> &Aligned,
                                 const std::string &Summary);

} // namespace cuda_rewrite

#endif
