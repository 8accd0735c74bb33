#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// A normalization: reductions over the innermost dims whose results are
// broadcast back and combined with the same rows (softmax, layer/RMS norm),
// the row kept on chip; with column sums of the same rows beside them (a
// norm backward's weight and bias gradients: row_reduction_plan.h).
class InnerPersistentScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::InnerPersistent; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
