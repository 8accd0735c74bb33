// Invariants every SegmentedFusion must satisfy. Used by tests and the
// fusion fuzzer; an empty result means the segmentation is well formed.
#pragma once

#include <string>
#include <vector>

#include "segmenter/segmented_fusion.h"

namespace nvfuser {

// Checks: every live non-forwarded expr is in exactly one group; forwarded
// exprs sit only in prologues (or in one materialized copy when backed
// off); the run order is topological (so the group graph is a DAG); every
// group's view is accepted by its own scheduler; no forwarded tensor is read
// across a boundary except by a backed-off consumer.
std::vector<std::string> checkSegmentation(const SegmentedFusion& sf);

}  // namespace nvfuser
