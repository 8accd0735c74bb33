#include "scheduler/kernel_plan.h"

#include <optional>
#include <vector>

#include "scheduler/generated_kernel_rules.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

const char* toString(KernelStrategy s) {
  switch (s) {
    case KernelStrategy::Pointwise:
      return "pointwise";
    case KernelStrategy::SerialReduction:
      return "serial reduction";
    case KernelStrategy::Rows:
      return "rows";
  }
  return "?";
}

SchedulerType kernelSchedulerFor(const Fusion& fusion) {
  return reduces(fusion) ? SchedulerType::Reduction : SchedulerType::PointWise;
}

namespace {
// Launch shape and slot order of the strategies whose threads take slots.
// A cat whose runs are shorter than one 32-byte memory sector keeps the
// order: reordered, a warp would write one element per sector (a stack of
// columns), trading divergence for uncoalesced stores.
void planSlots(const Fusion& segment, const KernelPlanOptions& options,
               KernelPlan* plan) {
  plan->fullGrid = options.fullGrid;
  if (!options.interleavedCatOrder) {
    return;
  }
  std::optional<InterleavedCat> cat = findInterleavedCat(segment);
  if (cat && cat->innerElements *
                     dataTypeSize(segment.outputs()[cat->output]->dtype()) >=
                 kMinInterleavedRunBytes) {
    plan->interleavedCat = cat;
    plan->interleavedCat->blockUniform = options.interleavedCatBlockOrder;
  }
}

void planRows(const Fusion& segment, const KernelPlanOptions& options,
              KernelPlan* plan) {
  plan->strategy = KernelStrategy::Rows;
  plan->capRegisters = true;
  plan->rowVectorWidth = rowVectorWidth(segment, plan->rows, options.vectorize);
}
}  // namespace

Decision planKernel(SchedulerType type, const Fusion& segment, KernelPlan* plan,
                    const KernelPlanOptions& options) {
  *plan = KernelPlan();
  if (Decision d = generatedKernelFits(segment); !d) {
    return d;
  }
  if (Decision d = planRowReduction(segment, &plan->rows); !d) {
    return d;
  }
  plan->families = planOutputFamilies(segment, options.vectorize);
  const bool reduction = reduces(segment);
  switch (type) {
    case SchedulerType::PointWise:
      if (reduction) {
        return Decision::no("a pointwise segment with a reduction");
      }
      plan->strategy = KernelStrategy::Pointwise;
      planSlots(segment, options, plan);
      return Decision::yes();
    case SchedulerType::InnerPersistent:
      if (!plan->rows.active) {
        return Decision::no(
            "an inner_persistent segment without row "
            "reductions");
      }
      planRows(segment, options, plan);
      return Decision::yes();
    case SchedulerType::Reduction:
      if (plan->rows.active) {  // row sums, max, mean
        planRows(segment, options, plan);
        return Decision::yes();
      }
      plan->strategy = KernelStrategy::SerialReduction;
      {
        std::vector<const Val*> outputs(segment.outputs().begin(),
                                        segment.outputs().end());
        std::vector<const Expr*> exprs(segment.exprs().begin(),
                                       segment.exprs().end());
        plan->split =
            planSplitSum(splittableSum(outputs, exprs), options.device);
      }
      planSlots(segment, options, plan);
      return Decision::yes();
    default:
      return Decision::no(std::string(toString(type)) +
                          " segments are not generated kernels");
  }
}

}  // namespace nvfuser
