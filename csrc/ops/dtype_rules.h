// Which ops take which element types beyond the ordinary ones.
// Complex values: the ops torch computes on them. No generated kernel has
// a complex type, so every op on complex values runs through ATen as
// the one op of an expr_eval segment (the schedulers decide that, see
// generated_kernel_rules.h); the builders refuse the others with a
// TypeError naming the op.
// Float8 values: storage only. Casts to and from them, copies and views
// (set, broadcast, expand, reshape, permute, squeeze, slice) take them;
// every other op is a TypeError naming the op (torch has no Float8
// arithmetic either): cast to a wider type first.
#pragma once

#include <string>
#include <vector>

#include "ir/exprs.h"
#include "ir/val.h"

namespace nvfuser {

bool unaryTakesComplex(UnaryOpType op);
bool binaryTakesComplex(BinaryOpType op);

// Throws a TypeError "<op>: complex operands are not supported (<why>),
// got ..." when one of `operands` is complex.
void refuseComplex(const std::string& op,
                   const std::vector<const Val*>& operands,
                   const char* why = "torch has no complex kernel for it");

// Throws a TypeError "<op>: T0 ... holds storage-only Float8 values ..."
// when one of `operands` is a Float8 value.
void refuseFloat8(const std::string& op,
                  const std::vector<const Val*>& operands);
// The same for an op producing `dtype` (full).
void refuseFloat8Type(const std::string& op, DataType dtype);

}  // namespace nvfuser
