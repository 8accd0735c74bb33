// Loop outputs (scheduler/loop_outputs.h): outputs a serial-reduction
// family stores inside the loop of one of its reductions, at each
// iteration, from the values the loop already loaded.
#include <algorithm>

#include "analysis/dim_maps.h"
#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"
#include "exceptions.h"
#include "scheduler/loop_outputs.h"

namespace nvfuser {
namespace codegen_detail {

void KernelValueBuilder::startLoopOutputs(
    const std::vector<LoopOutputPlan>& planned,
    std::function<Index(const Val*)> slotIndexOf) {
  loopOutputs_.clear();
  for (const LoopOutputPlan& p : planned) {
    loopOutputs_.push_back(PendingLoopOutput{p, false});
  }
  slotIndexOf_ = std::move(slotIndexOf);
}

bool KernelValueBuilder::atSlotTopLevel(
    const std::vector<const ReductionOp*>& group, const Val* v,
    const Index& idx) const {
  const bool pending = std::any_of(
      loopOutputs_.begin(), loopOutputs_.end(),
      [&](const PendingLoopOutput& p) {
        return !p.written && std::find(group.begin(), group.end(),
                                       p.planned.reduction) != group.end();
      });
  // Only reductions with planned loop outputs reach slotIndexOf_: their
  // outputs have the family's loop shape (slotReductions); others may not.
  return pending && reductionLoops_ == 0 && loadPredicate_.empty() &&
         scopes_.size() == 1 && keyOf(idx) == keyOf(slotIndexOf_(v));
}

void KernelValueBuilder::writeLoopOutputs(const ReductionOp* r,
                                          const Index& inIdx, bool everyLane) {
  for (PendingLoopOutput& p : loopOutputs_) {
    if (p.planned.reduction != r || p.written) {
      continue;
    }
    const TensorView* source = p.planned.source;
    line("// output " + std::to_string(p.planned.output) + " in this loop");
    Value x = valueAt(source, operandIndex(source, inIdx));
    const Index at = viewedIndex(loopOutputViews(fusion_, p.planned), inIdx);
    storeAt(p.planned.output, at, x,
            everyLane && slotThreads_ > 1 ? "if (nvf_k == 0) " : "");
    p.written = true;
  }
}

void KernelValueBuilder::requireLoopOutputsWritten() const {
  for (const PendingLoopOutput& p : loopOutputs_) {
    NVF_ASSERT(p.written, "loop output ", p.planned.output, " of ",
               exprRef(p.planned.reduction),
               " was not written: the reduction was never computed at the "
               "slot's index at the top level");
  }
}

Index KernelValueBuilder::viewedIndex(const std::vector<const Expr*>& views,
                                      Index idx) {
  for (const Expr* e : views) {
    switch (e->type()) {
      case ExprType::Permute:
      case ExprType::Squeeze:
      case ExprType::Broadcast:
        idx = consumerDims(e, idx, Ix{IndexExpr(), false});
        break;
      case ExprType::Reshape:
        // Row-major both ways: the input's index maps to the output's as
        // an output's maps to its input.
        idx = reshapeIndex(concreteShape(e->input(0)->asTensor()),
                           concreteShape(e->output(0)->asTensor()), idx);
        break;
      default:  // a set
        break;
    }
  }
  return idx;
}

void KernelValueBuilder::storeAt(size_t o, const Index& idx, Value x,
                                 const std::string& guard) {
  const TensorView* tv = fusion_.outputs()[o]->asTensor();
  const std::string out = "out" + std::to_string(o);
  const std::vector<int64_t> strides = denseStrides(concreteShape(tv));
  NVF_ASSERT(strides.size() == idx.size(), "rank mismatch storing ", tv->ref());
  const Address a = addressOf(idx, strides);
  if (lanes_ == 1) {
    line(guard + out + "[" + a.offset.str() + "] = " + at(x) + ";");
    return;
  }
  if (!x.lane) {
    x = emit(tv->dtype(), true, x.name);
  }
  if (a.laneStride == 1 && a.aligned) {
    line(guard + "nvf_vstore(" + out + " + " + a.offset.factor() + ", " +
         x.name + ");");
    return;
  }
  IndexExpr perLane;  // lane u's element
  for (size_t d = 0; d < idx.size(); ++d) {
    perLane = perLane + laneIndex(idx[d]) * strides[d];
  }
  if (!guard.empty()) {
    line(guard + "{");
  }
  line("#pragma unroll");
  line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " + out + "[" +
       perLane.str() + "] = " + x.name + "[u];");
  if (!guard.empty()) {
    line("}");
  }
}

}  // namespace codegen_detail
}  // namespace nvfuser
