#include "analysis/element_map.h"

#include <unordered_set>
#include <utility>

#include "analysis/dim_maps.h"
#include "analysis/tensor_shape.h"
#include "ir/exprs.h"

namespace nvfuser {

namespace {

using Coords = std::vector<int64_t>;
using Step = std::pair<const Val*, Coords>;

// Row-major position of `c` in `shape`, and back.
int64_t linearize(const Coords& c, const std::vector<int64_t>& shape) {
  int64_t at = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    at = at * shape[d] + c[d];
  }
  return at;
}

Coords delinearize(int64_t at, const std::vector<int64_t>& shape) {
  Coords c(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = shape[d] == 0 ? 0 : at % shape[d];
    at = shape[d] == 0 ? at : at / shape[d];
  }
  return c;
}

// An operand of an elementwise op read at the consumer's coordinates: its
// size-1 dims (implicit broadcasts) at 0.
Coords broadcastTo(const TensorView* operand, Coords c) {
  const std::vector<int64_t> shape = concreteShape(operand);
  for (size_t d = 0; d < shape.size() && d < c.size(); ++d) {
    c[d] = shape[d] == 1 ? 0 : c[d];
  }
  c.resize(shape.size(), 0);
  return c;
}

// The operand of an expand, reshape, slice or pad at the consumer's
// coordinates `c`, or the part of a cat that holds them.
bool indexMapOperands(const Expr* e, const Coords& c, std::vector<Step>* out) {
  const TensorView* in = e->input(0)->asTensor();
  switch (e->type()) {
    case ExprType::Expand:
      out->emplace_back(in, broadcastTo(in, c));
      return true;
    case ExprType::Reshape:
      out->emplace_back(in, delinearize(linearize(c, concreteShape(e->out())),
                                        concreteShape(in)));
      return true;
    case ExprType::Slice: {
      Coords at = c;
      const auto& ranges = exprAs<SliceOp>(e)->ranges();
      for (size_t d = 0; d < ranges.size() && d < at.size(); ++d) {
        at[d] = ranges[d].start + at[d] * ranges[d].step;
      }
      out->emplace_back(in, at);
      return true;
    }
    case ExprType::Pad: {
      Coords at = c;
      const auto& widths = exprAs<PadOp>(e)->widths();
      const std::vector<int64_t> shape = concreteShape(in);
      for (size_t d = 0; d < widths.size() && d < at.size(); ++d) {
        at[d] -= widths[d].first;
        if (at[d] < 0 || at[d] >= shape[d]) {
          return true;  // the fill
        }
      }
      out->emplace_back(in, at);
      return true;
    }
    case ExprType::Cat: {
      const int64_t dim = exprAs<CatOp>(e)->dim();
      int64_t at = c.at(size_t(dim));
      for (const Val* part : e->inputs()) {
        const int64_t extent = concreteShape(part->asTensor()).at(size_t(dim));
        if (at < extent) {
          Coords p = c;
          p[size_t(dim)] = at;
          out->emplace_back(part, p);
          return true;
        }
        at -= extent;
      }
      return true;
    }
    default:
      return false;
  }
}

// The tensor operands `e` reads for its output element at `c`, each with
// its coordinates (a pad's fill and a cat's other parts read nothing);
// false for an op that is not an index map.
bool operandsAt(const Expr* e, const Coords& c, std::vector<Step>* out) {
  if (isElementwise(e)) {
    for (const Val* in : e->inputs()) {
      if (in->isTensor()) {
        out->emplace_back(in, broadcastTo(in->asTensor(), c));
      }
    }
    return true;
  }
  if (movesDimsOnly(e)) {
    out->emplace_back(e->input(0), operandDims(e, c, int64_t{0}));
    return true;
  }
  switch (e->type()) {
    case ExprType::Full:
    case ExprType::Iota:
    case ExprType::Rng:
      return true;  // computed from the index: no operand
    case ExprType::Expand:
    case ExprType::Reshape:
    case ExprType::Slice:
    case ExprType::Pad:
    case ExprType::Cat:
      return indexMapOperands(e, c, out);
    default:
      return false;
  }
}

}  // namespace

std::optional<std::vector<int64_t>> inputCoordinates(
    const Val* value, const std::vector<int64_t>& coords, const Val* input) {
  std::vector<Step> stack{{value, coords}};
  std::unordered_set<const Val*> walked;
  while (!stack.empty()) {
    Step step = std::move(stack.back());
    stack.pop_back();
    if (step.first == input) {
      return step.second;
    }
    const Expr* def = step.first->definition();
    if (def == nullptr || !walked.insert(step.first).second) {
      continue;
    }
    std::vector<Step> operands;
    if (!operandsAt(def, step.second, &operands)) {
      continue;
    }
    // The first operand is walked first.
    for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
      stack.push_back(std::move(*it));
    }
  }
  return std::nullopt;
}

}  // namespace nvfuser
