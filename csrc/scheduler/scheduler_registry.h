// Asks the schedulers, in priority order, which one takes a segment.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace nvfuser {

class SchedulerRegistry {
 public:
  SchedulerRegistry();

  // The first scheduler (NoOp, ExprEval, PointWise, Reduction,
  // InnerPersistent) that accepts the view, or none.
  std::optional<SchedulerType> proposeScheduler(const SegmentView& view) const;
  // Every scheduler's reason for rejecting the view, "type: reason; ...".
  std::string rejectionReasons(const SegmentView& view) const;
  Decision canSchedule(SchedulerType type, const SegmentView& view) const;

 private:
  std::vector<std::unique_ptr<Scheduler>> schedulers_;
};

}  // namespace nvfuser
