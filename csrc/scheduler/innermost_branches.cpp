#include "scheduler/innermost_branches.h"

#include <numeric>
#include <set>
#include <tuple>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"

namespace nvfuser {

namespace {

// A tensor reached by the walk: its innermost coordinate x satisfies
// x + off = i % n over the output elements i that read it (the walk only
// follows the innermost dim, so it is always the output's lowest digit).
struct Reached {
  const Val* v;
  int64_t n;
  int64_t off;
  bool operator<(const Reached& o) const {
    return std::tie(v, n, off) < std::tie(o.v, o.n, o.off);
  }
};

// Bounds the walk: a fusion of many ops still costs linear time.
constexpr size_t kMaxReached = 4096;

// Whether the last flag is set; true (stop the walk) when there is none.
bool lastIs(const std::vector<bool>& flags) {
  return flags.empty() || flags.back();
}

int64_t innermost(const Val* v) {
  std::vector<int64_t> shape = concreteShape(v->asTensor());
  return shape.empty() ? 1 : shape.back();
}

class BranchWalk {
 public:
  explicit BranchWalk(const TensorView* out) {
    const int64_t n = innermost(out);
    if (n > 1) {
      push(Reached{out, n, 0});
    }
    while (!stack_.empty() && seen_.size() < kMaxReached) {
      Reached r = stack_.back();
      stack_.pop_back();
      if (r.v->definition() != nullptr) {
        visit(r.v->definition(), r);
      }
    }
  }
  std::vector<BranchPeriod> periods;

 private:
  void push(const Reached& r) {
    if (r.v->isTensor() && seen_.insert(r).second) {
      stack_.push_back(r);
    }
  }
  // The same innermost coordinate, shifted by `shift` more.
  void same(const Val* u, const Reached& r, int64_t shift = 0) {
    push(Reached{u, r.n, r.off + shift});
  }
  // A branch whose conditions compare x with `bounds` (x + off = y).
  void branch(const Reached& r, const std::vector<int64_t>& bounds) {
    int64_t g = r.n;
    for (int64_t b : bounds) {
      g = std::gcd(g, b + r.off < 0 ? -(b + r.off) : b + r.off);
    }
    periods.push_back(BranchPeriod{g, r.n});
  }
  void visit(const Expr* e, const Reached& r);
  void visitReshape(const Expr* e, const Reached& r);
  void visitPad(const PadOp* p, const Reached& r);
  void visitCat(const CatOp* c, const Reached& r);

  std::vector<Reached> stack_;
  std::set<Reached> seen_;
};

void BranchWalk::visit(const Expr* e, const Reached& r) {
  const int64_t nT = innermost(r.v);
  switch (e->type()) {
    case ExprType::Unary:
    case ExprType::Binary:
    case ExprType::Ternary:
    case ExprType::LoadStore:
      for (const Val* u : e->inputs()) {
        if (u->isTensor() && innermost(u) == nT &&
            u->asTensor()->nDims() == r.v->asTensor()->nDims()) {
          same(u, r);
        }
      }
      return;
    case ExprType::Broadcast:
      if (!lastIs(exprAs<BroadcastOp>(e)->isBroadcastDim())) {
        same(e->input(0), r);
      }
      return;
    case ExprType::Squeeze:
      if (!lastIs(exprAs<SqueezeOp>(e)->isSqueezed())) {
        same(e->input(0), r);
      }
      return;
    case ExprType::Expand:
      if (innermost(e->input(0)) == nT) {
        same(e->input(0), r);
      }
      return;
    case ExprType::Permute: {
      const std::vector<int64_t>& perm = exprAs<PermuteOp>(e)->perm();
      if (!perm.empty() && perm.back() == int64_t(perm.size()) - 1) {
        same(e->input(0), r);
      }
      return;
    }
    case ExprType::Reshape:
      visitReshape(e, r);
      return;
    case ExprType::Slice: {
      const std::vector<SliceRange>& ranges = exprAs<SliceOp>(e)->ranges();
      if (!ranges.empty() && ranges.back().step == 1) {
        same(e->input(0), r, -ranges.back().start);
      }
      return;
    }
    case ExprType::Pad:
      visitPad(exprAs<PadOp>(e), r);
      return;
    case ExprType::Cat:
      visitCat(exprAs<CatOp>(e), r);
      return;
    default:  // reductions, gathers, sources: nothing read per element
      return;
  }
}

void BranchWalk::visitReshape(const Expr* e, const Reached& r) {
  const Val* u = e->input(0);
  const int64_t nT = innermost(r.v);
  const int64_t nIn = innermost(u);
  if (nIn == nT) {
    same(u, r);
  } else if (nIn > 1 && nT % nIn == 0 && r.n % nIn == 0 && r.off % nIn == 0) {
    // The input's innermost dim is the low digit of ours.
    push(Reached{u, nIn, 0});
  }
}

void BranchWalk::visitPad(const PadOp* p, const Reached& r) {
  if (p->widths().empty()) {
    return;
  }
  const auto& [before, after] = p->widths().back();
  const Val* u = p->input(0);
  if (before != 0 || after != 0) {
    branch(r, {before, before + innermost(u)});
  }
  same(u, r, before);
}

void BranchWalk::visitCat(const CatOp* c, const Reached& r) {
  const size_t rank = c->output(0)->asTensor()->nDims();
  if (size_t(c->dim()) + 1 != rank) {  // another dim: parts alike here
    for (const Val* u : c->inputs()) {
      same(u, r);
    }
    return;
  }
  // Its parts are followed, but the cat itself is not a branch to order
  // by: a forward's rotate-half (cat(-x2, x1)) measured 2-7% slower with
  // warps on one half (benchmarks/results/*session14*, call 5).
  int64_t offset = 0;
  for (const Val* u : c->inputs()) {
    same(u, r, offset);
    offset += innermost(u);
  }
}

}  // namespace

std::vector<BranchPeriod> innermostBranchPeriods(const TensorView* out) {
  return BranchWalk(out).periods;
}

}  // namespace nvfuser
