#include "scheduler/expr_eval_scheduler.h"

#include <unordered_set>

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
  // Values the ATen op's results reach through the segment's views (the
  // body is in position order, so producers come first).
  std::unordered_set<const Val*> ofResult;
  for (const Expr* e : view.body()) {
    // Views first: a view of complex values takes no op's place.
    if (isViewOp(e, view)) {
      if (ofResult.count(e->input(0)) > 0) {
        // Its consumer kernel plans for the result's own layout and takes
        // the view itself (a transposed read through tiles).
        return Decision::no("expr_eval takes views of its operands only, but " +
                            exprRef(e) + " views the result");
      }
      continue;
    }
    if (needsAten(e) && atenOp == nullptr) {
      atenOp = e;
      ofResult.insert(e->outputs().begin(), e->outputs().end());
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
