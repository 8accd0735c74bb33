#include "scheduler/expr_eval_scheduler.h"

#include "ir/exprs.h"

namespace nvfuser {

Decision ExprEvalScheduler::canSchedule(const SegmentView& view) const {
  if (view.body().size() != 1 || !isMatmulLike(view.body()[0])) {
    return Decision::no(
        "expr_eval takes exactly one matmul/linear and "
        "nothing else");
  }
  if (!view.prologue().empty()) {
    return Decision::no("expr_eval takes no prologue, but " +
                        exprRef(view.prologue()[0]) + " is forwarded into it");
  }
  return Decision::yes();
}

}  // namespace nvfuser
