#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// Segments of meta ops only, whose outputs are views of their inputs: no
// kernel, outputs are as_strided views.
class NoOpScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::NoOp; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
