// Front of the runtime: one entry per input signature, so a repeated call
// skips validation, concretization (and later segmentation and compilation).
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/fusion.h"
#include "ops/concretize.h"
#include "options.h"
#include "runtime/runtime_args.h"
#include "runtime/segmented_runtime.h"

namespace nvfuser {

// Thread-safe: execute may be called on one fusion from several threads at
// once (the Python bindings release the GIL). Entries are created under a
// lock and never removed; each kernel guards its own variants.
class FusionExecutorCache {
 public:
  // Takes the symbolic fusion as defined by the user.
  explicit FusionExecutorCache(std::unique_ptr<Fusion> fusion)
      : fusion_(std::move(fusion)) {}

  // stream: the caller's CUDA stream (nullptr: the default stream).
  // segmentMs: when given, filled with each segment's time in ms (CUDA
  // events on a GPU, host time on the CPU), in run order.
  std::vector<at::Tensor> run(const std::vector<RuntimeArg>& args,
                              const Options& options, void* stream = nullptr,
                              std::vector<double>* segmentMs = nullptr);
  // Segments for these args (without running) and returns the generated
  // kernels' sources, each compiled with NVRTC for arch.
  std::vector<std::string> cudaCodeFor(const std::vector<RuntimeArg>& args,
                                       const Options& options,
                                       const std::string& arch);
  // Concretizes and segments for these args without running (a later run
  // of the same signature reuses the entry); the segments' complete fusion
  // is the concrete one.
  const SegmentedFusion& segmentationFor(const std::vector<RuntimeArg>& args,
                                         const Options& options);
  // The generated kernels of the last run's segmentation.
  std::vector<std::string> lastCudaCode() const;
  // The whole fusion through the ATen evaluator, unsegmented: the oracle.
  std::vector<at::Tensor> runUnsegmented(const std::vector<RuntimeArg>& args,
                                         const Options& options);

  const Fusion& fusion() const { return *fusion_; }
  // The concrete fusion used by the last run (nullptr before any run).
  // Entries live as long as the cache, so the pointer stays valid.
  const Fusion* lastConcreteFusion() const {
    const Entry* last = lastEntry();
    return last ? last->concrete.fusion.get() : nullptr;
  }
  // Its segmentation (nullptr before any run).
  const SegmentedFusion* lastSegmentedFusion() const {
    const Entry* last = lastEntry();
    return last ? &last->runtime->segmented() : nullptr;
  }
  size_t numCachedSignatures() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    ConcreteFusion concrete;
    std::unique_ptr<SegmentedRuntime> runtime;
  };
  // Finds or creates the entry for these args (under mutex_); a run's
  // entry becomes the last one.
  Entry& lookup(const std::vector<RuntimeArg>& args, const Options& options,
                bool isRun = false);
  const Entry* lastEntry() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_;
  }

  std::unique_ptr<Fusion> fusion_;
  // Guards entries_ and last_; held while an entry is created, so a
  // signature is concretized, segmented and generated once.
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
  const Entry* last_ = nullptr;
};

}  // namespace nvfuser
