#include "scheduler/reduction_scheduler.h"

#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

Decision ReductionScheduler::canSchedule(const SegmentView& view) const {
  if (Decision d = branchDepthFits(view); !d) {
    return d;
  }
  ReductionInfo info;
  Decision d = analyzeReductions(view, &info);
  if (!d) {
    return d;
  }
  if (info.broadcastsBack) {
    return Decision::no(
        "a reduced value is broadcast back to the input size "
        "(a normalization, not a plain reduction)");
  }
  return Decision::yes();
}

}  // namespace nvfuser
