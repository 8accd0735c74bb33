// Builds a group's own Fusion: its inputs, its prologue cloned in, its body
// and its outputs; exactly what canSchedule saw.
#pragma once

#include <memory>
#include <vector>

#include "ir/fusion.h"
#include "segmenter/segmented_fusion.h"

namespace nvfuser {

struct ExtractedSegment {
  std::unique_ptr<Fusion> fusion;
  // Values of the complete fusion bound to the extracted inputs / outputs,
  // in order (tensors, then scalar fusion inputs the group reads).
  std::vector<const Val*> inputs;
  std::vector<const Val*> outputs;
};

ExtractedSegment extractSegment(const SegmentedGroup& group);

}  // namespace nvfuser
