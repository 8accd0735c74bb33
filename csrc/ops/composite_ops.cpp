#include "ops/composite_ops.h"

#include <algorithm>
#include <string>

#include "exceptions.h"
#include "ops/arith.h"
#include "ops/dtype_rules.h"
#include "ops/op_utils.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {
void checkSupportedType(TensorView* in, const char* op) {
  checkSupportedDataType(in->dtype(), op);
}

Extent constExtent(TensorView* tv, int64_t d) {
  return tv->fusion()->canonical(tv->axis(d).logicalExtent());
}

Scalar* zeroOf(Fusion& f, DataType t) {
  if (t == DataType::Bool) {
    return f.newScalar(t, ScalarValue(false));
  }
  if (isComplexType(t)) {
    return f.newScalar(t, ScalarValue(std::complex<double>(0.0, 0.0)));
  }
  if (isFloatingType(t)) {
    return f.newScalar(t, ScalarValue(0.0));
  }
  return f.newScalar(t, ScalarValue(int64_t(0)));
}

// The index of `length` values along position `at` of a rank-`rank`
// tensor whose other dims are broadcast.
TensorView* iotaAlong(Fusion& f, int64_t length, int64_t at, int64_t rank) {
  Scalar* zero = f.newScalar(DataType::Int, ScalarValue(int64_t(0)));
  Scalar* one = f.newScalar(DataType::Int, ScalarValue(int64_t(1)));
  TensorView* i = iota(f, length, zero, one, DataType::Int);
  std::vector<bool> mask(size_t(rank), true);
  mask[size_t(at)] = false;
  return broadcast(i, mask);
}

std::vector<Val*> expandTriu(const TriuOp& t, TensorView* x) {
  Fusion& f = *x->fusion();
  const int64_t rank = x->nDims();
  const Extent rows = constExtent(x, rank - 2);
  const Extent cols = constExtent(x, rank - 1);
  NVF_ASSERT(rows.isConst() && cols.isConst(), "triu: expanded before the ",
             "sizes are known");
  // Kept where col - row >= diagonal: one compare per element, computed
  // from loop indices (no load).
  Val* diff =
      binaryOp(BinaryOpType::Sub, iotaAlong(f, cols.value, rank - 1, rank),
               iotaAlong(f, rows.value, rank - 2, rank));
  Val* keep = binaryOp(BinaryOpType::Ge, diff,
                       f.newScalar(DataType::Int, ScalarValue(t.diagonal())));
  return {where(keep, x, zeroOf(f, x->dtype()))};
}

std::vector<Val*> expandWelford(const WelfordOp& w, TensorView* x) {
  Fusion& f = *x->fusion();
  const std::vector<int64_t>& axes = w.axes();
  // Two passes, as var_mean: the mean, then the squared deviations from
  // it (exact where a running update would round at every step).
  TensorView* avg = reduction(ReductionOpType::Mean, x, axes, false);
  std::vector<bool> mask(size_t(x->nDims()), false);
  int64_t count = 1;
  for (int64_t a : axes) {
    mask[size_t(a)] = true;
    count *= constExtent(x, a).value;
  }
  Val* dev = binaryOp(BinaryOpType::Sub, x, broadcast(avg, mask));
  Val* sq = binaryOp(BinaryOpType::Mul, dev, dev);
  TensorView* varSum = reduction(ReductionOpType::Sum, sq->asTensor(), axes,
                                 false, avg->dtype());
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < x->nDims(); ++d) {
    if (!mask[size_t(d)]) {
      kept.push_back(constExtent(x, d).value);
    }
  }
  TensorView* n = full(f, kept, f.newScalar(DataType::Int, ScalarValue(count)),
                       DataType::Int);
  return {avg, varSum, n};
}
}  // namespace

TensorView* triu(TensorView* in, int64_t diagonal) {
  Fusion* f = commonFusion({in}, "triu");
  refuseFloat8("triu", {in});
  checkSupportedType(in, "triu");
  NVF_CHECK(in->nDims() >= 2, "triu: input must have rank >= 2, got ",
            valDescription(in));
  TensorView* out = f->newTensor(in->noReductions(), in->dtype());
  f->addExpr<TriuOp>(out, in, diagonal);
  return out;
}

std::tuple<TensorView*, TensorView*, TensorView*> welford(
    TensorView* in, const std::vector<int64_t>& dims) {
  Fusion* f = commonFusion({in}, "welford");
  NVF_CHECK_KIND(isFloatingType(in->dtype()), Type,
                 "welford: input must be floating point, got ",
                 valDescription(in));
  NVF_CHECK(!dims.empty(), "welford: dims must name at least one dim");
  std::vector<int64_t> axes = normalizeDims(dims, in->nDims(), "welford");
  std::sort(axes.begin(), axes.end());
  const DataType t =
      in->dtype() == DataType::Double ? DataType::Double : DataType::Float;
  std::vector<IterDomain> kept;
  for (int64_t d = 0; d < in->nDims(); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), d)) {
      kept.push_back(in->axis(d));
    }
  }
  TensorView* avg = f->newTensor(kept, t);
  TensorView* varSum = f->newTensor(kept, t);
  TensorView* n = f->newTensor(kept, DataType::Int);
  f->addExpr<WelfordOp>(avg, varSum, n, in, axes);
  return {avg, varSum, n};
}

TensorView* cumsum(TensorView* in, int64_t dim) {
  Fusion* f = commonFusion({in}, "cumsum");
  refuseFloat8("cumsum", {in});
  checkSupportedType(in, "cumsum");
  // torch takes dim 0 or -1 for a 0-dim tensor.
  const int64_t d =
      normalizeDim(dim, std::max<int64_t>(in->nDims(), 1), "cumsum");
  const DataType t = isFloatingType(in->dtype()) || isComplexType(in->dtype())
                         ? in->dtype()
                         : DataType::Int;
  TensorView* out = f->newTensor(in->noReductions(), t);
  f->addExpr<ScanOp>(out, in, d);
  return out;
}

namespace {
void checkScatterSrc(TensorView* arg, TensorView* index, Val* src) {
  const char* op = "scatter";
  if (!src->isTensor()) {
    NVF_CHECK_KIND(
        typeCategory(src->dtype()) <= std::max(typeCategory(arg->dtype()), 1),
        Type, op, ": a ", isComplexType(src->dtype()) ? "complex" : "floating",
        " scalar src ", valDescription(src), " cannot be written into ",
        valDescription(arg));
    return;
  }
  TensorView* s = src->asTensor();
  NVF_CHECK_KIND(s->dtype() == arg->dtype(), Type, op, ": src ",
                 valDescription(s), " must have the dtype of ",
                 valDescription(arg));
  NVF_CHECK(s->nDims() == arg->nDims(), op, ": src ", valDescription(s),
            " must have the rank of ", valDescription(arg));
  if (hasKnownZero(index)) {
    return;  // torch checks sizes only when the index has elements
  }
  for (int64_t k = 0; k < arg->nDims(); ++k) {
    Extent ix = constExtent(index, k);
    Extent se = constExtent(s, k);
    NVF_CHECK(!ix.isConst() || !se.isConst() || ix.value <= se.value, op,
              ": the index ", valDescription(index), " is larger than src ",
              valDescription(s), " at dim ", k, " (", ix.value, " > ", se.value,
              ")");
  }
}
}  // namespace

TensorView* scatter(TensorView* arg, TensorView* index, Val* src, int64_t dim) {
  const char* op = "scatter";
  Fusion* f = commonFusion({arg, index, src}, op);
  refuseFloat8(op, {arg, src});
  NVF_CHECK_KIND(
      index->dtype() == DataType::Int || index->dtype() == DataType::Int32,
      Type, op, ": the index ", valDescription(index), " must be Int or Int32");
  const int64_t d = normalizeDim(dim, arg->nDims(), op);
  NVF_CHECK(index->nDims() == arg->nDims(), op, ": the index ",
            valDescription(index), " must have the rank of ",
            valDescription(arg));
  checkScatterSrc(arg, index, src);
  if (!hasKnownZero(index)) {
    for (int64_t k = 0; k < arg->nDims(); ++k) {
      Extent ix = constExtent(index, k);
      Extent ae = constExtent(arg, k);
      NVF_CHECK(
          k == d || !ix.isConst() || !ae.isConst() || ix.value <= ae.value, op,
          ": the index ", valDescription(index), " is larger than the input ",
          valDescription(arg), " at dim ", k, " (", ix.value, " > ", ae.value,
          "); only dim ", d, " may be larger");
    }
  }
  TensorView* out = f->newTensor(arg->noReductions(), arg->dtype());
  f->addExpr<ScatterOp>(out, arg, index, src, d);
  return out;
}

std::optional<std::vector<Val*>> expandComposite(const Expr* e,
                                                 const std::vector<Val*>& ins) {
  if (const auto* t = exprAs<TriuOp>(e)) {
    return expandTriu(*t, ins.at(0)->asTensor());
  }
  if (const auto* w = exprAs<WelfordOp>(e)) {
    return expandWelford(*w, ins.at(0)->asTensor());
  }
  return std::nullopt;
}

}  // namespace nvfuser
