#include "codegen/value_builder.h"

#include <algorithm>

#include "analysis/op_cost.h"
#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "exceptions.h"
#include "ir/producer_walk.h"

namespace nvfuser {
namespace codegen_detail {

KernelValueBuilder::KernelValueBuilder(const Fusion& f, const KernelPlan& plan,
                                       const std::vector<TensorLayout>& layouts,
                                       KernelCodegenOptions options)
    : fusion_(f), plan_(plan), layouts_(layouts), options_(options) {
  const auto& ins = fusion_.inputs();
  if (layouts_.empty()) {
    for (const Val* in : ins) {
      TensorLayout l;
      if (in->isTensor()) {
        l.strides = denseStrides(concreteShape(in->asTensor()));
      }
      layouts_.push_back(l);
    }
  }
  NVF_ASSERT(layouts_.size() == ins.size(), "expected ", ins.size(),
             " input layouts, got ", layouts_.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    inputIndex_[ins[i]] = i;
    if (ins[i]->isTensor()) {
      NVF_ASSERT(layouts_[i].strides.size() ==
                     static_cast<size_t>(ins[i]->asTensor()->nDims()),
                 "layout rank mismatch for ", ins[i]->ref());
    }
  }
}

const Value* KernelValueBuilder::cached(const std::string& key) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(key);
    if (f != it->end()) {
      return &f->second;
    }
  }
  return nullptr;
}

Value KernelValueBuilder::declare(DataType t, bool lane) {
  Value v{"v" + std::to_string(counter_++), lane};
  line(lane ? "nvf_array<" + cudaType(t) + ", " + std::to_string(lanes_) +
                  "> " + v.name + ";"
            : cudaType(t) + " " + v.name + ";");
  return v;
}

Value KernelValueBuilder::emit(DataType t, bool lane, const std::string& expr) {
  if (!lane) {
    Value v{"v" + std::to_string(counter_++), false};
    line(cudaType(t) + " " + v.name + " = " + expr + ";");
    return v;
  }
  Value v = declare(t, true);
  line("#pragma unroll");
  line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " + v.name +
       "[u] = " + expr + ";");
  return v;
}

IndexExpr KernelValueBuilder::emitIndex(const IndexExpr& expr) {
  return expr.isAtom() ? expr : emitNamedIndex(expr.str());
}

IndexExpr KernelValueBuilder::emitNamedIndex(const std::string& text) {
  const std::string key = "#" + text;
  if (const Value* hit = cached(key)) {
    return IndexExpr::named(hit->name);
  }
  std::string name = "j" + std::to_string(counter_++);
  line(indexType_ + " " + name + " = " + text + ";");
  scopes_.back()[key] = Value{name, false};
  return IndexExpr::named(name);
}

IndexExpr KernelValueBuilder::defineIndex(const std::string& name,
                                          const IndexExpr& value) {
  line(indexType_ + " " + name + " = " + value.str() + ";");
  return IndexExpr::named(name);
}

void KernelValueBuilder::requireAligned(int64_t at, const char* what) const {
  if (at % lanes_ != 0) {
    throw NotVectorizable{std::string(what) + " at " + std::to_string(at)};
  }
}

Index KernelValueBuilder::operandIndex(const TensorView* tv,
                                       const Index& idx) const {
  std::vector<int64_t> shape = concreteShape(tv);
  NVF_ASSERT(shape.size() == idx.size(), "rank mismatch for ", tv->ref());
  Index out = idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      out[d] = Ix{IndexExpr(), false};
    }
  }
  return out;
}

// A vector load when the lanes read consecutive, aligned elements; one load
// for all lanes when they read the same element; a gather otherwise.
Value KernelValueBuilder::load(const TensorView* tv, const Index& idx) {
  const std::string& p = paramName_.at(tv);
  if (passedByValue(tv)) {
    return Value{p, false};
  }
  if (std::optional<Value> staged = stagedLoad(tv, idx)) {
    return *staged;
  }
  if (hasTable(idx)) {
    return loadLaneTable(tv, idx);
  }
  const TensorLayout& layout = layouts_.at(inputIndex_.at(tv));
  const Address a = addressOf(idx, layout.strides);
  const IndexExpr& at = a.offset;
  const int64_t laneStride = a.laneStride;
  const bool uniformAligned = a.aligned;
  const std::string offset = at.str();
  const std::string& pred = loadPredicate_;
  if (laneStride == 0) {
    return emit(tv->dtype(), false,
                pred.empty() ? p + "[" + offset + "]"
                             : "nvf_load_if(" + p + " + " + at.factor() + ", " +
                                   pred + ")");
  }
  Value v = declare(tv->dtype(), true);
  if (!pred.empty()) {
    if (laneStride == 1 && uniformAligned && layout.aligned) {
      line("nvf_vload_if(" + v.name + ", " + p + " + " + at.factor() + ", " +
           pred + ");");
    } else {
      line("#pragma unroll");
      line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " +
           v.name + "[u] = nvf_load_if(" + p + " + (" + offset + " + u" +
           (laneStride == 1 ? "" : " * " + std::to_string(laneStride)) + "), " +
           pred + ");");
    }
    return v;
  }
  if (laneStride == 1 && uniformAligned && layout.aligned) {
    // Split sums only (streamed_ is empty otherwise): pointwise kernels
    // that read an element twice (rotate-half RoPE) and row kernels got
    // slower on an H200.
    const bool stream = streamed_.count(tv) > 0;
    line(std::string(stream ? "nvf_vload_stream(" : "nvf_vload(") + v.name +
         ", " + p + " + " + at.factor() + ");");
  } else {
    line("#pragma unroll");
    line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " + v.name +
         "[u] = " + p + "[" + offset + " + u" +
         (laneStride == 1 ? "" : " * " + std::to_string(laneStride)) + "];");
  }
  return v;
}

KernelValueBuilder::Address KernelValueBuilder::addressOf(
    const Index& idx, const std::vector<int64_t>& strides) const {
  Address a;
  for (size_t d = 0; d < idx.size(); ++d) {
    const int64_t s = strides[d];
    if (s == 0) {
      continue;
    }
    a.offset = a.offset + idx[d].e * s;
    if (isTable(idx[d])) {
      a.laneStride = -1;
    } else if (idx[d].lane) {
      a.laneStride += a.laneStride >= 0 ? s : 0;
    } else if (!idx[d].e.isZero()) {
      a.aligned = a.aligned && s % lanes_ == 0;
    }
  }
  return a;
}

Value KernelValueBuilder::scalar(const Val* v) {
  const Scalar* s = v->asScalar();
  if (s->isConst()) {
    return Value{literal(*s->value(), s->dtype()), false};
  }
  auto p = paramName_.find(v);
  if (p != paramName_.end()) {
    return Value{p->second, false};
  }
  return valueAt(v, {});
}

Value KernelValueBuilder::operand(const Val* v, const Index& idx) {
  return v->isTensor() ? valueAt(v, operandIndex(v->asTensor(), idx))
                       : scalar(v);
}

Value KernelValueBuilder::valueAt(const Val* v, const Index& idx) {
  if (!v->isTensor()) {
    if (v->asScalar()->isConst() || paramName_.count(v)) {
      return scalar(v);
    }
  }
  if (const Value* hit = cached(valueKey(v, idx))) {
    return *hit;
  }
  if (!(v->isTensor() && paramName_.count(v)) && v->definition() != nullptr) {
    computeOperandsFirst(v, idx);
  }
  return computeAndCache(v, idx);
}

Value KernelValueBuilder::computeAndCache(const Val* v, const Index& idx) {
  Value var;
  if (v->isTensor() && paramName_.count(v)) {
    var = load(v->asTensor(), operandIndex(v->asTensor(), idx));
  } else {
    NVF_ASSERT(v->definition() != nullptr, "no definition for ", v->ref());
    var = compute(v->definition(), v, idx);
  }
  scopes_.back()[valueKey(v, idx)] = var;
  return var;
}

void KernelValueBuilder::assign(const Value& var, const std::string& rhs) {
  if (!var.lane) {
    line(var.name + " = " + rhs + ";");
    return;
  }
  line("#pragma unroll");
  line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " + var.name +
       "[u] = " + rhs + ";");
}

// A value computed inside a branch: its own cache scope, so nothing computed
// under the branch's condition is reused outside it.
Value KernelValueBuilder::branchValue(const Val* v, const Index& idx) {
  scopes_.emplace_back();
  Value x = valueAt(v, idx);
  scopes_.pop_back();
  return x;
}

Value KernelValueBuilder::predicatedValue(const Val* v, const Index& idx,
                                          const std::string& cond) {
  // Restored on every exit: a NotVectorizable thrown inside ends a lane
  // proof, and the generator must not keep this condition.
  struct Restore {
    std::string& predicate;
    const std::string outer;
    ~Restore() { predicate = outer; }
  } restore{loadPredicate_, loadPredicate_};
  loadPredicate_ = restore.outer.empty() ? cond : restore.outer + " && " + cond;
  return branchValue(v, idx);
}

bool KernelValueBuilder::computedWithoutBranch(const Val* v) const {
  if ((reductionLoops_ == 0 && !options_.predicatedLoadsEverywhere) ||
      !options_.predicatedLoads) {
    return false;
  }
  // Ops that only move elements are free; every other op counts.
  int64_t ops = 0;
  size_t visited = 0;
  const bool bounded = !options_.predicatedLoadsUnbounded;
  return walkProducers({v}, [&](const Val* x) {
    const Expr* e = x->definition();
    if (e == nullptr || paramName_.count(x)) {
      return WalkStep::Skip;
    }
    if (!isCheapToRecompute(e) || (bounded && ++visited > kMaxPredicatedWalk) ||
        (bounded && !movesElementsOnly(e) && ++ops > kMaxPredicatedOps)) {
      return WalkStep::Stop;
    }
    return WalkStep::Expand;
  });
}

// Row-major linear index of dims [begin, end) of shape at idx. A lane term
// stays a lane term only with stride 1 and every other stride a multiple
// of the vector width.
Ix KernelValueBuilder::linearize(const std::vector<int64_t>& shape,
                                 const Index& idx, size_t begin, size_t end) {
  if (std::any_of(idx.begin() + begin, idx.begin() + end, isTable)) {
    return linearizeLaneTables(shape, idx, begin, end);
  }
  IndexExpr linear;
  int64_t stride = 1;
  bool lane = false;
  bool aligned = true;
  for (size_t d = end; d-- > begin;) {
    if (shape[d] != 1 && (!idx[d].e.isZero() || idx[d].lane)) {
      if (idx[d].lane && stride != 1) {
        throw NotVectorizable{"a vector lane is not innermost in a reshape"};
      }
      lane = lane || idx[d].lane;
      aligned = aligned && (idx[d].lane || stride % lanes_ == 0);
      linear = idx[d].e * stride + linear;
    }
    stride *= shape[d];
  }
  if (lane && !aligned) {
    throw NotVectorizable{"reshape strides are not multiples of the width"};
  }
  return Ix{linear, lane};
}

// Output and input dims are matched in groups of equal products: a split
// (one input dim) needs no division, a merge (one output dim) one division
// per input dim, and only many-to-many groups linearize and delinearize.
Index KernelValueBuilder::reshapeIndex(const std::vector<int64_t>& outShape,
                                       const std::vector<int64_t>& inShape,
                                       const Index& idx) {
  Index in(inShape.size(), Ix{IndexExpr(), false});
  size_t o = 0;
  size_t i = 0;
  for (int64_t s : outShape) {
    if (s == 0) {
      return in;  // the kernel never runs
    }
  }
  while (o < outShape.size() || i < inShape.size()) {
    size_t o0 = o;
    size_t i0 = i;
    int64_t po = 1;
    int64_t pi = 1;
    // Grow the group until both sides cover the same number of elements.
    do {
      if (o < outShape.size() && (po <= pi || i == inShape.size())) {
        po *= outShape[o++];
      } else {
        pi *= inShape[i++];
      }
    } while ((po != pi || o == o0 || i == i0) &&
             (o < outShape.size() || i < inShape.size()));
    while (o < outShape.size() && outShape[o] == 1 && i == inShape.size()) {
      ++o;
    }
    while (i < inShape.size() && inShape[i] == 1 && o == outShape.size()) {
      ++i;
    }
    Ix linear = linearize(outShape, idx, o0, o);
    if (i - i0 == 1) {
      in[i0] = inShape[i0] == 1 ? Ix{IndexExpr(), false} : linear;
      continue;
    }
    const IndexExpr l = emitIndex(linear.e);
    int64_t stride = 1;
    for (size_t d = i; d-- > i0;) {
      if (inShape[d] != 1) {
        bool outermost = d == i0;
        bool lane = false;
        // Lanes the plain rule cannot keep consecutive: a table or a
        // uniform term, or NotVectorizable (splitLaneTerm).
        const bool splitsLanes =
            linear.lane &&
            (isTable(linear) ||
             (stride == 1 && !outermost && inShape[d] % lanes_ != 0) ||
             (stride != 1 && stride % lanes_ != 0));
        if (splitsLanes) {
          in[d] = splitLaneTerm(linear, l, stride, inShape[d], outermost);
          stride *= inShape[d];
          continue;
        }
        if (linear.lane && stride == 1) {
          lane = true;
        }
        const IndexExpr q = l / stride;
        in[d] = Ix{emitIndex(outermost ? q : q % inShape[d]), lane};
      }
      stride *= inShape[d];
    }
  }
  return in;
}

}  // namespace codegen_detail
}  // namespace nvfuser
