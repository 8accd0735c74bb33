#include <optional>

#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/value_builder.h"
#include "exceptions.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace codegen_detail {

namespace {
// x ** c for the constant exponents ATen special-cases (2, 3, 0.5, -0.5,
// -1, -2) as the same products, roots and reciprocals: no powf (about 30
// instructions per element, enough to make an RMS norm compute-bound).
std::string smallPower(const Val* exponent, DataType t, const std::string& x,
                       const std::string& general) {
  const Scalar* c = exponent->isTensor() ? nullptr : exponent->asScalar();
  if (c == nullptr || !c->isConst()) {
    return general;
  }
  const double v = scalarToDouble(*c->value());
  const std::string one = "(" + cudaType(t) + ")1";
  const bool f = t == DataType::Float;
  if (v == 1.0) {  // pow(x, 1) is x, NaN included (autograd of x ** 2)
    return x;
  }
  if (v == 2.0) {
    return "(" + x + " * " + x + ")";
  }
  if (v == 3.0) {
    return "(" + x + " * " + x + " * " + x + ")";
  }
  if (v == 0.5) {
    return std::string(f ? "sqrtf(" : "sqrt(") + x + ")";
  }
  if (v == -0.5) {
    return std::string(f ? "rsqrtf(" : "rsqrt(") + x + ")";
  }
  if (v == -1.0) {
    return "(" + one + " / " + x + ")";
  }
  if (v == -2.0) {
    return "(" + one + " / (" + x + " * " + x + "))";
  }
  return general;
}
// The device helpers' output kind (rng_device_helpers.cpp).
std::string rngKind(DataType t) {
  switch (t) {
    case DataType::Float:
      return "0";
    case DataType::Half:
      return "1";
    case DataType::BFloat16:
      return "2";
    case DataType::Double:
      return "3";
    default:
      NVF_THROW(Internal, "codegen: a random op of dtype ", toString(t));
  }
}
}  // namespace

const Val* KernelValueBuilder::unroundedNarrowSource(
    const Val* in, DataType out, std::vector<UnaryOpType>* signOps) const {
  if (!isReducedFloat(out) || paramName_.count(in)) {
    return nullptr;
  }
  // Every value before one of type `out` is a Float or Double (wider than
  // out), so each step is exact (an add of a known zero: but for the sign
  // of a zero, zeroAddOperand).
  const Val* v = in;
  while (v->dtype() != out &&
         (v->dtype() == DataType::Float || v->dtype() == DataType::Double) &&
         v->definition() != nullptr && !paramName_.count(v)) {
    const Expr* e = v->definition();
    if (const auto* b = exprAs<BinaryOp>(e)) {
      const Val* kept = zeroAddOperand(b);
      if (kept == nullptr || !kept->isTensor()) {
        break;
      }
      v = kept;
      continue;
    }
    const auto* u = exprAs<UnaryOp>(e);
    if (u == nullptr) {
      break;
    }
    if (u->op() == UnaryOpType::Neg || u->op() == UnaryOpType::Abs) {
      signOps->push_back(u->op());
    } else if (u->op() != UnaryOpType::Cast || u->input(0)->dtype() != out) {
      break;  // another op, or a cast from a type other than out
    }
    v = u->input(0);
  }
  // A plain round trip (widened, then cast back) is the value itself where
  // adds fold; NaN payloads are the only bits that differ.
  return v->dtype() == out && (!signOps->empty() || options_.foldAdds) &&
                 v != in
             ? v
             : nullptr;
}

std::optional<Value> KernelValueBuilder::narrowedWithoutRounding(
    const Val* in, DataType out, const Index& idx) {
  std::vector<UnaryOpType> signOps;
  const Val* v = unroundedNarrowSource(in, out, &signOps);
  if (v == nullptr) {
    return std::nullopt;
  }
  Value x = operand(v, idx);
  for (auto op = signOps.rbegin(); op != signOps.rend(); ++op) {
    x = emit(
        out, x.lane,
        std::string(*op == UnaryOpType::Neg ? "nvf_neg16(" : "nvf_abs16(") +
            at(x) + ")");
  }
  return x;
}

Value KernelValueBuilder::compute(const Expr* e, const Val* v,
                                  const Index& idx) {
  if (isRemap(e)) {  // only moves elements: the operand at another index
    return valueAt(e->input(0), remappedIndex(e, v, idx));
  }
  if (isChainedAdd(e)) {  // its sums' loops, one accumulator each lane
    return chainedSum(e, idx);
  }
  const DataType out = v->dtype();
  switch (e->type()) {
    case ExprType::Unary:
      return unaryValue(exprAs<UnaryOp>(e), out, idx);
    case ExprType::Binary:
      return binaryValue(exprAs<BinaryOp>(e), out, idx);
    case ExprType::Ternary:
      return ternaryValue(exprAs<TernaryOp>(e), out, idx);
    case ExprType::Pad:
      return padded(exprAs<PadOp>(e), out, idx);
    case ExprType::Cat:
      return concatenated(exprAs<CatOp>(e), out, idx);
    case ExprType::Full: {
      Value x = operand(e->input(0), idx);
      return emit(out, x.lane, cast(x, e->input(0)->dtype(), out));
    }
    case ExprType::Iota:
      return iotaValue(e, out, idx);
    case ExprType::Gather:
      return gathered(exprAs<GatherOp>(e), idx);
    case ExprType::Rng:
      return rngValue(exprAs<RngOp>(e), v, idx);
    case ExprType::Reduction:
    case ExprType::VarMean:
      return reduce(e, v, idx);
    default:
      NVF_THROW(NotImplemented, "pointwise codegen cannot generate ",
                exprRef(e));
  }
}

Value KernelValueBuilder::unaryValue(const UnaryOp* u, DataType out,
                                     const Index& idx) {
  const Val* in = u->input(0);
  if (u->op() == UnaryOpType::Cast) {
    if (std::optional<Value> y = narrowedWithoutRounding(in, out, idx)) {
      return *y;
    }
    if (std::optional<Value> y = narrowedPadSum(in, out, idx)) {
      return *y;
    }
  }
  Value x = operand(in, idx);
  if (u->op() == UnaryOpType::Cast) {
    if (x.lane && lanes_ % 2 == 0 && in->dtype() == DataType::Float &&
        (out == DataType::BFloat16 || out == DataType::Half)) {
      Value y = declare(out, true);  // converted in pairs
      line(std::string(out == DataType::BFloat16 ? "nvf_f2b_lanes("
                                                 : "nvf_f2h_lanes(") +
           y.name + ", " + x.name + ");");
      return y;
    }
    return emit(out, x.lane, cast(x, in->dtype(), out));
  }
  DataType t = out;
  const bool predicate = isPredicate(u->op());
  if (predicate) {
    t = isReducedFloat(in->dtype()) ? DataType::Float : in->dtype();
  } else if (u->op() == UnaryOpType::LogicalNot) {
    t = DataType::Bool;
  } else if (u->op() == UnaryOpType::BitwiseNot) {
    t = in->dtype();
  }
  return emit(out, x.lane,
              castExpr(predicate ? DataType::Bool : t, out,
                       unaryExpr(u->op(), t, cast(x, in->dtype(), t))));
}

Value KernelValueBuilder::binaryValue(const BinaryOp* b, DataType out,
                                      const Index& idx) {
  // Comparisons keep Half/BFloat16 as their compute type; the storage
  // types have no operators, and Float compares them exactly.
  DataType t =
      isReducedFloat(b->computeType()) ? DataType::Float : b->computeType();
  if (const Val* kept = zeroAddOperand(b)) {
    Value x = operand(kept, idx);
    return emit(out, x.lane, castExpr(t, out, cast(x, kept->dtype(), t)));
  }
  if (std::optional<DisjointPads> pads = disjointPadSum(b, false)) {
    if (std::optional<Value> x = padSumValue(*pads, out, idx)) {
      return *x;
    }
  }
  Value x = operand(b->input(0), idx);
  Value y = operand(b->input(1), idx);
  if (b->op() == BinaryOpType::Div && t == DataType::Float && x.lane &&
      !y.lane) {
    // Every lane (and every later use) shares the divisor's reciprocal.
    const std::string key = "rcp:" + y.name;
    const Value* cachedRcp = cached(key);
    const Value rcp =
        cachedRcp ? *cachedRcp
                  : emit(t, false,
                         "nvf_rcp(" + cast(y, b->input(1)->dtype(), t) + ")");
    scopes_.back()[key] = rcp;
    return emit(
        out, true,
        castExpr(t, out,
                 "nvf_div_rcp(" + cast(x, b->input(0)->dtype(), t) + ", " +
                     cast(y, b->input(1)->dtype(), t) + ", " + rcp.name + ")"));
  }
  const std::string xa = cast(x, b->input(0)->dtype(), t);
  const std::string ya = cast(y, b->input(1)->dtype(), t);
  std::string r = b->op() == BinaryOpType::Nextafter
                      ? reducedNextafter(b->computeType(), xa, ya)
                      : binaryExpr(b->op(), t, xa, ya);
  if (b->op() == BinaryOpType::Pow && isFloatingType(t)) {
    r = smallPower(b->input(1), t, cast(x, b->input(0)->dtype(), t), r);
  }
  DataType rt = isComparison(b->op()) ? DataType::Bool : t;
  return emit(out, x.lane || y.lane, castExpr(rt, out, r));
}

Value KernelValueBuilder::ternaryValue(const TernaryOp* t3, DataType out,
                                       const Index& idx) {
  DataType t = t3->computeType();
  Value a = operand(t3->input(0), idx);
  Value b = operand(t3->input(1), idx);
  Value c = operand(t3->input(2), idx);
  const bool lane = a.lane || b.lane || c.lane;
  std::string ca = cast(a, t3->input(0)->dtype(),
                        t3->op() == TernaryOpType::Where ? DataType::Bool : t);
  std::string cb = cast(b, t3->input(1)->dtype(), t);
  std::string cc = cast(c, t3->input(2)->dtype(), t);
  if (t3->op() == TernaryOpType::Where) {
    return emit(out, lane, "(" + ca + " ? " + cb + " : " + cc + ")");
  }
  if (t3->op() == TernaryOpType::Clamp) {
    return emit(out, lane,
                "nvf_min(nvf_max(" + ca + ", " + cb + "), " + cc + ")");
  }
  if (t3->op() == TernaryOpType::Fma) {
    return emit(out, lane,
                std::string(t == DataType::Double ? "fma(" : "fmaf(") + ca +
                    ", " + cb + ", " + cc + ")");
  }
  // ATen's lerp: exact at both ends.
  const std::string one = "(" + cudaType(t) + ")1";
  return emit(out, lane,
              "(" + cc + " < (" + cudaType(t) + ")0.5 ? " + ca + " + " + cc +
                  " * (" + cb + " - " + ca + ") : " + cb + " - (" + cb + " - " +
                  ca + ") * (" + one + " - " + cc + "))");
}

// iota's element at idx: start + i * step (i the only dim's index).
Value KernelValueBuilder::iotaValue(const Expr* e, DataType out,
                                    const Index& idx) {
  DataType t = isIntegralType(out) ? DataType::Int : DataType::Double;
  Value start = operand(e->input(0), idx);
  Value step = operand(e->input(1), idx);
  std::string r = "(" + cast(start, e->input(0)->dtype(), t) + " + (" +
                  castExpr(DataType::Int, t, laneIndex(idx[0]).factor()) +
                  ") * " + cast(step, e->input(1)->dtype(), t) + ")";
  return emit(out, idx[0].lane || start.lane || step.lane, castExpr(t, out, r));
}

bool KernelValueBuilder::padRange(const PadOp* p, const Index& idx,
                                  std::string* cond, Index* in) const {
  const auto& widths = p->widths();
  std::vector<int64_t> inShape = concreteShape(p->input(0)->asTensor());
  for (size_t d = 0; d < widths.size(); ++d) {
    const int64_t before = widths[d].first;
    if (widths[d].first == 0 && widths[d].second == 0) {
      in->push_back(idx[d]);
      continue;
    }
    if (isLaneConstants(idx[d])) {  // lanes on both sides
      return false;
    }
    if (idx[d].lane) {
      requireAligned(idx[d], before, "a pad boundary");
      requireAligned(idx[d], before + inShape[d], "a pad boundary");
    }
    const std::string i = idx[d].e.factor();
    Ix shifted = idx[d];
    shifted.e = idx[d].e - before;
    in->push_back(shifted);
    *cond += (cond->empty() ? "" : " && ") + std::string("(") + i +
             " >= " + std::to_string(before) + " && " + i + " < " +
             std::to_string(before + inShape[d]) + ")";
  }
  return true;
}

Value KernelValueBuilder::padded(const PadOp* p, DataType out,
                                 const Index& idx) {
  const TensorView* inTv = p->input(0)->asTensor();
  if (numel(inTv) == 0) {  // nothing but padding (a slice_backward of an
                           // empty slice), at any boundary
    Value padValue = operand(p->input(1), idx);
    return emit(out, padValue.lane, cast(padValue, p->input(1)->dtype(), out));
  }
  std::string cond;
  Index in;
  if (!padRange(p, idx, &cond, &in)) {
    size_t padded = 0;
    size_t laneDim = 0;
    for (size_t d = 0; d < p->widths().size(); ++d) {
      const auto& w = p->widths()[d];
      if (w.first != 0 || w.second != 0) {
        ++padded;
        laneDim = isLaneConstants(idx[d]) ? d : laneDim;
      }
    }
    if (padded != 1) {
      throw NotVectorizable{"a pad of several dims splits a lane table"};
    }
    return laneSelectedPad(p, out, idx, laneDim);
  }
  if (cond.empty()) {  // zero widths everywhere: a plain copy
    Value x = valueAt(inTv, operandIndex(inTv, in));
    return emit(out, x.lane, cast(x, inTv->dtype(), out));
  }
  // Lane-dependent conditions were proven uniform over the vector, so
  // the branch is taken by the vector as a whole.
  Value padValue = operand(p->input(1), idx);
  const Expression outside{cast(padValue, p->input(1)->dtype(), out),
                           padValue.lane};
  return inRangeElse(cond, inTv, in, out, padValue.lane || anyLane(idx),
                     [&](bool) { return outside; });
}

Value KernelValueBuilder::inRangeElse(
    const std::string& cond, const TensorView* inTv, const Index& in,
    DataType out, bool lane,
    const std::function<Expression(bool predicated)>& outside) {
  if (computedWithoutBranch(inTv)) {
    Value x = predicatedValue(inTv, operandIndex(inTv, in), cond);
    const Expression o = outside(true);
    return emit(
        out, lane || x.lane || o.lane,
        "(" + cond + ") ? " + cast(x, inTv->dtype(), out) + " : " + o.text);
  }
  Value var = declare(out, lane);
  line("if (" + cond + ") {");
  indent_ += 2;
  Value x = branchValue(inTv, operandIndex(inTv, in));
  assign(var, cast(x, inTv->dtype(), out));
  indent_ -= 2;
  line("} else {");
  indent_ += 2;
  scopes_.emplace_back();
  assign(var, outside(false).text);
  scopes_.pop_back();
  indent_ -= 2;
  line("}");
  return var;
}

Value KernelValueBuilder::concatenated(const CatOp* c, DataType out,
                                       const Index& idx) {
  const Request sole = soleCatPart(c, idx);
  if (sole.v != nullptr) {
    Value x = valueAt(sole.v, sole.idx);
    return emit(out, x.lane, cast(x, sole.v->dtype(), out));
  }
  const int64_t dim = c->dim();
  const size_t n = c->inputs().size();
  if (isLaneConstants(idx[dim])) {  // lanes in several parts
    return laneSelectedCat(c, out, idx);
  }
  const bool lane = anyLane(idx);
  bool predicated = true;
  for (const Val* part : c->inputs()) {
    predicated = predicated && computedWithoutBranch(part);
  }
  if (predicated) {
    return catWithoutBranches(c, out, idx, lane);
  }
  Value var = declare(out, lane);
  int64_t offset = 0;
  for (size_t k = 0; k < n; ++k) {
    const TensorView* part = c->input(k)->asTensor();
    int64_t extent = concreteShape(part)[dim];
    Index in = catPartIndex(idx, dim, offset);
    if (k + 1 == n) {
      line(k == 0 ? "{" : "} else {");
    } else {
      line(std::string(k == 0 ? "if" : "} else if") + " (" +
           idx[dim].e.factor() + " < " + std::to_string(offset + extent) +
           ") {");
    }
    indent_ += 2;
    Value x = branchValue(part, operandIndex(part, in));
    assign(var, cast(x, part->dtype(), out));
    indent_ -= 2;
    offset += extent;
  }
  line("}");
  return var;
}

// Element idx of a random op is a function of its row-major linear index in
// the op's own output (docs/rng.md), whatever reads it: an output, a
// broadcast, a reduction loop.
Value KernelValueBuilder::rngValue(const RngOp* r, const Val* v,
                                   const Index& idx) {
  NVF_ASSERT(!r->isLike() && r->hasSeed(), "codegen: ", exprRef(r),
             " was not concretized");
  const std::vector<int64_t> shape = concreteShape(v->asTensor());
  std::string linear;
  bool lane = false;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && (!idx[d].e.isZero() || idx[d].lane)) {
      std::string term = "(unsigned long long)" + laneIndex(idx[d]).factor();
      if (stride != 1) {
        term += " * " + std::to_string(stride) + "ULL";
      }
      linear = linear.empty() ? term : term + " + " + linear;
      lane = lane || idx[d].lane;
    }
    stride *= shape[d];
  }
  auto arg = [&](const Val* s, DataType to) {
    return castExpr(s->dtype(), to, at(scalar(s)));
  };
  const DataType out = v->dtype();
  const std::string call =
      std::string(r->op() == RngOpType::Uniform ? "nvf_rng_uniform("
                                                : "nvf_rng_normal(") +
      "(unsigned long long)(" + at(scalar(r->seed())) +
      "), (unsigned long long)(" + at(scalar(r->offset())) + "), " +
      std::to_string(r->index()) + "u, " + (linear.empty() ? "0ULL" : linear) +
      ", " + arg(r->param(0), DataType::Double) + ", " +
      arg(r->param(1), DataType::Double) + ", " + rngKind(out) + ")";
  return emit(out, lane, castExpr(DataType::Double, out, call));
}

Index KernelValueBuilder::catPartIndex(const Index& idx, int64_t dim,
                                       int64_t offset) const {
  Index in = idx;
  if (isLaneConstants(idx[dim])) {
    in[dim] = shiftedLaneConstants(idx[dim], 1, -offset);
    return in;
  }
  if (idx[dim].lane) {
    requireAligned(idx[dim], offset, "a cat boundary");
  }
  in[dim].e = idx[dim].e - offset;
  return in;
}

// Every part computed for every element with its loads predicated on its
// range, then one select: no divergent branch waits for its own loads.
Value KernelValueBuilder::catWithoutBranches(const CatOp* c, DataType out,
                                             const Index& idx, bool lane) {
  const int64_t dim = c->dim();
  const std::string at = idx[dim].e.factor();
  const size_t n = c->inputs().size();
  std::vector<std::string> parts;
  std::vector<std::string> ends;
  int64_t offset = 0;
  for (size_t k = 0; k < n; ++k) {
    const TensorView* part = c->input(k)->asTensor();
    const int64_t end = offset + concreteShape(part)[dim];
    Index in = catPartIndex(idx, dim, offset);
    std::string cond = k + 1 == n ? at + " >= " + std::to_string(offset)
                                  : at + " < " + std::to_string(end);
    if (k > 0 && k + 1 < n) {
      cond = "(" + at + " >= " + std::to_string(offset) + " && " + cond + ")";
    }
    Value x = predicatedValue(part, operandIndex(part, in), cond);
    lane = lane || x.lane;
    parts.push_back(cast(x, part->dtype(), out));
    ends.push_back(std::to_string(end));
    offset = end;
  }
  std::string select = parts.back();
  for (size_t k = n - 1; k-- > 0;) {
    select =
        "(" + at + " < " + ends[k] + ") ? " + parts[k] + " : (" + select + ")";
  }
  return emit(out, lane, select);
}

}  // namespace codegen_detail
}  // namespace nvfuser
