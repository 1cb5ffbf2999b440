//===- MainFile.cpp - Where included files meet the main file -------------===//

#include "analysis/MainFile.h"

using namespace clang;

namespace cuda_rewrite {

SourceLocation mainFileLocation(const SourceManager &SM, SourceLocation Loc) {
  Loc = SM.getExpansionLoc(Loc);
  while (Loc.isValid() && !SM.isWrittenInMainFile(Loc))
    Loc = SM.getIncludeLoc(SM.getFileID(Loc));
  return Loc;
}

} // namespace cuda_rewrite
