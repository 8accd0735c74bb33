#include "scheduler/row_reduction_plan.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

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

int64_t columnSumBytes(const RowReductionPlan& plan) {
  int64_t bytes = 0;
  for (const Expr* e : plan.columnSums) {
    bytes += plan.rowLength * dataTypeSize(e->output(0)->dtype());
  }
  return bytes;
}

bool isColumnSum(const Expr* e, const RowReductionPlan& plan) {
  return std::find(plan.columnSums.begin(), plan.columnSums.end(), e) !=
         plan.columnSums.end();
}

const Expr* columnSumOf(const TensorView* out, const RowReductionPlan& plan) {
  const Expr* def = beforeCastsAndUnitViews(out)->definition();
  for (const Expr* e : plan.columnSums) {
    if (e == def) {
      return e;
    }
  }
  return nullptr;
}

const std::vector<int64_t>& reductionAxes(const Expr* e) {
  const auto* red = exprAs<ReductionOp>(e);
  return red ? red->axes() : exprAs<VarMeanOp>(e)->axes();
}

namespace {
// The dims of e's input whose elements move (a slice, pad or cat along
// them); every dim when unknown.
std::vector<int64_t> movedDims(const Expr* e) {
  const std::vector<int64_t> shape = concreteShape(e->input(0)->asTensor());
  std::vector<int64_t> moved;
  if (const auto* s = exprAs<SliceOp>(e)) {
    for (size_t d = 0; d < s->ranges().size(); ++d) {
      const SliceRange& r = s->ranges()[d];
      if (r.start != 0 || r.stop != shape[d] || r.step != 1) {
        moved.push_back(int64_t(d));
      }
    }
  } else if (const auto* p = exprAs<PadOp>(e)) {
    for (size_t d = 0; d < p->widths().size(); ++d) {
      if (p->widths()[d] != std::make_pair(int64_t(0), int64_t(0))) {
        moved.push_back(int64_t(d));
      }
    }
  } else if (const auto* c = exprAs<CatOp>(e)) {
    moved.push_back(c->dim());
  } else {
    for (size_t d = 0; d < shape.size(); ++d) {
      moved.push_back(int64_t(d));
    }
  }
  return moved;
}

// Whether `e`, reading a value computed from a row reduction, keeps every
// element in its row: the generator then reads the row's reduced value
// wherever such a value is used (its index names the same row however a
// reshape spelled it). Elementwise ops, broadcasts, expands, squeezes,
// copies and reshapes (row-major order) do; a permute only of size-1
// dims; a slice, pad or cat only along dims of the row itself.
Decision keepsRows(const Expr* e, const RowReductionPlan& plan) {
  switch (e->type()) {
    case ExprType::Unary:
    case ExprType::Binary:
    case ExprType::Ternary:
    case ExprType::Broadcast:
    case ExprType::Expand:
    case ExprType::Squeeze:
    case ExprType::LoadStore:
    case ExprType::Reshape:
    case ExprType::Reduction:
    case ExprType::VarMean:
      return Decision::yes();
    case ExprType::Permute:
      if (permutesNonUnitDims(exprAs<PermuteOp>(e))) {
        return Decision::no(exprRef(e) +
                            " permutes the rows of a row-reduced value");
      }
      return Decision::yes();
    default:
      break;
  }
  const TensorView* in = e->input(0)->asTensor();
  std::vector<int64_t> full = plan.rows;
  full.insert(full.end(), plan.inner.begin(), plan.inner.end());
  const std::vector<int64_t> shape = concreteShape(in);
  if (shapeWithoutOnes(in) == full) {
    // Position of each dim among the non-size-1 dims: rows come first.
    bool inner = true;
    for (int64_t d : movedDims(e)) {
      int64_t pos = 0;
      for (int64_t k = 0; k < d; ++k) {
        pos += shape[size_t(k)] != 1 ? 1 : 0;
      }
      inner = inner && shape[size_t(d)] != 1 &&
              pos >= static_cast<int64_t>(plan.rows.size());
    }
    if (inner) {
      return Decision::yes();
    }
  }
  return Decision::no(exprRef(e) + " moves a row-reduced value across rows");
}
// A reduction that keeps the innermost dim fits the row kernel as a column
// sum: a floating-point sum over exactly the row dims of a full-row value,
// read by nothing in the kernel (its total exists only once every block
// has added its rows).
Decision columnSumFits(const Expr* e, const RowReductionPlan& plan) {
  const TensorView* in = e->input(0)->asTensor();
  std::vector<int64_t> full = plan.rows;
  full.insert(full.end(), plan.inner.begin(), plan.inner.end());
  const std::vector<int64_t> shape = concreteShape(in);
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : reductionAxes(e)) {
    reduced[size_t(a)] = true;
  }
  // Non-size-1 dims in order: the first rows.size() reduced, the rest not.
  size_t pos = 0;
  bool rowsReduced = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) {
      rowsReduced = rowsReduced && reduced[d] == (pos < plan.rows.size());
      ++pos;
    }
  }
  if (!isFloatingSum(e) || shapeWithoutOnes(in) != full || !rowsReduced) {
    return Decision::no(exprRef(e) + " is neither a row reduction of " +
                        listToString(plan.rows) + "/" +
                        listToString(plan.inner) +
                        " nor a floating-point column sum over its rows");
  }
  if (!onlyCastOrViewedToAnOutput(e->output(0))) {
    return Decision::no("the column sum " + exprRef(e) +
                        " is read in the kernel (its total needs every row)");
  }
  return Decision::yes();
}
// The rows/inner layout of a row reduction `e` (reduced dims innermost).
Decision rowLayoutOf(const Expr* e, std::vector<int64_t>* rows,
                     std::vector<int64_t>* inner) {
  const std::vector<int64_t> shape = concreteShape(e->input(0)->asTensor());
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : reductionAxes(e)) {
    reduced[size_t(a)] = true;
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      continue;
    }
    if (reduced[d]) {
      inner->push_back(shape[d]);
    } else if (!inner->empty()) {
      return Decision::no(exprRef(e) + " keeps a dim inside its reduced dims");
    } else {
      rows->push_back(shape[d]);
    }
  }
  return Decision::yes();
}

// Every row reduction's layout must be the plan's; the other reductions
// must be column sums of it, within the shared memory they may take.
Decision planLayout(const std::vector<const Expr*>& exprs,
                    RowReductionPlan* plan) {
  bool first = true;
  std::vector<const Expr*> others;  // reductions keeping the innermost dim
  for (const Expr* e : exprs) {
    if (!isReductionLike(e)) {
      continue;
    }
    if (!innermostReduced(concreteShape(e->input(0)->asTensor()),
                          reductionAxes(e))) {
      others.push_back(e);
      continue;
    }
    std::vector<int64_t> rows;
    std::vector<int64_t> inner;
    if (Decision d = rowLayoutOf(e, &rows, &inner); !d) {
      return d;
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
  for (int64_t r : plan->rows) {
    plan->numRows *= r;
  }
  for (int64_t k : plan->inner) {
    plan->rowLength *= k;
  }
  for (const Expr* e : others) {
    if (Decision d = columnSumFits(e, *plan); !d) {
      return d;
    }
    plan->columnSums.push_back(e);
  }
  const int64_t sharedBytes = columnSumBytes(*plan);
  if (sharedBytes > kColumnSumSharedBytes) {
    return Decision::no(
        "column sums of rows of " + std::to_string(plan->rowLength) + " need " +
        std::to_string(sharedBytes) + " bytes of shared memory (at most " +
        std::to_string(kColumnSumSharedBytes) + ")");
  }
  return Decision::yes();
}
}  // namespace

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
  if (Decision d = planLayout(exprs, plan); !d) {
    return d;
  }
  std::vector<int64_t> full = plan->rows;
  full.insert(full.end(), plan->inner.begin(), plan->inner.end());
  for (const TensorView* o : outputs) {
    std::vector<int64_t> s = shapeWithoutOnes(o);
    if (columnSumOf(o, *plan) == nullptr &&
        rowSource(o, *plan, inside) == nullptr) {
      return Decision::no("output " + o->ref() + " " + listToString(s) +
                          " is neither a row " + listToString(plan->rows) +
                          " nor a full row " + listToString(full) +
                          " nor a reshape of one");
    }
  }
  std::unordered_set<const Val*> fromReduction;
  for (const Expr* e : exprs) {
    bool reads = isReductionLike(e);
    for (const Val* in : e->inputs()) {
      reads = reads || fromReduction.count(in) > 0;
    }
    if (!reads) {
      continue;
    }
    if (Decision d = keepsRows(e, *plan); !d) {
      return d;
    }
    for (const Val* o : e->outputs()) {
      fromReduction.insert(o);
    }
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
  return planRowReduction(
      exprs, outputs, [](const Expr*) { return true; }, plan);
}

}  // namespace nvfuser
