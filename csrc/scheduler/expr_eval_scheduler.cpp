#include "scheduler/expr_eval_scheduler.h"

#include "ir/exprs.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {
// An op no generated kernel can compute: ATen runs it alone.
bool needsAten(const Expr* e) {
  return isAtenOnly(e) || valueWithoutKernelType(e) != nullptr;
}
}  // namespace

Decision ExprEvalScheduler::canSchedule(const SegmentView& view) const {
  if (view.body().size() != 1 || !needsAten(view.body()[0])) {
    return Decision::no(
        "expr_eval takes exactly one matmul/linear/cumsum/scatter/aten_call "
        "(or an op on complex values) and nothing else");
  }
  if (!view.prologue().empty()) {
    return Decision::no("expr_eval takes no prologue, but " +
                        exprRef(view.prologue()[0]) + " is forwarded into it");
  }
  return Decision::yes();
}

}  // namespace nvfuser
