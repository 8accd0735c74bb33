// The operands a value's expr reads before it emits its own code, and the
// iterative walk that computes them first: valueAt() recurses one level per
// expr otherwise, and a chain of a few thousand elementwise ops overflowed
// the stack (DeepChainTest).
#include <algorithm>
#include <set>

#include "analysis/dim_maps.h"
#include "analysis/op_cost.h"
#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

bool KernelValueBuilder::isRemap(const Expr* e) {
  if (movesElementsOnly(e)) {
    return true;
  }
  switch (e->type()) {
    case ExprType::Pad: {  // zero widths everywhere: a plain copy
      const auto& widths = exprAs<PadOp>(e)->widths();
      return std::all_of(widths.begin(), widths.end(), [](const auto& w) {
        return w.first == 0 && w.second == 0;
      });
    }
    default:
      return false;
  }
}

Index KernelValueBuilder::remappedIndex(const Expr* e, const Val* v,
                                        const Index& idx) {
  const TensorView* in = e->input(0)->asTensor();
  switch (e->type()) {
    case ExprType::Broadcast:
    case ExprType::Permute:
    case ExprType::Squeeze:
      return operandDims(e, idx, Ix{IndexExpr(), false});
    case ExprType::Reshape:
      return reshapeIndex(concreteShape(v->asTensor()), concreteShape(in), idx);
    case ExprType::Slice:
      return operandIndex(in, slicedIndex(exprAs<SliceOp>(e), idx));
    default:  // Expand, LoadStore, a pad of zero widths
      return operandIndex(in, idx);
  }
}

Index KernelValueBuilder::slicedIndex(const SliceOp* s,
                                      const Index& idx) const {
  const auto& ranges = s->ranges();
  Index in;
  for (size_t d = 0; d < ranges.size(); ++d) {
    Ix i = idx[d];
    if (isLaneConstants(i)) {
      in.push_back(shiftedLaneConstants(i, ranges[d].step, ranges[d].start));
      continue;
    }
    if (i.lane && ranges[d].step != 1) {
      throw NotVectorizable{"a strided slice of a vector lane"};
    }
    if (i.lane) {
      requireAligned(i, ranges[d].start, "a slice start");
    }
    i.e = i.e * ranges[d].step + ranges[d].start;
    in.push_back(i);
  }
  return in;
}

std::vector<KernelValueBuilder::Request> KernelValueBuilder::eagerOperands(
    const Expr* e, const Val* v, const Index& idx) {
  std::vector<Request> reads;
  if (isRemap(e)) {
    reads.push_back({e->input(0), remappedIndex(e, v, idx)});
    return reads;
  }
  if (const auto* c = exprAs<CatOp>(e)) {
    Request part = soleCatPart(c, idx);
    if (part.v != nullptr) {
      reads.push_back(std::move(part));
    }
    return reads;
  }
  if (const auto* g = exprAs<GatherOp>(e)) {
    // The index is read unconditionally, the lookup inside a branch.
    reads.push_back({g->index(), gatherIndexAt(g, idx)});
    return reads;
  }
  if ((e->type() != ExprType::Unary && e->type() != ExprType::Binary &&
       e->type() != ExprType::Ternary) ||
      isChainedAdd(e)) {
    return reads;  // read inside branches or loops: computed there
  }
  std::vector<UnaryOpType> signOps;
  if (e->type() == ExprType::Unary &&
      exprAs<UnaryOp>(e)->op() == UnaryOpType::Cast) {
    if (const Val* source =
            unroundedNarrowSource(e->input(0), v->dtype(), &signOps)) {
      reads.push_back({source, source->isTensor()
                                   ? operandIndex(source->asTensor(), idx)
                                   : Index{}});
      return reads;  // the sign ops on it, not the widened value
    }
    if (castPadSum(e->input(0))) {
      return reads;  // a select of the pads' inputs, read in its branches
    }
  }
  if (const auto* b = exprAs<BinaryOp>(e)) {
    if (const Val* kept = zeroAddOperand(b)) {
      reads.push_back({kept, kept->isTensor()
                                 ? operandIndex(kept->asTensor(), idx)
                                 : Index{}});
      return reads;  // the zero is not read
    }
    if (disjointPadSum(b, /*narrowed=*/false)) {
      return reads;
    }
  }
  for (const Val* in : e->inputs()) {
    reads.push_back(
        {in, in->isTensor() ? operandIndex(in->asTensor(), idx) : Index{}});
  }
  return reads;
}

KernelValueBuilder::Request KernelValueBuilder::soleCatPart(
    const CatOp* c, const Index& idx) const {
  const int64_t dim = c->dim();
  Request sole{nullptr, {}};
  int64_t offset = 0;
  for (const Val* part : c->inputs()) {
    const int64_t extent = concreteShape(part->asTensor())[dim];
    if (extent > 0) {
      if (sole.v != nullptr) {
        return {nullptr, {}};
      }
      sole = {part,
              operandIndex(part->asTensor(), catPartIndex(idx, dim, offset))};
    }
    offset += extent;
  }
  return sole;
}

bool KernelValueBuilder::isReady(const Val* v, const Index& idx) const {
  if (!v->isTensor() && v->asScalar()->isConst()) {
    return true;
  }
  return paramName_.count(v) > 0 || v->definition() == nullptr ||
         cached(valueKey(v, idx)) != nullptr;
}

void KernelValueBuilder::loadEagerInputsFirst(
    const std::vector<Request>& roots) {
  const bool atTopLevel = scopes_.size() == 1;
  if (!options_.earlyLoads || (atTopLevel && !options_.earlyLoadsEverywhere)) {
    return;
  }
  loadEagerInputs(roots);
}

void KernelValueBuilder::loadEagerInputs(const std::vector<Request>& roots) {
  std::set<std::string> seen;
  std::vector<Request> stack(roots.rbegin(), roots.rend());
  int64_t loads = 0;
  while (!stack.empty() && loads < kMaxEarlyLoads) {
    Request r = std::move(stack.back());
    stack.pop_back();
    if (!r.v->isTensor()) {
      continue;
    }
    const std::string key = valueKey(r.v, r.idx);
    if (!seen.insert(key).second || cached(key) != nullptr) {
      continue;
    }
    if (paramName_.count(r.v)) {  // an input: its load, cached
      computeAndCache(r.v, r.idx);
      ++loads;
    } else if (r.v->definition() != nullptr) {
      std::vector<Request> reads = eagerOperands(r.v->definition(), r.v, r.idx);
      stack.insert(stack.end(), reads.rbegin(), reads.rend());
    }
  }
}

void KernelValueBuilder::computeOperandsFirst(const Val* v, const Index& idx) {
  loadEagerInputsFirst({{v, idx}});
  struct Frame {
    Request at;
    std::vector<Request> reads;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  stack.push_back({{v, idx}, eagerOperands(v->definition(), v, idx)});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next < top.reads.size()) {
      Request r = top.reads[top.next++];
      if (!isReady(r.v, r.idx)) {
        std::vector<Request> reads =
            eagerOperands(r.v->definition(), r.v, r.idx);
        stack.push_back({std::move(r), std::move(reads)});
      }
      continue;
    }
    Request done = std::move(top.at);
    stack.pop_back();
    if (!stack.empty()) {  // every operand is cached: one level deep
      computeAndCache(done.v, done.idx);
    }
  }
}

}  // namespace codegen_detail
}  // namespace nvfuser
