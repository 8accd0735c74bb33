// CUDA C++ spellings of types, casts, literals and elementwise ops.
#pragma once

#include <string>

#include "ir/exprs.h"
#include "ir/val.h"

namespace nvfuser {

std::string cudaType(DataType t);
std::string castExpr(DataType from, DataType to, const std::string& e);
std::string literal(const ScalarValue& v, DataType t);
// Ops with a Bool result computed from the operand's own type (isnan,
// isinf, signbit, ...): their compute type is the operand's, not Bool.
bool isPredicate(UnaryOpType op);
// Operands are already of type t (the op's compute type).
std::string unaryExpr(UnaryOpType op, DataType t, const std::string& x);
std::string binaryExpr(BinaryOpType op, DataType t, const std::string& a,
                       const std::string& b);
// nextafter in type t; for Half and BFloat16 the operands are Float values
// of that type and the step is one of t's (exact in Float).
std::string reducedNextafter(DataType t, const std::string& a,
                             const std::string& b);

}  // namespace nvfuser
