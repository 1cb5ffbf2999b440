//===- StagedTables.h - Constant tables a fused kernel stages ---*- C++ -*-===//
//
// A stage that looks a value up in a `__constant__` table at an index that
// differs between the threads of a warp (a tone curve indexed by the pixel,
// camera's applyCurve) pays for it: the constant cache serves one address
// per cycle, so a warp's lookup is replayed once per distinct index. On the
// H100 that lookup took most of the camera pipeline's time. The fused kernel
// therefore copies such a table into shared memory once per block and the
// stages read the copy (bank conflicts, if any, cost far less than replays).
// Tables read only at warp-uniform indices stay where they are: there the
// constant cache broadcasts.
//
// Legal because device code cannot write `__constant__` memory: the table
// is the same for the whole launch, and the block copies it before any of
// its threads reads it (one __syncthreads at the kernel's start, which every
// thread reaches).
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_FUSE_STAGEDTABLES_H
#define CUDA_REWRITE_REWRITERS_FUSE_STAGEDTABLES_H

#include "rewriters/fuse/FusePlan.h"
#include "llvm/ADT/ArrayRef.h"
#include <string>
#include <vector>

namespace cuda_rewrite {

/// Shared memory for staged tables per block: a third of the tiles'
/// budget (48 KiB per block).
constexpr uint64_t kMaxStagedBytes = 16 * 1024;

/// A one-dimensional `__constant__` array the fused kernel copies to
/// shared memory.
struct StagedTable {
  const clang::VarDecl *Var = nullptr;
  std::string Name;        ///< The shared copy's name, `<var>_staged`.
  std::string ElementType; ///< As written in the generated code.
  uint64_t Elements = 0, Bytes = 0;
  /// The element count as generated code spells it, from the array itself.
  std::string ElementsText;

  /// The table's device address, which the kernel copies it from with
  /// global loads: coalesced, where reading the `__constant__` array would
  /// make the constant cache serve the lanes' addresses one at a time.
  std::string sourceName() const { return Var->getNameAsString() + "_source"; }
};

/// ", const float *__restrict__ t_source" per staged table (the kernel's
/// parameters, \p Declared), or ", t_source" (the launch's arguments).
std::string stagedTableSources(llvm::ArrayRef<StagedTable> Tables,
                               bool Declared);

/// The tables of \p G's stages to stage: indexed (in a stage's body) at an
/// index that is not provably the same for all threads of a block, of at
/// most \p MaxBytes together (the first ones found that fit).
std::vector<StagedTable>
findStagedTables(const FuseGroup &G, clang::ASTContext &Ctx, uint64_t MaxBytes);

/// The table \p E subscripts (its base names it), if it is in \p Tables.
const StagedTable *stagedTableOf(const clang::ArraySubscriptExpr *E,
                                 const std::vector<StagedTable> &Tables);

} // namespace cuda_rewrite

#endif
