#include "runtime/fusion_executor_cache.h"

#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "compiler/private_files.h"
#include "exceptions.h"
#include "runtime/aten_evaluator.h"
#include "runtime/aten_rng.h"
#include "runtime/cuda_driver.h"
#include "runtime/device_index_errors.h"
#include "scheduler/reduction_split.h"
#include "segmenter/segment_candidate_finder.h"

namespace nvfuser {

namespace {
// Writes segmented_fusion_<N>.dot to the current directory, N from a
// process-wide counter. Only ever a new file: whatever has that name
// already (an earlier run's dump, a link planted to redirect the write)
// is left alone and the next N taken.
void writeDotFile(const std::string& dot) {
  static std::atomic<int> counter{0};
  const std::vector<char> bytes(dot.begin(), dot.end());
  std::string why;
  // Bounded, so a directory full of taken names cannot hold us forever.
  constexpr int kAttempts = 1000;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::string path =
        "segmented_fusion_" + std::to_string(counter++) + ".dot";
    switch (writeNewFile(AT_FDCWD, path, bytes, 0644, &why)) {
      case NewFile::Written:
        std::cout << "[segmenter] wrote " << path << "\n";
        return;
      case NewFile::Failed:
        std::cerr << "[segmenter] could not write " << path << ": " << why
                  << "\n";
        return;
      case NewFile::Exists:
        break;
    }
  }
  std::cerr << "[segmenter] no segmented_fusion_N.dot written: " << kAttempts
            << " names in a row were taken\n";
}

void dumpSegmentation(const SegmentedFusion& sf, const Options& options) {
  if (options.dump("segmenter_logging")) {
    for (const std::string& line : sf.log()) {
      std::cout << "[segmenter] " << line << "\n";
    }
  }
  if (options.dump("segmented_fusion")) {
    std::cout << sf.toString();
  }
  if (options.dump("draw_segmented_fusion")) {
    writeDotFile(sf.toDot());
  }
  std::cout << std::flush;
}
}  // namespace

FusionExecutorCache::Entry& FusionExecutorCache::lookup(
    const std::vector<RuntimeArg>& args, const Options& options, bool isRun) {
  std::string key = signatureKey(args) + "|" + options.compileKey();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    last_ = isRun ? it->second.get() : last_;
    return *it->second;
  }
  auto entry = std::make_unique<Entry>();
  entry->concrete =
      concretize(*fusion_, describeArgs(*fusion_, args),
                 options.disabled("reduction_split") ? ReplayOverride()
                                                     : reductionSplitter());
  if (options.dump("fusion_ir_concrete")) {
    std::cout << "Concrete fusion for this input signature:\n"
              << entry->concrete.fusion->toString() << std::flush;
  }
  entry->runtime = std::make_unique<SegmentedRuntime>(
      segmentFusion(*entry->concrete.fusion, options), args, options);
  dumpSegmentation(entry->runtime->segmented(), options);
  last_ = isRun ? entry.get() : last_;
  return *entries_.emplace(key, std::move(entry)).first->second;
}

std::vector<at::Tensor> FusionExecutorCache::run(
    const std::vector<RuntimeArg>& args, const Options& options, void* stream,
    std::vector<double>* segmentMs) {
  NVF_CHECK(args.size() == fusion_->inputs().size(), "execute: the fusion has ",
            fusion_->inputs().size(), " inputs but ", args.size(),
            " were given");
  at::Device device = commonDevice(*fusion_, args);
  if (options.dump("fusion_ir")) {
    std::cout << fusion_->toString() << std::flush;
  }
  // Gathers launched earlier report out-of-range indices only now.
  device_index_errors::throwIfSet("before this call");
  const auto start = std::chrono::steady_clock::now();
  Entry& entry = lookup(args, options, /*isRun=*/true);
  if (options.dump("host_time")) {
    std::printf("[host_time] input signature lookup %.1f us\n",
                std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - start)
                    .count());
  }
  std::unique_ptr<SegmentTimer> timer;
  if (segmentMs != nullptr) {
    timer = std::make_unique<SegmentTimer>(device, stream);
  }
  std::vector<at::Tensor> out =
      entry.runtime->run(withRngState(entry.concrete, args, device), device,
                         stream, options, timer.get());
  if (timer) {
    *segmentMs = timer->millis();
  }
  if (device.is_cuda() && options.enabled("sync_index_checks")) {
    CudaDriver::get().synchronize(device.has_index() ? device.index() : 0);
    device_index_errors::throwIfSet("by this call");
  }
  return out;
}

std::vector<std::string> FusionExecutorCache::cudaCodeFor(
    const std::vector<RuntimeArg>& args, const Options& options,
    const std::string& arch) {
  NVF_CHECK(args.size() == fusion_->inputs().size(),
            "cuda_code_for: the "
            "fusion has ",
            fusion_->inputs().size(), " inputs but ", args.size(),
            " were given");
  Entry& entry = lookup(args, options);
  std::vector<std::string> sources;
  for (const auto& kernel : entry.runtime->kernels()) {
    if (kernel) {
      const KernelSource& ks = kernel->predictedSource();
      PointwiseKernel::compile(ks, arch, options);
      sources.push_back(ks.code);
    }
  }
  return sources;
}

const SegmentedFusion& FusionExecutorCache::segmentationFor(
    const std::vector<RuntimeArg>& args, const Options& options) {
  NVF_CHECK(args.size() == fusion_->inputs().size(), "the fusion has ",
            fusion_->inputs().size(), " inputs but ", args.size(),
            " were given");
  return lookup(args, options).runtime->segmented();
}

std::vector<std::string> FusionExecutorCache::lastCudaCode() const {
  std::vector<std::string> sources;
  if (const Entry* last = lastEntry()) {
    for (const auto& kernel : last->runtime->kernels()) {
      if (kernel) {
        sources.push_back(kernel->source().code);
      }
    }
  }
  return sources;
}

std::vector<at::Tensor> FusionExecutorCache::runUnsegmented(
    const std::vector<RuntimeArg>& args, const Options& options) {
  at::Device device = commonDevice(*fusion_, args);
  Entry& entry = lookup(args, options);
  return AtenEvaluator::run(*entry.concrete.fusion,
                            withRngState(entry.concrete, args, device), device);
}

}  // namespace nvfuser
