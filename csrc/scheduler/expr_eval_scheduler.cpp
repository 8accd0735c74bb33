#include "scheduler/expr_eval_scheduler.h"

#include "ir/exprs.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/no_op_scheduler.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {
// An op no generated kernel can compute: ATen runs it alone.
bool needsAten(const Expr* e) {
  return isAtenOnly(e) || valueWithoutKernelType(e) != nullptr;
}
}  // namespace

Decision ExprEvalScheduler::canSchedule(const SegmentView& view) const {
  const Expr* atenOp = nullptr;
  // The body is in position order: the ATen op comes before any view of
  // its results, and the first such view is refused.
  for (const Expr* e : view.body()) {
    // Views first: a view of complex values takes no op's place.
    if (isViewOp(e, view)) {
      if (atenOp != nullptr && e->input(0)->definition() == atenOp) {
        // Its consumer kernel plans for the result's own layout and takes
        // the view itself (a transposed read through tiles).
        return Decision::no("expr_eval takes views of its operands only, but " +
                            exprRef(e) + " views the result");
      }
      continue;
    }
    if (needsAten(e) && atenOp == nullptr) {
      atenOp = e;
    } else {
      return Decision::no(
          "expr_eval takes exactly one matmul/linear/cumsum/scatter/aten_call "
          "(or an op on complex values) and views of its operands, not " +
          exprRef(e));
    }
  }
  if (atenOp == nullptr) {
    return Decision::no(
        "expr_eval needs a matmul/linear/cumsum/scatter/"
        "aten_call (or an op on complex values)");
  }
  if (!view.prologue().empty()) {
    return Decision::no("expr_eval takes no prologue, but " +
                        exprRef(view.prologue()[0]) + " is forwarded into it");
  }
  return Decision::yes();
}

}  // namespace nvfuser
