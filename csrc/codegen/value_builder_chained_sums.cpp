// Chained sums: add(sum(a), sum(b)) at one index keeps one accumulator per
// lane through both loops instead of the first sum's result next to the
// second's accumulator (value_builder.h says when and why).
#include <algorithm>
#include <set>
#include <vector>

#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"
#include "ir/producer_walk.h"

namespace nvfuser {
namespace codegen_detail {

namespace {
// Views a chain sees through: element moves whose index map is fixed by
// their shapes and attributes, so two of them compare (sameView).
bool isChainView(const Expr* e) {
  switch (e->type()) {
    case ExprType::Broadcast:
    case ExprType::Squeeze:
    case ExprType::LoadStore:
    case ExprType::Reshape:
    case ExprType::Permute:
      return true;
    default:
      return false;
  }
}

bool sameView(const Expr* a, const Expr* b) {
  if (a->type() != b->type() ||
      concreteShape(a->input(0)->asTensor()) !=
          concreteShape(b->input(0)->asTensor()) ||
      concreteShape(a->output(0)->asTensor()) !=
          concreteShape(b->output(0)->asTensor())) {
    return false;
  }
  switch (a->type()) {
    case ExprType::Broadcast:
      return exprAs<BroadcastOp>(a)->isBroadcastDim() ==
             exprAs<BroadcastOp>(b)->isBroadcastDim();
    case ExprType::Squeeze:
      return exprAs<SqueezeOp>(a)->isSqueezed() ==
             exprAs<SqueezeOp>(b)->isSqueezed();
    case ExprType::Permute:
      return exprAs<PermuteOp>(a)->perm() == exprAs<PermuteOp>(b)->perm();
    default:  // set, reshape: the shapes fix the map
      return true;
  }
}

// The sum the add's operand v reads through views (each read once, none
// an output, all in the add's type), with those views from v down; null
// when v is not such a sum: a plain sum in its accumulator type, read
// once and not a fusion output.
const ReductionOp* chainableSum(const Fusion& fusion, const Val* v,
                                DataType type,
                                std::vector<const Expr*>* views) {
  while (true) {
    if (v->dtype() != type || v->uses().size() != 1 || fusion.isOutput(v) ||
        v->definition() == nullptr) {
      return nullptr;
    }
    if (!isChainView(v->definition())) {
      break;
    }
    views->push_back(v->definition());
    v = v->definition()->input(0);
  }
  const auto* r = exprAs<ReductionOp>(v->definition());
  if (r == nullptr || r->op() != ReductionOpType::Sum ||
      accumulatorType(v->dtype(), r->input(0)->dtype()) != type) {
    return nullptr;
  }
  return r;
}

// Values some reduction reads, directly or through other ops: a chained
// add among them could be computed inside that reduction's loop, where a
// group of lanes that split the first sum's loop cannot combine its
// partial sums (the lanes run different numbers of iterations).
std::set<const Val*> readByReductions(const Fusion& fusion) {
  std::vector<const Val*> roots;
  for (const Expr* e : fusion.exprs()) {
    if (e->type() == ExprType::Reduction || e->type() == ExprType::VarMean) {
      roots.push_back(e->input(0));
    }
  }
  std::set<const Val*> read;
  walkProducers(roots, [&](const Val* v) {
    read.insert(v);
    return WalkStep::Expand;
  });
  return read;
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
    std::vector<const Expr*> firstViews, secondViews;
    const ReductionOp* first =
        chainableSum(fusion_, e->input(0), t, &firstViews);
    const ReductionOp* second =
        chainableSum(fusion_, e->input(1), t, &secondViews);
    if (first == nullptr || second == nullptr || first == second ||
        firstViews.size() != secondViews.size() ||
        !std::equal(firstViews.begin(), firstViews.end(), secondViews.begin(),
                    sameView)) {
      continue;
    }
    const std::vector<int64_t> shape = concreteShape(e->output(0)->asTensor());
    if (concreteShape(e->input(0)->asTensor()) != shape ||
        concreteShape(e->input(1)->asTensor()) != shape) {
      continue;
    }
    sumChains_[first] = SumChain{e, second, firstViews};
    sumChains_[second] = SumChain{e, first, secondViews};
    chainedAdds_[e] = first;
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
  return c != nullptr && cached(chainKey(c->add, idx)) != nullptr;
}

Value KernelValueBuilder::chainedSum(const Expr* add, const Index& idx) {
  const ReductionOp* first = chainedAdds_.at(add);
  const SumChain* c = chainOf(first);
  // Both sides' views map the add's index alike (findChainedSums).
  Index sumIdx = idx;
  for (const Expr* view : c->views) {
    sumIdx = remappedIndex(view, view->output(0), sumIdx);
  }
  const std::string key = chainKey(add, sumIdx);
  for (const ReductionOp* r : {first, c->partner}) {
    if (cached(key) != nullptr) {
      break;
    }
    if (!reductionEmitted(r, sumIdx)) {
      reduceTogether(sharedLoopGroup(r, sumIdx), r->output(0), sumIdx);
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
