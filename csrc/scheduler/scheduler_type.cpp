#include "scheduler/scheduler_type.h"

#include <algorithm>
#include <unordered_map>

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

bool isAtenOnly(const Expr* e) {
  return isMatmulLike(e) || e->type() == ExprType::Scan ||
         e->type() == ExprType::Scatter || e->type() == ExprType::AtenCall;
}

bool isReductionLike(const Expr* e) {
  return e->type() == ExprType::Reduction || e->type() == ExprType::VarMean;
}

bool isViewExpr(const Expr* e) {
  switch (e->type()) {
    case ExprType::Reshape:
    case ExprType::Broadcast:
    case ExprType::Squeeze:
    case ExprType::Expand:
    case ExprType::Permute:
    case ExprType::Slice:
      return true;
    default:
      return false;
  }
}

std::string exprRef(const Expr* e) {
  return e->opName() + " " + e->output(0)->ref();
}

namespace {
bool opensBranch(const Expr* e) {
  if (e->type() == ExprType::Cat) {
    return true;
  }
  const auto* pad = exprAs<PadOp>(e);
  return pad != nullptr && std::any_of(pad->widths().begin(),
                                       pad->widths().end(), [](const auto& w) {
                                         return w.first != 0 || w.second != 0;
                                       });
}
}  // namespace

int64_t maxBranchDepth(const std::vector<const Expr*>& exprs) {
  // One pass in topological order: the longest path, counted in branches.
  std::unordered_map<const Val*, int64_t> depth;
  int64_t deepest = 0;
  for (const Expr* e : exprs) {
    int64_t d = 0;
    for (const Val* in : e->inputs()) {
      auto it = depth.find(in);
      d = std::max(d, it == depth.end() ? int64_t(0) : it->second);
    }
    d += opensBranch(e) ? 1 : 0;
    for (const Val* o : e->outputs()) {
      depth[o] = d;
    }
    deepest = std::max(deepest, d);
  }
  return deepest;
}

Decision branchDepthFits(const SegmentView& view) {
  const int64_t depth = maxBranchDepth(view.exprs());
  if (depth > kMaxBranchDepth) {
    return Decision::no("an output is under " + std::to_string(depth) +
                        " nested pads and cats (at most " +
                        std::to_string(kMaxBranchDepth) + " in one kernel)");
  }
  return Decision::yes();
}

}  // namespace nvfuser
