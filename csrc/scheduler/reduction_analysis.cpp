#include "scheduler/reduction_analysis.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

bool isCastOrUnitView(const Expr* e) {
  if (const auto* u = exprAs<UnaryOp>(e)) {
    return u->op() == UnaryOpType::Cast;
  }
  if (exprAs<LoadStoreOp>(e) != nullptr) {
    return true;
  }
  if (exprAs<BroadcastOp>(e) == nullptr && exprAs<ReshapeOp>(e) == nullptr &&
      exprAs<SqueezeOp>(e) == nullptr) {
    return false;
  }
  // Extents rather than sizes: the reduction splitter asks this of the
  // symbolic fusion while concretizing it (keepdim sums of [-1, -1] inputs).
  return e->input(0)->isTensor() && e->output(0)->isTensor() &&
         extentsWithoutKnownOnes(e->input(0)->asTensor()) ==
             extentsWithoutKnownOnes(e->output(0)->asTensor());
}

const Val* beforeCastsAndUnitViews(const Val* out) {
  const Val* v = out;
  while (v->definition() != nullptr && isCastOrUnitView(v->definition()) &&
         (v == out || v->uses().size() == 1)) {
    const Val* in = v->definition()->input(0);
    if (in->uses().size() != 1) {
      break;
    }
    v = in;
  }
  return v;
}

bool onlyCastOrViewedToAnOutput(const Val* v) {
  while (!v->uses().empty()) {
    if (v->uses().size() != 1 || !isCastOrUnitView(v->uses()[0])) {
      return false;
    }
    v = v->uses()[0]->output(0);
  }
  return true;
}

bool isFloatingSum(const Expr* e) {
  const auto* red = exprAs<ReductionOp>(e);
  if (red == nullptr || red->op() != ReductionOpType::Sum) {
    return false;
  }
  const DataType dtype = red->output(0)->dtype();
  return dtype == DataType::Float || dtype == DataType::Double;
}

const ReductionOp* splittableSum(const std::vector<const Val*>& outputs,
                                 const std::vector<const Expr*>& exprs) {
  int64_t reductions = 0;
  for (const Expr* e : exprs) {
    reductions += isReductionLike(e) ? 1 : 0;
  }
  if (reductions != 1 || outputs.size() != 1) {
    return nullptr;
  }
  const Expr* def = beforeCastsAndUnitViews(outputs[0])->definition();
  return isFloatingSum(def) ? exprAs<ReductionOp>(def) : nullptr;
}

namespace {
const std::vector<int64_t>& axesOf(const Expr* e) {
  if (const auto* r = exprAs<ReductionOp>(e)) {
    return r->axes();
  }
  return exprAs<VarMeanOp>(e)->axes();
}

bool innermostAxes(const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& axes) {
  std::unordered_set<int64_t> reduced(axes.begin(), axes.end());
  bool seenReduced = false;
  // Walking outward from the innermost dim, reduced dims must come first.
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 1) {
      continue;
    }
    if (reduced.count(d)) {
      seenReduced = true;
    } else if (seenReduced) {
      for (int64_t e = d - 1; e >= 0; --e) {
        if (reduced.count(e) && shape[e] != 1) {
          return false;
        }
      }
      return true;
    } else {
      return false;
    }
  }
  return seenReduced;
}
}  // namespace

bool innermostReduced(const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& axes) {
  int64_t inner = static_cast<int64_t>(shape.size()) - 1;
  while (inner >= 0 && shape[inner] == 1) {
    --inner;
  }
  return inner >= 0 && std::find(axes.begin(), axes.end(), inner) != axes.end();
}

namespace {
// A reduction of a segment, after those before it in expr order: whether
// it may join them. `depth`: the reductions on the way to its input.
Decision addReduction(const Expr* e, bool fromReduction, int depth,
                      ReductionInfo* info) {
  const TensorView* in = e->input(0)->asTensor();
  std::vector<int64_t> shape = concreteShape(in);
  // A reduction of a value computed from an earlier reduction of the
  // same rows (softmax's sum after its max) is another pass over the
  // row. Serial reductions may chain too: the thread computes the
  // earlier one inside the later one's loop, at the index it reads
  // (Qwen2.5's RoPE backward sums the k gradient over the 7 query heads
  // of a group, then the cos gradient over the 4 groups). That reads each
  // element once as long as no reduced value is broadcast back
  // (broadcastsBack, refused by the reduction scheduler). A row reduction
  // in any other chain is not one kernel, nor a chain of more than
  // kMaxChainedReductions (the generator nests one loop, and one level of
  // its own calls, per reduction).
  const bool samePass = shape == info->inputShape && axesOf(e) == info->axes;
  if (fromReduction && !samePass &&
      (innermostReduced(shape, axesOf(e)) ||
       innermostReduced(info->inputShape, info->axes) ||
       depth >= kMaxChainedReductions)) {
    return Decision::no(exprRef(e) + " reduces a reduced value");
  }
  if (info->reductions.empty()) {
    info->inputShape = shape;
    info->axes = axesOf(e);
  } else if (shape != info->inputShape || axesOf(e) != info->axes) {
    // Generated kernels loop over each reduction's own dims inside the
    // thread, so signatures may differ as long as no reduction is a
    // row reduction (those need one block-cooperative layout).
    if (innermostReduced(shape, axesOf(e)) ||
        innermostReduced(info->inputShape, info->axes)) {
      return Decision::no("reductions with different signatures: " +
                          exprRef(info->reductions[0]) + " and " + exprRef(e));
    }
    info->mixedSignatures = true;
  }
  info->reductions.push_back(e);
  return Decision::yes();
}
}  // namespace

Decision analyzeReductions(const SegmentView& view, ReductionInfo* info,
                           const std::vector<const Expr*>& columnSums) {
  // Values computed from a reduction, with the reductions on the way.
  std::unordered_map<const Val*, int> reductionDepth;
  for (const Expr* e : view.exprs()) {
    if (std::find(columnSums.begin(), columnSums.end(), e) !=
        columnSums.end()) {
      continue;
    }
    if (isAtenOnly(e)) {
      return Decision::no("reduction schedulers cannot take " + exprRef(e));
    }
    bool fromReduction = false;
    bool replicates = false;
    int depth = 0;
    for (const Val* in : e->inputs()) {
      auto d = reductionDepth.find(in);
      if (d != reductionDepth.end()) {
        fromReduction = true;
        replicates = replicates || replicatesInput(e, in);
        depth = std::max(depth, d->second);
      }
    }
    const bool reduction = isReductionLike(e);
    if (reduction) {
      if (Decision d = addReduction(e, fromReduction, depth, info); !d) {
        return d;
      }
    } else if (!fromReduction) {
      continue;
    } else {
      info->broadcastsBack = info->broadcastsBack || replicates;
    }
    for (const Val* o : e->outputs()) {
      reductionDepth[o] = depth + (reduction ? 1 : 0);
    }
  }
  if (info->reductions.empty()) {
    return Decision::no("no reduction in the segment");
  }
  info->innermost = innermostAxes(info->inputShape, info->axes);
  return Decision::yes();
}

}  // namespace nvfuser
