// Reductions inside generated kernels: each thread owns output elements and
// loops over the reduced dims itself. Efficient when the reduced dims are
// not the innermost one (GQA head sums, gradients of broadcast tables,
// column sums with enough columns): consecutive lanes and threads then read
// consecutive elements in every iteration. var_mean is two-pass (mean, then
// the sum of squared deviations), in Float (Double for Double inputs).
#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/rng_device_helpers.h"
#include "codegen/value_builder.h"
#include "exceptions.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace codegen_detail {

// The type a reduction accumulates in.
DataType accumulatorType(DataType out, DataType in) {
  if (isIntegralType(out)) {
    return out;
  }
  if (out == DataType::Double || in == DataType::Double) {
    return DataType::Double;
  }
  return DataType::Float;
}

std::string identity(ReductionOpType op, DataType t) {
  const bool isFloat = t == DataType::Float || t == DataType::Double;
  const std::string inf = t == DataType::Double
                              ? "__longlong_as_double(0x7ff0000000000000LL)"
                              : "__int_as_float(0x7f800000)";
  switch (op) {
    case ReductionOpType::Sum:
    case ReductionOpType::Mean:
      return "(" + cudaType(t) + ")0";
    case ReductionOpType::Prod:
      return "(" + cudaType(t) + ")1";
    case ReductionOpType::Max:
      if (isFloat) {
        return "(-" + inf + ")";
      }
      return t == DataType::Int ? "(-9223372036854775807LL - 1)"
                                : "(-2147483647 - 1)";
    case ReductionOpType::Min:
      if (isFloat) {
        return inf;
      }
      return t == DataType::Int ? "9223372036854775807LL" : "2147483647";
  }
  return "0";
}

std::string combine(ReductionOpType op, const std::string& acc,
                    const std::string& x) {
  switch (op) {
    case ReductionOpType::Sum:
    case ReductionOpType::Mean:
      return acc + " + " + x;
    case ReductionOpType::Prod:
      return acc + " * " + x;
    case ReductionOpType::Max:
      return "nvf_max(" + acc + ", " + x + ")";
    case ReductionOpType::Min:
      return "nvf_min(" + acc + ", " + x + ")";
  }
  return acc;
}

namespace {
int64_t reducedCount(const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) {
    n *= shape[a];
  }
  return n;
}
}  // namespace

KernelValueBuilder::LoopRange KernelValueBuilder::reductionLoopRange(
    int64_t /*dim*/, const std::string& /*r*/) const {
  return LoopRange{};
}

Index KernelValueBuilder::openReductionLoops(const TensorView* in,
                                             const std::vector<int64_t>& axes,
                                             const Index& idx) {
  std::vector<int64_t> shape = concreteShape(in);
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) {
    reduced[a] = true;
  }
  Index inIdx;
  size_t next = 0;
  int opened = 0;  // loops of one iteration are not loops
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) {
      inIdx.push_back(idx[next++]);
      continue;
    }
    if (shape[d] == 1) {
      inIdx.push_back(Ix{"0", false});
      continue;
    }
    ++opened;
    std::string r = "r" + std::to_string(counter_++);
    std::string begin = "0";
    std::string end = std::to_string(shape[d]);
    LoopRange range = reductionLoopRange(int64_t(d), r);
    const bool chunked = range.chunked;
    begin = range.begin;
    std::string step = range.step.empty() ? "++" + r : range.step;
    line("#pragma unroll " + std::to_string(serialUnroll(shape[d], chunked)));
    line("for (" + indexType_ + " " + r + " = " + begin + "; " + r + " < " +
         end + "; " + step + ") {");
    indent_ += 2;
    inIdx.push_back(Ix{r, false});
  }
  // Nothing computed inside the loops is reused after them.
  scopes_.emplace_back();
  reductionLoops_ += opened;
  return inIdx;
}

void KernelValueBuilder::closeReductionLoops(const TensorView* in,
                                             const std::vector<int64_t>& axes) {
  scopes_.pop_back();
  std::vector<int64_t> shape = concreteShape(in);
  for (int64_t a : axes) {
    if (shape[a] != 1) {
      indent_ -= 2;
      --reductionLoops_;
      line("}");
    }
  }
}

Value KernelValueBuilder::reduce(const Expr* e, const Val* v,
                                 const Index& idx) {
  const TensorView* in = e->input(0)->asTensor();
  bool lane = false;
  for (const Ix& i : idx) {
    lane = lane || i.lane;
  }
  const auto* red = exprAs<ReductionOp>(e);
  const std::vector<int64_t>& axes =
      red ? red->axes() : exprAs<VarMeanOp>(e)->axes();
  const int64_t n = reducedCount(concreteShape(in), axes);
  const DataType acc = accumulatorType(e->output(0)->dtype(), in->dtype());
  const std::string count = "(" + cudaType(acc) + ")" + std::to_string(n);
  if (red != nullptr) {
    const ReductionOpType op = red->op();
    Value sum = emit(acc, lane, identity(op, acc));
    Index inIdx = openReductionLoops(in, axes, idx);
    Value x = valueAt(in, operandIndex(in, inIdx));
    assign(sum, combine(op, at(sum), cast(x, in->dtype(), acc)));
    closeReductionLoops(in, axes);
    std::string r =
        op == ReductionOpType::Mean ? at(sum) + " / " + count : at(sum);
    return emit(v->dtype(), lane, castExpr(acc, v->dtype(), r));
  }
  // var_mean, two passes.
  Value sum = emit(acc, lane, "(" + cudaType(acc) + ")0");
  Index inIdx = openReductionLoops(in, axes, idx);
  Value x = valueAt(in, operandIndex(in, inIdx));
  assign(sum, at(sum) + " + " + cast(x, in->dtype(), acc));
  closeReductionLoops(in, axes);
  Value mean = emit(acc, lane, at(sum) + " / " + count);
  Value m2 = emit(acc, lane, "(" + cudaType(acc) + ")0");
  inIdx = openReductionLoops(in, axes, idx);
  x = valueAt(in, operandIndex(in, inIdx));
  const std::string d =
      "(" + cast(x, in->dtype(), acc) + " - " + at(mean) + ")";
  assign(m2, at(m2) + " + " + d + " * " + d);
  closeReductionLoops(in, axes);
  const int64_t correction = exprAs<VarMeanOp>(e)->correction();
  const std::string dof = "(" + cudaType(acc) + ")" +
                          std::to_string(std::max<int64_t>(n - correction, 0));
  Value var = emit(e->output(0)->dtype(), lane,
                   castExpr(acc, e->output(0)->dtype(), at(m2) + " / " + dof));
  Value meanOut = emit(e->output(1)->dtype(), lane,
                       castExpr(acc, e->output(1)->dtype(), at(mean)));
  // Both outputs are now known at this index.
  const std::string key = keyOf(idx);
  scopes_.back()[e->output(0)->ref() + "@" + key] = var;
  scopes_.back()[e->output(1)->ref() + "@" + key] = meanOut;
  return v == e->output(0) ? var : meanOut;
}

}  // namespace codegen_detail
}  // namespace nvfuser
