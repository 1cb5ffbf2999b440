//===- CudaArchRegions.h - #if blocks that test __CUDA_ARCH__ ---*- C++ -*-===//
//
// Host and device compilations of one .cu file see different code wherever
// a conditional tests __CUDA_ARCH__. The tool parses the host side first; it
// records these blocks so that candidates inside them can be flagged and so
// that the device side is parsed too when the main file has any.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_ANALYSIS_CUDAARCHREGIONS_H
#define CUDA_REWRITE_ANALYSIS_CUDAARCHREGIONS_H

#include "clang/Lex/PPCallbacks.h"
#include <utility>
#include <vector>

namespace clang {
class SourceManager;
}

namespace cuda_rewrite {

/// Main-file offset ranges [#if, #endif] of conditionals whose #if or any
/// #elif mentions __CUDA_ARCH__.
class CudaArchRegions {
public:
  bool empty() const { return Ranges.empty(); }
  bool contains(unsigned Offset) const;
  void add(unsigned Begin, unsigned End) { Ranges.emplace_back(Begin, End); }

private:
  std::vector<std::pair<unsigned, unsigned>> Ranges;
};

/// Fills a CudaArchRegions while the preprocessor runs.
class CudaArchRegionRecorder : public clang::PPCallbacks {
public:
  CudaArchRegionRecorder(const clang::SourceManager &SM, CudaArchRegions &Out)
      : SM(SM), Out(Out) {}

  void If(clang::SourceLocation Loc, clang::SourceRange ConditionRange,
          ConditionValueKind) override;
  void Elif(clang::SourceLocation Loc, clang::SourceRange ConditionRange,
            ConditionValueKind, clang::SourceLocation) override;
  void Ifdef(clang::SourceLocation Loc, const clang::Token &MacroNameTok,
             const clang::MacroDefinition &) override;
  void Ifndef(clang::SourceLocation Loc, const clang::Token &MacroNameTok,
              const clang::MacroDefinition &) override;
  void Elifdef(clang::SourceLocation Loc, const clang::Token &MacroNameTok,
               const clang::MacroDefinition &) override;
  void Elifndef(clang::SourceLocation Loc, const clang::Token &MacroNameTok,
                const clang::MacroDefinition &) override;
  void Endif(clang::SourceLocation Loc, clang::SourceLocation IfLoc) override;

private:
  struct Open {
    clang::SourceLocation IfLoc;
    bool MentionsArch;
  };
  void open(clang::SourceLocation Loc, bool MentionsArch);
  void mark(bool MentionsArch);
  bool mentionsArch(clang::SourceRange ConditionRange) const;

  const clang::SourceManager &SM;
  CudaArchRegions &Out;
  std::vector<Open> Stack;
};

} // namespace cuda_rewrite

#endif
