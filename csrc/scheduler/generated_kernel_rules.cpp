#include "scheduler/generated_kernel_rules.h"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "scheduler/no_op_scheduler.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

bool hasKernelType(DataType t) {
  return !isComplexType(t) && t != DataType::Null;
}

const Val* valueWithoutKernelType(const Expr* e) {
  for (const std::vector<Val*>* vals : {&e->inputs(), &e->outputs()}) {
    for (const Val* v : *vals) {
      if (!hasKernelType(v->dtype())) {
        return v;
      }
    }
  }
  return nullptr;
}

namespace {
Decision valuesHaveKernelTypes(const std::vector<const Expr*>& exprs) {
  for (const Expr* e : exprs) {
    if (const Val* v = valueWithoutKernelType(e)) {
      return Decision::no(exprRef(e) + " has " + toString(v->dtype()) +
                          " values (no generated kernel type)");
    }
  }
  return Decision::yes();
}

// Reductions that are not row reductions are looped over inside each
// thread: fine when the innermost dim is not reduced (accesses stay
// coalesced) and a reduced value is not recomputed for many elements of a
// larger output.
Decision serialReductionsFit(const std::vector<const Expr*>& exprs) {
  std::map<const Val*, int64_t> reducedBy;  // value -> largest reduction
  for (const Expr* e : exprs) {
    int64_t inherited = 0;
    for (const Val* in : e->inputs()) {
      auto it = reducedBy.find(in);
      if (it == reducedBy.end()) {
        continue;
      }
      inherited = std::max(inherited, it->second);
      if (replicatesInput(e, in) && it->second > kMaxRecomputedReduction) {
        return Decision::no(exprRef(e) + " broadcasts a reduction of " +
                            std::to_string(it->second) +
                            " elements back (a normalization)");
      }
    }
    if (isReductionLike(e)) {
      std::vector<int64_t> shape = concreteShape(e->input(0)->asTensor());
      const std::vector<int64_t>& axes = reductionAxes(e);
      if (innermostReduced(shape, axes)) {
        return Decision::no(exprRef(e) +
                            " reduces the innermost dim (a row reduction "
                            "needs a block-cooperative kernel)");
      }
      int64_t n = 1;
      for (int64_t a : axes) {
        n *= shape[size_t(a)];
      }
      inherited = std::max(inherited, n);
    }
    for (const Val* o : e->outputs()) {
      if (inherited > 0) {
        reducedBy[o] = inherited;
      }
    }
  }
  return Decision::yes();
}
}  // namespace

Decision gathersReadMemory(const std::vector<const Expr*>& exprs,
                           const InSegment& inside) {
  for (const Expr* e : exprs) {
    const auto* g = exprAs<GatherOp>(e);
    if (g == nullptr) {
      continue;
    }
    const Expr* def = g->lookup()->definition();
    if (def != nullptr && inside(def)) {
      return Decision::no(exprRef(e) + " gathers from " + g->lookup()->ref() +
                          ", which this segment computes (a gather reads "
                          "its input from memory)");
    }
  }
  return Decision::yes();
}

Decision generatedKernelFits(const std::vector<const Expr*>& exprs,
                             const std::vector<const TensorView*>& outputs,
                             const InSegment& inside) {
  if (outputs.empty()) {
    return Decision::no("no outputs");
  }
  for (const Expr* e : exprs) {
    if (isAtenOnly(e)) {
      return Decision::no(exprRef(e) + " is not generated (an ATen call)");
    }
  }
  if (Decision d = valuesHaveKernelTypes(exprs); !d) {
    return d;
  }
  if (Decision d = gathersReadMemory(exprs, inside); !d) {
    return d;
  }
  RowReductionPlan plan;
  if (Decision rows = planRowReduction(exprs, outputs, inside, &plan); !rows) {
    return rows;
  }
  return plan.active ? Decision::yes() : serialReductionsFit(exprs);
}

namespace {

// Whether the no_op scheduler takes `exprs` on their own (views of their
// inputs, no copy).
bool viewsAlone(const SegmentView& view, std::vector<const Expr*> exprs) {
  std::sort(exprs.begin(), exprs.end(), [](const Expr* a, const Expr* b) {
    return a->position() < b->position();
  });
  return NoOpScheduler()
      .canSchedule(SegmentView(view.fusion(), exprs, {}, nullptr))
      .ok();
}

bool isOutput(const SegmentView& view, const TensorView* tv) {
  const auto& outs = view.outputs();
  return std::find(outs.begin(), outs.end(), tv) != outs.end();
}
}  // namespace

Decision viewOutputsStayViews(const SegmentView& view) {
  for (const TensorView* o : view.outputs()) {
    const Expr* def = o->definition();
    if (def == nullptr || !view.contains(def) || !isViewExpr(def)) {
      continue;
    }
    // A transpose the kernel writes next to the value itself is a second,
    // uncoalesced copy (a matmul gradient's t() of its input). A transpose
    // alone is the layout asked for (a region output's promised strides, a
    // reshape after it): the kernel writes it instead of the value.
    const auto* p = exprAs<PermuteOp>(def);
    if (p != nullptr && permutesNonUnitDims(p) &&
        isOutput(view, p->input(0)->asTensor()) && viewsAlone(view, {def})) {
      return Decision::no("output " + o->ref() + " is a transpose (" +
                          exprRef(def) +
                          "): a no_op view of the value returns it "
                          "without a copy");
    }
    // Views (slices too) of a segment input all the way (a fusion input,
    // or the logits a matmul segment wrote): the kernel would copy that
    // input.
    std::vector<const Expr*> chain;
    const TensorView* v = o;
    while (v->definition() != nullptr && view.contains(v->definition()) &&
           isViewExpr(v->definition())) {
      chain.push_back(v->definition());
      v = v->definition()->input(0)->asTensor();
    }
    const bool readHere =
        v->definition() == nullptr || !view.contains(v->definition());
    if (readHere && viewsAlone(view, chain)) {
      return Decision::no("output " + o->ref() + " is a view of input " +
                          v->ref() +
                          ": a no_op view returns it without a "
                          "copy");
    }
  }
  return Decision::yes();
}

Decision generatedKernelFits(const SegmentView& view) {
  if (Decision d = viewOutputsStayViews(view); !d) {
    return d;
  }
  return generatedKernelFits(
      view.exprs(), view.outputs(),
      [&view](const Expr* e) { return view.contains(e); });
}

Decision generatedKernelFits(const Fusion& fusion) {
  std::vector<const Expr*> exprs(fusion.exprs().begin(), fusion.exprs().end());
  std::vector<const TensorView*> outputs;
  for (const Val* o : fusion.outputs()) {
    outputs.push_back(o->asTensor());
  }
  return generatedKernelFits(exprs, outputs, [](const Expr*) { return true; });
}

}  // namespace nvfuser
