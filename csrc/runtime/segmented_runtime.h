// Runs a SegmentedFusion: each group's extracted Fusion in run order,
// intermediates freed after their last use.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "runtime/runtime_args.h"
#include "segmenter/segment_extractor.h"
#include "segmenter/segmented_fusion.h"

namespace nvfuser {

class SegmentedRuntime {
 public:
  explicit SegmentedRuntime(std::unique_ptr<SegmentedFusion> segmented);

  std::vector<at::Tensor> run(const std::vector<RuntimeArg>& args,
                              at::Device device) const;
  const SegmentedFusion& segmented() const { return *segmented_; }
  const std::vector<ExtractedSegment>& segments() const { return segments_; }

 private:
  std::unique_ptr<SegmentedFusion> segmented_;
  std::vector<ExtractedSegment> segments_;
  // For each group, the values whose last reader it is.
  std::vector<std::vector<const Val*>> releaseAfter_;
};

}  // namespace nvfuser
