#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// Exactly one op only ATen computes (matmul/linear, cumsum, scatter, a
// library call, an op on complex values), evaluated by ATen (cuBLAS on the
// GPU), with views of its operands (a weight's transpose, a reshape of an
// input): ATen makes those views for free, where a no_op segment of their
// own would cost a segment's host time per execute. Views of the result
// stay out: the kernel reading one plans for the result's dense layout and
// takes the view itself. It takes no prologue: ATen reads its operands from
// memory.
class ExprEvalScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::ExprEval; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
