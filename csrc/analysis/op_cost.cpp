#include "analysis/op_cost.h"

#include "ir/exprs.h"

namespace nvfuser {

bool movesElementsOnly(const Expr* e) {
  switch (e->type()) {
    case ExprType::Broadcast:
    case ExprType::Expand:
    case ExprType::Reshape:
    case ExprType::Permute:
    case ExprType::Squeeze:
    case ExprType::Slice:
    case ExprType::LoadStore:
      return true;
    default:
      return false;
  }
}

// (A phi-3.5 RoPE backward computes cos and sin in its kernel: computing
// every part of its cat everywhere would triple them.)
bool isCheapToRecompute(const Expr* e) {
  if (movesElementsOnly(e)) {
    return true;
  }
  switch (e->type()) {
    case ExprType::Unary:
      switch (exprAs<UnaryOp>(e)->op()) {
        case UnaryOpType::Neg:
        case UnaryOpType::Abs:
        case UnaryOpType::Relu:
        case UnaryOpType::Floor:
        case UnaryOpType::Ceil:
        case UnaryOpType::Round:
        case UnaryOpType::Trunc:
        case UnaryOpType::Sign:
        case UnaryOpType::IsNan:
        case UnaryOpType::IsInf:
        case UnaryOpType::IsFinite:
        case UnaryOpType::IsNegInf:
        case UnaryOpType::IsPosInf:
        case UnaryOpType::LogicalNot:
        case UnaryOpType::BitwiseNot:
        case UnaryOpType::Cast:
          return true;
        default:
          return false;
      }
    case ExprType::Binary:
      switch (exprAs<BinaryOp>(e)->op()) {
        case BinaryOpType::Div:
        case BinaryOpType::Pow:
        case BinaryOpType::Fmod:
        case BinaryOpType::Remainder:
        case BinaryOpType::Atan2:
        case BinaryOpType::Nextafter:
        case BinaryOpType::Gcd:
          return false;
        default:
          return true;
      }
    case ExprType::Ternary:
    case ExprType::Pad:
    case ExprType::Cat:
    case ExprType::Full:
    case ExprType::Iota:
      return true;
    default:
      return false;
  }
}

bool isCostlyElementwise(const Expr* e) {
  switch (e->type()) {
    case ExprType::Unary:
    case ExprType::Binary:
      return !isCheapToRecompute(e);
    default:
      return false;
  }
}

}  // namespace nvfuser
