// Elementwise builders, casts, factories and copies.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/exprs.h"
#include "ir/fusion.h"

namespace nvfuser {

// Defines a fusion input tensor. shape: -1 symbolic, 1 broadcast, other
// values static. contiguity: one entry per dim (nullopt for broadcast dims) or
// empty for "contiguous". strideOrder: empty for row-major.
TensorView* defineTensor(Fusion& f, const std::vector<int64_t>& shape,
                         DataType dtype,
                         std::vector<std::optional<bool>> contiguity = {},
                         std::vector<int64_t> strideOrder = {},
                         bool isCpuScalar = false);
// A constant (value given) or a fusion-input scalar (no value).
Scalar* defineScalar(Fusion& f, DataType dtype,
                     std::optional<ScalarValue> value);
// Throws unless `value` can stand for a scalar of `dtype` without changing
// it: Bool takes only a bool, Int and Int32 only an int in their range,
// floating types an int or a float (never a bool). `what` starts the
// message (e.g. "execute: input 2 (s1)").
void checkScalarValue(DataType dtype, const ScalarValue& value,
                      const std::string& what);
// Throws unless value converts to dtype as torch converts scalars: a
// finite value beyond a floating type's range, or a non-finite or
// out-of-range float for an integer type, does not.
void checkValueFits(DataType dtype, const ScalarValue& value,
                    const std::string& what);

Val* unaryOp(UnaryOpType op, Val* in);
Val* castOp(Val* in, DataType dtype);
Val* binaryOp(BinaryOpType op, Val* a, Val* b);
Val* where(Val* cond, Val* a, Val* b);
Val* lerp(Val* start, Val* end, Val* weight);
// An op with the types its definition derived, for replays: by then a
// 0-dim operand is broadcast and would promote as a tensor with dims.
Val* binaryOpWithTypes(BinaryOpType op, Val* a, Val* b, DataType compute,
                       DataType out);
Val* ternaryOpWithTypes(TernaryOpType op, Val* a, Val* b, Val* c,
                        DataType compute, DataType out);
// a * b + c with one rounding (Float or Double; Half/BFloat16 compute in
// Float).
Val* fma(Val* a, Val* b, Val* c);
Val* clamp(Val* in, Val* lo, Val* hi);
// in + value * t1 * t2 (torch.addcmul): mul(value, t1) and an fma with t2
// and in for floating types (ATen's CPU kernel), muls and an add for
// integers. value is a scalar; a floating one with integer operands is a
// TypeError, as in torch.
Val* addcmul(Val* in, Val* t1, Val* t2, Val* value);

// Result dtype of an elementwise op on these operands (nvFuser rules:
// tensors decide within a category, scalars only raise the category).
DataType promoteOperands(const std::vector<Val*>& operands);

TensorView* full(Fusion& f, const std::vector<int64_t>& shape, Val* fillValue,
                 DataType dtype);
TensorView* iota(Fusion& f, int64_t length, Val* start, Val* step,
                 DataType dtype);
TensorView* set(Val* in);
TensorView* segmentSet(Val* in);

}  // namespace nvfuser
