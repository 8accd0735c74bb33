// Reductions that share one serial loop: a slot's sums over the same
// elements of different inputs (Qwen2.5's RoPE backward sums dq * q and
// dq * rotate_half(q) over the heads for the cos and sin gradients) read
// their common operands once per iteration instead of once per loop.
#include <algorithm>

#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"
#include "ir/producer_walk.h"

namespace nvfuser {
namespace codegen_detail {

namespace {
// Ops whose output element at an index is computed from their operands at
// the same index.
bool sameIndexElementwise(const Expr* e) {
  if (!isElementwise(e) || e->outputs().size() != 1 ||
      !e->output(0)->isTensor()) {
    return false;
  }
  const std::vector<int64_t> shape = concreteShape(e->output(0)->asTensor());
  for (const Val* in : e->inputs()) {
    if (in->isTensor() && concreteShape(in->asTensor()) != shape) {
      return false;
    }
  }
  return true;
}

// No index's key (keys end in a comma): a reduction reached at two.
const char* const kAmbiguousIndex = "?";

bool movesSizeOneDimsOrPermutes(const Expr* e) {
  return e->type() == ExprType::Broadcast || e->type() == ExprType::Squeeze ||
         e->type() == ExprType::Permute;
}
}  // namespace

void KernelValueBuilder::findSameIndexReductions(
    const std::vector<Request>& outputs) {
  sameIndexReductions_.clear();
  std::map<const Expr*, std::string> found;
  std::set<std::pair<const Val*, std::string>> seen;
  std::vector<Request> stack(outputs.rbegin(), outputs.rend());
  while (!stack.empty()) {
    Request r = stack.back();
    stack.pop_back();
    const Expr* e = r.v->definition();
    const std::string key = keyOf(r.idx);
    if (e == nullptr || !seen.insert({r.v, key}).second) {
      continue;
    }
    if (const auto* red = exprAs<ReductionOp>(e)) {
      // Reached at two indices: neither is known to be the one asked.
      auto [it, added] = found.emplace(red, key);
      if (!added && it->second != key) {
        it->second = kAmbiguousIndex;
      }
    } else if (movesSizeOneDimsOrPermutes(e)) {
      // Index maps that emit no code (torch.compile's sums reach their
      // outputs through broadcast, set and squeeze of the summed dim).
      stack.push_back({e->input(0), remappedIndex(e, r.v, r.idx)});
    } else if (sameIndexElementwise(e)) {
      for (const Val* in : e->inputs()) {
        if (in->isTensor()) {
          stack.push_back({in, r.idx});
        }
      }
    }
  }
  for (const Expr* e : fusion_.exprs()) {
    auto it = found.find(e);
    if (it != found.end()) {
      sameIndexReductions_.emplace_back(exprAs<ReductionOp>(e), it->second);
    }
  }
}

std::optional<std::set<const Expr*>> KernelValueBuilder::reductionsUpstream(
    const Val* v) const {
  std::set<const Expr*> reductions;
  size_t visited = 0;
  const bool whole = walkProducers({v}, [&](const Val* x) {
    if (++visited > kMaxSharedLoopWalk) {
      return WalkStep::Stop;
    }
    const Expr* e = x->definition();
    if (e != nullptr &&
        (e->type() == ExprType::Reduction || e->type() == ExprType::VarMean)) {
      reductions.insert(e);
    }
    return WalkStep::Expand;
  });
  if (!whole) {
    return std::nullopt;
  }
  return reductions;
}

std::vector<const ReductionOp*> KernelValueBuilder::sharedLoopGroup(
    const ReductionOp* red, const Index& idx) {
  std::vector<const ReductionOp*> group{red};
  const std::string key = keyOf(idx);
  auto atThisIndex = [&](const ReductionOp* r) {
    for (const auto& [s, k] : sameIndexReductions_) {
      if (s == r) {
        return k == key;
      }
    }
    return false;
  };
  if (!options_.sharedReductionLoops || scopes_.size() != 1 ||
      reductionLoops_ != 0 || !loadPredicate_.empty() || !atThisIndex(red)) {
    return group;
  }
  const TensorView* in = red->input(0)->asTensor();
  const std::vector<int64_t> inShape = concreteShape(in);
  const std::vector<int64_t> outShape =
      concreteShape(red->output(0)->asTensor());
  std::vector<std::set<const Expr*>> upstream;
  if (auto up = reductionsUpstream(in)) {
    upstream.push_back(std::move(*up));
  } else {
    return group;
  }
  for (const auto& [c, k] : sameIndexReductions_) {
    if (group.size() == kMaxSharedLoop) {
      break;
    }
    if (c == red || k != key || c->axes() != red->axes() ||
        concreteShape(c->input(0)->asTensor()) != inShape ||
        concreteShape(c->output(0)->asTensor()) != outShape ||
        reductionEmitted(c, idx)) {
      continue;
    }
    std::optional<std::set<const Expr*>> up = reductionsUpstream(c->input(0));
    bool independent = up.has_value();
    for (size_t m = 0; independent && m < group.size(); ++m) {
      independent = up->count(group[m]) == 0 && upstream[m].count(c) == 0;
    }
    if (independent) {
      group.push_back(c);
      upstream.push_back(std::move(*up));
    }
  }
  return group;
}

}  // namespace codegen_detail
}  // namespace nvfuser
