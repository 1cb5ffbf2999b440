//===- Passes.cpp - The passes, in the order they run ---------------------===//
//
// Adding a pass: its folder with a Pass subclass, one line below, and its
// sources in rewriters/CMakeLists.txt.
//
//===----------------------------------------------------------------------===//

#include "rewriters/PassManager.h"
#include "rewriters/aggregate/AggregatePass.h"
#include "rewriters/fuse/FusePass.h"
#include "rewriters/pipeline/PipelinePass.h"
#include "rewriters/promote/PromotePass.h"
#include "rewriters/systolic/SystolicPass.h"

namespace cuda_rewrite {

std::vector<std::unique_ptr<Pass>> createPasses(const PassOptions &Opts) {
  std::vector<std::unique_ptr<Pass>> Passes;
  Passes.push_back(std::make_unique<AggregatePass>(Opts.AggregateGranularity));
  Passes.push_back(std::make_unique<PromotePass>());
  Passes.push_back(std::make_unique<SystolicPass>());
  Passes.push_back(std::make_unique<FusePass>());
  Passes.push_back(std::make_unique<PipelinePass>());
  return Passes;
}

llvm::ArrayRef<PassSharing> passSharing() {
  static const PassSharing Sharing[] = {{SystolicPass::Name, FusePass::Name}};
  return Sharing;
}

} // namespace cuda_rewrite
