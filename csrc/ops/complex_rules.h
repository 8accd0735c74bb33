// Which ops take complex operands: the ones torch computes on complex
// values. No generated kernel has a complex type, so every op on complex
// values runs through ATen as a one-op expr_eval segment (the schedulers
// decide that, see generated_kernel_rules.h); the builders refuse the
// others with a TypeError naming the op.
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

}  // namespace nvfuser
