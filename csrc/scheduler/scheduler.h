// One scheduler per SchedulerType. canSchedule says whether one kernel (or
// one ATen call, or a view) of this kind can run the whole segment,
// prologue included, and why not.
#pragma once

#include "scheduler/decision.h"
#include "scheduler/scheduler_type.h"
#include "scheduler/segment_view.h"

namespace nvfuser {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerType type() const = 0;
  virtual Decision canSchedule(const SegmentView& view) const = 0;
};

// Shared checks used by several schedulers.
bool isMatmulLike(const Expr* e);
bool isReductionLike(const Expr* e);
// "op T3" for reasons.
std::string exprRef(const Expr* e);

}  // namespace nvfuser
