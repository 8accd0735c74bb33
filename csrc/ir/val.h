// Values of the IR: tensors and scalars. Owned by their Fusion.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/iter_domain.h"

namespace nvfuser {

class Expr;
class Fusion;
class TensorView;
class Scalar;

class Val {
 public:
  virtual ~Val() = default;
  Val(const Val&) = delete;
  Val& operator=(const Val&) = delete;

  Fusion* fusion() const { return fusion_; }
  DataType dtype() const { return dtype_; }
  // Per-kind number within the fusion: T<name> for tensors, s<name> scalars.
  int64_t name() const { return name_; }
  Expr* definition() const { return definition_; }
  const std::vector<Expr*>& uses() const { return uses_; }

  virtual bool isTensor() const = 0;
  TensorView* asTensor();
  const TensorView* asTensor() const;
  Scalar* asScalar();
  const Scalar* asScalar() const;

  // Short reference, e.g. "T3" or "s2".
  virtual std::string ref() const = 0;
  // Full description used by the printer.
  virtual std::string toString() const = 0;

 protected:
  Val(Fusion* fusion, DataType dtype, int64_t name)
      : fusion_(fusion), dtype_(dtype), name_(name) {}

 private:
  friend class Fusion;
  Fusion* fusion_;
  DataType dtype_;
  int64_t name_;
  Expr* definition_ = nullptr;
  std::vector<Expr*> uses_;
  // Fusion::isInput/isOutput: set by addInput/addOutput of the owning
  // fusion, so membership costs a load, not a search of thousands.
  bool isFusionInput_ = false;
  bool isFusionOutput_ = false;
};

class TensorView : public Val {
 public:
  bool isTensor() const override { return true; }

  // The logical domain, including reduction dimensions of a reduction output.
  const std::vector<IterDomain>& domain() const { return domain_; }
  // The logical domain without reduction dimensions: what consumers see.
  std::vector<IterDomain> noReductions() const;
  int64_t nDims() const;                    // rank without reduction dims
  const IterDomain& axis(int64_t i) const;  // i indexes noReductions()

  // Input metadata (only meaningful for fusion inputs).
  const std::vector<std::optional<bool>>& contiguity() const {
    return contiguity_;
  }
  // strideOrder()[i] is dim i's rank by stride, 0 being the innermost.
  const std::vector<int64_t>& strideOrder() const { return strideOrder_; }
  bool isCpuScalar() const { return isCpuScalar_; }
  void setInputLayout(std::vector<std::optional<bool>> contiguity,
                      std::vector<int64_t> strideOrder, bool isCpuScalar);

  std::string ref() const override;
  std::string toString() const override;

 private:
  friend class Fusion;
  TensorView(Fusion* f, DataType dtype, int64_t name,
             std::vector<IterDomain> domain)
      : Val(f, dtype, name), domain_(std::move(domain)) {}

  std::vector<IterDomain> domain_;
  std::vector<std::optional<bool>> contiguity_;
  std::vector<int64_t> strideOrder_;
  bool isCpuScalar_ = false;
};

// Logical sizes without reduction dims of a tensor whose extents are all
// constant (a concrete fusion); expanded dims count expanded.
std::vector<int64_t> concreteShape(const TensorView* tv);

// A Python bool, int, float or complex.
using ScalarValue = std::variant<bool, int64_t, double, std::complex<double>>;

// A complex value gives its real part.
double scalarToDouble(const ScalarValue& v);
int64_t scalarToInt(const ScalarValue& v);
std::complex<double> scalarToComplex(const ScalarValue& v);
// "2", "0.5", "true"; a complex value as Python's complex(re, im) with
// each part written to round-trip.
std::string scalarValueToString(const ScalarValue& v);
// A double as the shortest text that reads back as the same double
// (Python's repr: "0.1", "1e+300", "inf", "nan").
std::string roundTripDouble(double d);
// The value as a Python literal that reads back exactly: True/False, ints,
// floats with a point or exponent and all the digits a double needs,
// float('inf') / float('nan'), complex(re, im).
std::string scalarToPythonLiteral(const ScalarValue& v);
// The dtype a Python frontend gives that literal (bool: Bool, int: Int,
// float: Double, complex: ComplexDouble).
DataType pythonLiteralDtype(const ScalarValue& v);

class Scalar : public Val {
 public:
  bool isTensor() const override { return false; }
  // A constant has a value; a fusion-input scalar has none.
  bool isConst() const { return value_.has_value(); }
  const std::optional<ScalarValue>& value() const { return value_; }

  std::string ref() const override;
  std::string toString() const override;

 private:
  friend class Fusion;
  Scalar(Fusion* f, DataType dtype, int64_t name,
         std::optional<ScalarValue> value)
      : Val(f, dtype, name), value_(std::move(value)) {}
  std::optional<ScalarValue> value_;
};

}  // namespace nvfuser
