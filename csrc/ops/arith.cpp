#include "ops/arith.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <variant>

#include "exceptions.h"
#include "ops/dtype_rules.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace nvfuser {

TensorView* defineTensor(Fusion& f, const std::vector<int64_t>& shape,
                         DataType dtype,
                         std::vector<std::optional<bool>> contiguity,
                         std::vector<int64_t> strideOrder, bool isCpuScalar) {
  checkSupportedDataType(dtype, "define_tensor");
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<IterDomain> domain;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t s = shape[i];
    NVF_CHECK(s >= -1, "define_tensor: shape[", i, "] = ", s,
              " is invalid; use -1 for a symbolic size or a size >= 0");
    if (s == -1) {
      domain.push_back(IterDomain::iteration(f.newSymbolicExtent()));
    } else if (s == 1) {
      domain.push_back(IterDomain::broadcast());
    } else {
      domain.push_back(IterDomain::iteration(Extent::constant(s)));
    }
  }
  if (contiguity.empty()) {
    for (const IterDomain& id : domain) {
      contiguity.push_back(id.isBroadcast() ? std::nullopt
                                            : std::optional<bool>(true));
    }
  }
  NVF_CHECK(static_cast<int64_t>(contiguity.size()) == rank,
            "define_tensor: contiguity has ", contiguity.size(),
            " entries but shape has ", rank, " dims");
  for (int64_t i = 0; i < rank; ++i) {
    NVF_CHECK(!(domain[i].isBroadcast() && contiguity[i].has_value() &&
                *contiguity[i]),
              "define_tensor: dim ", i,
              " is a broadcast dim (size 1); its contiguity must be None");
    if (!domain[i].isBroadcast() && !contiguity[i].has_value()) {
      // nvFuser's convention: a sized dim with contiguity None is an
      // expanded broadcast (stride 0), e.g. from torch.Tensor.expand.
      domain[i] = IterDomain::expandedBroadcast(domain[i].extent);
    }
  }
  if (!strideOrder.empty()) {
    NVF_CHECK(static_cast<int64_t>(strideOrder.size()) == rank,
              "define_tensor: stride_order has ", strideOrder.size(),
              " entries but shape has ", rank, " dims");
    std::vector<int64_t> sorted = strideOrder;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < rank; ++i) {
      NVF_CHECK(sorted[i] == i, "define_tensor: stride_order must be a ",
                "permutation of 0..", rank - 1);
    }
  }
  NVF_CHECK(!isCpuScalar || rank == 0,
            "define_tensor: is_cpu=True is only supported for rank-0 "
            "(scalar) tensors, got rank ",
            rank);
  TensorView* tv = f.newTensor(std::move(domain), dtype);
  tv->setInputLayout(std::move(contiguity), std::move(strideOrder),
                     isCpuScalar);
  f.addInput(tv);
  return tv;
}

namespace {
// "float 2.7", "bool True": the value as Python shows it, for messages.
std::string pythonValue(const ScalarValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) {
    return *b ? "bool True" : "bool False";
  }
  if (std::holds_alternative<std::complex<double>>(v)) {
    return scalarValueToString(v);  // complex(re, im)
  }
  return (std::holds_alternative<int64_t>(v) ? "int " : "float ") +
         scalarValueToString(v);
}
}  // namespace

void checkScalarValue(DataType dtype, const ScalarValue& value,
                      const std::string& what) {
  if (dtype == DataType::Bool) {
    NVF_CHECK_KIND(std::holds_alternative<bool>(value), Type, what,
                   ": Bool scalars take a Python bool, got ",
                   pythonValue(value));
    return;
  }
  const bool complexValue = std::holds_alternative<std::complex<double>>(value);
  const char* wanted = isIntegralType(dtype)  ? "int"
                       : isComplexType(dtype) ? "int, float or complex"
                                              : "int or float";
  // A float would be truncated (2.7 -> 2, NaN undefined); a complex value
  // would lose its imaginary part.
  const bool kindOk = isIntegralType(dtype)
                          ? std::holds_alternative<int64_t>(value)
                          : !std::holds_alternative<bool>(value) &&
                                (!complexValue || isComplexType(dtype));
  NVF_CHECK_KIND(kindOk, Type, what, ": ", toString(dtype),
                 " scalars take a Python ", wanted, ", got ",
                 pythonValue(value));
  if (dtype == DataType::Int32) {
    const int64_t v = std::get<int64_t>(value);
    NVF_CHECK(v >= INT32_MIN && v <= INT32_MAX, what, ": ", v,
              " is out of range for Int32 scalars");
  }
  checkValueFits(dtype, value, what);
}

void checkValueFits(DataType dtype, const ScalarValue& value,
                    const std::string& what) {
  if (dtype == DataType::Bool || std::holds_alternative<bool>(value)) {
    return;
  }
  if (const auto* c = std::get_if<std::complex<double>>(&value)) {
    if (dtype == DataType::ComplexFloat) {
      checkValueFits(DataType::Float, c->real(), what + " (real part)");
      checkValueFits(DataType::Float, c->imag(), what + " (imaginary part)");
    }
    return;  // a complex value for a real type is refused elsewhere
  }
  if (isComplexType(dtype)) {
    checkValueFits(
        dtype == DataType::ComplexFloat ? DataType::Float : DataType::Double,
        value, what);
    return;
  }
  const double v = scalarToDouble(value);
  double limit = 0;  // the largest magnitude that converts
  switch (dtype) {
    case DataType::Half:
      limit = 65504.0;
      break;
    case DataType::BFloat16:
      limit = 3.3895313892515355e38;
      break;
    case DataType::Float:
      limit = static_cast<double>(std::numeric_limits<float>::max());
      break;
    case DataType::Int:
    case DataType::Int32:
      if (const auto* i = std::get_if<int64_t>(&value)) {
        NVF_CHECK(
            dtype == DataType::Int || (*i >= INT32_MIN && *i <= INT32_MAX),
            what, ": ", *i, " does not fit Int32");
        return;
      }
      NVF_CHECK(std::isfinite(v) && v >= -9.223372036854775808e18 &&
                    v < 9.223372036854775808e18 &&
                    (dtype == DataType::Int ||
                     (v > -2147483649.0 && v < 2147483648.0)),
                what, ": ", roundTripDouble(v), " does not fit ",
                toString(dtype));
      return;
    default:
      return;  // Double takes every double
  }
  // torch's rule: infinities and NaN convert, finite values must be in range.
  NVF_CHECK(!std::isfinite(v) || std::abs(v) <= limit, what, ": ",
            scalarToPythonLiteral(value), " is out of range for ",
            toString(dtype), " (largest finite value ", roundTripDouble(limit),
            ")");
}

Scalar* defineScalar(Fusion& f, DataType dtype,
                     std::optional<ScalarValue> value) {
  checkSupportedDataType(dtype, "define_scalar");
  refuseFloat8Type("define_scalar", dtype);
  if (value.has_value()) {
    checkScalarValue(dtype, *value, "define_scalar");
  }
  Scalar* s = f.newScalar(dtype, value);
  if (!value.has_value()) {
    f.addInput(s);
  }
  return s;
}

namespace {

// torch's rule between a tensor with dims (`higher`) and 0-dim tensors
// (`lower`): the 0-dim ones count only where their category is higher.
// A complex 0-dim tensor gives a floating one its complex type; a floating
// one promotes a bool or integer one; an integer one promotes a bool one.
DataType combineTensorCategories(DataType higher, DataType lower) {
  if (typeCategory(higher) >= typeCategory(lower)) {
    return higher;
  }
  if (isComplexType(lower) && typeCategory(higher) == 2) {
    return complexTypeOf(higher);
  }
  return promoteTypes(higher, lower);
}

}  // namespace

DataType promoteOperands(const std::vector<Val*>& operands) {
  std::optional<DataType> dimType;
  std::optional<DataType> zeroDimType;
  std::optional<DataType> scalarType;
  for (Val* v : operands) {
    std::optional<DataType>& slot = !v->isTensor() ? scalarType
                                    : v->asTensor()->noReductions().empty()
                                        ? zeroDimType
                                        : dimType;
    slot = slot ? promoteTypes(*slot, v->dtype()) : v->dtype();
  }
  std::optional<DataType> tensorType =
      dimType && zeroDimType ? combineTensorCategories(*dimType, *zeroDimType)
                             : (dimType ? dimType : zeroDimType);
  if (!tensorType) {
    return *scalarType;
  }
  if (scalarType && typeCategory(*scalarType) > typeCategory(*tensorType)) {
    // A Python float raises an int tensor to the default float type; a
    // complex one gives the tensor's complex type (torch: Double gives
    // ComplexDouble, every other type ComplexFloat).
    switch (typeCategory(*scalarType)) {
      case 1:
        return DataType::Int;
      case 2:
        return DataType::Float;
      default:
        return complexTypeOf(*tensorType);
    }
  }
  return *tensorType;
}

namespace {

bool isFloatOp(UnaryOpType op) {
  switch (op) {
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
    case UnaryOpType::Gelu:
    case UnaryOpType::Erf:
    case UnaryOpType::Acos:
    case UnaryOpType::Asin:
    case UnaryOpType::Atan:
    case UnaryOpType::Cosh:
    case UnaryOpType::Sinh:
    case UnaryOpType::Tan:
    case UnaryOpType::Exp2:
    case UnaryOpType::Expm1:
    case UnaryOpType::Log10:
    case UnaryOpType::Log1p:
    case UnaryOpType::Log2:
    case UnaryOpType::Erfc:
    case UnaryOpType::Erfinv:
    case UnaryOpType::Lgamma:
    case UnaryOpType::Acosh:
    case UnaryOpType::Asinh:
    case UnaryOpType::Atanh:
    case UnaryOpType::Erfcinv:
      return true;
    default:
      return false;
  }
}

// Arithmetic on Half/BFloat16 computes and returns Float (nvFuser's rule).
DataType arithmeticResult(DataType t) {
  return isReducedFloat(t) ? DataType::Float : t;
}

bool isBoolPredicate(UnaryOpType op) {
  switch (op) {
    case UnaryOpType::IsNan:
    case UnaryOpType::LogicalNot:
    case UnaryOpType::IsInf:
    case UnaryOpType::IsFinite:
    case UnaryOpType::IsNegInf:
    case UnaryOpType::IsPosInf:
    case UnaryOpType::Signbit:
    case UnaryOpType::IsReal:
      return true;
    default:
      return false;
  }
}

// Complex operands (dtype_rules.h): predicates give Bool, abs and the
// parts give the real type, the rest keep the complex type.
DataType complexUnaryOutputType(UnaryOpType op, DataType in) {
  NVF_CHECK_KIND(unaryTakesComplex(op), Type, toString(op),
                 ": complex operands are not supported (torch has no complex "
                 "kernel for it), got ",
                 toString(in));
  if (isBoolPredicate(op)) {
    return DataType::Bool;
  }
  if (op == UnaryOpType::Abs || op == UnaryOpType::Real ||
      op == UnaryOpType::Imag) {
    return realTypeOf(in);
  }
  return in;
}

DataType unaryOutputType(UnaryOpType op, DataType in) {
  const std::string name = toString(op);
  if (isComplexType(in)) {
    return complexUnaryOutputType(op, in);
  }
  if (isBoolPredicate(op)) {
    return DataType::Bool;
  }
  switch (op) {
    case UnaryOpType::Imag:  // as torch.imag
      NVF_THROW(Type, "imag: operand must be complex, got ", toString(in),
                " (a real value has no imaginary part)");
    case UnaryOpType::Sign:  // torch: the sign of a Bool is itself
      return in == DataType::Bool ? in : arithmeticResult(in);
    case UnaryOpType::Frac:
      NVF_CHECK_KIND(isFloatingType(in), Type,
                     "frac: operand must be floating point, got ",
                     toString(in));
      return arithmeticResult(in);
    case UnaryOpType::BitwiseNot:
      NVF_CHECK_KIND(isIntegralType(in) || in == DataType::Bool, Type,
                     "bitwise_not: operand must be integral or Bool, got ",
                     toString(in));
      return in;
    case UnaryOpType::Neg:
    case UnaryOpType::Abs:
    case UnaryOpType::Relu:
    case UnaryOpType::Floor:
    case UnaryOpType::Ceil:
    case UnaryOpType::Round:
    case UnaryOpType::Trunc:
      NVF_CHECK_KIND(in != DataType::Bool, Type, name,
                     ": operand must not be Bool");
      return arithmeticResult(in);
    default:
      NVF_ASSERT(isFloatOp(op));
      return isFloatingType(in) ? arithmeticResult(in) : DataType::Float;
  }
}

// Output (not broadcast) domain shared by elementwise operands.
std::vector<IterDomain> elementwiseDomain(const std::vector<Val*>& operands,
                                          const std::string& op) {
  std::vector<IterDomain> domain;
  const Val* first = nullptr;
  for (Val* v : operands) {
    if (!v->isTensor()) {
      continue;
    }
    std::vector<IterDomain> d = v->asTensor()->noReductions();
    if (first == nullptr) {
      domain = d;
      first = v;
      continue;
    }
    NVF_ASSERT(d.size() == domain.size(), op,
               ": ranks differ after "
               "implicit broadcast");
    for (size_t i = 0; i < d.size(); ++i) {
      domain[i] = combineDims(v->fusion(), domain[i], d[i], op, first, v,
                              static_cast<int64_t>(i));
    }
  }
  return domain;
}

// Gives lower-rank tensor operands leading broadcast dims (numpy style).
std::vector<Val*> alignRanks(std::vector<Val*> operands) {
  int64_t rank = 0;
  for (Val* v : operands) {
    if (v->isTensor()) {
      rank = std::max(rank, v->asTensor()->nDims());
    }
  }
  for (Val*& v : operands) {
    if (!v->isTensor() || v->asTensor()->nDims() == rank) {
      continue;
    }
    std::vector<bool> mask(rank, true);
    int64_t r = v->asTensor()->nDims();
    for (int64_t i = 0; i < r; ++i) {
      mask[rank - r + i] = false;
    }
    v = broadcast(v->asTensor(), mask);
  }
  return operands;
}

Val* newOutputLike(Fusion* f, const std::vector<Val*>& operands, DataType dtype,
                   const std::string& op) {
  bool anyTensor = std::any_of(operands.begin(), operands.end(),
                               [](Val* v) { return v->isTensor(); });
  if (!anyTensor) {
    return f->newScalar(dtype, std::nullopt);
  }
  return f->newTensor(elementwiseDomain(operands, op), dtype);
}

}  // namespace

Val* unaryOp(UnaryOpType op, Val* in) {
  NVF_ASSERT(op != UnaryOpType::Cast, "use castOp");
  Fusion* f = commonFusion({in}, toString(op));
  if (op == UnaryOpType::Real && !isComplexType(in->dtype())) {
    // nvFuser's real of a real value: a copy (the value itself for a
    // scalar).
    return in->isTensor() ? set(in) : in;
  }
  refuseFloat8(toString(op), {in});
  DataType outType = unaryOutputType(op, in->dtype());
  Val* out = newOutputLike(f, {in}, outType, toString(op));
  f->addExpr<UnaryOp>(op, out, in);
  return out;
}

Val* castOp(Val* in, DataType dtype) {
  Fusion* f = commonFusion({in}, "cast");
  checkSupportedDataType(dtype, "cast");
  if (in->isTensor() && in->dtype() == dtype) {
    return set(in);
  }
  Val* out = newOutputLike(f, {in}, dtype, "cast");
  f->addExpr<UnaryOp>(UnaryOpType::Cast, out, in);
  return out;
}

namespace {
// torch refuses an integer tensor to a negative Python-int power (1 / x
// rounded toward 0 is rarely meant); tensor or runtime exponents get its
// defined results instead (nvf_ipow).
void checkIntegerPowExponent(const Val* base, const Val* exponent) {
  const Scalar* c = exponent->isTensor() ? nullptr : exponent->asScalar();
  if (!base->isTensor() || c == nullptr || !c->isConst()) {
    return;
  }
  const int64_t* v = std::get_if<int64_t>(&*c->value());
  NVF_CHECK(v == nullptr || *v >= 0,
            "pow: integers to negative integer powers are not allowed, as "
            "in torch (",
            valDescription(base), " ** ", v ? *v : 0,
            "); cast the base to a floating type first");
}

struct BinaryTypes {
  DataType compute;
  DataType out;
};

// Ops whose operands must share one category: shifts and gcd take
// integers, nextafter floating point (it steps in the operands' own type,
// so Half and BFloat16 stay what they are).
BinaryTypes restrictedBinaryTypes(BinaryOpType op, DataType promoted,
                                  const Val* a, const Val* b) {
  const std::string name = toString(op);
  if (op == BinaryOpType::Nextafter) {
    NVF_CHECK_KIND(isFloatingType(promoted), Type, name,
                   ": operands must be floating point, got ", valDescription(a),
                   " and ", valDescription(b));
    return {promoted, promoted};
  }
  NVF_CHECK_KIND(isIntegralType(promoted), Type, name,
                 ": operands must be integers (Int or Int32), got ",
                 valDescription(a), " and ", valDescription(b));
  return {promoted, promoted};
}

BinaryTypes binaryTypes(BinaryOpType op, DataType promoted, const Val* a,
                        const Val* b) {
  const std::string name = toString(op);
  // Complex values: only the ops torch computes on them (eq and ne among
  // the comparisons: complex values have no order).
  NVF_CHECK_KIND(!isComplexType(promoted) || binaryTakesComplex(op), Type, name,
                 ": complex operands are not supported (torch has no complex "
                 "kernel for it), got ",
                 valDescription(a), " and ", valDescription(b));
  if (isComparison(op)) {
    return {promoted, DataType::Bool};
  }
  if (op == BinaryOpType::LogicalAnd || op == BinaryOpType::LogicalOr) {
    return {DataType::Bool, DataType::Bool};
  }
  if (isComplexType(promoted)) {
    return {promoted, promoted};
  }
  if (isLogicalOrBitwise(op)) {
    NVF_CHECK_KIND(isIntegralType(promoted) || promoted == DataType::Bool, Type,
                   name, ": operands must be integral or Bool, got ",
                   valDescription(a), " and ", valDescription(b));
    return {promoted, promoted};
  }
  if (isShift(op) || op == BinaryOpType::Gcd || op == BinaryOpType::Nextafter) {
    return restrictedBinaryTypes(op, promoted, a, b);
  }
  if (op == BinaryOpType::Atan2) {  // integers and Bool compute in Float
    DataType t =
        isFloatingType(promoted) ? arithmeticResult(promoted) : DataType::Float;
    return {t, t};
  }
  NVF_CHECK_KIND(promoted != DataType::Bool || op == BinaryOpType::Maximum ||
                     op == BinaryOpType::Minimum,
                 Type, name,
                 ": arithmetic on two Bool operands is not "
                 "supported; cast them first");
  DataType t = arithmeticResult(promoted);
  if (op == BinaryOpType::Pow && isIntegralType(t)) {
    checkIntegerPowExponent(a, b);
  }
  return {t, t};
}
}  // namespace

Val* binaryOpWithTypes(BinaryOpType op, Val* a, Val* b, DataType compute,
                       DataType out) {
  Fusion* f = commonFusion({a, b}, toString(op));
  std::vector<Val*> operands = alignRanks({a, b});
  Val* o = newOutputLike(f, operands, out, toString(op));
  f->addExpr<BinaryOp>(op, compute, o, operands[0], operands[1]);
  return o;
}

Val* binaryOp(BinaryOpType op, Val* a, Val* b) {
  const std::string name = toString(op);
  commonFusion({a, b}, name);
  refuseFloat8(name, {a, b});
  // Promoted before binaryOpWithTypes broadcasts: a 0-dim operand counts
  // as 0-dim.
  BinaryTypes types = binaryTypes(op, promoteOperands({a, b}), a, b);
  return binaryOpWithTypes(op, a, b, types.compute, types.out);
}

namespace {
Val* ternary(TernaryOpType op, Val* a, Val* b, Val* c, DataType compute,
             DataType outType) {
  const std::string name = toString(op);
  Fusion* f = commonFusion({a, b, c}, name);
  refuseFloat8(name, {a, b, c});
  std::vector<Val*> operands = alignRanks({a, b, c});
  Val* out = newOutputLike(f, operands, outType, name);
  f->addExpr<TernaryOp>(op, compute, out, operands[0], operands[1],
                        operands[2]);
  return out;
}
}  // namespace

Val* where(Val* cond, Val* a, Val* b) {
  commonFusion({cond, a, b}, "where");
  NVF_CHECK_KIND(cond->dtype() == DataType::Bool, Type,
                 "where: condition must be Bool, got ", valDescription(cond));
  DataType t = promoteOperands({a, b});
  return ternary(TernaryOpType::Where, cond, a, b, t, t);
}

Val* ternaryOpWithTypes(TernaryOpType op, Val* a, Val* b, Val* c,
                        DataType compute, DataType out) {
  return ternary(op, a, b, c, compute, out);
}

Val* lerp(Val* start, Val* end, Val* weight) {
  commonFusion({start, end, weight}, "lerp");
  DataType t = arithmeticResult(promoteOperands({start, end, weight}));
  NVF_CHECK_KIND(isFloatingType(t) || isComplexType(t), Type,
                 "lerp: operands must be floating point or complex, got ",
                 valDescription(start), ", ", valDescription(end), ", ",
                 valDescription(weight));
  return ternary(TernaryOpType::Lerp, start, end, weight, t, t);
}

Val* fma(Val* a, Val* b, Val* c) {
  commonFusion({a, b, c}, "fma");
  DataType t = arithmeticResult(promoteOperands({a, b, c}));
  NVF_CHECK_KIND(
      isFloatingType(t), Type, "fma: operands must be floating point, got ",
      valDescription(a), ", ", valDescription(b), ", ", valDescription(c));
  return ternary(TernaryOpType::Fma, a, b, c, t, t);
}

Val* clamp(Val* in, Val* lo, Val* hi) {
  commonFusion({in, lo, hi}, "clamp");
  NVF_CHECK_KIND(in->dtype() != DataType::Bool, Type,
                 "clamp: operand must not be Bool");
  refuseComplex("clamp", {in, lo, hi}, "complex values have no order");
  DataType t = arithmeticResult(promoteOperands({in, lo, hi}));
  return ternary(TernaryOpType::Clamp, in, lo, hi, t, t);
}

Val* addcmul(Val* in, Val* t1, Val* t2, Val* value) {
  commonFusion({in, t1, t2, value}, "addcmul");
  NVF_CHECK(!value->isTensor(), "addcmul: value must be a scalar, got ",
            valDescription(value));
  // As torch: the three operands decide the type, value only has to fit.
  const DataType t = promoteOperands({in, t1, t2});
  NVF_CHECK_KIND(
      t != DataType::Bool, Type, "addcmul: operands must not all be Bool, got ",
      valDescription(in), ", ", valDescription(t1), ", ", valDescription(t2));
  NVF_CHECK_KIND(typeCategory(value->dtype()) <= std::max(typeCategory(t), 1),
                 Type, "addcmul: value ", valDescription(value),
                 isFloatingType(value->dtype()) ? " must be an integer"
                                                : " must not be complex",
                 " for operands of type ", toString(t));
  auto as = [&](Val* v, DataType d) {
    return v->dtype() == d ? v : castOp(v, d);
  };
  // torch's order: in + value * t1 * t2, every operand in the result type;
  // ATen rounds (value * t1) and then one fma for floating types.
  Val* scaled =
      binaryOp(BinaryOpType::Mul, as(value, arithmeticResult(t)), as(t1, t));
  if (isFloatingType(arithmeticResult(t))) {
    return fma(scaled, as(t2, t), as(in, t));
  }
  return binaryOp(BinaryOpType::Add, as(in, t),
                  binaryOp(BinaryOpType::Mul, scaled, as(t2, t)));
}

TensorView* full(Fusion& f, const std::vector<int64_t>& shape, Val* fillValue,
                 DataType dtype) {
  checkSupportedDataType(dtype, "full");
  refuseFloat8Type("full", dtype);
  NVF_CHECK(fillValue != nullptr && !fillValue->isTensor(),
            "full: fill_value must be a scalar");
  commonFusion({fillValue}, "full");
  NVF_CHECK(fillValue->fusion() == &f,
            "full: fill_value belongs to another FusionDefinition");
  NVF_CHECK_KIND(!isComplexType(fillValue->dtype()) || isComplexType(dtype),
                 Type, "full: a complex fill_value ", valDescription(fillValue),
                 " cannot fill a tensor of dtype ", toString(dtype));
  if (fillValue->asScalar()->isConst()) {
    checkValueFits(dtype, *fillValue->asScalar()->value(), "full: fill_value");
  }
  std::vector<IterDomain> domain;
  for (size_t i = 0; i < shape.size(); ++i) {
    NVF_CHECK(shape[i] >= 0, "full: shape[", i, "] = ", shape[i],
              " must be >= 0");
    domain.push_back(shape[i] == 1
                         ? IterDomain::broadcast()
                         : IterDomain::iteration(Extent::constant(shape[i])));
  }
  TensorView* out = f.newTensor(std::move(domain), dtype);
  f.addExpr<FullOp>(out, fillValue, shape);
  return out;
}

TensorView* iota(Fusion& f, int64_t length, Val* start, Val* step,
                 DataType dtype) {
  NVF_CHECK(length >= 0, "iota: length ", length, " must be >= 0");
  NVF_CHECK_KIND(isIntegralType(dtype) || isFloatingType(dtype), Type,
                 "iota: dtype must be integral or floating point, got ",
                 toString(dtype));
  commonFusion({start, step}, "iota");
  NVF_CHECK(start->fusion() == &f, "iota: operands belong to another fusion");
  NVF_CHECK(!start->isTensor() && !step->isTensor(),
            "iota: start and step must be scalars");
  TensorView* out =
      f.newTensor({IterDomain::iteration(Extent::constant(length))}, dtype);
  f.addExpr<IotaOp>(out, start, step, length);
  return out;
}

namespace {
TensorView* loadStore(LoadStoreOpType op, Val* in, const char* name) {
  Fusion* f = commonFusion({in}, name);
  TensorView* tv = checkTensor(in, name, "input");
  TensorView* out = f->newTensor(tv->noReductions(), tv->dtype());
  f->addExpr<LoadStoreOp>(op, out, tv);
  return out;
}
}  // namespace

TensorView* set(Val* in) {
  return loadStore(LoadStoreOpType::Set, in, "set");
}
TensorView* segmentSet(Val* in) {
  return loadStore(LoadStoreOpType::SegmenterSet, in, "segment_set");
}

}  // namespace nvfuser
