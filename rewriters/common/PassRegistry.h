//===- PassRegistry.h - The rewriting passes and their names ----*- C++ -*-===//
//
// The five passes of docs/design.md section 2, the pragma directives that
// trigger each one, and parsing of --only/--disable lists.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_PASSREGISTRY_H
#define CUDA_REWRITE_REWRITERS_COMMON_PASSREGISTRY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <bitset>
#include <optional>

namespace cuda_rewrite {

enum class PassId { Aggregate, Promote, Systolic, Fuse, Pipeline };
constexpr unsigned NumPasses = 5;

struct PassInfo {
  PassId Id;
  llvm::StringLiteral Name;
  llvm::StringLiteral Summary;
  /// False until the pass's issue lands: candidates are found and listed,
  /// and annotated ones get a remark saying no rewrite is available yet.
  bool Implemented;
  /// What the pass can rewrite correctly; the pass manager refuses the
  /// rest with a remark before the pass sees it (docs/design.md section 4).
  bool HandlesMacros = false;
  bool HandlesTemplates = false;
  bool HandlesCudaArchRegions = false;
};

llvm::ArrayRef<PassInfo> allPasses();
const PassInfo &passInfo(PassId Id);
std::optional<PassId> passByName(llvm::StringRef Name);

/// A set of enabled passes.
class PassSet {
public:
  static PassSet all() { return PassSet(std::bitset<NumPasses>().set()); }
  static PassSet none() { return PassSet(std::bitset<NumPasses>()); }
  bool contains(PassId Id) const { return Bits.test(index(Id)); }
  void insert(PassId Id) { Bits.set(index(Id)); }
  void erase(PassId Id) { Bits.reset(index(Id)); }
  bool operator==(const PassSet &O) const { return Bits == O.Bits; }

private:
  explicit PassSet(std::bitset<NumPasses> Bits) : Bits(Bits) {}
  static unsigned index(PassId Id) { return static_cast<unsigned>(Id); }
  std::bitset<NumPasses> Bits;
};

/// Parses a comma-separated list of pass names ("aggregate,systolic").
/// Unknown or empty names are an error that lists the valid ones.
llvm::Expected<PassSet> parsePassList(llvm::StringRef List);

/// The passes enabled by --only (empty: all) minus --disable.
llvm::Expected<PassSet> enabledPasses(llvm::StringRef Only,
                                      llvm::StringRef Disable);

} // namespace cuda_rewrite

#endif
