#include "ops/dtype_rules.h"

#include "exceptions.h"
#include "ops/op_utils.h"

namespace nvfuser {

bool unaryTakesComplex(UnaryOpType op) {
  switch (op) {
    case UnaryOpType::Neg:
    case UnaryOpType::Abs:
    case UnaryOpType::Exp:
    case UnaryOpType::Log:
    case UnaryOpType::Sqrt:
    case UnaryOpType::Rsqrt:
    case UnaryOpType::Reciprocal:
    case UnaryOpType::Sin:
    case UnaryOpType::Cos:
    case UnaryOpType::Tanh:
    case UnaryOpType::Sigmoid:
    case UnaryOpType::Silu:
    case UnaryOpType::IsNan:
    case UnaryOpType::LogicalNot:
    case UnaryOpType::Cast:
    case UnaryOpType::Acos:
    case UnaryOpType::Asin:
    case UnaryOpType::Atan:
    case UnaryOpType::Cosh:
    case UnaryOpType::Sinh:
    case UnaryOpType::Tan:
    case UnaryOpType::Log10:
    case UnaryOpType::Log2:
    case UnaryOpType::Acosh:
    case UnaryOpType::Asinh:
    case UnaryOpType::Atanh:
    case UnaryOpType::IsInf:
    case UnaryOpType::IsFinite:
    case UnaryOpType::Real:
    case UnaryOpType::Imag:
    case UnaryOpType::IsReal:
      return true;
    default:
      return false;
  }
}

bool binaryTakesComplex(BinaryOpType op) {
  switch (op) {
    case BinaryOpType::Add:
    case BinaryOpType::Sub:
    case BinaryOpType::Mul:
    case BinaryOpType::Div:
    case BinaryOpType::Pow:
    case BinaryOpType::Eq:
    case BinaryOpType::Ne:
    case BinaryOpType::LogicalAnd:
    case BinaryOpType::LogicalOr:
      return true;
    default:
      return false;
  }
}

void refuseComplex(const std::string& op,
                   const std::vector<const Val*>& operands, const char* why) {
  for (const Val* v : operands) {
    NVF_CHECK_KIND(v == nullptr || !isComplexType(v->dtype()), Type, op,
                   ": complex operands are not supported (", why, "), got ",
                   valDescription(v));
  }
}

void refuseFloat8Type(const std::string& op, DataType dtype) {
  NVF_CHECK_KIND(!isFloat8Type(dtype), Type, op, ": ", toString(dtype),
                 " values are storage only (casts, copies and views); cast "
                 "to Float first");
}

void refuseFloat8(const std::string& op,
                  const std::vector<const Val*>& operands) {
  for (const Val* v : operands) {
    NVF_CHECK_KIND(v == nullptr || !isFloat8Type(v->dtype()), Type, op, ": ",
                   valDescription(v),
                   " holds storage-only Float8 values (casts, copies and "
                   "views take them); cast to Float first");
  }
}

}  // namespace nvfuser
