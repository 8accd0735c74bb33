// Element types of tensors and scalars, with nvFuser's promotion rules.
#pragma once

#include <cstdint>
#include <string>

namespace nvfuser {

// Values match nvFuser's Python DataType enum names, not its numbering.
enum class DataType {
  Double,
  Float,
  Half,
  BFloat16,
  Int,  // int64
  Int32,
  Bool,
  ComplexFloat,
  ComplexDouble,
  // 8-bit floats (storage only: casts and data movement). e4m3fn has no
  // infinity (an overflow is NaN, as torch converts), e5m2 has one.
  Float8_e4m3fn,
  Float8_e5m2,
  // Powers of two only (the OCP MX scale type): 8 exponent bits, no sign,
  // no mantissa, no zero (code 0 is 2^-127), code 255 is NaN.
  Float8_e8m0fnu,
  Null,
};

const char* toString(DataType dtype);
// Short form used by the printer ("float", "bf16", ...).
const char* shortName(DataType dtype);
int64_t dataTypeSize(DataType dtype);

bool isFloatingType(DataType dtype);
bool isIntegralType(DataType dtype);  // Int, Int32 (not Bool)
bool isComplexType(DataType dtype);
bool isReducedFloat(DataType dtype);  // Half, BFloat16
// Float8_e4m3fn, Float8_e5m2, Float8_e8m0fnu (not floating types for
// arithmetic: casts and data movement only).
bool isFloat8Type(DataType dtype);
// The complex type of a real one, as torch pairs them: Double gives
// ComplexDouble, every other type ComplexFloat; complex types are kept.
DataType complexTypeOf(DataType dtype);
// The component type of a complex type (ComplexFloat: Float); others kept.
DataType realTypeOf(DataType dtype);

// Category used by type promotion: Bool < Integral < Floating < Complex.
int typeCategory(DataType dtype);

// Promotes two tensor dtypes the way PyTorch does for tensors of equal
// standing (the wider type of the higher category wins; a complex type
// with Double is ComplexDouble, as torch.promote_types).
DataType promoteTypes(DataType a, DataType b);

// Throws a TypeError naming `what` if dtype is Null (no element type).
void checkSupportedDataType(DataType dtype, const std::string& what);

}  // namespace nvfuser
