// Chained sums: add(sum(a), sum(b)) at one index keeps one accumulator per
// lane through both loops instead of the first sum's result next to the
// second's accumulator (value_builder.h says when and why).
#include <algorithm>
#include <set>
#include <vector>

#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"

namespace nvfuser {
namespace codegen_detail {

namespace {
// The sum that defines v, when v is its only output value worth chaining:
// a plain sum in its accumulator type, read once (by the add) and not a
// fusion output.
const ReductionOp* chainableSum(const Fusion& fusion, const Val* v,
                                DataType type) {
  const auto* r = exprAs<ReductionOp>(v->definition());
  if (r == nullptr || r->op() != ReductionOpType::Sum || v->dtype() != type ||
      accumulatorType(v->dtype(), r->input(0)->dtype()) != type ||
      v->uses().size() != 1) {
    return nullptr;
  }
  const auto& outs = fusion.outputs();
  if (std::find(outs.begin(), outs.end(), v) != outs.end()) {
    return nullptr;
  }
  return r;
}

// Values some reduction reads, directly or through other ops: a chained
// add among them could be computed inside that reduction's loop, where a
// group of lanes that split the first sum's loop cannot combine its
// partial sums (the lanes run different numbers of iterations).
std::set<const Val*> readByReductions(const Fusion& fusion) {
  std::set<const Val*> seen;
  std::vector<const Val*> stack;
  for (const Expr* e : fusion.exprs()) {
    if (e->type() == ExprType::Reduction || e->type() == ExprType::VarMean) {
      stack.push_back(e->input(0));
    }
  }
  while (!stack.empty()) {
    const Val* v = stack.back();
    stack.pop_back();
    if (!seen.insert(v).second || v->definition() == nullptr) {
      continue;
    }
    for (const Val* in : v->definition()->inputs()) {
      stack.push_back(in);
    }
  }
  return seen;
}
}  // namespace

void KernelValueBuilder::findChainedSums() {
  // The fusion's, not a family's: found once per kernel.
  if (chainsFound_ || !options_.chainedSums) {
    return;
  }
  chainsFound_ = true;
  const std::set<const Val*> nested = readByReductions(fusion_);
  for (const Expr* e : fusion_.exprs()) {
    const auto* b = exprAs<BinaryOp>(e);
    if (b == nullptr || b->op() != BinaryOpType::Add ||
        !e->output(0)->isTensor() || nested.count(e->output(0)) > 0) {
      continue;
    }
    // The sums' checks make t an accumulator type: float, double, int or
    // int32.
    const DataType t = e->output(0)->dtype();
    if (b->computeType() != t || e->input(0) == e->input(1)) {
      continue;
    }
    const ReductionOp* first = chainableSum(fusion_, e->input(0), t);
    const ReductionOp* second = chainableSum(fusion_, e->input(1), t);
    if (first == nullptr || second == nullptr) {
      continue;
    }
    const std::vector<int64_t> shape = concreteShape(e->output(0)->asTensor());
    if (concreteShape(e->input(0)->asTensor()) != shape ||
        concreteShape(e->input(1)->asTensor()) != shape) {
      continue;
    }
    sumChains_[first] = SumChain{e, second};
    sumChains_[second] = SumChain{e, first};
    chainedAdds_.insert(e);
  }
}

const KernelValueBuilder::SumChain* KernelValueBuilder::chainOf(
    const ReductionOp* r) const {
  auto it = sumChains_.find(r);
  return it == sumChains_.end() ? nullptr : &it->second;
}

bool KernelValueBuilder::reductionEmitted(const ReductionOp* r,
                                          const Index& idx) const {
  if (cached(valueKey(r->output(0), idx)) != nullptr ||
      cached(partialKey(r, idx)) != nullptr) {
    return true;
  }
  const SumChain* c = chainOf(r);
  return c != nullptr && cached(valueKey(c->add->output(0), idx)) != nullptr;
}

Value KernelValueBuilder::chainedSum(const Expr* add, const Index& idx) {
  const std::string key = valueKey(add->output(0), idx);
  for (const Val* in : add->inputs()) {
    if (cached(key) != nullptr) {
      break;
    }
    const auto* r = exprAs<ReductionOp>(in->definition());
    if (!reductionEmitted(r, idx)) {
      reduceTogether(sharedLoopGroup(r, idx), in, idx);
    }
  }
  const Value* v = cached(key);
  NVF_ASSERT(v != nullptr, "the chained sums of ", exprRef(add),
             " left no value");
  return *v;
}

Value KernelValueBuilder::accumulatorFromPartial(const Value& p, bool pSplit,
                                                 bool split, DataType acc,
                                                 bool lane) {
  if (pSplit == split) {  // the same lanes add to it: each its own share
    return emit(acc, lane, at(p));
  }
  if (pSplit) {  // the group's lanes each run the whole second loop
    Value sum = emit(acc, lane, at(p));
    combineAcrossSlotThreads(sum, ReductionOpType::Sum);
    return sum;
  }
  // Each lane holds the whole first sum and a share of the second: the
  // group's first lane carries the first.
  return emit(
      acc, lane,
      "nvf_k == 0 ? " + at(p) + " : " + identity(ReductionOpType::Sum, acc));
}

bool KernelValueBuilder::splitsOverSlotThreads(
    const TensorView* in, const std::vector<int64_t>& axes) const {
  if (slotThreads_ <= 1 || reductionLoops_ != 0) {
    return false;
  }
  const std::vector<int64_t> shape = concreteShape(in);
  return std::any_of(axes.begin(), axes.end(),
                     [&](int64_t a) { return shape[a] > 1; });
}

}  // namespace codegen_detail
}  // namespace nvfuser
