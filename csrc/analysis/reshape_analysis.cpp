#include "analysis/reshape_analysis.h"

#include "analysis/tensor_shape.h"
#include "ir/fusion.h"

namespace nvfuser {

std::string ReshapeClassification::describe() const {
  std::string s = kind == ReshapeKind::MergeOnly ? "merge-only" : "split";
  if (concretizesExpandedDim) {
    s += ", turns an expanded broadcast dim into a real dim";
  }
  return s;
}

namespace {
// Greedy: whether every dim of `whole` is exactly the product of a run of
// consecutive dims of `parts`, using all of them.
bool eachIsAProductOfARun(const std::vector<int64_t>& whole,
                          const std::vector<int64_t>& parts) {
  size_t i = 0;
  for (int64_t target : whole) {
    int64_t prod = 1;
    while (i < parts.size() && prod < target) {
      prod *= parts[i++];
    }
    if (prod != target) {
      return false;
    }
  }
  return i == parts.size();
}
}  // namespace

ReshapeClassification classifyReshape(const ReshapeOp* op) {
  ReshapeClassification c;
  const TensorView* in = op->input(0)->asTensor();
  for (const IterDomain& id : in->noReductions()) {
    if (id.hasExpanded &&
        in->fusion()->canonical(id.expanded) != Extent::constant(1)) {
      c.concretizesExpandedDim = true;
    }
  }
  const std::vector<int64_t> src = shapeWithoutOnes(in);
  const std::vector<int64_t> dst = shapeWithoutOnes(op->out());
  c.kind = eachIsAProductOfARun(dst, src) ? ReshapeKind::MergeOnly
                                          : ReshapeKind::Split;
  c.splitsOnly = eachIsAProductOfARun(src, dst);
  return c;
}

}  // namespace nvfuser
