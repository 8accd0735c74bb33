#include "codegen/index_expr.h"

#include <utility>

#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

IndexExpr::IndexExpr() {
  // One shared node: zeros are the most common index.
  static const std::shared_ptr<const Node> zero = std::make_shared<Node>();
  node_ = zero;
}

IndexExpr IndexExpr::make(Kind kind, int64_t value,
                          std::vector<IndexExpr> operands) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->value = value;
  node->operands = std::move(operands);
  return IndexExpr(std::move(node));
}

IndexExpr IndexExpr::constant(int64_t c) {
  return make(Kind::Constant, c, {});
}

IndexExpr IndexExpr::named(std::string text) {
  NVF_ASSERT(!text.empty(), "an index named by no text");
  auto node = std::make_shared<Node>();
  node->kind = Kind::Named;
  node->text = std::move(text);
  return IndexExpr(std::move(node));
}

std::optional<int64_t> IndexExpr::constantValue() const {
  if (node_->kind == Kind::Constant) {
    return node_->value;
  }
  return std::nullopt;
}

bool IndexExpr::isZero() const {
  return node_->kind == Kind::Constant && node_->value == 0;
}

bool IndexExpr::isAtom() const {
  return node_->kind == Kind::Named ||
         (node_->kind == Kind::Constant && node_->value >= 0);
}

std::string IndexExpr::str() const {
  const Node& n = *node_;
  switch (n.kind) {
    case Kind::Constant:
      return std::to_string(n.value);
    case Kind::Named:
      return n.text;
    case Kind::Sum: {
      std::string s;
      for (const IndexExpr& t : n.operands) {
        s += (s.empty() ? "" : " + ") + t.str();
      }
      if (n.value > 0) {
        s += " + " + std::to_string(n.value);
      } else if (n.value < 0) {
        s += " - " + std::to_string(-n.value);
      }
      return s;
    }
    case Kind::Product:
      return n.operands[0].factor() + " * " + std::to_string(n.value);
    case Kind::Quotient:
      return n.operands[0].factor() + " / " + std::to_string(n.value);
    case Kind::Remainder:
      return n.operands[0].factor() + " % " + std::to_string(n.value);
  }
  return "";
}

std::string IndexExpr::factor() const {
  return isAtom() ? str() : "(" + str() + ")";
}

int64_t IndexExpr::evaluate(
    const std::function<int64_t(const std::string&)>& valueOf) const {
  const Node& n = *node_;
  switch (n.kind) {
    case Kind::Constant:
      return n.value;
    case Kind::Named:
      return valueOf(n.text);
    case Kind::Sum: {
      int64_t s = n.value;
      for (const IndexExpr& t : n.operands) {
        s += t.evaluate(valueOf);
      }
      return s;
    }
    case Kind::Product:
      return n.operands[0].evaluate(valueOf) * n.value;
    case Kind::Quotient:
      return n.operands[0].evaluate(valueOf) / n.value;
    case Kind::Remainder:
      return n.operands[0].evaluate(valueOf) % n.value;
  }
  return 0;
}

IndexExpr operator+(const IndexExpr& a, const IndexExpr& b) {
  using Kind = IndexExpr::Kind;
  std::vector<IndexExpr> terms;
  int64_t c = 0;
  for (const IndexExpr* x : {&a, &b}) {
    const IndexExpr::Node& n = *x->node_;
    if (n.kind == Kind::Constant) {
      c += n.value;
    } else if (n.kind == Kind::Sum) {
      terms.insert(terms.end(), n.operands.begin(), n.operands.end());
      c += n.value;
    } else {
      terms.push_back(*x);
    }
  }
  if (terms.empty()) {
    return IndexExpr::constant(c);
  }
  if (terms.size() == 1 && c == 0) {
    return terms[0];
  }
  return IndexExpr::make(Kind::Sum, c, std::move(terms));
}

IndexExpr operator+(const IndexExpr& a, int64_t c) {
  return a + IndexExpr::constant(c);
}

IndexExpr operator-(const IndexExpr& a, int64_t c) {
  return a + IndexExpr::constant(-c);
}

IndexExpr operator*(const IndexExpr& a, int64_t c) {
  using Kind = IndexExpr::Kind;
  const IndexExpr::Node& n = *a.node_;
  if (c == 0 || a.isZero()) {
    return IndexExpr();
  }
  if (c == 1) {
    return a;
  }
  if (n.kind == Kind::Constant) {
    return IndexExpr::constant(n.value * c);
  }
  if (n.kind == Kind::Product) {
    return n.operands[0] * (n.value * c);
  }
  return IndexExpr::make(Kind::Product, c, {a});
}

IndexExpr operator/(const IndexExpr& a, int64_t c) {
  using Kind = IndexExpr::Kind;
  NVF_ASSERT(c >= 0, "an index divided by ", c);
  const IndexExpr::Node& n = *a.node_;
  if (c == 0) {
    return IndexExpr();  // a dim of size 0: the kernel never evaluates it
  }
  if (c == 1) {
    return a;
  }
  if (n.kind == Kind::Constant && n.value >= 0) {
    return IndexExpr::constant(n.value / c);
  }
  if (n.kind == Kind::Product && n.value % c == 0) {
    return n.operands[0] * (n.value / c);
  }
  return IndexExpr::make(Kind::Quotient, c, {a});
}

IndexExpr operator%(const IndexExpr& a, int64_t c) {
  using Kind = IndexExpr::Kind;
  NVF_ASSERT(c >= 0, "an index modulo ", c);
  const IndexExpr::Node& n = *a.node_;
  if (c <= 1) {  // 0: a dim of size 0, never evaluated
    return IndexExpr();
  }
  if (n.kind == Kind::Constant && n.value >= 0) {
    return IndexExpr::constant(n.value % c);
  }
  if (n.kind == Kind::Product && n.value % c == 0) {
    return IndexExpr();
  }
  return IndexExpr::make(Kind::Remainder, c, {a});
}

std::vector<IndexExpr> delinearize(const IndexExpr& linear,
                                   const std::vector<int64_t>& shape) {
  std::vector<IndexExpr> out(shape.size());
  int64_t inner = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const IndexExpr q = linear / inner;
    out[d] = d == 0 ? q : q % shape[d];
    inner *= shape[d];
  }
  return out;
}

}  // namespace codegen_detail
}  // namespace nvfuser
