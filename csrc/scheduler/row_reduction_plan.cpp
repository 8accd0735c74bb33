#include "scheduler/row_reduction_plan.h"

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "ir/list_string.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

const TensorView* rowSource(const TensorView* out, const RowReductionPlan& plan,
                            const InSegment& inside) {
  std::vector<int64_t> full = plan.rows;
  full.insert(full.end(), plan.inner.begin(), plan.inner.end());
  const TensorView* v = out;
  while (true) {
    const std::vector<int64_t> s = shapeWithoutOnes(v);
    if (s == plan.rows || s == full) {
      return v;
    }
    const Expr* def = v->definition();
    if (def == nullptr || !inside(def) ||
        (exprAs<ReshapeOp>(def) == nullptr &&
         exprAs<LoadStoreOp>(def) == nullptr)) {
      return nullptr;
    }
    v = def->input(0)->asTensor();
  }
}


const std::vector<int64_t>& reductionAxes(const Expr* e) {
  const auto* red = exprAs<ReductionOp>(e);
  return red ? red->axes() : exprAs<VarMeanOp>(e)->axes();
}

Decision planRowReduction(const std::vector<const Expr*>& exprs,
                          const std::vector<const TensorView*>& outputs,
                          const InSegment& inside, RowReductionPlan* plan) {
  *plan = RowReductionPlan();
  bool any = false;
  for (const Expr* e : exprs) {
    if (isReductionLike(e) &&
        innermostReduced(concreteShape(e->input(0)->asTensor()),
                         reductionAxes(e))) {
      any = true;
    }
  }
  if (!any) {
    return Decision::yes();
  }
  bool first = true;
  for (const Expr* e : exprs) {
    if (!isReductionLike(e)) {
      continue;
    }
    std::vector<int64_t> shape = concreteShape(e->input(0)->asTensor());
    std::vector<bool> reduced(shape.size(), false);
    for (int64_t a : reductionAxes(e)) {
      reduced[a] = true;
    }
    std::vector<int64_t> rows;
    std::vector<int64_t> inner;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) {
        continue;
      }
      if (reduced[d]) {
        inner.push_back(shape[d]);
      } else if (!inner.empty()) {
        return Decision::no(exprRef(e) +
                            " keeps a dim inside its reduced dims");
      } else {
        rows.push_back(shape[d]);
      }
    }
    if (first) {
      plan->rows = rows;
      plan->inner = inner;
      first = false;
    } else if (rows != plan->rows || inner != plan->inner) {
      return Decision::no(
          "row reductions of different layouts: " + listToString(rows) + "/" +
          listToString(inner) + " and " + listToString(plan->rows) + "/" +
          listToString(plan->inner));
    }
  }
  std::vector<int64_t> full = plan->rows;
  full.insert(full.end(), plan->inner.begin(), plan->inner.end());
  for (const TensorView* o : outputs) {
    std::vector<int64_t> s = shapeWithoutOnes(o);
    if (rowSource(o, *plan, inside) == nullptr) {
      return Decision::no("output " + o->ref() + " " + listToString(s) +
                          " is neither a row " + listToString(plan->rows) +
                          " nor a full row " + listToString(full) +
                          " nor a reshape of one");
    }
  }
  for (int64_t r : plan->rows) {
    plan->numRows *= r;
  }
  for (int64_t k : plan->inner) {
    plan->rowLength *= k;
  }
  plan->active = true;
  return Decision::yes();
}

Decision planRowReduction(const Fusion& fusion, RowReductionPlan* plan) {
  std::vector<const Expr*> exprs(fusion.exprs().begin(), fusion.exprs().end());
  std::vector<const TensorView*> outputs;
  for (const Val* o : fusion.outputs()) {
    outputs.push_back(o->asTensor());
  }
  return planRowReduction(exprs, outputs, [](const Expr*) { return true; },
                          plan);
}

}  // namespace nvfuser
