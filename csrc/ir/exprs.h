// One class per op family. Each stores the attributes its builder was given,
// so that concretization can replay it on concrete inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/expr.h"

namespace nvfuser {

enum class UnaryOpType {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Relu,
  Silu,
  Gelu,
  Erf,
  Floor,
  Ceil,
  Round,
  IsNan,
  LogicalNot,
  BitwiseNot,
  Cast,
  // Float-producing math (integers and Bool compute in Float).
  Acos,
  Asin,
  Atan,
  Cosh,
  Sinh,
  Tan,
  Exp2,
  Expm1,
  Log10,
  Log1p,
  Log2,
  Erfc,
  Erfinv,
  Lgamma,
  Acosh,
  Asinh,
  Atanh,
  Erfcinv,
  // Keep the operand's type (Half/BFloat16 compute and return Float).
  Sign,
  Trunc,
  Frac,
  // Predicates: Bool results.
  IsInf,
  IsFinite,
  IsNegInf,
  IsPosInf,
  Signbit,
  // Complex parts (the real type of a complex operand) and torch.isreal.
  Real,
  Imag,
  IsReal,
};
const char* toString(UnaryOpType t);

enum class BinaryOpType {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Fmod,
  Remainder,
  Maximum,
  Minimum,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  Atan2,
  Nextafter,
  Gcd,
  BitwiseLeftShift,
  BitwiseRightShift,
  LogicalRightShift,
};
const char* toString(BinaryOpType t);
bool isComparison(BinaryOpType t);
bool isLogicalOrBitwise(BinaryOpType t);
// The three shifts: integer operands only; counts outside [0, bits) are
// defined (see docs/api.md).
bool isShift(BinaryOpType t);

// Fma: a * b + c rounded once (C's fma), as ATen's addcmul computes.
enum class TernaryOpType { Where, Lerp, Clamp, Fma };
const char* toString(TernaryOpType t);

enum class ReductionOpType { Sum, Max, Min, Prod, Mean };
const char* toString(ReductionOpType t);

enum class LoadStoreOpType { Set, SegmenterSet };

// nvFuser's three indexing ops, one expr: they differ only in how the
// index is read and in the output's shape.
enum class GatherOpType { IndexSelect, Gather, TakeAlongAxis };
const char* toString(GatherOpType t);

class UnaryOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Unary;
  UnaryOp(UnaryOpType op, Val* out, Val* in)
      : Expr(kType, {in}, {out}), op_(op) {}
  UnaryOpType op() const { return op_; }
  std::string opName() const override;
  std::string attributesToString() const override;

 private:
  UnaryOpType op_;
};

// Operands are converted to computeType before the op; comparisons produce
// Bool, everything else produces computeType.
class BinaryOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Binary;
  BinaryOp(BinaryOpType op, DataType computeType, Val* out, Val* a, Val* b)
      : Expr(kType, {a, b}, {out}), op_(op), computeType_(computeType) {}
  BinaryOpType op() const { return op_; }
  DataType computeType() const { return computeType_; }
  std::string opName() const override;

 private:
  BinaryOpType op_;
  DataType computeType_;
};

class TernaryOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Ternary;
  TernaryOp(TernaryOpType op, DataType computeType, Val* out, Val* a, Val* b,
            Val* c)
      : Expr(kType, {a, b, c}, {out}), op_(op), computeType_(computeType) {}
  TernaryOpType op() const { return op_; }
  DataType computeType() const { return computeType_; }
  std::string opName() const override;

 private:
  TernaryOpType op_;
  DataType computeType_;
};

// Inserts broadcast dimensions: isBroadcastDim has the output's rank.
class BroadcastOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Broadcast;
  BroadcastOp(Val* out, Val* in, std::vector<bool> isBroadcastDim)
      : Expr(kType, {in}, {out}), isBroadcastDim_(std::move(isBroadcastDim)) {}
  const std::vector<bool>& isBroadcastDim() const { return isBroadcastDim_; }
  std::string opName() const override { return "broadcast"; }
  std::string attributesToString() const override;

 private:
  std::vector<bool> isBroadcastDim_;
};

// Gives broadcast dimensions an expanded extent; -1 keeps a dimension.
class ExpandOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Expand;
  ExpandOp(Val* out, Val* in, std::vector<int64_t> shape)
      : Expr(kType, {in}, {out}), shape_(std::move(shape)) {}
  const std::vector<int64_t>& shape() const { return shape_; }
  std::string opName() const override { return "expand"; }
  std::string attributesToString() const override;

 private:
  std::vector<int64_t> shape_;
};

// newShape is the request as given (may hold one -1).
class ReshapeOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Reshape;
  ReshapeOp(Val* out, Val* in, std::vector<int64_t> newShape)
      : Expr(kType, {in}, {out}), newShape_(std::move(newShape)) {}
  const std::vector<int64_t>& newShape() const { return newShape_; }
  std::string opName() const override { return "reshape"; }
  std::string attributesToString() const override;

 private:
  std::vector<int64_t> newShape_;
};

// Output dim i is input dim perm[i].
class PermuteOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Permute;
  PermuteOp(Val* out, Val* in, std::vector<int64_t> perm)
      : Expr(kType, {in}, {out}), perm_(std::move(perm)) {}
  const std::vector<int64_t>& perm() const { return perm_; }
  std::string opName() const override { return "permute"; }
  std::string attributesToString() const override;

 private:
  std::vector<int64_t> perm_;
};

// Removes size-1 dims; isSqueezed has the input's rank.
class SqueezeOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Squeeze;
  SqueezeOp(Val* out, Val* in, std::vector<bool> isSqueezed)
      : Expr(kType, {in}, {out}), isSqueezed_(std::move(isSqueezed)) {}
  const std::vector<bool>& isSqueezed() const { return isSqueezed_; }
  std::string opName() const override { return "squeeze"; }
  std::string attributesToString() const override;

 private:
  std::vector<bool> isSqueezed_;
};

struct SliceRange {
  int64_t start = 0;
  int64_t stop = 0;
  int64_t step = 1;
};

class SliceOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Slice;
  SliceOp(Val* out, Val* in, std::vector<SliceRange> ranges)
      : Expr(kType, {in}, {out}), ranges_(std::move(ranges)) {}
  const std::vector<SliceRange>& ranges() const { return ranges_; }
  // The ranges as the builder's three lists.
  std::vector<int64_t> starts() const;
  std::vector<int64_t> stops() const;
  std::vector<int64_t> steps() const;
  std::string opName() const override { return "slice"; }
  std::string attributesToString() const override;

 private:
  std::vector<SliceRange> ranges_;
};

// widths[d] = {before, after} for input dim d. Input 1 is the pad value.
class PadOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Pad;
  PadOp(Val* out, Val* in, Val* value,
        std::vector<std::pair<int64_t, int64_t>> widths)
      : Expr(kType, {in, value}, {out}), widths_(std::move(widths)) {}
  const std::vector<std::pair<int64_t, int64_t>>& widths() const {
    return widths_;
  }
  // torch.nn.functional.pad order: last dim first, (before, after) pairs.
  std::vector<int64_t> flatWidths() const;
  std::string opName() const override { return "pad"; }
  std::string attributesToString() const override;

 private:
  std::vector<std::pair<int64_t, int64_t>> widths_;
};

class CatOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Cat;
  CatOp(Val* out, std::vector<Val*> ins, int64_t dim)
      : Expr(kType, std::move(ins), {out}), dim_(dim) {}
  int64_t dim() const { return dim_; }
  std::string opName() const override { return "cat"; }
  std::string attributesToString() const override;

 private:
  int64_t dim_;
};

// The output keeps the reduced dims as Reduction iter domains.
class ReductionOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Reduction;
  ReductionOp(ReductionOpType op, Val* out, Val* in, std::vector<int64_t> axes)
      : Expr(kType, {in}, {out}), op_(op), axes_(std::move(axes)) {}
  ReductionOpType op() const { return op_; }
  const std::vector<int64_t>& axes() const { return axes_; }
  std::string opName() const override;
  std::string attributesToString() const override;

 private:
  ReductionOpType op_;
  std::vector<int64_t> axes_;
};

// Outputs: variance, mean.
class VarMeanOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::VarMean;
  VarMeanOp(Val* var, Val* mean, Val* in, std::vector<int64_t> axes,
            int64_t correction)
      : Expr(kType, {in}, {var, mean}),
        axes_(std::move(axes)),
        correction_(correction) {}
  const std::vector<int64_t>& axes() const { return axes_; }
  int64_t correction() const { return correction_; }
  std::string opName() const override { return "var_mean"; }
  std::string attributesToString() const override;

 private:
  std::vector<int64_t> axes_;
  int64_t correction_;
};

class MatmulOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Matmul;
  MatmulOp(Val* out, Val* a, Val* b) : Expr(kType, {a, b}, {out}) {}
  std::string opName() const override { return "matmul"; }
};

// out = a @ w^T (+ bias). Inputs: a, w[, bias].
class LinearOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Linear;
  LinearOp(Val* out, std::vector<Val*> ins)
      : Expr(kType, std::move(ins), {out}) {}
  bool hasBias() const { return inputs().size() == 3; }
  std::string opName() const override { return "linear"; }
};

// A factory op: input 0 is the fill value scalar.
class FullOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Full;
  FullOp(Val* out, Val* fillValue, std::vector<int64_t> shape)
      : Expr(kType, {fillValue}, {out}), shape_(std::move(shape)) {}
  const std::vector<int64_t>& shape() const { return shape_; }
  std::string opName() const override { return "full"; }
  std::string attributesToString() const override;

 private:
  std::vector<int64_t> shape_;
};

// A factory op: inputs are start and step scalars; length is static.
class IotaOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Iota;
  IotaOp(Val* out, Val* start, Val* step, int64_t length)
      : Expr(kType, {start, step}, {out}), length_(length) {}
  int64_t length() const { return length_; }
  std::string opName() const override { return "iota"; }
  std::string attributesToString() const override;

 private:
  int64_t length_;
};

// A plain copy (set) or a copy that marks a segment boundary.
class LoadStoreOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::LoadStore;
  LoadStoreOp(LoadStoreOpType op, Val* out, Val* in)
      : Expr(kType, {in}, {out}), op_(op) {}
  LoadStoreOpType op() const { return op_; }
  std::string opName() const override {
    return op_ == LoadStoreOpType::Set ? "set" : "segment_set";
  }

 private:
  LoadStoreOpType op_;
};

// out[i] = lookup[i with its `dim` coordinate replaced by an index value].
// Inputs: the lookup tensor, then the index (Int or Int32). IndexSelect
// reads a 1-D (or 0-dim) index at i[dim]; Gather and TakeAlongAxis read an
// index of the output's rank at i (TakeAlongAxis broadcasts size-1 dims of
// either operand). An index outside [0, lookup size along dim) gives 0 in
// generated kernels and raises on the CPU (docs/api.md).
class GatherOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Gather;
  GatherOp(GatherOpType op, Val* out, Val* lookup, Val* index, int64_t dim)
      : Expr(kType, {lookup, index}, {out}), op_(op), dim_(dim) {}
  GatherOpType op() const { return op_; }
  int64_t dim() const { return dim_; }
  const TensorView* lookup() const;
  const TensorView* index() const;
  std::string opName() const override { return nvfuser::toString(op_); }
  std::string attributesToString() const override;

 private:
  GatherOpType op_;
  int64_t dim_;
};

}  // namespace nvfuser
