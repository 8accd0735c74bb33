#include "scheduler/reduction_scheduler.h"

#include <algorithm>
#include <string>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {
// A long serial reduction into few values runs one latency-bound thread per
// output vector unless the generator splits it, which it does for a lone
// sum only (splittableSum). Saying no to anything else here makes the
// segmenter leave the sum in a segment of its own (or with its casts),
// where it is split.
Decision starvedSerialSumFits(const SegmentView& view,
                              const ReductionInfo& info) {
  if (info.innermost) {
    return Decision::yes();
  }
  std::vector<const Val*> outputs(view.outputs().begin(), view.outputs().end());
  if (splittableSum(outputs, view.exprs()) != nullptr) {
    return Decision::yes();
  }
  for (const Expr* e : info.reductions) {
    if (!isFloatingSum(e)) {
      continue;  // the segmenter's reduction split takes these
    }
    const auto* red = exprAs<ReductionOp>(e);
    const std::vector<int64_t> shape = concreteShape(e->input(0)->asTensor());
    int64_t rows = 1;
    for (int64_t a : red->axes()) {
      rows *= shape[size_t(a)];
    }
    const int64_t values =
        numel(e->input(0)->asTensor()) / std::max<int64_t>(rows, 1);
    if (rows >= kStarvedSerialRows && values < kStarvedSerialOutputs) {
      return Decision::no(exprRef(e) + " sums " + std::to_string(rows) +
                          " rows into " + std::to_string(values) +
                          " values: only a lone sum is split over the GPU, "
                          "and this segment has other outputs or reductions");
    }
  }
  return Decision::yes();
}
}  // namespace

Decision ReductionScheduler::canSchedule(const SegmentView& view) const {
  if (Decision d = branchDepthFits(view); !d) {
    return d;
  }
  ReductionInfo info;
  Decision d = analyzeReductions(view, &info);
  if (!d) {
    return d;
  }
  if (info.broadcastsBack) {
    return Decision::no(
        "a reduced value is broadcast back to the input size "
        "(a normalization, not a plain reduction)");
  }
  if (Decision fits = starvedSerialSumFits(view, info); !fits) {
    return fits;
  }
  return generatedKernelFits(view);
}

}  // namespace nvfuser
