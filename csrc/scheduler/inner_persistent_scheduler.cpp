#include "scheduler/inner_persistent_scheduler.h"

#include "scheduler/generated_kernel_rules.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/row_reduction_plan.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

Decision InnerPersistentScheduler::canSchedule(const SegmentView& view) const {
  if (Decision d = branchDepthFits(view); !d) {
    return d;
  }
  // Column sums next to the row reductions (a norm backward's weight
  // gradient) are part of the row kernel, not reductions of their own.
  RowReductionPlan plan;
  if (Decision rows = planRowReduction(
          view.exprs(), view.outputs(),
          [&view](const Expr* e) { return view.contains(e); }, &plan);
      !rows) {
    return rows;
  }
  ReductionInfo info;
  Decision d = analyzeReductions(view, &info, plan.columnSums);
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
