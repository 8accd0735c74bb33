// Runs a SegmentedFusion: each group's extracted Fusion in run order,
// intermediates freed after their last use.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "options.h"
#include "runtime/pointwise_kernel.h"
#include "runtime/runtime_args.h"
#include "runtime/segment_timer.h"
#include "segmenter/segment_extractor.h"
#include "segmenter/segmented_fusion.h"

namespace nvfuser {

class SegmentedRuntime {
 public:
  // args: the inputs of the call that created this runtime; kernels are
  // generated up front for their layouts (and again for any other layout
  // met later).
  SegmentedRuntime(std::unique_ptr<SegmentedFusion> segmented,
                   const std::vector<RuntimeArg>& args, const Options& options);

  // On a CUDA device, pointwise groups run as generated kernels on
  // `stream`; every other group runs through ATen on the device.
  // With a timer, each segment's work is timed (execute(profile=True)).
  std::vector<at::Tensor> run(const std::vector<RuntimeArg>& args,
                              at::Device device, void* stream,
                              const Options& options,
                              SegmentTimer* timer = nullptr);
  // The generated kernel of each group (nullptr where there is none).
  const std::vector<std::unique_ptr<PointwiseKernel>>& kernels() const {
    return kernels_;
  }
  const SegmentedFusion& segmented() const { return *segmented_; }
  const std::vector<ExtractedSegment>& segments() const { return segments_; }

 private:
  std::unique_ptr<SegmentedFusion> segmented_;
  std::vector<ExtractedSegment> segments_;
  std::vector<std::unique_ptr<PointwiseKernel>> kernels_;
  // For each group, the values whose last reader it is.
  std::vector<std::vector<const Val*>> releaseAfter_;
};

}  // namespace nvfuser
