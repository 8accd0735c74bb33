#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// Exactly one op only ATen computes (matmul/linear, cumsum, scatter, a
// library call, an op on complex values), evaluated by ATen (cuBLAS on the
// GPU), with the view ops around it (a weight's transpose, a reshape of the
// result): ATen makes those views for free, where a no_op segment of their
// own would cost a segment's host time per execute. It takes no prologue:
// ATen reads its operands from memory.
class ExprEvalScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::ExprEval; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
