#include "analysis/tensor_shape.h"

#include "exceptions.h"
#include "ir/expr.h"
#include "ir/exprs.h"
#include "ir/fusion.h"

namespace nvfuser {

std::vector<int64_t> denseStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = shape[d] == 1 ? 0 : s;
    s *= shape[d];
  }
  return strides;
}

int64_t numel(const TensorView* tv) {
  int64_t n = 1;
  for (int64_t s : concreteShape(tv)) {
    n *= s;
  }
  return n;
}

int64_t denseBytes(const TensorView* tv) {
  return numel(tv) * dataTypeSize(tv->dtype());
}

std::vector<int64_t> givenOrDenseStrides(
    const TensorView* tv, const std::vector<std::vector<int64_t>>& given,
    size_t i) {
  if (i < given.size() && !given[i].empty()) {
    return given[i];
  }
  return denseStrides(concreteShape(tv));
}

std::vector<int64_t> shapeWithoutOnes(const TensorView* tv) {
  std::vector<int64_t> out;
  for (int64_t s : concreteShape(tv)) {
    if (s != 1) {
      out.push_back(s);
    }
  }
  return out;
}

std::vector<Extent> extentsWithoutKnownOnes(const TensorView* tv) {
  std::vector<Extent> out;
  for (const IterDomain& id : tv->noReductions()) {
    Extent e = tv->fusion()->canonical(id.logicalExtent());
    if (!(e.isConst() && e.value == 1)) {
      out.push_back(e);
    }
  }
  return out;
}

bool replicatesInput(const Expr* e, const Val* in) {
  if (e->type() == ExprType::Cat || e->type() == ExprType::Pad ||
      !in->isTensor()) {
    return false;
  }
  for (const Val* o : e->outputs()) {
    if (o->isTensor() && numel(o->asTensor()) > numel(in->asTensor())) {
      return true;
    }
  }
  return false;
}

bool permutesNonUnitDims(const PermuteOp* p) {
  const std::vector<int64_t> shape = concreteShape(p->input(0)->asTensor());
  int64_t last = -1;
  for (int64_t d : p->perm()) {
    if (shape[size_t(d)] != 1) {
      if (d < last) {
        return true;
      }
      last = d;
    }
  }
  return false;
}

}  // namespace nvfuser
