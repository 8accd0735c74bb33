#include "ops/indexing_ops.h"

#include <string>
#include <vector>

#include "exceptions.h"
#include "ops/dtype_rules.h"
#include "ops/op_utils.h"

namespace nvfuser {

namespace {
// The checks every indexing op makes; returns the normalized dim.
int64_t checkOperands(TensorView* lookup, TensorView* index, int64_t dim,
                      const std::string& op) {
  commonFusion({lookup, index}, op);
  refuseFloat8(op, {lookup});
  NVF_CHECK_KIND(
      index->dtype() == DataType::Int || index->dtype() == DataType::Int32,
      Type, op, ": the index ", valDescription(index), " must be Int or Int32");
  return normalizeDim(dim, lookup->nDims(), op);
}

void checkSameRank(TensorView* lookup, TensorView* index,
                   const std::string& op) {
  NVF_CHECK(lookup->nDims() == index->nDims(), op, ": the index ",
            valDescription(index), " must have the rank of the input ",
            valDescription(lookup));
}

TensorView* build(GatherOpType type, TensorView* lookup, TensorView* index,
                  int64_t dim, std::vector<IterDomain> domain) {
  Fusion* f = lookup->fusion();
  TensorView* out = f->newTensor(std::move(domain), lookup->dtype());
  f->addExpr<GatherOp>(type, out, lookup, index, dim);
  return out;
}

}  // namespace

TensorView* indexSelect(TensorView* lookup, TensorView* index, int64_t dim) {
  const std::string op = "index_select";
  const int64_t d = checkOperands(lookup, index, dim, op);
  NVF_CHECK(index->nDims() <= 1, op, ": the index ", valDescription(index),
            " must be 1-D or 0-dim");
  std::vector<IterDomain> out = lookup->noReductions();
  out[size_t(d)] =
      index->nDims() == 1 ? index->axis(0) : IterDomain::broadcast();
  return build(GatherOpType::IndexSelect, lookup, index, d, std::move(out));
}

TensorView* gather(TensorView* lookup, TensorView* index, int64_t dim) {
  const std::string op = "gather";
  const int64_t d = checkOperands(lookup, index, dim, op);
  checkSameRank(lookup, index, op);
  Fusion* f = lookup->fusion();
  // torch checks sizes only when the index has elements.
  if (!hasKnownZero(index)) {
    for (int64_t k = 0; k < lookup->nDims(); ++k) {
      Extent in = f->canonical(lookup->axis(k).logicalExtent());
      Extent ix = f->canonical(index->axis(k).logicalExtent());
      NVF_CHECK(
          k == d || !in.isConst() || !ix.isConst() || ix.value <= in.value, op,
          ": the index ", valDescription(index), " is larger than the input ",
          valDescription(lookup), " at dim ", k, " (", ix.value, " > ",
          in.value, "); only dim ", d, " may be larger");
    }
  }
  return build(GatherOpType::Gather, lookup, index, d, index->noReductions());
}

TensorView* takeAlongAxis(TensorView* lookup, TensorView* index, int64_t dim) {
  const std::string op = "take_along_axis";
  const int64_t d = checkOperands(lookup, index, dim, op);
  checkSameRank(lookup, index, op);
  Fusion* f = lookup->fusion();
  std::vector<IterDomain> out;
  for (int64_t k = 0; k < lookup->nDims(); ++k) {
    out.push_back(k == d ? index->axis(k)
                         : combineDims(f, lookup->axis(k), index->axis(k), op,
                                       lookup, index, k));
  }
  return build(GatherOpType::TakeAlongAxis, lookup, index, d, std::move(out));
}

TensorView* gatherOp(GatherOpType op, TensorView* lookup, TensorView* index,
                     int64_t dim) {
  switch (op) {
    case GatherOpType::IndexSelect:
      return indexSelect(lookup, index, dim);
    case GatherOpType::Gather:
      return gather(lookup, index, dim);
    case GatherOpType::TakeAlongAxis:
      return takeAlongAxis(lookup, index, dim);
  }
  NVF_THROW(Internal, "gatherOp: unknown type");
}

}  // namespace nvfuser
