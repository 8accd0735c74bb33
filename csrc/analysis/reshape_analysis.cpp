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

ReshapeClassification classifyReshape(const ReshapeOp* op) {
  ReshapeClassification c;
  const TensorView* in = op->input(0)->asTensor();
  for (const IterDomain& id : in->noReductions()) {
    if (id.hasExpanded &&
        in->fusion()->canonical(id.expanded) != Extent::constant(1)) {
      c.concretizesExpandedDim = true;
    }
  }
  std::vector<int64_t> src = shapeWithoutOnes(in);
  std::vector<int64_t> dst = shapeWithoutOnes(op->out());
  // Greedy: each output dim must be exactly a product of a run of input dims.
  size_t i = 0;
  for (int64_t target : dst) {
    int64_t prod = 1;
    while (i < src.size() && prod < target) {
      prod *= src[i++];
    }
    if (prod != target) {
      c.kind = ReshapeKind::Split;
      return c;
    }
  }
  if (i != src.size()) {
    c.kind = ReshapeKind::Split;
  }
  return c;
}

}  // namespace nvfuser
