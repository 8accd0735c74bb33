#include "ir/dtype.h"

#include "exceptions.h"

namespace nvfuser {

const char* toString(DataType dtype) {
  switch (dtype) {
    case DataType::Double:
      return "Double";
    case DataType::Float:
      return "Float";
    case DataType::Half:
      return "Half";
    case DataType::BFloat16:
      return "BFloat16";
    case DataType::Int:
      return "Int";
    case DataType::Int32:
      return "Int32";
    case DataType::Bool:
      return "Bool";
    case DataType::ComplexFloat:
      return "ComplexFloat";
    case DataType::ComplexDouble:
      return "ComplexDouble";
    case DataType::Float8_e4m3fn:
      return "Float8_e4m3fn";
    case DataType::Float8_e5m2:
      return "Float8_e5m2";
    case DataType::Float8_e8m0fnu:
      return "Float8_e8m0fnu";
    case DataType::Null:
      return "Null";
  }
  return "?";
}

const char* shortName(DataType dtype) {
  switch (dtype) {
    case DataType::Double:
      return "double";
    case DataType::Float:
      return "float";
    case DataType::Half:
      return "half";
    case DataType::BFloat16:
      return "bf16";
    case DataType::Int:
      return "int64";
    case DataType::Int32:
      return "int32";
    case DataType::Bool:
      return "bool";
    case DataType::ComplexFloat:
      return "cfloat";
    case DataType::ComplexDouble:
      return "cdouble";
    case DataType::Float8_e4m3fn:
      return "e4m3";
    case DataType::Float8_e5m2:
      return "e5m2";
    case DataType::Float8_e8m0fnu:
      return "e8m0";
    case DataType::Null:
      return "null";
  }
  return "?";
}

int64_t dataTypeSize(DataType dtype) {
  switch (dtype) {
    case DataType::Double:
    case DataType::Int:
    case DataType::ComplexFloat:
      return 8;
    case DataType::Float:
    case DataType::Int32:
      return 4;
    case DataType::Half:
    case DataType::BFloat16:
      return 2;
    case DataType::Bool:
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
    case DataType::Float8_e8m0fnu:
      return 1;
    case DataType::ComplexDouble:
      return 16;
    case DataType::Null:
      return 0;
  }
  return 0;
}

bool isFloatingType(DataType d) {
  return d == DataType::Double || d == DataType::Float || d == DataType::Half ||
         d == DataType::BFloat16;
}
bool isIntegralType(DataType d) {
  return d == DataType::Int || d == DataType::Int32;
}
bool isComplexType(DataType d) {
  return d == DataType::ComplexFloat || d == DataType::ComplexDouble;
}
bool isReducedFloat(DataType d) {
  return d == DataType::Half || d == DataType::BFloat16;
}
bool isFloat8Type(DataType d) {
  return d == DataType::Float8_e4m3fn || d == DataType::Float8_e5m2 ||
         d == DataType::Float8_e8m0fnu;
}

DataType complexTypeOf(DataType d) {
  if (isComplexType(d)) {
    return d;
  }
  return d == DataType::Double ? DataType::ComplexDouble
                               : DataType::ComplexFloat;
}

DataType realTypeOf(DataType d) {
  switch (d) {
    case DataType::ComplexFloat:
      return DataType::Float;
    case DataType::ComplexDouble:
      return DataType::Double;
    default:
      return d;
  }
}

int typeCategory(DataType d) {
  if (d == DataType::Bool) {
    return 0;
  }
  if (isIntegralType(d)) {
    return 1;
  }
  if (isFloatingType(d) || isFloat8Type(d)) {
    return 2;
  }
  return 3;
}

DataType promoteTypes(DataType a, DataType b) {
  if (a == b) {
    return a;
  }
  int ca = typeCategory(a);
  int cb = typeCategory(b);
  if (isComplexType(a) || isComplexType(b)) {
    // torch: the complex type wide enough for both components.
    const bool wide =
        realTypeOf(a) == DataType::Double || realTypeOf(b) == DataType::Double;
    return wide ? DataType::ComplexDouble : DataType::ComplexFloat;
  }
  if (ca != cb) {
    return ca > cb ? a : b;
  }
  // Same category, different types.
  if (ca == 2) {
    if (isReducedFloat(a) && isReducedFloat(b)) {
      return DataType::Float;  // half + bf16 has no common 16-bit type
    }
    return dataTypeSize(a) >= dataTypeSize(b) ? a : b;
  }
  return dataTypeSize(a) >= dataTypeSize(b) ? a : b;
}

void checkSupportedDataType(DataType dtype, const std::string& what) {
  NVF_CHECK_KIND(dtype != DataType::Null, Type, what,
                 ": DataType.Null is not a valid element type");
}

}  // namespace nvfuser
