#include "scheduler/pointwise_scheduler.h"

#include <sstream>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"

namespace nvfuser {

namespace {
std::string sizesToString(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    os << (i ? ", " : "") << v[i];
  }
  os << "]";
  return os.str();
}
}  // namespace

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
          sizesToString(loop) + " but " + o->ref() + " is " + sizesToString(s));
    }
  }
  return Decision::yes();
}

}  // namespace nvfuser
