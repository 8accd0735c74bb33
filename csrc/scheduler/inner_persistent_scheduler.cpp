#include "scheduler/inner_persistent_scheduler.h"

#include "scheduler/generated_kernel_rules.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

Decision InnerPersistentScheduler::canSchedule(const SegmentView& view) const {
  if (Decision d = branchDepthFits(view); !d) {
    return d;
  }
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
  return generatedKernelFits(view);
}

}  // namespace nvfuser
