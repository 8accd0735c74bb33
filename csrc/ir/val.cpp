#include "ir/val.h"

#include <cmath>
#include <cstdio>
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
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) {
      break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) {
    s += ".0";  // a float literal, as Python's repr writes it
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
