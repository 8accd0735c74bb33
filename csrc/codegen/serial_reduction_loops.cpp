// Reductions inside generated kernels: each thread owns output elements and
// loops over the reduced dims itself. Efficient when the reduced dims are
// not the innermost one (GQA head sums, gradients of broadcast tables,
// column sums with enough columns): consecutive lanes and threads then read
// consecutive elements in every iteration. var_mean is two-pass (mean, then
// the sum of squared deviations), in Float (Double for Double inputs).
#include <algorithm>

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
                                             const Index& idx,
                                             bool* splitOverSlotThreads) {
  std::vector<int64_t> shape = concreteShape(in);
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) {
    reduced[a] = true;
  }
  // Several threads per slot split the longest dim of the outermost loops
  // (inner ones run whole in each lane: the group combines once, after
  // the loops, so every lane must run the same number of them).
  int64_t splitDim = -1;
  if (splitsOverSlotThreads(in, axes)) {
    for (int64_t a : axes) {
      if (shape[a] > 1 && (splitDim < 0 || shape[a] > shape[splitDim])) {
        splitDim = a;
      }
    }
  }
  if (splitOverSlotThreads != nullptr) {
    // No loop (every reduced dim of size 1): each lane holds the whole
    // result already, and combining would count it K times.
    *splitOverSlotThreads = splitDim >= 0;
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
      inIdx.push_back(Ix{IndexExpr(), false});
      continue;
    }
    ++opened;
    std::string r = "r" + std::to_string(counter_++);
    std::string begin = "0";
    std::string end = std::to_string(shape[d]);
    LoopRange range = reductionLoopRange(int64_t(d), r);
    int64_t steps = shape[d];
    if (int64_t(d) == splitDim) {
      NVF_ASSERT(!range.chunked, "a split sum's loop split over slot threads");
      range =
          LoopRange{"nvf_k", r + " += " + std::to_string(slotThreads_), false};
      steps = (shape[d] + slotThreads_ - 1) / slotThreads_;
    }
    const bool chunked = range.chunked;
    begin = range.begin;
    std::string step = range.step.empty() ? "++" + r : range.step;
    line("#pragma unroll " + std::to_string(serialUnroll(steps, chunked)));
    line("for (" + indexType_ + " " + r + " = " + begin + "; " + r + " < " +
         end + "; " + step + ") {");
    indent_ += 2;
    inIdx.push_back(Ix{IndexExpr::named(r), false});
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
  if (const auto* red = exprAs<ReductionOp>(e)) {
    NVF_ASSERT(chainOf(red) == nullptr, exprRef(e),
               " is chained to another sum: only its add reads it");
    return reduceTogether(sharedLoopGroup(red, idx), v, idx);
  }
  return varMean(exprAs<VarMeanOp>(e), v, idx);
}

Value KernelValueBuilder::varMean(const VarMeanOp* e, const Val* v,
                                  const Index& idx) {
  const TensorView* in = e->input(0)->asTensor();
  const bool lane = anyLane(idx);
  const std::vector<int64_t>& axes = e->axes();
  const int64_t n = reducedCount(concreteShape(in), axes);
  const DataType acc = accumulatorType(e->output(0)->dtype(), in->dtype());
  const std::string count = "(" + cudaType(acc) + ")" + std::to_string(n);
  bool split = false;
  Value sum = emit(acc, lane, "(" + cudaType(acc) + ")0");
  Index inIdx = openReductionLoops(in, axes, idx, &split);
  Value x = valueAt(in, operandIndex(in, inIdx));
  assign(sum, at(sum) + " + " + cast(x, in->dtype(), acc));
  closeReductionLoops(in, axes);
  if (split) {
    combineAcrossSlotThreads(sum, ReductionOpType::Sum);
  }
  Value mean = emit(acc, lane, at(sum) + " / " + count);
  Value m2 = emit(acc, lane, "(" + cudaType(acc) + ")0");
  inIdx = openReductionLoops(in, axes, idx, &split);
  x = valueAt(in, operandIndex(in, inIdx));
  const std::string d =
      "(" + cast(x, in->dtype(), acc) + " - " + at(mean) + ")";
  assign(m2, at(m2) + " + " + d + " * " + d);
  closeReductionLoops(in, axes);
  if (split) {
    combineAcrossSlotThreads(m2, ReductionOpType::Sum);
  }
  const int64_t correction = e->correction();
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

KernelValueBuilder::GroupAccumulators KernelValueBuilder::startAccumulators(
    const std::vector<const ReductionOp*>& group, const Index& idx,
    bool split) {
  const bool lane = anyLane(idx);
  GroupAccumulators a;
  for (size_t k = 0; k < group.size(); ++k) {
    const ReductionOp* r = group[k];
    const DataType t =
        accumulatorType(r->output(0)->dtype(), r->input(0)->dtype());
    a.types.push_back(t);
    a.into.push_back(k);
    a.chained.push_back(false);
    if (const SumChain* c = chainOf(r)) {
      auto j = std::find(group.begin(), group.begin() + k, c->partner);
      if (j != group.begin() + k) {  // both in this loop: one accumulator
        a.into[k] = static_cast<size_t>(j - group.begin());
        line("// chained sums: " + a.sums[a.into[k]].name + " holds both");
        a.chained[a.into[k]] = true;
        a.sums.push_back(a.sums[a.into[k]]);
        continue;
      }
      if (const Value* p = cached(partialKey(c->partner, idx))) {
        // Chained adds are read by no reduction (findChainedSums): both
        // sums are emitted where no loop is open, so whether the partner's
        // loop was split is whether it would be split here.
        NVF_ASSERT(reductionLoops_ == 0, "a chained sum inside a loop");
        const TensorView* pIn = c->partner->input(0)->asTensor();
        const bool pSplit = splitsOverSlotThreads(pIn, c->partner->axes());
        line("// chained sum: starts from " + p->name + "'s partial sums");
        a.sums.push_back(accumulatorFromPartial(*p, pSplit, split, t, lane));
        a.chained[k] = true;
        continue;
      }
    }
    a.sums.push_back(emit(t, lane, identity(r->op(), t)));
  }
  return a;
}

Value KernelValueBuilder::finishAccumulators(
    const std::vector<const ReductionOp*>& group, const GroupAccumulators& a,
    const Val* v, const Index& idx, bool split) {
  const bool lane = anyLane(idx);
  const int64_t n = reducedCount(concreteShape(group[0]->input(0)->asTensor()),
                                 group[0]->axes());
  Value result;
  for (size_t k = 0; k < group.size(); ++k) {
    const ReductionOp* r = group[k];
    const SumChain* c = chainOf(r);
    if (a.into[k] != k) {
      continue;  // its partner's accumulator holds it
    }
    if (c != nullptr && !a.chained[k]) {  // the partner's loop comes later
      scopes_.back()[partialKey(r, idx)] = a.sums[k];
      continue;
    }
    const DataType acc = a.types[k];
    if (split) {
      combineAcrossSlotThreads(a.sums[k], r->op());
    }
    const std::string count = "(" + cudaType(acc) + ")" + std::to_string(n);
    const std::string value = r->op() == ReductionOpType::Mean
                                  ? at(a.sums[k]) + " / " + count
                                  : at(a.sums[k]);
    // A chain's value is its add's, known at its sums' index (chainedSum
    // reads it there); nothing asks for a chained sum's own value.
    const Val* out = c != nullptr ? c->add->output(0) : r->output(0);
    Value x = emit(out->dtype(), lane, castExpr(acc, out->dtype(), value));
    if (c != nullptr) {
      scopes_.back()[chainKey(c->add, idx)] = x;
    } else if (out == v) {
      result = x;
    } else {  // computed with v: known at idx from here on
      scopes_.back()[valueKey(out, idx)] = x;
    }
  }
  return result;
}

Value KernelValueBuilder::reduceTogether(
    const std::vector<const ReductionOp*>& group, const Val* v,
    const Index& idx) {
  const TensorView* in = group.at(0)->input(0)->asTensor();
  const std::vector<int64_t>& axes = group[0]->axes();
  const bool split = splitsOverSlotThreads(in, axes);
  GroupAccumulators a = startAccumulators(group, idx, split);
  if (group.size() > 1) {
    line("// " + std::to_string(group.size()) + " reductions in one loop");
  }
  const bool slotTop = atSlotTopLevel(group, v, idx);
  bool opened = false;
  Index inIdx = openReductionLoops(in, axes, idx, &opened);
  NVF_ASSERT(opened == split, "a loop split over slot threads unforeseen");
  for (size_t k = 0; k < group.size(); ++k) {
    const TensorView* x = group[k]->input(0)->asTensor();
    Value xv = valueAt(x, operandIndex(x, inIdx));
    assign(a.sums[k], combine(group[k]->op(), at(a.sums[k]),
                              cast(xv, x->dtype(), a.types[k])));
  }
  for (size_t k = 0; k < group.size() && slotTop; ++k) {
    writeLoopOutputs(group[k], inIdx, !split);
  }
  closeReductionLoops(in, axes);
  return finishAccumulators(group, a, v, idx, split);
}

void KernelValueBuilder::combineAcrossSlotThreads(const Value& acc,
                                                  ReductionOpType op) {
  line("#pragma unroll");
  line("for (int o = 1; o < " + std::to_string(slotThreads_) + "; o *= 2) {");
  indent_ += 2;
  assign(acc, combine(op, at(acc),
                      "__shfl_xor_sync(nvf_group, " + at(acc) + ", o)"));
  indent_ -= 2;
  line("}");
}

}  // namespace codegen_detail
}  // namespace nvfuser
