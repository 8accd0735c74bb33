#include "ir/fusion.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "exceptions.h"
#include "ir/checked_arith.h"
#include "ir/list_string.h"

namespace nvfuser {

namespace {
// Every tensor's element and byte counts must fit int64 (torch's storage
// check refuses such tensors too): shape inference, numel and denseBytes
// downstream multiply sizes unchecked. Symbolic sizes are checked when
// concretization builds the tensor again with real sizes.
void checkElementCount(const std::vector<IterDomain>& domain, DataType dtype) {
  std::vector<int64_t> sizes;
  for (const IterDomain& id : domain) {
    Extent e = id.logicalExtent();
    if (e.isConst()) {
      sizes.push_back(e.value);
    }
  }
  const std::optional<int64_t> elements = checkedProduct(sizes);
  NVF_CHECK(elements.has_value(), "a tensor of sizes ", listToString(sizes),
            " has more than 2^63 - 1 elements");
  NVF_CHECK(checkedMul(*elements, dataTypeSize(dtype)).has_value(), "a ",
            toString(dtype), " tensor of sizes ", listToString(sizes),
            " has more than 2^63 - 1 bytes");
}
}  // namespace

TensorView* Fusion::newTensor(std::vector<IterDomain> domain, DataType dtype) {
  checkElementCount(domain, dtype);
  std::unique_ptr<TensorView> tv(
      new TensorView(this, dtype, numTensors_++, std::move(domain)));
  TensorView* raw = tv.get();
  valList_.push_back(raw);
  ownedVals_.push_back(std::move(tv));
  return raw;
}

Scalar* Fusion::newScalar(DataType dtype, std::optional<ScalarValue> value) {
  std::unique_ptr<Scalar> s(
      new Scalar(this, dtype, numScalars_++, std::move(value)));
  Scalar* raw = s.get();
  valList_.push_back(raw);
  ownedVals_.push_back(std::move(s));
  return raw;
}

void Fusion::registerExpr(std::unique_ptr<Expr> e) {
  for (Val* in : e->inputs()) {
    NVF_ASSERT(in->fusion() == this, "expr input from another fusion");
    in->uses_.push_back(e.get());
  }
  for (Val* out : e->outputs()) {
    NVF_ASSERT(out->fusion() == this && out->definition_ == nullptr);
    out->definition_ = e.get();
  }
  e->position_ = static_cast<int64_t>(exprs_.size());
  exprs_.push_back(e.get());
  ownedExprs_.push_back(std::move(e));
}

void Fusion::addInput(Val* v) {
  NVF_ASSERT(v->fusion() == this);
  NVF_ASSERT(v->definition() == nullptr, "an input cannot have a definition");
  inputs_.push_back(v);
  v->isFusionInput_ = true;
}

void Fusion::addOutput(Val* v) {
  NVF_CHECK(v->fusion() == this, "add_output: ", v->ref(),
            " belongs to another fusion");
  NVF_CHECK(v->isTensor(), "add_output: ", v->ref(),
            " is a scalar; only tensors can be fusion outputs");
  outputs_.push_back(v);
  v->isFusionOutput_ = true;
}

std::vector<Expr*> Fusion::liveExprs() const {
  std::unordered_set<const Val*> needed(outputs_.begin(), outputs_.end());
  std::vector<Expr*> live;
  for (auto it = exprs_.rbegin(); it != exprs_.rend(); ++it) {
    Expr* e = *it;
    bool isLive = std::any_of(e->outputs().begin(), e->outputs().end(),
                              [&](Val* o) { return needed.count(o) > 0; });
    if (!isLive) {
      continue;
    }
    live.push_back(e);
    needed.insert(e->inputs().begin(), e->inputs().end());
  }
  std::reverse(live.begin(), live.end());
  return live;
}

Extent Fusion::newSymbolicExtent() {
  int64_t id = static_cast<int64_t>(parent_.size());
  parent_.push_back(id);
  return Extent::symbolic(id);
}

int64_t Fusion::findSymbol(int64_t s) const {
  NVF_ASSERT(s >= 0 && s < static_cast<int64_t>(parent_.size()));
  while (parent_[s] != s) {
    parent_[s] = parent_[parent_[s]];
    s = parent_[s];
  }
  return s;
}

std::optional<int64_t> Fusion::symbolConstant(int64_t s) const {
  auto it = rootConstant_.find(findSymbol(s));
  if (it == rootConstant_.end()) {
    return std::nullopt;
  }
  return it->second;
}

Extent Fusion::canonical(Extent e) const {
  if (e.isConst()) {
    return e;
  }
  if (auto c = symbolConstant(e.symbol)) {
    return Extent::constant(*c);
  }
  return Extent::symbolic(findSymbol(e.symbol));
}

Extent Fusion::unify(Extent a, Extent b) {
  a = canonical(a);
  b = canonical(b);
  if (a.isConst() && b.isConst()) {
    NVF_ASSERT(a.value == b.value, "unify of unequal constants");
    return a;
  }
  if (a.isConst() || b.isConst()) {
    Extent c = a.isConst() ? a : b;
    Extent s = a.isConst() ? b : a;
    rootConstant_[s.symbol] = c.value;
    return c;
  }
  if (a.symbol != b.symbol) {
    // Keep the older symbol as the root so names stay stable when printed.
    int64_t root = std::min(a.symbol, b.symbol);
    int64_t child = std::max(a.symbol, b.symbol);
    parent_[child] = root;
  }
  return Extent::symbolic(std::min(a.symbol, b.symbol));
}

std::string Fusion::toString() const {
  std::ostringstream os;
  os << "Inputs:\n";
  for (Val* v : inputs_) {
    os << "  " << v->toString() << "\n";
  }
  os << "Outputs:\n";
  for (Val* v : outputs_) {
    os << "  " << v->toString() << "\n";
  }
  os << "\n%kernel {\n";
  for (Expr* e : exprs_) {
    os << e->toString() << "\n";
  }
  os << "} // %kernel\n";
  return os.str();
}

}  // namespace nvfuser
