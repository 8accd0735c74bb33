#include "scheduler/interleaved_cat.h"

#include <numeric>
#include <vector>

#include "analysis/tensor_shape.h"
#include "ir/dtype.h"
#include "ir/exprs.h"
#include "scheduler/innermost_branches.h"

namespace nvfuser {

namespace {

// Where the cat position lives in a tensor: (index[dim] / inner) % extent.
struct Digit {
  size_t dim = 0;
  int64_t inner = 1;
  int64_t extent = 1;
};

int64_t product(const std::vector<int64_t>& s, size_t begin) {
  int64_t p = 1;
  for (size_t d = begin; d < s.size(); ++d) {
    p *= s[d];
  }
  return p;
}

// The digit in the row-major element order of `shape`: elements per step.
int64_t linearInner(const Digit& g, const std::vector<int64_t>& shape) {
  return g.inner * product(shape, g.dim + 1);
}

// The same digit after a reshape to `to` (row-major order is kept): the
// dim of `to` that holds it whole, if one does.
std::optional<Digit> reshaped(int64_t linear, int64_t extent,
                              const std::vector<int64_t>& to) {
  for (size_t d = to.size(); d-- > 0;) {
    const int64_t after = product(to, d + 1);
    if (linear % after != 0) {
      return std::nullopt;
    }
    const int64_t inner = linear / after;
    if (inner * extent <= to[d]) {
      if (to[d] % (inner * extent) != 0) {
        return std::nullopt;
      }
      return Digit{d, inner, extent};
    }
  }
  return std::nullopt;
}

// The chain of single-tensor-input exprs from a cat to `out`, cat first;
// empty when `out` is not such a chain's end.
std::vector<const Expr*> chainFromCat(const Val* out) {
  std::vector<const Expr*> chain;
  for (const Val* v = out; v->definition() != nullptr;) {
    const Expr* e = v->definition();
    chain.push_back(e);
    switch (e->type()) {
      case ExprType::Cat:
        return {chain.rbegin(), chain.rend()};
      case ExprType::Unary:
      case ExprType::Permute:
      case ExprType::Reshape:
      case ExprType::LoadStore:
        v = e->input(0);
        break;
      default:
        return {};
    }
    if (!v->isTensor()) {
      return {};
    }
  }
  return {};
}

std::optional<Digit> digitAfter(const std::vector<const Expr*>& chain) {
  const auto* cat = exprAs<CatOp>(chain.front());
  std::vector<int64_t> shape = concreteShape(cat->output(0)->asTensor());
  Digit g{size_t(cat->dim()), 1, shape[size_t(cat->dim())]};
  for (size_t k = 1; k < chain.size(); ++k) {
    const Expr* e = chain[k];
    std::vector<int64_t> to = concreteShape(e->output(0)->asTensor());
    if (e->type() == ExprType::Permute) {
      const std::vector<int64_t>& perm = exprAs<PermuteOp>(e)->perm();
      for (size_t q = 0; q < perm.size(); ++q) {
        if (size_t(perm[q]) == g.dim) {
          g.dim = q;
          break;
        }
      }
    } else if (e->type() == ExprType::Reshape) {
      std::optional<Digit> r = reshaped(linearInner(g, shape), g.extent, to);
      if (!r) {
        return std::nullopt;
      }
      g = *r;
    }
    shape = std::move(to);
  }
  return g;
}

}  // namespace

namespace {
// Output o's interleaved cat digit, if it is such a cat's chain.
std::optional<InterleavedCat> catDigitOf(const Fusion& fusion, size_t o) {
  const Val* out = fusion.outputs()[o];
  if (!out->isTensor()) {
    return std::nullopt;
  }
  std::vector<int64_t> shape = concreteShape(out->asTensor());
  std::vector<const Expr*> chain = chainFromCat(out);
  if (chain.empty() || product(shape, 0) == 0) {  // no slots to order
    return std::nullopt;
  }
  std::optional<Digit> g = digitAfter(chain);
  if (!g || g->extent < 2) {
    return std::nullopt;
  }
  return InterleavedCat{o, linearInner(*g, shape), g->extent};
}
}  // namespace

std::optional<InterleavedCat> slotOrderDigit(const Fusion& fusion, size_t o,
                                             bool innermostBranches,
                                             int64_t minRunBytes) {
  const Val* out = fusion.outputs()[o];
  if (!out->isTensor()) {
    return std::nullopt;
  }
  const int64_t elements = product(concreteShape(out->asTensor()), 0);
  const int64_t bytes = dataTypeSize(out->dtype());
  // The digit of `periods`: the finest unit and the least common span;
  // none when its runs are too short or it does not repeat in the output.
  auto digitOf = [&](const std::vector<BranchPeriod>& periods,
                     bool pads) -> std::optional<InterleavedCat> {
    if (periods.empty()) {
      return std::nullopt;
    }
    int64_t unit = periods.front().unit, span = periods.front().span;
    for (const BranchPeriod& b : periods) {
      unit = std::gcd(unit, b.unit);
      span = std::lcm(span, b.span);
      if (span > elements) {
        return std::nullopt;
      }
    }
    if (unit < 1 || span / unit < 2 || unit * bytes < minRunBytes) {
      return std::nullopt;
    }
    InterleavedCat digit{o, unit, span / unit};
    digit.splitsPads = pads;
    return digit;
  };
  std::vector<BranchPeriod> catPeriods;
  // A cat whose runs are too short still counts (its digit and any with
  // it are then too fine: no order). Dropping it to order by pads alone
  // would change kernels never measured (phi-3.5's HF backward).
  std::optional<InterleavedCat> cat = catDigitOf(fusion, o);
  if (cat) {
    catPeriods.push_back(
        {cat->innerElements, cat->innerElements * cat->extent});
  }
  std::vector<BranchPeriod> all = catPeriods;
  if (innermostBranches && elements > 0) {
    // Pads whose sides change more often than runs of minRunBytes cannot
    // be kept apart (stores would split sectors): the cat's order alone.
    for (const BranchPeriod& b : innermostBranchPeriods(out->asTensor())) {
      if (b.unit * bytes >= minRunBytes) {
        all.push_back(b);
      }
    }
  }
  std::optional<InterleavedCat> catOnly = digitOf(catPeriods, false);
  if (all.size() > catPeriods.size()) {
    std::optional<InterleavedCat> d = digitOf(all, true);
    // Pads that split nothing finer than the cat leave the cat's digit.
    if (d && !(catOnly && catOnly->innerElements == d->innerElements &&
               catOnly->extent == d->extent)) {
      // The digit counts the sides fastest within a cat position when the
      // pads repeat within it (same span, the cat's unit whole sides).
      if (catOnly &&
          catOnly->innerElements * catOnly->extent ==
              d->innerElements * d->extent &&
          catOnly->innerElements % d->innerElements == 0) {
        d->sidesPerCatPosition = catOnly->innerElements / d->innerElements;
      }
      return d;
    }
  }
  return catOnly;
}

std::optional<CatSlotOrder> catSlotOrder(const InterleavedCat& cat,
                                         int64_t slots, int64_t lanes,
                                         int64_t blockThreads) {
  constexpr int64_t kWarp = 32;
  if (lanes <= 0 || cat.innerElements % lanes != 0) {
    return std::nullopt;
  }
  const int64_t runSlots = cat.innerElements / lanes;
  auto orderIn = [&](int64_t unit) -> std::optional<CatSlotOrder> {
    CatSlotOrder o;
    o.runSlots = runSlots;
    if (o.runSlots % unit == 0) {
      return std::nullopt;
    }
    o.runsPerGroup = unit / std::gcd(o.runSlots, unit);
    o.positions = cat.extent;
    o.unitThreads = unit;
    o.orderedSlots = slots / o.groupSlots() * o.groupSlots();
    if (o.orderedSlots == 0) {
      return std::nullopt;
    }
    return o;
  };
  if (cat.blockUniform && blockThreads > kWarp) {
    // A block on one cat position, a warp on each of its pad sides: the
    // sides' runs fill the block evenly and each side whole warps.
    const int64_t sides = cat.sidesPerCatPosition;
    const int64_t sideThreads = blockThreads / sides;
    if (sides > 1 && blockThreads % sides == 0 && sideThreads % kWarp == 0 &&
        sideThreads % runSlots == 0 && cat.extent % sides == 0) {
      if (std::optional<CatSlotOrder> o = orderIn(sideThreads)) {
        o->unitThreads = blockThreads;
        return o;
      }
    }
    if (std::optional<CatSlotOrder> o = orderIn(blockThreads)) {
      return o;
    }
  }
  return orderIn(kWarp);
}

}  // namespace nvfuser
