#include "scheduler/inner_persistent_scheduler.h"

#include "scheduler/reduction_analysis.h"

namespace nvfuser {

Decision InnerPersistentScheduler::canSchedule(const SegmentView& view) const {
  ReductionInfo info;
  Decision d = analyzeReductions(view, &info);
  if (!d) {
    return d;
  }
  if (!info.innermost) {
    return Decision::no(
        "inner_persistent needs reductions over the "
        "innermost dims");
  }
  return Decision::yes();
}

}  // namespace nvfuser
