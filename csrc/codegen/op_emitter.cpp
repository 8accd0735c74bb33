#include "codegen/op_emitter.h"

#include <cmath>
#include <cstdio>

#include "exceptions.h"

namespace nvfuser {

std::string cudaType(DataType t) {
  switch (t) {
    case DataType::Double:
      return "double";
    case DataType::Float:
      return "float";
    case DataType::Half:
      return "nvf_half";
    case DataType::BFloat16:
      return "nvf_bf16";
    case DataType::Int:
      return "int64_t";
    case DataType::Int32:
      return "int";
    case DataType::Bool:
      return "bool";
    case DataType::Float8_e4m3fn:
      return "nvf_e4m3";
    case DataType::Float8_e5m2:
      return "nvf_e5m2";
    case DataType::Float8_e8m0fnu:
      return "nvf_e8m0";
    default:
      NVF_THROW(NotImplemented, "no CUDA type for ", toString(t));
  }
}

std::string castExpr(DataType from, DataType to, const std::string& e) {
  if (from == to) {
    return e;
  }
  // Float8 values go through Float both ways, as torch's conversions do
  // (a Double is rounded to Float first); the helpers are named by the
  // types' short names (nvf_e4m3_to_f, nvf_f_to_e8m0, ...).
  if (isFloat8Type(from)) {
    return castExpr(DataType::Float, to,
                    std::string("nvf_") + shortName(from) + "_to_f(" + e + ")");
  }
  if (isFloat8Type(to)) {
    return std::string("nvf_f_to_") + shortName(to) + "(" +
           castExpr(from, DataType::Float, e) + ")";
  }
  if (from == DataType::Half || from == DataType::BFloat16) {
    std::string f =
        std::string(from == DataType::Half ? "nvf_h2f" : "nvf_b2f") + "(" + e +
        ")";
    return castExpr(DataType::Float, to, f);
  }
  if (to == DataType::Half || to == DataType::BFloat16) {
    std::string f = castExpr(from, DataType::Float, e);
    return std::string(to == DataType::Half ? "nvf_f2h" : "nvf_f2b") + "(" + f +
           ")";
  }
  if (to == DataType::Bool) {
    return "((" + e + ") != 0)";
  }
  return "((" + cudaType(to) + ")(" + e + "))";
}

std::string literal(const ScalarValue& v, DataType t) {
  std::string text;
  DataType from = DataType::Double;
  if (auto* b = std::get_if<bool>(&v)) {
    text = *b ? "true" : "false";
    from = DataType::Bool;
  } else if (auto* i = std::get_if<int64_t>(&v)) {
    text = "(int64_t)" + std::to_string(*i) + "LL";
    from = DataType::Int;
  } else {
    NVF_ASSERT(std::holds_alternative<double>(v),
               "a complex constant reached a generated kernel (ops on "
               "complex values are expr_eval segments)");
    double d = std::get<double>(v);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", d);
    text = buf;
    if (std::isnan(d)) {
      text = "__longlong_as_double(0x7ff8000000000000LL)";
    } else if (std::isinf(d)) {
      text = d > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                   : "__longlong_as_double(0xfff0000000000000LL)";
    } else if (text.find_first_of(".eE") == std::string::npos) {
      text += ".0";
    }
  }
  return castExpr(from, t, text);
}

namespace {
std::string math(const char* name, DataType t, const std::string& x) {
  NVF_ASSERT(isFloatingType(t), "math function ", name, " on ", toString(t));
  return std::string(name) + (t == DataType::Float ? "f(" : "(") + x + ")";
}

std::string math2(const char* name, DataType t, const std::string& a,
                  const std::string& b) {
  return math(name, t, a + ", " + b);
}

std::string infinity(DataType t) {
  return t == DataType::Float ? "__int_as_float(0x7f800000)"
                              : "__longlong_as_double(0x7ff0000000000000LL)";
}

// Float-producing math: the CUDA function of the same name.
const char* mathName(UnaryOpType op) {
  switch (op) {
    case UnaryOpType::Acos:
      return "acos";
    case UnaryOpType::Asin:
      return "asin";
    case UnaryOpType::Atan:
      return "atan";
    case UnaryOpType::Cosh:
      return "cosh";
    case UnaryOpType::Sinh:
      return "sinh";
    case UnaryOpType::Tan:
      return "tan";
    case UnaryOpType::Exp2:
      return "exp2";
    case UnaryOpType::Expm1:
      return "expm1";
    case UnaryOpType::Log10:
      return "log10";
    case UnaryOpType::Log1p:
      return "log1p";
    case UnaryOpType::Log2:
      return "log2";
    case UnaryOpType::Erfc:
      return "erfc";
    case UnaryOpType::Erfinv:
      return "erfinv";
    case UnaryOpType::Lgamma:
      return "lgamma";
    case UnaryOpType::Acosh:
      return "acosh";
    case UnaryOpType::Asinh:
      return "asinh";
    case UnaryOpType::Atanh:
      return "atanh";
    case UnaryOpType::Erfcinv:
      return "erfcinv";
    default:
      return nullptr;
  }
}

// isinf and friends, signbit: integers are finite, Bool too.
std::string predicateExpr(UnaryOpType op, DataType t, const std::string& x) {
  const bool fp = isFloatingType(t);
  switch (op) {
    case UnaryOpType::IsNan:
      return fp ? "(" + x + " != " + x + ")" : "false";
    case UnaryOpType::IsInf:
      return fp ? "(" + math("fabs", t, x) + " == " + infinity(t) + ")"
                : "false";
    case UnaryOpType::IsFinite:  // NaN compares false
      return fp ? "(" + math("fabs", t, x) + " < " + infinity(t) + ")" : "true";
    case UnaryOpType::IsPosInf:
      return fp ? "(" + x + " == " + infinity(t) + ")" : "false";
    case UnaryOpType::IsNegInf:
      return fp ? "(" + x + " == -" + infinity(t) + ")" : "false";
    case UnaryOpType::IsReal:  // a real operand (complex ones use ATen)
      return "true";
    case UnaryOpType::Signbit:  // the bit itself: -0.0 and -NaN too
      if (t == DataType::Float) {
        return "((__float_as_uint(" + x + ") >> 31) != 0u)";
      }
      if (t == DataType::Double) {
        return "(__double_as_longlong(" + x + ") < 0)";
      }
      return t == DataType::Bool ? "false" : "(" + x + " < 0)";
    default:
      NVF_THROW(Internal, "predicateExpr: ", toString(op));
  }
}
}  // namespace

bool isPredicate(UnaryOpType op) {
  switch (op) {
    case UnaryOpType::IsNan:
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

std::string unaryExpr(UnaryOpType op, DataType t, const std::string& x) {
  const std::string one = t == DataType::Float ? "1.f" : "1.0";
  if (const char* name = mathName(op)) {
    return math(name, t, x);
  }
  if (isPredicate(op)) {
    return predicateExpr(op, t, x);
  }
  switch (op) {
    case UnaryOpType::Neg:
      return "(-" + x + ")";
    case UnaryOpType::Abs:
      return isFloatingType(t) ? math("fabs", t, x)
                               : "(" + x + " < 0 ? -" + x + " : " + x + ")";
    case UnaryOpType::Exp:
      return math("exp", t, x);
    case UnaryOpType::Log:
      return math("log", t, x);
    case UnaryOpType::Sqrt:
      return math("sqrt", t, x);
    case UnaryOpType::Rsqrt:
      return math("rsqrt", t, x);
    case UnaryOpType::Reciprocal:
      return "(" + one + " / " + x + ")";
    case UnaryOpType::Sin:
      return math("sin", t, x);
    case UnaryOpType::Cos:
      return math("cos", t, x);
    case UnaryOpType::Tanh:
      return math("tanh", t, x);
    case UnaryOpType::Sigmoid:
      return "(" + one + " / (" + one + " + " + math("exp", t, "-" + x) + "))";
    case UnaryOpType::Relu:
      return "(" + x + " <= 0 ? (" + cudaType(t) + ")0 : " + x + ")";
    case UnaryOpType::Silu:
      return "(" + x + " / (" + one + " + " + math("exp", t, "-" + x) + "))";
    case UnaryOpType::Gelu:
      return "(" + x + " * (" + one + " + " +
             math("erf", t, x + " * (" + cudaType(t) + ")0.70710678118654752") +
             ") * (" + cudaType(t) + ")0.5)";
    case UnaryOpType::Erf:
      return math("erf", t, x);
    case UnaryOpType::Floor:
      return isFloatingType(t) ? math("floor", t, x) : x;
    case UnaryOpType::Ceil:
      return isFloatingType(t) ? math("ceil", t, x) : x;
    case UnaryOpType::Round:
      return isFloatingType(t) ? math("rint", t, x) : x;
    case UnaryOpType::Sign:  // torch's CPU sign: 0 for NaN and for -0.0
      return t == DataType::Bool
                 ? x
                 : "((" + cudaType(t) + ")((" + x + " > 0) - (" + x + " < 0)))";
    case UnaryOpType::Trunc:
      return isFloatingType(t) ? math("trunc", t, x) : x;
    case UnaryOpType::Frac:
      return "(" + x + " - " + math("trunc", t, x) + ")";
    case UnaryOpType::LogicalNot:
      return "(!" + x + ")";
    case UnaryOpType::BitwiseNot:
      return t == DataType::Bool ? "(!" + x + ")" : "(~" + x + ")";
    default:
      break;
  }
  NVF_THROW(Internal, "unaryExpr: unhandled op ", toString(op));
}

std::string reducedNextafter(DataType t, const std::string& a,
                             const std::string& b) {
  switch (t) {
    case DataType::Half:
      return "nvf_nextafter_h(" + a + ", " + b + ")";
    case DataType::BFloat16:
      return "nvf_nextafter_b(" + a + ", " + b + ")";
    default:
      return math2("nextafter", t, a, b);
  }
}

std::string binaryExpr(BinaryOpType op, DataType t, const std::string& a,
                       const std::string& b) {
  auto infix = [&](const char* o) { return "(" + a + " " + o + " " + b + ")"; };
  switch (op) {
    case BinaryOpType::Add:
      return infix("+");
    case BinaryOpType::Sub:
      return infix("-");
    case BinaryOpType::Mul:
      return infix("*");
    case BinaryOpType::Div:  // integers truncate, like nvFuser
      return isFloatingType(t) ? infix("/") : "nvf_idiv(" + a + ", " + b + ")";
    case BinaryOpType::Pow:
      return isFloatingType(t)
                 ? std::string(t == DataType::Float ? "powf(" : "pow(") + a +
                       ", " + b + ")"
                 : "nvf_ipow(" + a + ", " + b + ")";
    case BinaryOpType::Fmod:
      return isFloatingType(t)
                 ? std::string(t == DataType::Float ? "fmodf(" : "fmod(") + a +
                       ", " + b + ")"
                 : "nvf_imod(" + a + ", " + b + ")";
    case BinaryOpType::Remainder:
      return "nvf_remainder(" + a + ", " + b + ")";
    case BinaryOpType::Maximum:
      return "nvf_max(" + a + ", " + b + ")";
    case BinaryOpType::Minimum:
      return "nvf_min(" + a + ", " + b + ")";
    case BinaryOpType::Eq:
      return infix("==");
    case BinaryOpType::Ne:
      return infix("!=");
    case BinaryOpType::Lt:
      return infix("<");
    case BinaryOpType::Le:
      return infix("<=");
    case BinaryOpType::Gt:
      return infix(">");
    case BinaryOpType::Ge:
      return infix(">=");
    case BinaryOpType::LogicalAnd:
      return infix("&&");
    case BinaryOpType::LogicalOr:
      return infix("||");
    case BinaryOpType::BitwiseAnd:
      return infix("&");
    case BinaryOpType::BitwiseOr:
      return infix("|");
    case BinaryOpType::BitwiseXor:
      return infix("^");
    case BinaryOpType::Atan2:
      return math2("atan2", t, a, b);
    case BinaryOpType::Nextafter:
      return reducedNextafter(t, a, b);
    case BinaryOpType::Gcd:
      return "nvf_gcd(" + a + ", " + b + ")";
    case BinaryOpType::BitwiseLeftShift:
      return "nvf_shl(" + a + ", " + b + ")";
    case BinaryOpType::BitwiseRightShift:
      return "nvf_shr(" + a + ", " + b + ")";
    case BinaryOpType::LogicalRightShift:
      return "nvf_lshr(" + a + ", " + b + ")";
  }
  NVF_THROW(Internal, "binaryExpr: unhandled op");
}

}  // namespace nvfuser
