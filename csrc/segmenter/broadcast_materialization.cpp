#include "segmenter/broadcast_materialization.h"

#include <algorithm>
#include <vector>

#include "analysis/op_cost.h"
#include "analysis/tensor_shape.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {
// Exprs a forward walk visits at most per broadcast: the consumers that
// expand a broadcast value sit right after it (expand, then the op that
// meets the larger operand).
constexpr size_t kDownstreamWalk = 32;

// The most elements of a tensor among the first kDownstreamWalk exprs
// reached from `v`.
int64_t largestDownstream(const Val* v) {
  int64_t largest = 0;
  std::vector<const Val*> frontier{v};
  size_t visited = 0;
  for (size_t k = 0; k < frontier.size() && visited < kDownstreamWalk; ++k) {
    for (const Expr* use : frontier[k]->uses()) {
      if (++visited > kDownstreamWalk) {
        break;
      }
      for (const Val* out : use->outputs()) {
        if (out->isTensor()) {
          largest = std::max(largest, numel(out->asTensor()));
          frontier.push_back(out);
        }
      }
    }
  }
  return largest;
}
}  // namespace

std::set<const Expr*> broadcastsToMaterialize(const Fusion& fusion) {
  std::set<const Val*> costly;
  std::set<const Val*> reduced;
  std::set<const Expr*> found;
  for (const Expr* e : fusion.exprs()) {
    const Val* in = e->inputs().empty() ? nullptr : e->input(0);
    if (e->type() == ExprType::Broadcast && in->isTensor() &&
        costly.count(in) && !reduced.count(in) && hasKernelType(in->dtype()) &&
        !fusion.isInput(in) &&
        largestDownstream(e->output(0)) >=
            kMaterializedBroadcastFactor * numel(in->asTensor())) {
      found.insert(e);
    }
    bool c = isCostlyElementwise(e);
    bool r = isReductionLike(e);
    for (const Val* v : e->inputs()) {
      c = c || costly.count(v) > 0;
      r = r || reduced.count(v) > 0;
    }
    for (const Val* out : e->outputs()) {
      if (c) {
        costly.insert(out);
      }
      if (r) {
        reduced.insert(out);
      }
    }
  }
  return found;
}

}  // namespace nvfuser
