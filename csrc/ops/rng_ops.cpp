#include "ops/rng_ops.h"

#include <cmath>

#include "exceptions.h"
#include "ir/list_string.h"
#include "ops/op_utils.h"

namespace nvfuser {

namespace {
const char* opNameOf(RngOpType op, bool like) {
  if (like) {
    return op == RngOpType::Uniform ? "rand_like" : "randn_like";
  }
  return toString(op);
}

const char* paramName(RngOpType op, size_t i) {
  if (op == RngOpType::Uniform) {
    return i == 0 ? "minval" : "maxval";
  }
  return i == 0 ? "mean" : "std";
}

std::optional<double> constantOf(const Val* v) {
  const Scalar* s = v->asScalar();
  if (!s->isConst()) {
    return std::nullopt;
  }
  return scalarToDouble(*s->value());
}

void checkParams(RngOpType op, const char* name, Val* a, Val* b) {
  Val* params[] = {a, b};
  for (size_t i = 0; i < 2; ++i) {
    Val* p = params[i];
    NVF_CHECK_KIND(p != nullptr && !p->isTensor(), Type, name, ": ",
                   paramName(op, i), " must be a scalar, got ",
                   p == nullptr ? std::string("None") : valDescription(p));
    NVF_CHECK_KIND(isFloatingType(p->dtype()) || isIntegralType(p->dtype()),
                   Type, name, ": ", paramName(op, i),
                   " must be an integer or floating point scalar, got ",
                   valDescription(p));
    if (auto c = constantOf(p)) {
      NVF_CHECK(std::isfinite(*c), name, ": ", paramName(op, i),
                " must be finite, got ", *c);
    }
  }
  auto lo = constantOf(a);
  auto hi = constantOf(b);
  if (op == RngOpType::Uniform && lo && hi) {
    NVF_CHECK(*lo <= *hi, name, ": minval ", *lo, " must be <= maxval ", *hi);
    NVF_CHECK(std::isfinite(*hi - *lo), name, ": maxval - minval (", *hi, " - ",
              *lo, ") overflows a Double");
  }
  if (op == RngOpType::Normal && hi) {
    NVF_CHECK(*hi >= 0, name, ": std must be >= 0, got ", *hi);
  }
}

void checkSeed(const char* name, Val* seed, Val* offset) {
  NVF_CHECK((seed == nullptr) == (offset == nullptr), name,
            ": rng_seed and rng_offset must be given together");
  Val* both[] = {seed, offset};
  const char* what[] = {"rng_seed", "rng_offset"};
  for (size_t i = 0; i < 2; ++i) {
    if (both[i] != nullptr) {
      NVF_CHECK_KIND(!both[i]->isTensor() && isIntegralType(both[i]->dtype()),
                     Type, name, ": ", what[i],
                     " must be an Int or Int32 scalar, got ",
                     valDescription(both[i]));
    }
  }
}

bool exceedsRngElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  bool big = false;
  for (int64_t s : shape) {
    if (s == 0) {
      return false;
    }
    big = big || n > kMaxRngElements / s;
    n = big ? n : n * s;
  }
  return big || n > kMaxRngElements;
}

int64_t nextIndex(const Fusion& f) {
  int64_t n = 0;
  for (const Expr* e : f.exprs()) {
    n += e->type() == ExprType::Rng ? 1 : 0;
  }
  return n;
}

int64_t checkedIndex(const Fusion& f, std::optional<int64_t> index,
                     const char* name) {
  const int64_t k = index ? *index : nextIndex(f);
  NVF_CHECK(k >= 0 && k < kMaxRngOps, name, ": rng_index ", k,
            " is outside [0, ", kMaxRngOps,
            "); a fusion holds at most 65536 random ops");
  return k;
}

std::vector<Val*> operands(Val* like, Val* a, Val* b, Val* seed, Val* offset) {
  std::vector<Val*> ins;
  if (like != nullptr) {
    ins.push_back(like);
  }
  ins.push_back(a);
  ins.push_back(b);
  if (seed != nullptr) {
    ins.push_back(seed);
    ins.push_back(offset);
  }
  return ins;
}
}  // namespace

void checkRngDataType(DataType dtype, const char* op) {
  NVF_CHECK_KIND(dtype == DataType::Float || dtype == DataType::Double ||
                     dtype == DataType::Half || dtype == DataType::BFloat16,
                 Type, op,
                 ": dtype must be Float, Double, Half or BFloat16, got ",
                 toString(dtype));
}

TensorView* rngOp(Fusion& f, RngOpType op, Val* a, Val* b,
                  const std::vector<int64_t>& shape, DataType dtype, Val* seed,
                  Val* offset, std::optional<int64_t> index) {
  const char* name = opNameOf(op, false);
  checkParams(op, name, a, b);
  checkSeed(name, seed, offset);
  checkRngDataType(dtype, name);
  std::vector<Val*> ins = operands(nullptr, a, b, seed, offset);
  commonFusion(ins, name);
  NVF_CHECK(a->fusion() == &f, name,
            ": operands belong to another FusionDefinition");
  std::vector<IterDomain> domain;
  for (size_t i = 0; i < shape.size(); ++i) {
    NVF_CHECK(shape[i] >= 0, name, ": shape[", i, "] = ", shape[i],
              " must be >= 0");
    domain.push_back(shape[i] == 1
                         ? IterDomain::broadcast()
                         : IterDomain::iteration(Extent::constant(shape[i])));
  }
  NVF_CHECK(!exceedsRngElements(shape), name, ": shape ", listToString(shape),
            " has more than 2^48 elements, the most a random op takes");
  const int64_t k = checkedIndex(f, index, name);
  TensorView* out = f.newTensor(std::move(domain), dtype);
  f.addExpr<RngOp>(op, out, std::move(ins), shape, false, seed != nullptr, k);
  return out;
}

TensorView* rngLike(RngOpType op, TensorView* like, DataType dtype, Val* seed,
                    Val* offset, std::optional<int64_t> index) {
  const char* name = opNameOf(op, true);
  NVF_CHECK_KIND(like != nullptr, Type, name, ": arg must be a tensor");
  if (dtype == DataType::Null) {
    NVF_CHECK_KIND(isFloatingType(like->dtype()), Type, name, ": ",
                   valDescription(like),
                   " is not floating point; random values are Float, "
                   "Double, Half or BFloat16 (pass dtype=)");
    dtype = like->dtype();
  }
  checkSeed(name, seed, offset);
  checkRngDataType(dtype, name);
  Fusion& f = *like->fusion();
  Val* a = f.newScalar(DataType::Double, 0.0);
  Val* b = f.newScalar(DataType::Double, 1.0);
  std::vector<Val*> ins = operands(like, a, b, seed, offset);
  commonFusion(ins, name);
  std::vector<IterDomain> domain;
  for (const IterDomain& id : like->noReductions()) {
    domain.push_back(id.isBroadcast() && !id.hasExpanded
                         ? IterDomain::broadcast()
                         : IterDomain::iteration(id.logicalExtent()));
  }
  const int64_t k = checkedIndex(f, index, name);
  TensorView* out = f.newTensor(std::move(domain), dtype);
  f.addExpr<RngOp>(op, out, std::move(ins), std::vector<int64_t>{}, true,
                   seed != nullptr, k);
  return out;
}

TensorView* replayRng(const RngOp* e, const std::vector<Val*>& ins) {
  const size_t p = e->isLike() ? 1 : 0;
  Val* seed = e->hasSeed() ? ins.at(p + 2) : nullptr;
  Val* offset = e->hasSeed() ? ins.at(p + 3) : nullptr;
  const DataType dtype = e->output(0)->dtype();
  if (e->isLike()) {
    return rngLike(e->op(), ins.at(0)->asTensor(), dtype, seed, offset,
                   e->index());
  }
  return rngOp(*ins.at(0)->fusion(), e->op(), ins.at(0), ins.at(1), e->shape(),
               dtype, seed, offset, e->index());
}

TensorView* concretizeRng(const RngOp* e, const std::vector<Val*>& ins,
                          Val* seed, Val* offset) {
  const size_t p = e->isLike() ? 1 : 0;
  if (e->hasSeed()) {
    seed = ins.at(p + 2);
    offset = ins.at(p + 3);
  }
  NVF_ASSERT(seed != nullptr && offset != nullptr, "concretize: no seed for ",
             e->opName());
  const std::vector<int64_t> shape =
      e->isLike() ? concreteShape(ins.at(0)->asTensor()) : e->shape();
  return rngOp(*ins.at(p)->fusion(), e->op(), ins.at(p), ins.at(p + 1), shape,
               e->output(0)->dtype(), seed, offset, e->index());
}

}  // namespace nvfuser
