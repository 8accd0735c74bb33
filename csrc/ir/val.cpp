#include "ir/val.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "exceptions.h"
#include "ir/fusion.h"

namespace nvfuser {

std::string Extent::toString() const {
  return isConst() ? std::to_string(value) : "i" + std::to_string(symbol);
}

std::string IterDomain::toString() const {
  std::string prefix = isBroadcast() ? "b" : (isReduction() ? "r" : "i");
  std::string s = prefix + "S{" + extent.toString();
  if (hasExpanded) {
    s += " ex " + expanded.toString();
  }
  return s + "}";
}

TensorView* Val::asTensor() {
  NVF_ASSERT(isTensor(), "not a tensor: ", ref());
  return static_cast<TensorView*>(this);
}
const TensorView* Val::asTensor() const {
  NVF_ASSERT(isTensor(), "not a tensor: ", ref());
  return static_cast<const TensorView*>(this);
}
Scalar* Val::asScalar() {
  NVF_ASSERT(!isTensor(), "not a scalar: ", ref());
  return static_cast<Scalar*>(this);
}
const Scalar* Val::asScalar() const {
  NVF_ASSERT(!isTensor(), "not a scalar: ", ref());
  return static_cast<const Scalar*>(this);
}

std::vector<IterDomain> TensorView::noReductions() const {
  std::vector<IterDomain> out;
  for (const IterDomain& id : domain_) {
    if (!id.isReduction()) {
      out.push_back(id);
    }
  }
  return out;
}

int64_t TensorView::nDims() const {
  int64_t n = 0;
  for (const IterDomain& id : domain_) {
    n += id.isReduction() ? 0 : 1;
  }
  return n;
}

const IterDomain& TensorView::axis(int64_t i) const {
  int64_t seen = 0;
  for (const IterDomain& id : domain_) {
    if (id.isReduction()) {
      continue;
    }
    if (seen++ == i) {
      return id;
    }
  }
  NVF_THROW(Internal, "axis ", i, " out of range for ", ref());
}

void TensorView::setInputLayout(std::vector<std::optional<bool>> contiguity,
                                std::vector<int64_t> strideOrder,
                                bool isCpuScalar) {
  contiguity_ = std::move(contiguity);
  strideOrder_ = std::move(strideOrder);
  isCpuScalar_ = isCpuScalar;
}

std::string TensorView::ref() const {
  return "T" + std::to_string(name());
}

std::string TensorView::toString() const {
  const Fusion* f = fusion();
  bool global = f->isInput(this) || f->isOutput(this);
  std::ostringstream os;
  os << ref() << (global ? "_g_" : "_l_") << shortName(dtype()) << "[";
  for (size_t i = 0; i < domain_.size(); ++i) {
    IterDomain id = domain_[i];
    id.extent = f->canonical(id.extent);
    if (id.hasExpanded) {
      id.expanded = f->canonical(id.expanded);
    }
    os << (i ? ", " : "") << id.toString();
  }
  os << "]";
  if (isCpuScalar_) {
    os << " (cpu)";
  }
  return os.str();
}

double scalarToDouble(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? 1.0 : 0.0;
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    return static_cast<double>(*i);
  }
  if (auto* c = std::get_if<std::complex<double>>(&v)) {
    return c->real();
  }
  return std::get<double>(v);
}

int64_t scalarToInt(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? 1 : 0;
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    return *i;
  }
  return static_cast<int64_t>(scalarToDouble(v));
}

std::complex<double> scalarToComplex(const ScalarValue& v) {
  if (auto* c = std::get_if<std::complex<double>>(&v)) {
    return *c;
  }
  return {scalarToDouble(v), 0.0};
}

std::string roundTripDouble(double d) {
  if (std::isnan(d)) {
    return "nan";
  }
  if (std::isinf(d)) {
    return d > 0 ? "inf" : "-inf";
  }
  // The shortest digits that read back as d (to_chars, as Python finds
  // them), laid out as Python's repr: positional for decimal exponents in
  // [-4, 16), else with an exponent (70000.0, 0.001, 1e+16, 1.5e-05).
  char buf[64];
  const auto end =
      std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific)
          .ptr;
  const std::string sci(buf, end);
  const size_t e = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e + 1);
  if (exponent < -4 || exponent >= 16) {
    return sci;
  }
  const bool negative = sci[0] == '-';
  std::string digits;
  for (size_t k = negative ? 1 : 0; k < e; ++k) {
    if (sci[k] != '.') {
      digits += sci[k];
    }
  }
  std::string s = negative ? "-" : "";
  if (exponent < 0) {
    s += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else if (digits.size() <= static_cast<size_t>(exponent) + 1) {
    s += digits +
         std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') +
         ".0";
  } else {
    s += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
         digits.substr(static_cast<size_t>(exponent) + 1);
  }
  return s;
}

namespace {
// A component of a complex literal as Python reads it back.
std::string pythonFloat(double d) {
  const std::string s = roundTripDouble(d);
  if (std::isnan(d) || std::isinf(d)) {
    return "float('" + s + "')";
  }
  return s;
}
}  // namespace

std::string scalarValueToString(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (auto* c = std::get_if<std::complex<double>>(&v)) {
    return "complex(" + pythonFloat(c->real()) + ", " + pythonFloat(c->imag()) +
           ")";
  }
  std::ostringstream os;
  os << std::get<double>(v);
  return os.str();
}

std::string scalarToPythonLiteral(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? "True" : "False";
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return pythonFloat(*d);
  }
  return scalarValueToString(v);  // ints; complex(re, im)
}

DataType pythonLiteralDtype(const ScalarValue& v) {
  switch (v.index()) {
    case 0:
      return DataType::Bool;
    case 1:
      return DataType::Int;
    case 2:
      return DataType::Double;
    default:
      return DataType::ComplexDouble;
  }
}

std::string Scalar::ref() const {
  return isConst() ? scalarValueToString(*value())
                   : "s" + std::to_string(name());
}

std::string Scalar::toString() const {
  std::ostringstream os;
  os << "s" << name() << "_" << shortName(dtype());
  if (isConst()) {
    os << " = " << scalarValueToString(*value());
  }
  return os.str();
}

std::vector<int64_t> concreteShape(const TensorView* tv) {
  std::vector<int64_t> shape;
  for (const IterDomain& id : tv->noReductions()) {
    Extent e = tv->fusion()->canonical(id.logicalExtent());
    NVF_ASSERT(e.isConst(),
               "symbolic extent in a concrete fusion: ", tv->toString());
    shape.push_back(e.value);
  }
  return shape;
}

}  // namespace nvfuser
