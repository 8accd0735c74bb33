#include "scheduler/transpose_plan.h"

#include <algorithm>
#include <map>

#include "analysis/dim_maps.h"
#include "analysis/tensor_shape.h"
#include "ir/exprs.h"

namespace nvfuser {

namespace {

using Labels = std::vector<int64_t>;  // per dim: the output dim, or -1

// Each operand's labels from its consumer's, or false for an op that is
// not a plain index map (reshape, slice, pad, cat, reductions...).
bool operandLabels(const Expr* e, const Labels& out,
                   std::vector<std::pair<const Val*, Labels>>* operands) {
  auto sized = [](const TensorView* t, Labels l) {
    const std::vector<int64_t> shape = concreteShape(t);
    for (size_t d = 0; d < l.size(); ++d) {
      l[d] = shape[d] == 1 ? -1 : l[d];
    }
    return l;
  };
  if (isElementwise(e) || e->type() == ExprType::Expand) {
    for (const Val* in : e->inputs()) {
      if (in->isTensor()) {
        if (in->asTensor()->nDims() != static_cast<int64_t>(out.size())) {
          return false;
        }
        operands->emplace_back(in, sized(in->asTensor(), out));
      }
    }
    return true;
  }
  if (movesDimsOnly(e)) {
    operands->emplace_back(e->input(0), operandDims(e, out, int64_t{-1}));
    return true;
  }
  switch (e->type()) {
    case ExprType::Full:
    case ExprType::Iota:
    case ExprType::Rng:
      return true;  // computed from the element's index
    default:
      return false;
  }
}

// Labels of every value the outputs read, or false when some value is not
// an index map of the outputs' or is reached with two different ones.
bool labelValues(const Fusion& segment, std::map<const Val*, Labels>* labels) {
  const std::vector<int64_t> shape =
      concreteShape(segment.outputs().at(0)->asTensor());
  for (const Val* o : segment.outputs()) {
    if (!o->isTensor() || concreteShape(o->asTensor()) != shape) {
      return false;
    }
    Labels l(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      l[d] = shape[d] == 1 ? -1 : static_cast<int64_t>(d);
    }
    (*labels)[o] = l;
  }
  const std::vector<Expr*>& exprs = segment.exprs();
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* e = *it;
    if (e->outputs().size() != 1) {
      return false;
    }
    auto found = labels->find(e->output(0));
    if (found == labels->end()) {
      continue;  // not read by an output
    }
    std::vector<std::pair<const Val*, Labels>> operands;
    if (!operandLabels(e, found->second, &operands)) {
      return false;
    }
    for (auto& [v, l] : operands) {
      auto [at, inserted] = labels->emplace(v, l);
      if (!inserted && at->second != l) {
        return false;
      }
    }
  }
  return true;
}

// The dim whose stride is 1 (extent > 1), or -1.
int64_t contiguousDim(const TensorView* tv,
                      const std::vector<int64_t>& strides) {
  const std::vector<int64_t> shape = concreteShape(tv);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1 && strides[d] == 1) {
      return static_cast<int64_t>(d);
    }
  }
  return -1;
}

}  // namespace

std::optional<TransposePlan> planTranspose(
    const Fusion& segment,
    const std::vector<std::vector<int64_t>>& inputStrides, int64_t minExtent) {
  if (segment.outputs().empty() || !segment.outputs()[0]->isTensor()) {
    return std::nullopt;
  }
  const std::vector<int64_t> shape =
      concreteShape(segment.outputs()[0]->asTensor());
  TransposePlan plan;
  plan.rank = static_cast<int64_t>(shape.size());
  plan.outInner = plan.rank - 1;
  while (plan.outInner >= 0 && shape[size_t(plan.outInner)] == 1) {
    --plan.outInner;
  }
  std::map<const Val*, Labels> labels;
  if (plan.outInner < 0 || shape[size_t(plan.outInner)] < minExtent ||
      !labelValues(segment, &labels)) {
    return std::nullopt;
  }
  plan.outAcross = -1;
  for (size_t i = 0; i < segment.inputs().size(); ++i) {
    const Val* in = segment.inputs()[i];
    auto l = labels.find(in);
    if (!in->isTensor() || l == labels.end()) {
      continue;
    }
    const int64_t c = contiguousDim(
        in->asTensor(), givenOrDenseStrides(in->asTensor(), inputStrides, i));
    const Labels& dims = l->second;
    if (c < 0 || dims[size_t(c)] < 0 || dims[size_t(c)] == plan.outInner ||
        std::find(dims.begin(), dims.end(), plan.outInner) == dims.end() ||
        shape[size_t(dims[size_t(c)])] < minExtent ||
        (plan.outAcross >= 0 && dims[size_t(c)] != plan.outAcross) ||
        plan.staged.size() == TransposePlan::kMaxStaged) {
      continue;
    }
    plan.outAcross = dims[size_t(c)];
    plan.staged.push_back(i);
    plan.stagedDims.push_back(dims);
  }
  if (plan.staged.empty()) {
    return std::nullopt;
  }
  return plan;
}

}  // namespace nvfuser
