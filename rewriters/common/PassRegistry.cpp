//===- PassRegistry.cpp - The rewriting passes and their names ------------===//

#include "rewriters/common/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace cuda_rewrite {

static const PassInfo Passes[] = {
    {PassId::Aggregate, "aggregate",
     "aggregate device-side kernel launches (KLAP)", true},
    {PassId::Promote, "promote",
     "promote recursive device-side launches (KLAP)", true},
    {PassId::Systolic, "systolic",
     "stencils and convolutions as software systolic arrays (SSAM)", true},
    {PassId::Fuse, "fuse",
     "fuse image-processing stage chains into overlapped tiles "
     "(PolyMage-GPU)",
     true},
    {PassId::Pipeline, "pipeline",
     "run stage pipelines under an execution model (VersaPipe)", true},
};

ArrayRef<PassInfo> allPasses() { return Passes; }

const PassInfo &passInfo(PassId Id) {
  return Passes[static_cast<unsigned>(Id)];
}

std::optional<PassId> passByName(StringRef Name) {
  for (const PassInfo &P : Passes)
    if (P.Name == Name)
      return P.Id;
  return std::nullopt;
}

static std::string validPassNames() {
  return join(map_range(Passes, [](const PassInfo &P) { return P.Name; }),
              ", ");
}

Expected<PassSet> parsePassList(StringRef List) {
  PassSet Result = PassSet::none();
  SmallVector<StringRef, 8> Names;
  List.split(Names, ',');
  for (StringRef Name : Names) {
    Name = Name.trim();
    std::optional<PassId> Id = passByName(Name);
    if (!Id)
      return createStringError(inconvertibleErrorCode(),
                               "unknown pass '%s'; valid passes: %s",
                               Name.str().c_str(), validPassNames().c_str());
    Result.insert(*Id);
  }
  return Result;
}

Expected<PassSet> enabledPasses(StringRef Only, StringRef Disable) {
  PassSet Enabled = PassSet::all();
  if (!Only.empty()) {
    Expected<PassSet> OnlySet = parsePassList(Only);
    if (!OnlySet)
      return OnlySet.takeError();
    Enabled = *OnlySet;
  }
  if (!Disable.empty()) {
    Expected<PassSet> Disabled = parsePassList(Disable);
    if (!Disabled)
      return Disabled.takeError();
    for (const PassInfo &P : Passes)
      if (Disabled->contains(P.Id))
        Enabled.erase(P.Id);
  }
  return Enabled;
}

} // namespace cuda_rewrite
