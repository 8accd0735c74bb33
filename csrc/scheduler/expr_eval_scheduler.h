#pragma once

#include "scheduler/scheduler.h"

namespace nvfuser {

// Exactly one matmul/linear, evaluated by ATen (cuBLAS on the GPU). It takes
// no prologue: ATen reads its operands from memory.
class ExprEvalScheduler : public Scheduler {
 public:
  SchedulerType type() const override { return SchedulerType::ExprEval; }
  Decision canSchedule(const SegmentView& view) const override;
};

}  // namespace nvfuser
