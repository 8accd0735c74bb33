#include "ir/expr.h"

#include <sstream>

#include "exceptions.h"
#include "ir/val.h"

namespace nvfuser {

std::vector<TensorView*> Expr::tensorInputs() const {
  std::vector<TensorView*> out;
  for (Val* v : inputs_) {
    if (v->isTensor()) {
      out.push_back(v->asTensor());
    }
  }
  return out;
}

TensorView* Expr::out() const {
  NVF_ASSERT(!outputs_.empty() && outputs_[0]->isTensor(),
             "expr has no tensor output: ", opName());
  return outputs_[0]->asTensor();
}

std::string Expr::toString() const {
  std::ostringstream os;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    os << (i ? ", " : "") << outputs_[i]->toString();
  }
  os << "\n   = " << opName() << "(";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    os << (i ? ", " : "") << inputs_[i]->ref();
  }
  std::string attrs = attributesToString();
  if (!attrs.empty()) {
    os << (inputs_.empty() ? "" : ", ") << attrs;
  }
  os << ")";
  return os.str();
}

bool isElementwise(const Expr* e) {
  switch (e->type()) {
    case ExprType::Unary:
    case ExprType::Binary:
    case ExprType::Ternary:
    case ExprType::LoadStore:
      return true;
    default:
      return false;
  }
}

}  // namespace nvfuser
