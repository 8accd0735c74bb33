#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// One generated kernel over one loop domain: elementwise, cast, broadcast,
// expand, reshape, permute, squeeze, slice, pad, cat, full, iota and random
// ops (uniform, normal; computed from the element index). Every
// output must share the loop domain (same sizes once size-1 dims are
// ignored), except in a horizontal view, whose independent output families
// may each have their own (up to kMaxLoopDomains).
class PointWiseScheduler : public Scheduler {
 public:
  static constexpr size_t kMaxLoopDomains = 8;
  SchedulerType type() const override { return SchedulerType::PointWise; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
