#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// A pointwise prologue (resize ops included), reductions sharing one
// signature, and a pointwise epilogue that does not broadcast the reduced
// values back to the input size.
class ReductionScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::Reduction; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
