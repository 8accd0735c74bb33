#include "ops/reduction_ops.h"

#include <algorithm>

#include "exceptions.h"
#include "ops/dtype_rules.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {

std::vector<int64_t> reductionAxes(TensorView* in,
                                   const std::vector<int64_t>& dims,
                                   const std::string& op) {
  const int64_t rank = in->nDims();
  std::vector<int64_t> axes;
  if (dims.empty()) {
    for (int64_t i = 0; i < rank; ++i) {
      axes.push_back(i);
    }
  } else {
    axes = normalizeDims(dims, rank, op);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::vector<IterDomain> reducedDomain(TensorView* in,
                                      const std::vector<int64_t>& axes) {
  std::vector<IterDomain> dom = in->noReductions();
  for (int64_t a : axes) {
    IterDomain& id = dom[a];
    id = IterDomain::reduction(id.logicalExtent());
  }
  return dom;
}

TensorView* keepDims(TensorView* out, const std::vector<int64_t>& axes,
                     int64_t rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t a : axes) {
    mask[a] = true;
  }
  return broadcast(out, mask);
}

DataType defaultReductionType(ReductionOpType op, DataType in) {
  switch (op) {
    case ReductionOpType::Sum:
    case ReductionOpType::Prod:
      if (isIntegralType(in) || in == DataType::Bool) {
        return DataType::Int;
      }
      return isReducedFloat(in) ? DataType::Float : in;
    case ReductionOpType::Mean:
      return (isFloatingType(in) && !isReducedFloat(in)) || isComplexType(in)
                 ? in
                 : DataType::Float;
    case ReductionOpType::Max:
    case ReductionOpType::Min:
      return in;
  }
  return in;
}

// Kernels reduce either inner dims (one block per row) or outer ones (a
// loop per thread); a reduction of the innermost dim together with dims
// that are not next to it (sum over {0, 2} of [A, B, C]) is neither, so it
// reads a permuted view whose reduced dims are trailing ([B, A, C] over
// {1, 2}: the row kernel gathers the permuted row). The kept dims keep
// their order, so the output is the same.
TensorView* reducedDimsLast(TensorView* in, std::vector<int64_t>* axes) {
  const int64_t rank = in->nDims();
  const int64_t n = static_cast<int64_t>(axes->size());
  if (n == 0 || axes->back() != rank - 1 || axes->front() == rank - n) {
    return in;
  }
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) {
    if (!std::binary_search(axes->begin(), axes->end(), d)) {
      order.push_back(d);
    }
  }
  order.insert(order.end(), axes->begin(), axes->end());
  for (int64_t i = 0; i < n; ++i) {
    (*axes)[size_t(i)] = rank - n + i;
  }
  return permute(in, order);
}

}  // namespace

TensorView* reduction(ReductionOpType op, TensorView* in,
                      const std::vector<int64_t>& dims, bool keepdim,
                      DataType dtype) {
  const std::string name = toString(op);
  Fusion* f = commonFusion({in}, name);
  std::vector<int64_t> axes = reductionAxes(in, dims, name);
  DataType outType =
      dtype == DataType::Null ? defaultReductionType(op, in->dtype()) : dtype;
  checkSupportedDataType(outType, name);
  refuseFloat8(name, {in});
  refuseFloat8Type(name, outType);
  if (op == ReductionOpType::Max || op == ReductionOpType::Min) {
    refuseComplex(name, {in}, "complex values have no order");
  }
  NVF_CHECK_KIND(isComplexType(outType) || !isComplexType(in->dtype()), Type,
                 name, ": a complex input ", valDescription(in),
                 " cannot be reduced into dtype ", toString(outType));
  NVF_CHECK_KIND(!(op == ReductionOpType::Mean && !isFloatingType(outType) &&
                   !isComplexType(outType)),
                 Type,
                 "mean: output dtype must be floating point or complex, "
                 "got ",
                 toString(outType));
  // A Bool sum or product would need its own accumulation rules (torch's
  // is any / all); nothing computes one, so it is refused here rather than
  // failing inside the evaluator.
  NVF_CHECK_KIND(
      !(outType == DataType::Bool &&
        (op == ReductionOpType::Sum || op == ReductionOpType::Prod)),
      Type, name,
      ": dtype Bool is not supported; use an integral or floating point "
      "dtype");
  std::vector<int64_t> reduced = axes;
  TensorView* source = reducedDimsLast(in, &reduced);
  TensorView* out = f->newTensor(reducedDomain(source, reduced), outType);
  f->addExpr<ReductionOp>(op, out, source, reduced);
  return keepdim ? keepDims(out, axes, in->nDims()) : out;
}

std::pair<TensorView*, TensorView*> varMean(TensorView* in,
                                            const std::vector<int64_t>& dims,
                                            int64_t correction, bool keepdim) {
  Fusion* f = commonFusion({in}, "var_mean");
  NVF_CHECK_KIND(isFloatingType(in->dtype()), Type,
                 "var_mean: input must be floating point, got ",
                 valDescription(in));
  NVF_CHECK(correction >= 0, "var_mean: correction ", correction,
            " must be >= 0");
  std::vector<int64_t> axes = reductionAxes(in, dims, "var_mean");
  DataType outType = defaultReductionType(ReductionOpType::Mean, in->dtype());
  std::vector<int64_t> reduced = axes;
  TensorView* source = reducedDimsLast(in, &reduced);
  TensorView* var = f->newTensor(reducedDomain(source, reduced), outType);
  TensorView* mean = f->newTensor(reducedDomain(source, reduced), outType);
  f->addExpr<VarMeanOp>(var, mean, source, reduced, correction);
  if (keepdim) {
    return {keepDims(var, axes, in->nDims()),
            keepDims(mean, axes, in->nDims())};
  }
  return {var, mean};
}

TensorView* variance(TensorView* in, const std::vector<int64_t>& dims,
                     int64_t correction, bool keepdim) {
  return varMean(in, dims, correction, keepdim).first;
}

namespace {
void checkMatmulOperands(TensorView* a, TensorView* b, const char* op) {
  NVF_CHECK_KIND(a->dtype() == b->dtype(), Type, op, ": operands ",
                 valDescription(a), " and ", valDescription(b),
                 " must have the same dtype");
  NVF_CHECK_KIND(isFloatingType(a->dtype()), Type, op,
                 ": operands must be floating point, got ",
                 toString(a->dtype()));
}

IterDomain contractionCheck(Fusion* f, const IterDomain& ka,
                            const IterDomain& kb, const char* op, Val* a,
                            Val* b) {
  Extent ea = f->canonical(ka.logicalExtent());
  Extent eb = f->canonical(kb.logicalExtent());
  NVF_CHECK(!(ea.isConst() && eb.isConst() && ea.value != eb.value), op,
            ": contraction sizes differ: ", valDescription(a), " and ",
            valDescription(b), " (", ea.value, " vs ", eb.value, ")");
  return IterDomain::iteration(f->unify(ea, eb));
}
}  // namespace

TensorView* matmul(TensorView* a, TensorView* b) {
  Fusion* f = commonFusion({a, b}, "matmul");
  checkMatmulOperands(a, b, "matmul");
  std::vector<IterDomain> da = a->noReductions();
  std::vector<IterDomain> db = b->noReductions();
  NVF_CHECK(!da.empty() && !db.empty(), "matmul: operands must have rank >= 1,",
            " got ", valDescription(a), " and ", valDescription(b));
  const bool aVec = da.size() == 1;
  const bool bVec = db.size() == 1;
  contractionCheck(f, da.back(), bVec ? db[0] : db[db.size() - 2], "matmul", a,
                   b);
  // Batch dims (all but the last two; a vector has none) broadcast together.
  std::vector<IterDomain> ba(da.begin(), da.end() - (aVec ? 1 : 2));
  std::vector<IterDomain> bb(db.begin(), db.end() - (bVec ? 1 : 2));
  size_t nb = std::max(ba.size(), bb.size());
  std::vector<IterDomain> out;
  for (size_t i = 0; i < nb; ++i) {
    int64_t ia = static_cast<int64_t>(i) - static_cast<int64_t>(nb - ba.size());
    int64_t ib = static_cast<int64_t>(i) - static_cast<int64_t>(nb - bb.size());
    if (ia < 0) {
      out.push_back(bb[ib]);
    } else if (ib < 0) {
      out.push_back(ba[ia]);
    } else {
      out.push_back(combineDims(f, ba[ia], bb[ib], "matmul", a, b,
                                static_cast<int64_t>(i)));
    }
  }
  if (!aVec) {
    out.push_back(da[da.size() - 2]);
  }
  if (!bVec) {
    out.push_back(db.back());
  }
  TensorView* tv = f->newTensor(std::move(out), a->dtype());
  f->addExpr<MatmulOp>(tv, a, b);
  return tv;
}

TensorView* linear(TensorView* a, TensorView* w, Val* bias) {
  std::vector<Val*> ins = {a, w};
  if (bias != nullptr) {
    ins.push_back(bias);
  }
  Fusion* f = commonFusion(ins, "linear");
  checkMatmulOperands(a, w, "linear");
  std::vector<IterDomain> da = a->noReductions();
  std::vector<IterDomain> dw = w->noReductions();
  NVF_CHECK(!da.empty(), "linear: input must have rank >= 1");
  NVF_CHECK(dw.size() == 1 || dw.size() == 2, "linear: weight must be 1-D ",
            "or 2-D, got ", valDescription(w));
  contractionCheck(f, da.back(), dw.back(), "linear", a, w);
  std::vector<IterDomain> out(da.begin(), da.end() - 1);
  if (dw.size() == 2) {
    out.push_back(dw[0]);
  }
  if (bias != nullptr && bias->isTensor()) {
    TensorView* bt = bias->asTensor();
    NVF_CHECK_KIND(bt->dtype() == a->dtype(), Type, "linear: bias ",
                   valDescription(bt), " must have dtype ",
                   toString(a->dtype()));
    NVF_CHECK(bt->nDims() <= 1, "linear: bias must be 0-D or 1-D, got ",
              valDescription(bt));
    if (bt->nDims() == 1 && dw.size() == 2) {
      out.back() = combineDims(f, out.back(), bt->axis(0), "linear", w, bt,
                               static_cast<int64_t>(out.size() - 1));
    }
  }
  TensorView* tv = f->newTensor(std::move(out), a->dtype());
  f->addExpr<LinearOp>(tv, ins);
  return tv;
}

}  // namespace nvfuser
