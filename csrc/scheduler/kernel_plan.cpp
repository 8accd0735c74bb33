#include "scheduler/kernel_plan.h"

#include <optional>
#include <vector>

#include "scheduler/family_order.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/loop_outputs.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"
#include "scheduler/slot_threads.h"

namespace nvfuser {

const char* toString(KernelStrategy s) {
  switch (s) {
    case KernelStrategy::Pointwise:
      return "pointwise";
    case KernelStrategy::SerialReduction:
      return "serial reduction";
    case KernelStrategy::Rows:
      return "rows";
    case KernelStrategy::Transpose:
      return "transpose";
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
  for (size_t o = 0; o < segment.outputs().size(); ++o) {
    std::optional<InterleavedCat> digit = slotOrderDigit(
        segment, o, options.innermostBranchOrder, kMinInterleavedRunBytes);
    if (!digit) {
      continue;
    }
    // Whole blocks on one position where positions differ in cost (a
    // kernel whose reductions loop: a GQA backward's k and v sum over their
    // group's heads) or only a cat orders the slots; warps where the digit also
    // splits pads' sides, so a rotate-half's two halves stay in one block
    // (on the H200: partial rotary's backward 43.8 -> 36.7 us with warps,
    // 41.0 with blocks; Llama-3's 86.4 -> 89.9 with warps, 85.8 with
    // blocks; benchmarks/results/*session14*, call 5).
    digit->blockUniform = options.interleavedCatBlockOrder &&
                          (loopsToReduce(segment) || !digit->splitsPads);
    plan->interleavedCats.push_back(*digit);
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
      if (std::optional<TransposePlan> t =
              options.transposeTiles
                  ? planTranspose(segment, options.inputStrides,
                                  options.transposeMinExtent)
                  : std::nullopt) {
        plan->strategy = KernelStrategy::Transpose;
        plan->transpose = *t;
        plan->blockThreads = TransposePlan::kTile * TransposePlan::kBlockRows;
        return Decision::yes();
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
      if (options.heavyFamiliesFirst) {
        orderFamiliesByWork(segment, &plan->families);
      }
      if (options.loopOutputs && plan->split.sum == nullptr) {
        planLoopOutputs(segment, options.device, &plan->families);
      }
      planSlots(segment, options, plan);
      if (options.threadsPerSlot && plan->split.sum == nullptr) {
        planThreadsPerSlot(segment, plan->interleavedCats, options.device,
                           &plan->families);
      }
      return Decision::yes();
    default:
      return Decision::no(std::string(toString(type)) +
                          " segments are not generated kernels");
  }
}

}  // namespace nvfuser
