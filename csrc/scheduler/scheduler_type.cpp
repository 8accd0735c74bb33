#include "scheduler/scheduler_type.h"

#include "ir/exprs.h"
#include "ir/val.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

const char* toString(SchedulerType t) {
  switch (t) {
    case SchedulerType::NoOp:
      return "no_op";
    case SchedulerType::ExprEval:
      return "expr_eval";
    case SchedulerType::PointWise:
      return "pointwise";
    case SchedulerType::Reduction:
      return "reduction";
    case SchedulerType::InnerPersistent:
      return "inner_persistent";
  }
  return "?";
}

bool isMatmulLike(const Expr* e) {
  return e->type() == ExprType::Matmul || e->type() == ExprType::Linear;
}

bool isReductionLike(const Expr* e) {
  return e->type() == ExprType::Reduction || e->type() == ExprType::VarMean;
}

std::string exprRef(const Expr* e) {
  return e->opName() + " " + e->output(0)->ref();
}

}  // namespace nvfuser
