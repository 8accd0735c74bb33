#include "runtime/fusion_executor_cache.h"

#include <iostream>

#include "exceptions.h"
#include "runtime/aten_evaluator.h"

namespace nvfuser {

FusionExecutorCache::Entry& FusionExecutorCache::lookup(
    const std::vector<RuntimeArg>& args, const Options& options) {
  std::string key = signatureKey(args) + "|" + options.compileKey();
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    return *it->second;
  }
  auto entry = std::make_unique<Entry>();
  entry->concrete = concretize(*fusion_, describeArgs(*fusion_, args));
  if (options.dump("fusion_ir_concrete")) {
    std::cout << "Concrete fusion for this input signature:\n"
              << entry->concrete.fusion->toString() << std::flush;
  }
  return *entries_.emplace(key, std::move(entry)).first->second;
}

std::vector<at::Tensor> FusionExecutorCache::run(
    const std::vector<RuntimeArg>& args, const Options& options) {
  NVF_CHECK(args.size() == fusion_->inputs().size(), "execute: the fusion has ",
            fusion_->inputs().size(), " inputs but ", args.size(),
            " were given");
  at::Device device = commonDevice(*fusion_, args);
  if (options.dump("fusion_ir")) {
    std::cout << fusion_->toString() << std::flush;
  }
  Entry& entry = lookup(args, options);
  last_ = entry.concrete.fusion.get();
  return AtenEvaluator::run(*entry.concrete.fusion, args, device);
}

}  // namespace nvfuser
