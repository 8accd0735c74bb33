#include "scheduler/pointwise_scheduler.h"

#include <sstream>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "ir/list_string.h"

namespace nvfuser {

Decision PointWiseScheduler::canSchedule(const SegmentView& view) const {
  for (const Expr* e : view.exprs()) {
    if (isReductionLike(e) || isMatmulLike(e)) {
      return Decision::no("pointwise cannot take " + exprRef(e));
    }
  }
  const auto& outs = view.outputs();
  if (outs.empty()) {
    return Decision::no("pointwise segment has no outputs");
  }
  std::vector<int64_t> loop = shapeWithoutOnes(outs[0]);
  for (const TensorView* o : outs) {
    std::vector<int64_t> s = shapeWithoutOnes(o);
    if (s != loop) {
      return Decision::no(
          "pointwise outputs need one loop domain: " + outs[0]->ref() + " is " +
          listToString(loop) + " but " + o->ref() + " is " + listToString(s));
    }
  }
  return Decision::yes();
}

}  // namespace nvfuser
