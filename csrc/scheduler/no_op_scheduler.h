#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// Whether e only views its input within `view` (a broadcast, expand,
// permute, squeeze, slice, or a reshape that needs no copy): ATen computes
// it without touching memory.
Decision isViewOp(const Expr* e, const SegmentView& view);

// Segments of meta ops only, whose outputs are views of their inputs: no
// kernel, outputs are as_strided views.
class NoOpScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::NoOp; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
