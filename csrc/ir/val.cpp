#include "ir/val.h"

#include <cmath>
#include <cstdlib>
#include <iomanip>
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
  return std::get<double>(v);
}

int64_t scalarToInt(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? 1 : 0;
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    return *i;
  }
  return static_cast<int64_t>(std::get<double>(v));
}

std::string scalarValueToString(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  std::ostringstream os;
  os << std::get<double>(v);
  return os.str();
}

std::string scalarToPythonLiteral(const ScalarValue& v) {
  if (auto* b = std::get_if<bool>(&v)) {
    return *b ? "True" : "False";
  }
  if (auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  const double d = std::get<double>(v);
  if (std::isnan(d)) {
    return "float('nan')";
  }
  if (std::isinf(d)) {
    return d > 0 ? "float('inf')" : "float('-inf')";
  }
  // The shortest of 15..17 significant digits that reads back exactly.
  std::string s;
  for (int digits = 15; digits <= 17; ++digits) {
    std::ostringstream os;
    os << std::setprecision(digits) << d;
    s = os.str();
    if (std::strtod(s.c_str(), nullptr) == d) {
      break;
    }
  }
  if (s.find_first_of(".en") == std::string::npos) {
    s += ".0";  // 2.0, not the int 2
  }
  return s;
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

}  // namespace nvfuser
