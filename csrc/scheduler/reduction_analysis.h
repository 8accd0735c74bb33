// What the reduction schedulers need to know about a segment's reductions.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/decision.h"
#include "scheduler/segment_view.h"

namespace nvfuser {

struct ReductionInfo {
  std::vector<const Expr*> reductions;
  std::vector<int64_t> inputShape;  // of every reduction's input
  std::vector<int64_t> axes;        // reduced axes of that input
  // Some value computed from a reduced value is as large as the reduction
  // input again (the normalization pattern).
  bool broadcastsBack = false;
  // The reduced axes are the innermost non-size-1 dims.
  bool innermost = false;
  // Reductions of different inputs or axes (none of them a row reduction).
  bool mixedSignatures = false;
};

// Whether the innermost non-size-1 dim of `shape` is among `axes`.
bool innermostReduced(const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& axes);

// Fails when there is no reduction, a matmul, or reductions with different
// signatures (input sizes or axes).
Decision analyzeReductions(const SegmentView& view, ReductionInfo* info);

}  // namespace nvfuser
