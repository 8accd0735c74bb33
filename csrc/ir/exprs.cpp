#include "ir/exprs.h"

#include <sstream>

#include "ir/list_string.h"
#include "ir/val.h"

namespace nvfuser {

namespace {
std::string maskToDims(const std::vector<bool>& mask) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  return listToString(dims);
}

struct UnaryName {
  UnaryOpType op;
  const char* name;
};
// Every UnaryOpType (test_ir.cpp checks that none is missing).
constexpr UnaryName kUnaryNames[] = {
    {UnaryOpType::Neg, "neg"},
    {UnaryOpType::Abs, "abs"},
    {UnaryOpType::Exp, "exp"},
    {UnaryOpType::Log, "log"},
    {UnaryOpType::Sqrt, "sqrt"},
    {UnaryOpType::Rsqrt, "rsqrt"},
    {UnaryOpType::Reciprocal, "reciprocal"},
    {UnaryOpType::Sin, "sin"},
    {UnaryOpType::Cos, "cos"},
    {UnaryOpType::Tanh, "tanh"},
    {UnaryOpType::Sigmoid, "sigmoid"},
    {UnaryOpType::Relu, "relu"},
    {UnaryOpType::Silu, "silu"},
    {UnaryOpType::Gelu, "gelu"},
    {UnaryOpType::Erf, "erf"},
    {UnaryOpType::Floor, "floor"},
    {UnaryOpType::Ceil, "ceil"},
    {UnaryOpType::Round, "round"},
    {UnaryOpType::IsNan, "isnan"},
    {UnaryOpType::LogicalNot, "logical_not"},
    {UnaryOpType::BitwiseNot, "bitwise_not"},
    {UnaryOpType::Cast, "cast"},
    {UnaryOpType::Acos, "acos"},
    {UnaryOpType::Asin, "asin"},
    {UnaryOpType::Atan, "atan"},
    {UnaryOpType::Cosh, "cosh"},
    {UnaryOpType::Sinh, "sinh"},
    {UnaryOpType::Tan, "tan"},
    {UnaryOpType::Exp2, "exp2"},
    {UnaryOpType::Expm1, "expm1"},
    {UnaryOpType::Log10, "log10"},
    {UnaryOpType::Log1p, "log1p"},
    {UnaryOpType::Log2, "log2"},
    {UnaryOpType::Erfc, "erfc"},
    {UnaryOpType::Erfinv, "erfinv"},
    {UnaryOpType::Lgamma, "lgamma"},
    {UnaryOpType::Acosh, "acosh"},
    {UnaryOpType::Asinh, "asinh"},
    {UnaryOpType::Atanh, "atanh"},
    {UnaryOpType::Erfcinv, "erfcinv"},
    {UnaryOpType::Sign, "sign"},
    {UnaryOpType::Trunc, "trunc"},
    {UnaryOpType::Frac, "frac"},
    {UnaryOpType::IsInf, "isinf"},
    {UnaryOpType::IsFinite, "isfinite"},
    {UnaryOpType::IsNegInf, "isneginf"},
    {UnaryOpType::IsPosInf, "isposinf"},
    {UnaryOpType::Signbit, "signbit"},
    {UnaryOpType::Real, "real"},
    {UnaryOpType::Imag, "imag"},
    {UnaryOpType::IsReal, "isreal"},
};
}  // namespace

const char* toString(UnaryOpType t) {
  for (const UnaryName& n : kUnaryNames) {
    if (n.op == t) {
      return n.name;
    }
  }
  return "?";
}

const char* toString(BinaryOpType t) {
  switch (t) {
    case BinaryOpType::Add:
      return "add";
    case BinaryOpType::Sub:
      return "sub";
    case BinaryOpType::Mul:
      return "mul";
    case BinaryOpType::Div:
      return "div";
    case BinaryOpType::Pow:
      return "pow";
    case BinaryOpType::Fmod:
      return "fmod";
    case BinaryOpType::Remainder:
      return "remainder";
    case BinaryOpType::Maximum:
      return "maximum";
    case BinaryOpType::Minimum:
      return "minimum";
    case BinaryOpType::Eq:
      return "eq";
    case BinaryOpType::Ne:
      return "ne";
    case BinaryOpType::Lt:
      return "lt";
    case BinaryOpType::Le:
      return "le";
    case BinaryOpType::Gt:
      return "gt";
    case BinaryOpType::Ge:
      return "ge";
    case BinaryOpType::LogicalAnd:
      return "logical_and";
    case BinaryOpType::LogicalOr:
      return "logical_or";
    case BinaryOpType::BitwiseAnd:
      return "bitwise_and";
    case BinaryOpType::BitwiseOr:
      return "bitwise_or";
    case BinaryOpType::BitwiseXor:
      return "bitwise_xor";
    case BinaryOpType::Atan2:
      return "atan2";
    case BinaryOpType::Nextafter:
      return "nextafter";
    case BinaryOpType::Gcd:
      return "gcd";
    case BinaryOpType::BitwiseLeftShift:
      return "bitwise_left_shift";
    case BinaryOpType::BitwiseRightShift:
      return "bitwise_right_shift";
    case BinaryOpType::LogicalRightShift:
      return "logical_right_shift";
  }
  return "?";
}

bool isComparison(BinaryOpType t) {
  switch (t) {
    case BinaryOpType::Eq:
    case BinaryOpType::Ne:
    case BinaryOpType::Lt:
    case BinaryOpType::Le:
    case BinaryOpType::Gt:
    case BinaryOpType::Ge:
      return true;
    default:
      return false;
  }
}

bool isLogicalOrBitwise(BinaryOpType t) {
  switch (t) {
    case BinaryOpType::LogicalAnd:
    case BinaryOpType::LogicalOr:
    case BinaryOpType::BitwiseAnd:
    case BinaryOpType::BitwiseOr:
    case BinaryOpType::BitwiseXor:
      return true;
    default:
      return false;
  }
}

bool isShift(BinaryOpType t) {
  return t == BinaryOpType::BitwiseLeftShift ||
         t == BinaryOpType::BitwiseRightShift ||
         t == BinaryOpType::LogicalRightShift;
}

const char* toString(TernaryOpType t) {
  switch (t) {
    case TernaryOpType::Where:
      return "where";
    case TernaryOpType::Lerp:
      return "lerp";
    case TernaryOpType::Clamp:
      return "clamp";
    case TernaryOpType::Fma:
      return "fma";
  }
  return "?";
}

const char* toString(ReductionOpType t) {
  switch (t) {
    case ReductionOpType::Sum:
      return "sum";
    case ReductionOpType::Max:
      return "max";
    case ReductionOpType::Min:
      return "min";
    case ReductionOpType::Prod:
      return "prod";
    case ReductionOpType::Mean:
      return "mean";
  }
  return "?";
}

std::string UnaryOp::opName() const {
  return nvfuser::toString(op_);
}
std::string UnaryOp::attributesToString() const {
  if (op_ != UnaryOpType::Cast) {
    return "";
  }
  return std::string("dtype=") + nvfuser::toString(output(0)->dtype());
}

std::string BinaryOp::opName() const {
  return nvfuser::toString(op_);
}
std::string TernaryOp::opName() const {
  return nvfuser::toString(op_);
}
std::string ReductionOp::opName() const {
  return nvfuser::toString(op_);
}

std::string BroadcastOp::attributesToString() const {
  return "new_dims=" + maskToDims(isBroadcastDim_);
}
std::string ExpandOp::attributesToString() const {
  return "shape=" + listToString(shape_);
}
std::string ReshapeOp::attributesToString() const {
  return "new_shape=" + listToString(newShape_);
}
std::string PermuteOp::attributesToString() const {
  return "dims=" + listToString(perm_);
}
std::string SqueezeOp::attributesToString() const {
  return "dims=" + maskToDims(isSqueezed_);
}
std::string SliceOp::attributesToString() const {
  std::ostringstream os;
  os << "ranges=[";
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const SliceRange& r = ranges_[i];
    os << (i ? ", " : "") << r.start << ":" << r.stop;
    if (r.step != 1) {
      os << ":" << r.step;
    }
  }
  os << "]";
  return os.str();
}
namespace {
template <typename Field>
std::vector<int64_t> rangeField(const std::vector<SliceRange>& ranges,
                                Field field) {
  std::vector<int64_t> out;
  for (const SliceRange& r : ranges) {
    out.push_back(r.*field);
  }
  return out;
}
}  // namespace

std::vector<int64_t> SliceOp::starts() const {
  return rangeField(ranges_, &SliceRange::start);
}
std::vector<int64_t> SliceOp::stops() const {
  return rangeField(ranges_, &SliceRange::stop);
}
std::vector<int64_t> SliceOp::steps() const {
  return rangeField(ranges_, &SliceRange::step);
}

std::vector<int64_t> PadOp::flatWidths() const {
  std::vector<int64_t> flat;
  for (auto it = widths_.rbegin(); it != widths_.rend(); ++it) {
    flat.push_back(it->first);
    flat.push_back(it->second);
  }
  return flat;
}

std::string PadOp::attributesToString() const {
  std::ostringstream os;
  os << "widths=[";
  for (size_t i = 0; i < widths_.size(); ++i) {
    os << (i ? ", " : "") << "{" << widths_[i].first << ", "
       << widths_[i].second << "}";
  }
  os << "]";
  return os.str();
}
std::string CatOp::attributesToString() const {
  return "dim=" + std::to_string(dim_);
}
std::string ReductionOp::attributesToString() const {
  return "dims=" + listToString(axes_);
}
std::string VarMeanOp::attributesToString() const {
  return "dims=" + listToString(axes_) +
         ", correction=" + std::to_string(correction_);
}
std::string FullOp::attributesToString() const {
  return "shape=" + listToString(shape_);
}
std::string IotaOp::attributesToString() const {
  return "length=" + std::to_string(length_);
}

const char* toString(GatherOpType t) {
  switch (t) {
    case GatherOpType::IndexSelect:
      return "index_select";
    case GatherOpType::Gather:
      return "gather";
    case GatherOpType::TakeAlongAxis:
      return "take_along_axis";
  }
  return "?";
}
const TensorView* GatherOp::lookup() const {
  return input(0)->asTensor();
}
const TensorView* GatherOp::index() const {
  return input(1)->asTensor();
}
std::string GatherOp::attributesToString() const {
  return "dim=" + std::to_string(dim_);
}

}  // namespace nvfuser
