#include "scheduler/no_op_scheduler.h"

#include <vector>

#include "analysis/reshape_analysis.h"
#include "analysis/tensor_shape.h"
#include "ir/exprs.h"

namespace nvfuser {

namespace {
// Whether tv's elements are laid out row-major contiguously, so that a
// reshape of it can be a view. Permutes and slices inside the segment break
// that; segment inputs produced by kernels are dense. A loop back through
// the layout-preserving ops, not a recursion: their chains can be as long
// as the fusion.
bool isDenseRowMajor(const TensorView* tv, const SegmentView& view) {
  while (true) {
    const Expr* def = tv->definition();
    if (def == nullptr || !view.contains(def)) {
      if (!view.isFusionInput(tv)) {
        return true;
      }
      for (const auto& c : tv->contiguity()) {
        if (c.has_value() && !*c) {
          return false;
        }
      }
      return tv->strideOrder().empty();
    }
    switch (def->type()) {
      case ExprType::Reshape:
      case ExprType::Broadcast:
      case ExprType::Squeeze:
        tv = def->input(0)->asTensor();
        break;
      default:
        return false;
    }
  }
}

}  // namespace

Decision isViewOp(const Expr* e, const SegmentView& view) {
  if (!isViewExpr(e)) {
    return Decision::no(exprRef(e) + " computes values (not a view op)");
  }
  if (e->type() != ExprType::Reshape) {
    return Decision::yes();
  }
  ReshapeClassification c = classifyReshape(exprAs<ReshapeOp>(e));
  if (c.concretizesExpandedDim) {
    return Decision::no(exprRef(e) +
                        " materializes an expanded dim (not a view)");
  }
  // Splits (and size-1 dims added or removed) are views on any strides:
  // LitGPT's v (its sliced size-1 dim reshaped away), an HF fused qkv's
  // slice split into heads.
  if (!c.splitsOnly && !isDenseRowMajor(e->input(0)->asTensor(), view)) {
    return Decision::no(exprRef(e) +
                        " reshapes a permuted or sliced tensor (a copy, "
                        "not a view)");
  }
  return Decision::yes();
}

Decision NoOpScheduler::canSchedule(const SegmentView& view) const {
  for (const Expr* e : view.exprs()) {
    Decision d = isViewOp(e, view);
    if (!d) {
      return d;
    }
  }
  return Decision::yes();
}

}  // namespace nvfuser
