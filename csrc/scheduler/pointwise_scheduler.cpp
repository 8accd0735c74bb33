#include "scheduler/pointwise_scheduler.h"

#include <sstream>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "ir/list_string.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

Decision PointWiseScheduler::canSchedule(const SegmentView& view) const {
  if (Decision d = branchDepthFits(view); !d) {
    return d;
  }
  for (const Expr* e : view.exprs()) {
    if (isReductionLike(e) || isAtenOnly(e)) {
      return Decision::no("pointwise cannot take " + exprRef(e));
    }
  }
  const auto& outs = view.outputs();
  if (outs.empty()) {
    return Decision::no("pointwise segment has no outputs");
  }
  auto families = outputFamilies(outs);
  if (families.size() > 1) {
    // Several loop domains: one kernel covers them one after the other,
    // which only horizontal fusion asks for, and only for independent
    // families.
    const TensorView* other = families[1].front();
    std::string both =
        outs[0]->ref() + " is " + listToString(shapeWithoutOnes(outs[0])) +
        " but " + other->ref() + " is " + listToString(shapeWithoutOnes(other));
    if (!view.horizontal()) {
      return Decision::no("pointwise outputs need one loop domain: " + both);
    }
    if (families.size() > kMaxLoopDomains) {
      return Decision::no("a horizontal pointwise kernel takes at most " +
                          std::to_string(kMaxLoopDomains) + " loop domains");
    }
    if (familiesDependOnEachOther(view, families)) {
      return Decision::no(
          "pointwise outputs of different loop domains depend on each other: " +
          both);
    }
  }
  return generatedKernelFits(view);
}

}  // namespace nvfuser
