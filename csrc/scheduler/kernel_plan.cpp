#include "scheduler/kernel_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "exceptions.h"
#include "scheduler/family_order.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/input_loop_order.h"
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
// Launch shape, register cap and slot order of the strategies whose
// threads take slots.
// A cat whose runs are shorter than one 32-byte memory sector keeps the
// order: reordered, a warp would write one element per sector (a stack of
// columns), trading divergence for uncoalesced stores.
void planSlots(const Fusion& segment, const KernelPlanOptions& options,
               KernelPlan* plan) {
  plan->fullGrid = options.fullGrid;
  plan->capRegisters = options.registerCapsEverywhere;
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
    if (!options.padSidesInOneBlock) {
      digit->sidesPerCatPosition = 1;
    }
    plan->interleavedCats.push_back(*digit);
  }
}

void planRows(const Fusion& segment, const KernelPlanOptions& options,
              const WidthCaps& caps, KernelPlan* plan) {
  plan->strategy = KernelStrategy::Rows;
  plan->capRegisters = true;
  plan->rowVectorWidth =
      rowVectorWidth(segment, plan->rows, options.vectorize, caps);
  plan->rowLaunch = rowLaunch(plan->rows, plan->rowVectorWidth);
}

// Serial reductions: a lone sum's split, families heaviest first, outputs
// stored in loops, slot order, threads per slot.
void planSerialReduction(const Fusion& segment,
                         const KernelPlanOptions& options,
                         const WidthCaps& caps, KernelPlan* plan) {
  plan->strategy = KernelStrategy::SerialReduction;
  {
    std::vector<const Val*> outputs(segment.outputs().begin(),
                                    segment.outputs().end());
    std::vector<const Expr*> exprs(segment.exprs().begin(),
                                   segment.exprs().end());
    plan->split = planSplitSum(splittableSum(outputs, exprs), options.device);
  }
  if (plan->split.sum != nullptr) {  // the only output, so one family
    const OutputFamilyPlan& f = plan->families.at(0);
    plan->split.factor = plan->split.factorFor(f.numel / f.vectorWidth);
  }
  if (options.heavyFamiliesFirst) {
    orderFamiliesByWork(segment, &plan->families);
  }
  if (options.loopOutputs && plan->split.sum == nullptr) {
    planLoopOutputs(segment, options.device, &plan->families);
    // A family that lost outputs to a loop takes the width its own
    // outputs allow (a capped output that moved no longer limits it).
    setFamilyVectorWidths(segment, options.vectorize, caps, &plan->families);
  }
  planSlots(segment, options, plan);
  if (options.threadsPerSlot && plan->split.sum == nullptr) {
    planThreadsPerSlot(segment, plan->interleavedCats, options.device,
                       &plan->families);
  }
}

// The plan at the widths `caps` allow, every width-dependent rule
// evaluated at them.
Decision planAtWidths(SchedulerType type, const Fusion& segment,
                      const KernelPlanOptions& options, const WidthCaps& caps,
                      KernelPlan* plan) {
  *plan = KernelPlan();
  if (Decision d = generatedKernelFits(segment); !d) {
    return d;
  }
  if (Decision d = planRowReduction(segment, &plan->rows); !d) {
    return d;
  }
  plan->families = planOutputFamilies(segment, options.vectorize, caps);
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
        for (OutputFamilyPlan& f : plan->families) {
          f.vectorWidth = 1;  // one element per thread (transpose_plan.h)
        }
        plan->blockThreads = TransposePlan::kTile * TransposePlan::kBlockRows;
        return Decision::yes();
      }
      plan->strategy = KernelStrategy::Pointwise;
      planSlots(segment, options, plan);
      if (options.inputLoopOrder) {
        planInputLoopOrder(segment, options.inputStrides, plan->interleavedCats,
                           options.inputOrderMinRunBytes, &plan->families);
      }
      return Decision::yes();
    case SchedulerType::InnerPersistent:
      if (!plan->rows.active) {
        return Decision::no(
            "an inner_persistent segment without row "
            "reductions");
      }
      planRows(segment, options, caps, plan);
      return Decision::yes();
    case SchedulerType::Reduction:
      if (plan->rows.active) {  // row sums, max, mean
        planRows(segment, options, caps, plan);
        return Decision::yes();
      }
      planSerialReduction(segment, options, caps, plan);
      return Decision::yes();
    default:
      return Decision::no(std::string(toString(type)) +
                          " segments are not generated kernels");
  }
}

// The outputs of family f (whose width does not hold) to blame, each with
// its reason: each output's own proof, the family's other outputs split off
// into a family of their own, so that an output nothing splits keeps its
// width (and another round, where the culprit may have moved into a loop,
// does not inherit it). All of them with the family's reason where it
// stores loop outputs (they need its reductions) or no one fails alone.
std::map<size_t, std::string> blamedOutputs(const Fusion& segment,
                                            const LaneProof& proof,
                                            const KernelPlan& plan, size_t f,
                                            const std::string& reason) {
  const OutputFamilyPlan& fam = plan.families[f];
  std::map<size_t, std::string> blamed;
  if (plan.strategy != KernelStrategy::Rows && fam.outputs.size() > 1 &&
      fam.loopOutputs.empty()) {
    for (size_t o : fam.outputs) {
      KernelPlan trial = plan;
      OutputFamilyPlan rest = fam;
      rest.outputs.erase(
          std::find(rest.outputs.begin(), rest.outputs.end(), o));
      trial.families[f].outputs = {o};
      trial.families.push_back(rest);
      std::string own;
      if (!proof.holds(segment, trial, f, &own)) {
        blamed[o] = own;
      }
    }
  }
  if (blamed.empty()) {
    std::vector<size_t> outputs = fam.outputs;
    if (plan.strategy == KernelStrategy::Rows) {
      outputs.resize(segment.outputs().size());
      std::iota(outputs.begin(), outputs.end(), 0);
    }
    for (size_t o : outputs) {
      blamed[o] = reason;
    }
  }
  return blamed;
}

// Halves the width of every family of `plan` that the proof says does not
// hold, as a cap on the outputs to blame (Rows: on every output), with the
// reason; the next round plans again at the caps, so every question the
// proof answers is about a plan that may run. False if every width held.
bool capUnprovenWidths(const Fusion& segment, const LaneProof& proof,
                       const KernelPlan& plan, WidthCaps* caps,
                       std::map<size_t, std::string>* why) {
  const bool rows = plan.strategy == KernelStrategy::Rows;
  const size_t families = rows ? 1 : plan.families.size();
  bool capped = false;
  for (size_t f = 0; f < families; ++f) {
    const int64_t width =
        rows ? plan.rowVectorWidth : plan.families[f].vectorWidth;
    std::string reason;
    if (width == 1 || proof.holds(segment, plan, f, &reason)) {
      continue;
    }
    capped = true;
    for (const auto& [o, because] :
         blamedOutputs(segment, proof, plan, f, reason)) {
      int64_t& cap = caps->try_emplace(o, width).first->second;
      // The family's width is at most each of its outputs' caps, so every
      // round lowers one: the rounds end.
      NVF_ASSERT(cap >= width, "output ", o, " planned at ", width,
                 " lanes past its cap of ", cap);
      cap = width / 2;
      (*why)[o] = std::to_string(width) + " lanes do not hold: " + because;
    }
  }
  return capped;
}

// Each family's reason: that of an output whose cap is its width.
void explainNarrowedFamilies(const WidthCaps& caps,
                             const std::map<size_t, std::string>& why,
                             KernelPlan* plan) {
  for (OutputFamilyPlan& f : plan->families) {
    const int64_t width = plan->strategy == KernelStrategy::Rows
                              ? plan->rowVectorWidth
                              : f.vectorWidth;
    for (size_t o : f.outputs) {
      auto c = caps.find(o);
      auto w = why.find(o);
      if (c != caps.end() && w != why.end() && c->second == width) {
        f.narrowedBecause = w->second;
        break;
      }
    }
  }
}
}  // namespace

Decision planKernel(SchedulerType type, const Fusion& segment, KernelPlan* plan,
                    const KernelPlanOptions& options) {
  // Plan, ask the proof about every width, and plan again with the ones
  // that did not hold halved until all hold: a narrower width changes what
  // depends on it (threads per slot, loop outputs' fill, a split's
  // factor). Caps only shrink, so this ends (at most log2 of the widest
  // vector rounds per family; one almost always).
  WidthCaps caps;
  std::map<size_t, std::string> why;
  for (;;) {
    Decision d = planAtWidths(type, segment, options, caps, plan);
    // (A transpose plan's widths are 1: nothing to ask.)
    if (!d || options.laneProof == nullptr ||
        !capUnprovenWidths(segment, *options.laneProof, *plan, &caps, &why)) {
      explainNarrowedFamilies(caps, why, plan);
      return d;
    }
  }
}

}  // namespace nvfuser
