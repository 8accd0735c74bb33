#include "random_fusion.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "analysis/tensor_shape.h"
#include "exceptions.h"
#include "ops/arith.h"
#include "ops/indexing_ops.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : seed_(seed), rng_(seed) {
    result_.fusion = std::make_unique<Fusion>();
  }

  RandomFusion build(int maxOps) {
    int inputs = 1 + pick(2);
    for (int i = 0; i < inputs; ++i) {
      newInput(randomShape());
    }
    for (int i = 0; i < maxOps; ++i) {
      try {
        addOp();
      } catch (const Error&) {
        // An invalid combination: skip it; dead exprs are never run.
      }
    }
    chooseOutputs();
    // After the outputs are chosen, so earlier seeds' fusions (replayed by
    // the runtime tests) keep their ops and outputs.
    if (seed_ % 16 == 13 || seed_ % 16 == 15) {
      addSumPair(operand());
    }
    if (seed_ % 16 == 5) {  // fuzz_case plans these in their input's order
      addOuterPermute();
    }
    return std::move(result_);
  }

 private:
  int pick(int n) {
    return static_cast<int>(rng_() % static_cast<uint64_t>(n));
  }
  bool coin(int percent) { return pick(100) < percent; }
  Fusion& f() { return *result_.fusion; }

  std::vector<int64_t> randomShape() {
    int rank = coin(8) ? 5 : pick(5);  // 0..5, mostly small
    std::vector<int64_t> s;
    const int64_t sizes[] = {1, 2, 3, 4, 5, 6, 8, 0};
    for (int d = 0; d < rank; ++d) {
      s.push_back(sizes[coin(3) ? 7 : pick(7)]);
    }
    return s;
  }

  DataType randomFloat() {
    const DataType t[] = {DataType::Float, DataType::Half, DataType::BFloat16,
                          DataType::Double};
    return t[pick(4)];
  }

  TensorView* newInput(const std::vector<int64_t>& shape) {
    DataType t = coin(10) ? DataType::Int32 : randomFloat();
    TensorView* tv = defineTensor(f(), shape, t);
    result_.inputSizes.push_back(shape);
    pool_.push_back(tv);
    return tv;
  }

  // Favour recent values so chains grow; sometimes reuse old ones (shared
  // subexpressions).
  TensorView* operand() {
    size_t n = pool_.size();
    size_t i = coin(60) ? n - 1 - std::min<size_t>(n - 1, pick(3)) : pick(n);
    return pool_[i];
  }

  // A tensor shaped like tv (a new input, or tv itself).
  TensorView* partnerFor(TensorView* tv) {
    std::vector<int64_t> shape = concreteShape(tv);
    for (TensorView* p : pool_) {
      if (p != tv && concreteShape(p) == shape && coin(50)) {
        return p;
      }
    }
    return coin(30) ? tv : newInput(shape);
  }

  void add(Val* v) {
    if (v != nullptr && v->isTensor()) {
      pool_.push_back(v->asTensor());
    }
  }

  void addOp() {
    TensorView* x = operand();
    std::vector<int64_t> shape = concreteShape(x);
    const int64_t rank = static_cast<int64_t>(shape.size());
    switch (pick(27)) {
      case 0: {
        const UnaryOpType ops[] = {UnaryOpType::Neg,  UnaryOpType::Abs,
                                   UnaryOpType::Exp,  UnaryOpType::Sin,
                                   UnaryOpType::Tanh, UnaryOpType::Sigmoid,
                                   UnaryOpType::Relu, UnaryOpType::Silu};
        add(unaryOp(ops[pick(8)], x));
        break;
      }
      case 1:
        add(castOp(x, randomFloat()));
        break;
      case 2:
      case 3: {
        // Integer operands only get ops that cannot divide by zero.
        const BinaryOpType ops[] = {
            BinaryOpType::Add,       BinaryOpType::Sub,
            BinaryOpType::Mul,       BinaryOpType::Maximum,
            BinaryOpType::Minimum,   BinaryOpType::Div,
            BinaryOpType::Pow,       BinaryOpType::Fmod,
            BinaryOpType::Remainder, BinaryOpType::Eq,
            BinaryOpType::Ne,        BinaryOpType::Le,
            BinaryOpType::Gt};
        int n = isIntegralType(x->dtype()) ? 5 : 13;
        add(binaryOp(ops[pick(n)], x, partnerFor(x)));
        break;
      }
      case 4: {
        Scalar* s = defineScalar(f(), DataType::Double,
                                 ScalarValue(double(pick(5)) - 2.0));
        add(binaryOp(BinaryOpType::Mul, x, s));
        break;
      }
      case 5: {  // broadcast a new dim, maybe expand it
        std::vector<bool> mask(rank + 1, false);
        mask[pick(rank + 1)] = true;
        TensorView* b = broadcast(x, mask);
        if (coin(70)) {
          std::vector<int64_t> to(rank + 1, -1);
          for (size_t d = 0; d < mask.size(); ++d) {
            if (mask[d]) {
              to[d] = 2 + pick(3);
            }
          }
          b = expand(b, to);
        }
        add(b);
        break;
      }
      case 6: {  // merge two adjacent dims
        if (rank < 2) {
          return;
        }
        int64_t d = pick(rank - 1);
        std::vector<int64_t> to;
        for (int64_t i = 0; i < rank; ++i) {
          if (i == d) {
            to.push_back(shape[i] * shape[i + 1]);
            ++i;
          } else {
            to.push_back(shape[i]);
          }
        }
        add(reshape(x, to));
        break;
      }
      case 7: {  // split a dim of even size
        std::vector<int64_t> to;
        bool split = false;
        for (int64_t i = 0; i < rank; ++i) {
          if (!split && shape[i] % 2 == 0 && shape[i] > 0) {
            to.push_back(2);
            to.push_back(shape[i] / 2);
            split = true;
          } else {
            to.push_back(shape[i]);
          }
        }
        if (split) {
          add(reshape(x, to));
        }
        break;
      }
      case 8: {
        std::vector<int64_t> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        add(permute(x, perm));
        break;
      }
      case 9: {
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < rank; ++i) {
          if (shape[i] == 1 && !x->axis(i).hasExpanded) {
            dims.push_back(i);
          }
        }
        if (!dims.empty()) {
          add(squeeze(x, dims));
        }
        break;
      }
      case 10: {
        std::vector<int64_t> starts, stops, steps;
        for (int64_t s : shape) {
          int64_t a = s > 0 ? pick(static_cast<int>(s)) : 0;
          int64_t b = a + (s - a > 0 ? pick(static_cast<int>(s - a)) + 1 : 0);
          starts.push_back(a);
          stops.push_back(b);
          steps.push_back(1);
        }
        add(slice(x, starts, stops, steps));
        break;
      }
      case 11: {
        if (rank == 0) {
          return;
        }
        Scalar* v = defineScalar(f(), DataType::Double, ScalarValue(0.5));
        const int64_t before = pick(3), after = pick(3);
        if (before == 0 && after == 0) {  // not a copy: a sum of pads
          addPadSum(x, shape);
          break;
        }
        add(pad(x, {before, after}, v));
        break;
      }
      case 12: {
        if (rank == 0) {
          return;
        }
        add(cat({x, partnerFor(x)}, pick(static_cast<int>(rank))));
        break;
      }
      case 13: {
        if (rank == 0) {
          return;
        }
        std::vector<int64_t> axes = {pick(static_cast<int>(rank))};
        const ReductionOpType ops[] = {ReductionOpType::Sum,
                                       ReductionOpType::Max};
        ReductionOpType op = ops[pick(2)];
        if (op == ReductionOpType::Max && shape[axes[0]] == 0) {
          op = ReductionOpType::Sum;  // max of nothing is an error in ATen
        }
        add(reduction(op, x, axes, coin(40)));
        break;
      }
      case 14: {  // matmul with a fresh [k, n] operand
        if (rank < 1 || rank > 3 || isIntegralType(x->dtype())) {
          return;
        }
        // An even k reads the operand through its transpose, as a linear's
        // weight (x @ w.t()): a view the matmul's segment makes. No coin,
        // so the seeds replayed by the runtime tests keep their programs.
        const bool transposed = shape.back() % 2 == 0;
        const std::vector<int64_t> wShape =
            transposed ? std::vector<int64_t>{3, shape.back()}
                       : std::vector<int64_t>{shape.back(), 3};
        TensorView* w = defineTensor(f(), wShape, x->dtype());
        result_.inputSizes.push_back(wShape);
        add(matmul(x, transposed ? permute(w, {1, 0}) : w));
        break;
      }
      case 15:
        add(coin(50) ? segmentSet(x) : set(x));
        break;
      case 16: {
        Scalar* one = defineScalar(f(), DataType::Double, ScalarValue(1.5));
        add(binaryOp(BinaryOpType::Add, x, full(f(), shape, one, x->dtype())));
        break;
      }
      case 17: {  // comparison, logical op and where
        TensorView* y = partnerFor(x);
        Val* c = binaryOp(coin(50) ? BinaryOpType::Lt : BinaryOpType::Ge, x, y);
        if (coin(40)) {
          c = binaryOp(
              coin(50) ? BinaryOpType::LogicalOr : BinaryOpType::LogicalAnd, c,
              unaryOp(UnaryOpType::LogicalNot, c));
        }
        add(where(c, x, y));
        break;
      }
      case 18: {
        Scalar* lo = defineScalar(f(), DataType::Double, ScalarValue(-0.5));
        Scalar* hi = defineScalar(f(), DataType::Double, ScalarValue(0.75));
        if (isIntegralType(x->dtype())) {
          return;
        }
        add(coin(50) ? clamp(x, lo, hi) : lerp(x, partnerFor(x), hi));
        break;
      }
      case 19: {  // integer and bitwise ops on an integer view of x
        Val* i = castOp(x, DataType::Int32);
        Val* j = binaryOp(
            coin(50) ? BinaryOpType::BitwiseXor : BinaryOpType::BitwiseAnd, i,
            castOp(partnerFor(x), DataType::Int32));
        add(unaryOp(UnaryOpType::BitwiseNot, j));
        break;
      }
      case 20: {
        if (rank == 0) {
          return;
        }
        std::vector<int64_t> axes = {pick(static_cast<int>(rank))};
        if (shape[axes[0]] == 0 || isIntegralType(x->dtype())) {
          return;  // empty min/prod and integer var_mean are ATen errors
        }
        switch (pick(4)) {
          case 0:
            add(reduction(ReductionOpType::Mean, x, axes, coin(40)));
            break;
          case 1:
            add(reduction(ReductionOpType::Min, x, axes, coin(40)));
            break;
          case 2:
            add(reduction(ReductionOpType::Prod, x, axes, coin(40)));
            break;
          default: {
            auto [var, mean] = varMean(x, axes, pick(2), coin(40));
            add(var);
            add(mean);
          }
        }
        break;
      }
      case 21: {  // linear with a fresh [n, k] weight and bias
        if (rank < 1 || rank > 3 || isIntegralType(x->dtype())) {
          return;
        }
        TensorView* w = defineTensor(f(), {4, shape.back()}, x->dtype());
        result_.inputSizes.push_back({4, shape.back()});
        TensorView* b = defineTensor(f(), {4}, x->dtype());
        result_.inputSizes.push_back({4});
        add(linear(x, w, coin(50) ? b : nullptr));
        break;
      }
      case 22: {  // iota along the last dim, broadcast against x
        if (rank == 0 || shape.back() == 0) {
          return;
        }
        Scalar* start =
            defineScalar(f(), DataType::Int, ScalarValue(int64_t(pick(3))));
        Scalar* step =
            defineScalar(f(), DataType::Int, ScalarValue(int64_t(1 + pick(2))));
        TensorView* io = iota(f(), shape.back(), start, step,
                              coin(50) ? DataType::Int : DataType::Float);
        add(binaryOp(BinaryOpType::Add, x, io));
        break;
      }
      case 23: {
        const UnaryOpType ops[] = {
            UnaryOpType::Floor, UnaryOpType::Ceil,      UnaryOpType::Round,
            UnaryOpType::Erf,   UnaryOpType::Gelu,      UnaryOpType::Cos,
            UnaryOpType::Log,   UnaryOpType::Sqrt,      UnaryOpType::Rsqrt,
            UnaryOpType::IsNan, UnaryOpType::Reciprocal};
        int n = isIntegralType(x->dtype()) ? 10 : 11;  // no 1/0 on integers
        add(unaryOp(ops[pick(n)], x));
        break;
      }
      case 24:
        addGather(x, shape);
        break;
      case 25:
        addNormBackwardShape(x, shape);
        break;
      case 26:
        addPairView(x, shape);
        break;
    }
  }

  // torch.compile's gradients of slices: pads by zero that do not overlap
  // added (a partial rotary's two parts), and an add of the zeros an
  // empty slice pads to (the generator folds both: value_builder_folds).
  void addPadSum(TensorView* x, const std::vector<int64_t>& shape) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    // ATen 1.13 rejects any pad of a tensor with an empty dim.
    if (rank == 0 || x->dtype() == DataType::Bool ||
        std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      return;
    }
    const int64_t d = pick(static_cast<int>(rank));
    const int64_t s = shape[static_cast<size_t>(d)];
    std::vector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
    std::vector<int64_t> widths(2 * shape.size(), 0);
    const size_t w = 2 * static_cast<size_t>(rank - 1 - d);  // last dim first
    Scalar* zero = defineScalar(f(), DataType::Double, ScalarValue(0.0));
    if (s < 2 || coin(30)) {  // x + the zeros of an empty slice, padded
      std::vector<int64_t> start = zeros;
      start[static_cast<size_t>(d)] = s;
      widths[w] = s;
      TensorView* none = slice(x, start, shape, ones);
      add(castOp(binaryOp(BinaryOpType::Add, pad(none, widths, zero), x),
                 x->dtype()));
      return;
    }
    const int64_t c = 1 + pick(static_cast<int>(s - 1));
    std::vector<int64_t> stop = shape, start = zeros;
    stop[static_cast<size_t>(d)] = c;
    start[static_cast<size_t>(d)] = c;
    TensorView* head = slice(x, zeros, stop, ones);
    TensorView* tail = slice(x, start, shape, ones);
    TensorView* scaled =
        binaryOp(BinaryOpType::Mul, head, partnerFor(head))->asTensor();
    std::vector<int64_t> headWidths = widths, tailWidths = widths;
    headWidths[w + 1] = s - c;
    tailWidths[w] = c;
    Val* sum = coin(50)
                   ? binaryOp(BinaryOpType::Add, pad(scaled, headWidths, zero),
                              pad(tail, tailWidths, zero))
                   : binaryOp(BinaryOpType::Add, pad(tail, tailWidths, zero),
                              pad(scaled, headWidths, zero));
    add(coin(50) ? castOp(sum, x->dtype()) : sum);
  }

  // A norm backward's shape: a row sum of x broadcast back over its rows
  // and a sum of x over every row dim (a column sum the row kernel may
  // take on the side, when nothing else reads it).
  void addNormBackwardShape(TensorView* x, const std::vector<int64_t>& shape) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (rank < 2 || isIntegralType(x->dtype()) ||
        x->dtype() == DataType::Bool ||
        std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      return;
    }
    TensorView* xf = castOp(x, DataType::Float)->asTensor();
    TensorView* row = reduction(ReductionOpType::Sum, xf, {rank - 1}, true);
    add(binaryOp(BinaryOpType::Mul, xf, row));
    std::vector<int64_t> rows;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      rows.push_back(d);
    }
    add(reduction(ReductionOpType::Sum, xf, rows, coin(40)));
  }

  // neg(x) with two outer dims of x swapped, the innermost kept, as an
  // output: a pointwise kernel reading x in an order other than its
  // output's (scheduler/input_loop_order.h), where x has two outer dims
  // of more than one element (the latest such value).
  void addOuterPermute() {
    for (auto it = pool_.rbegin(); it != pool_.rend(); ++it) {
      const std::vector<int64_t> shape = concreteShape(*it);
      std::vector<int64_t> outer;
      for (size_t d = 0; d + 1 < shape.size(); ++d) {
        if (shape[d] > 1) {
          outer.push_back(static_cast<int64_t>(d));
        }
      }
      if (outer.size() < 2 || shape.back() < 2 ||
          (*it)->dtype() == DataType::Bool) {
        continue;
      }
      std::vector<int64_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      const size_t a =
          static_cast<size_t>(pick(static_cast<int>(outer.size())));
      std::swap(perm[size_t(outer[a])],
                perm[size_t(outer[(a + 1) % outer.size()])]);
      f().addOutput(unaryOp(UnaryOpType::Neg, permute(*it, perm)));
      return;
    }
  }

  // Two sums added at one index and read by nothing else, an output
  // (chained sums, codegen/value_builder_chained_sums.cpp): x summed over
  // dim d plus a tensor summed over its dim d of the same length (or x
  // again: one loop), of length 1 (no loop) or of another length, or over
  // two dims (a GQA group's heads).
  void addSumPair(TensorView* x) {
    const std::vector<int64_t> shape = concreteShape(x);
    const int64_t rank = static_cast<int64_t>(shape.size());
    // ATen 1.13 rejects any pad of a tensor with an empty dim.
    if (rank == 0 || x->dtype() == DataType::Bool ||
        std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      return;
    }
    const int64_t d = pick(static_cast<int>(rank));
    TensorView* xf = castOp(x, DataType::Float)->asTensor();
    std::vector<int64_t> other = shape;
    std::vector<int64_t> axes = {d};
    switch (pick(4)) {
      case 1:
        other[d] = 1;
        break;
      case 2:
        other[d] = shape[d] + 3;
        break;
      case 3:
        other.insert(other.begin() + d, 2);
        axes.push_back(d + 1);
        break;
      default:
        break;
    }
    TensorView* y = other == shape && coin(50)
                        ? xf
                        : castOp(newInput(other), DataType::Float)->asTensor();
    TensorView* a = reduction(ReductionOpType::Sum, xf, {d}, false);
    TensorView* b = reduction(ReductionOpType::Sum, y, axes, false);
    if (coin(40)) {  // autograd's keepdim sums: the add reads views
      viewSumPair(a, b);
    }
    Val* sum = coin(50) ? binaryOp(BinaryOpType::Add, a, b)
                        : binaryOp(BinaryOpType::Add, b, a);
    f().addOutput(coin(50) ? sum : castOp(sum, randomFloat()));
  }

  // Both sums viewed the same way (a chain sees through), or, a fifth of
  // the time, b by a reshape to the same shape (not chained).
  void viewSumPair(TensorView*& a, TensorView*& b) {
    std::vector<int64_t> shape = concreteShape(a);
    std::vector<bool> flags(shape.size() + 1, false);
    const size_t p = static_cast<size_t>(pick(static_cast<int>(flags.size())));
    flags[p] = true;
    const bool differ = coin(20);
    a = set(broadcast(a, flags));
    shape.insert(shape.begin() + static_cast<int64_t>(p), 1);
    b = set(differ ? reshape(b, shape) : broadcast(b, flags));
  }

  // The last dim viewed as groups of k (2 or 4: an interleaved RoPE's
  // pairs), the groups' first and other elements combined by a cat or by
  // pads along the group dim, and the view flattened back: vector lanes
  // that split and merge (lane tables, codegen/value_builder_lane_tables).
  void addPairView(TensorView* x, const std::vector<int64_t>& shape) {
    const int64_t k = coin(70) ? 2 : 4;
    if (shape.empty() || shape.back() == 0 || shape.back() % k != 0) {
      return;
    }
    std::vector<int64_t> groups = shape;
    groups.back() = shape.back() / k;
    groups.push_back(k);
    TensorView* g = reshape(x, groups);
    const size_t r = groups.size();
    std::vector<int64_t> zeros(r, 0), ones(r, 1), firstStop = groups;
    std::vector<int64_t> restStart(r, 0);
    firstStop.back() = 1;
    restStart.back() = 1;
    TensorView* first = slice(g, zeros, firstStop, ones);
    TensorView* rest = slice(g, restStart, groups, ones);
    TensorView* y = nullptr;
    if (coin(50)) {  // rotate: the rest first, the first negated last
      y = cat({rest, unaryOp(UnaryOpType::Neg, first)->asTensor()}, -1);
    } else {  // the slices' gradients: pads back to k
      Scalar* zero = defineScalar(f(), DataType::Double, ScalarValue(0.0));
      y = binaryOp(BinaryOpType::Add, pad(rest, {1, 0}, zero),
                   pad(binaryOp(BinaryOpType::Mul, first, partnerFor(first))
                           ->asTensor(),
                       {0, k - 1}, zero))
              ->asTensor();
    }
    add(reshape(y, shape));
  }

  // index_select, gather or take_along_axis of x along a dim, at indices
  // an iota wraps into range (the kernel computes them; x may be computed
  // too, and must then come from an earlier segment).
  void addGather(TensorView* x, const std::vector<int64_t>& shape) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (rank == 0) {
      return;
    }
    const int64_t d = pick(rank);
    if (shape[d] == 0) {
      return;
    }
    auto constant = [&](int64_t v) {
      return defineScalar(f(), DataType::Int, ScalarValue(v));
    };
    TensorView* io = iota(f(), 1 + pick(5), constant(pick(7)),
                          constant(1 + pick(3)), DataType::Int);
    TensorView* index =
        binaryOp(BinaryOpType::Remainder, io, constant(shape[d]))->asTensor();
    if (coin(40)) {
      add(indexSelect(x, index, d));
      return;
    }
    std::vector<bool> mask(rank, true);
    mask[d] = false;
    TensorView* b = rank > 1 ? broadcast(index, mask) : index;
    add(coin(50) ? takeAlongAxis(x, b, d) : gather(x, b, d));
  }

  void chooseOutputs() {
    std::vector<TensorView*> candidates;
    for (TensorView* tv : pool_) {
      if (!f().isInput(tv)) {
        candidates.push_back(tv);
      }
    }
    if (candidates.empty()) {
      candidates.push_back(set(pool_.front()));
    }
    f().addOutput(candidates.back());
    for (size_t i = 0; i + 1 < candidates.size(); ++i) {
      if (coin(25)) {
        f().addOutput(candidates[i]);
      }
    }
  }

  uint64_t seed_;
  std::mt19937_64 rng_;
  RandomFusion result_;
  std::vector<TensorView*> pool_;
};

}  // namespace

RandomFusion makeRandomFusion(uint64_t seed, int maxOps) {
  return Generator(seed).build(maxOps);
}

}  // namespace nvfuser
