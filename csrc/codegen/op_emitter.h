// CUDA C++ spellings of types, casts, literals and elementwise ops.
#pragma once

#include <string>

#include "ir/exprs.h"
#include "ir/val.h"

namespace nvfuser {

std::string cudaType(DataType t);
std::string castExpr(DataType from, DataType to, const std::string& e);
std::string literal(const ScalarValue& v, DataType t);
// Operands are already of type t (the op's compute type).
std::string unaryExpr(UnaryOpType op, DataType t, const std::string& x);
std::string binaryExpr(BinaryOpType op, DataType t, const std::string& a,
                       const std::string& b);

}  // namespace nvfuser
