// Adds the generator folds: an add of a known zero is its other operand, an
// add of pads that do not overlap is a select, and a cast back to the type
// a value was widened from is that value (value_builder.h).
#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"

namespace nvfuser {
namespace codegen_detail {

namespace {
// Ops between a zero and the value isKnownZero is asked about: a long
// chain is not worth walking for a fold.
constexpr int kMaxZeroWalk = 32;

// The one dim p pads, or -1 (none, or several).
int64_t onlyPaddedDim(const PadOp* p) {
  int64_t dim = -1;
  const auto& widths = p->widths();
  for (size_t d = 0; d < widths.size(); ++d) {
    if (widths[d].first != 0 || widths[d].second != 0) {
      if (dim >= 0) {
        return -1;
      }
      dim = static_cast<int64_t>(d);
    }
  }
  return dim;
}

bool isZeroConstant(const Val* v) {
  if (v->isTensor() || !v->asScalar()->isConst()) {
    return false;
  }
  return scalarToDouble(*v->asScalar()->value()) == 0.0;
}

// Whether widening `from` to `to` is exact: both floating, `to` at least
// as wide (every bf16 and half is a float).
bool widensExactly(DataType from, DataType to) {
  return isFloatingType(from) && isFloatingType(to) &&
         dataTypeSize(to) >= dataTypeSize(from) &&
         !(dataTypeSize(to) == dataTypeSize(from) && from != to);
}
}  // namespace

bool KernelValueBuilder::isKnownZero(const Val* v) const {
  for (int step = 0; step < kMaxZeroWalk; ++step) {
    if (v->dtype() == DataType::Float8_e8m0fnu) {
      return false;  // no zero: 0 converts to 2^-127 (device_helpers.cpp)
    }
    if (!v->isTensor()) {
      return isZeroConstant(v);
    }
    const Expr* e = v->definition();
    if (e == nullptr || paramName_.count(v)) {
      return false;  // a kernel input
    }
    if (const auto* p = exprAs<PadOp>(e)) {
      if (numel(p->input(0)->asTensor()) != 0) {
        return false;
      }
      v = p->input(1);  // nothing but padding
      continue;
    }
    const auto* u = exprAs<UnaryOp>(e);
    const bool keepsZero = isRemap(e) || e->type() == ExprType::Full ||
                           (u != nullptr && (u->op() == UnaryOpType::Cast ||
                                             u->op() == UnaryOpType::Neg));
    if (!keepsZero) {
      return false;
    }
    v = e->input(0);
  }
  return false;
}

const Val* KernelValueBuilder::zeroAddOperand(const BinaryOp* b) const {
  if (!options_.foldAdds ||
      (b->op() != BinaryOpType::Add && b->op() != BinaryOpType::Sub)) {
    return nullptr;
  }
  const DataType t = b->computeType();
  if (!isFloatingType(t) && !isIntegralType(t)) {
    return nullptr;  // a boolean add is an or
  }
  if (isKnownZero(b->input(1))) {
    return b->input(0);
  }
  if (b->op() == BinaryOpType::Add && isKnownZero(b->input(0))) {
    return b->input(1);
  }
  return nullptr;
}

std::optional<KernelValueBuilder::DisjointPads>
KernelValueBuilder::disjointPadSum(const BinaryOp* b, bool narrowed) const {
  if (!options_.foldAdds || b->op() != BinaryOpType::Add) {
    return std::nullopt;
  }
  const Val* out = b->output(0);
  if (narrowed && (out->uses().size() != 1 || fusion_.isOutput(out))) {
    return std::nullopt;  // read elsewhere too: computed once, as written
  }
  const auto* first = exprAs<PadOp>(b->input(0)->definition());
  const auto* second = exprAs<PadOp>(b->input(1)->definition());
  if (first == nullptr || second == nullptr || paramName_.count(b->input(0)) ||
      paramName_.count(b->input(1)) || !isZeroConstant(first->input(1)) ||
      !isZeroConstant(second->input(1))) {
    return std::nullopt;
  }
  const int64_t dim = onlyPaddedDim(first);
  if (dim < 0 || onlyPaddedDim(second) != dim) {
    return std::nullopt;
  }
  const TensorView* a = first->input(0)->asTensor();
  const TensorView* c = second->input(0)->asTensor();
  const DataType t = b->computeType();
  if (!widensExactly(a->dtype(), t) || !widensExactly(c->dtype(), t)) {
    return std::nullopt;
  }
  const int64_t aBegin = first->widths()[dim].first;
  const int64_t aEnd = aBegin + concreteShape(a)[dim];
  const int64_t cBegin = second->widths()[dim].first;
  const int64_t cEnd = cBegin + concreteShape(c)[dim];
  if (aBegin >= aEnd || cBegin >= cEnd || (aBegin < cEnd && cBegin < aEnd)) {
    return std::nullopt;  // an empty side (isKnownZero's) or an overlap
  }
  return DisjointPads{first, second};
}

std::optional<Value> KernelValueBuilder::padSumValue(const DisjointPads& pads,
                                                     DataType out,
                                                     const Index& idx) {
  std::string cond;
  Index in;
  std::string otherCond;
  Index otherIn;
  if (!padRange(pads.first, idx, &cond, &in) ||
      !padRange(pads.second, idx, &otherCond, &otherIn)) {
    return std::nullopt;  // a lane table: laneSelectedPad's
  }
  const TensorView* inTv = pads.first->input(0)->asTensor();
  const TensorView* otherTv = pads.second->input(0)->asTensor();
  // Where the two inputs cover the padded dim, the second is read
  // wherever the first is not (predicated too where it can be): no zero
  // between them; else the second side is its pad.
  const int64_t dim = onlyPaddedDim(pads.first);
  const int64_t covered =
      concreteShape(inTv)[dim] + concreteShape(otherTv)[dim];
  const bool covers =
      covered == concreteShape(pads.first->output(0)->asTensor())[dim];
  const bool secondPredicated = covers && computedWithoutBranch(otherTv);
  return inRangeElse(
      cond, inTv, in, out, anyLane(idx), [&](bool predicated) -> Expression {
        if (predicated ? secondPredicated : covers) {
          const Index otherIdx = operandIndex(otherTv, otherIn);
          Value y = predicated ? predicatedValue(otherTv, otherIdx, otherCond)
                               : branchValue(otherTv, otherIdx);
          return {cast(y, otherTv->dtype(), out), y.lane};
        }
        Value rest = padded(pads.second, out, idx);
        return {at(rest), rest.lane};
      });
}

std::optional<KernelValueBuilder::DisjointPads> KernelValueBuilder::castPadSum(
    const Val* in) const {
  const auto* b = exprAs<BinaryOp>(in->definition());
  if (b == nullptr || paramName_.count(in)) {
    return std::nullopt;
  }
  return disjointPadSum(b, /*narrowed=*/true);
}

std::optional<Value> KernelValueBuilder::narrowedPadSum(const Val* in,
                                                        DataType out,
                                                        const Index& idx) {
  std::optional<DisjointPads> pads =
      isFloatingType(out) ? castPadSum(in) : std::nullopt;
  if (!pads) {
    return std::nullopt;
  }
  return padSumValue(*pads, out, idx);
}

}  // namespace codegen_detail
}  // namespace nvfuser
