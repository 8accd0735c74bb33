// Expressions of the IR. An Expr is immutable once built by a builder
// function in csrc/ops; its inputs and outputs are Vals of the same Fusion.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvfuser {

class Val;
class TensorView;

enum class ExprType {
  Unary,
  Binary,
  Ternary,
  Broadcast,
  Expand,
  Reshape,
  Permute,
  Squeeze,
  Slice,
  Pad,
  Cat,
  Reduction,
  VarMean,
  Matmul,
  Linear,
  Full,
  Iota,
  LoadStore,
  Gather,
  Triu,
  Welford,
  Scan,
  Scatter,
  AtenCall,
  Rng,
};

class Expr {
 public:
  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  ExprType type() const { return type_; }
  const std::vector<Val*>& inputs() const { return inputs_; }
  const std::vector<Val*>& outputs() const { return outputs_; }
  Val* input(size_t i) const { return inputs_.at(i); }
  Val* output(size_t i) const { return outputs_.at(i); }
  // Tensor inputs only, in order.
  std::vector<TensorView*> tensorInputs() const;
  TensorView* out() const;  // the first output, as a tensor
  // Creation index within the fusion: a topological order of all exprs.
  int64_t position() const { return position_; }

  // Op name as nvFuser's Python API spells it ("add", "broadcast_in_dim"
  // parts are separate ops here: "broadcast", "expand").
  virtual std::string opName() const = 0;
  // Attributes printed after the operands, e.g. "dims=[0, 2]"; may be empty.
  virtual std::string attributesToString() const { return ""; }
  std::string toString() const;

 protected:
  Expr(ExprType type, std::vector<Val*> inputs, std::vector<Val*> outputs)
      : type_(type), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

 private:
  friend class Fusion;
  ExprType type_;
  int64_t position_ = -1;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
};

// Unary, binary and ternary ops and sets: each output element is computed
// from the operands' elements at its own index (broadcast operands aside).
bool isElementwise(const Expr* e);

// Checked downcast: `exprAs<SliceOp>(e)` returns nullptr for other types.
template <typename T>
const T* exprAs(const Expr* e) {
  return e != nullptr && e->type() == T::kType ? static_cast<const T*>(e)
                                               : nullptr;
}

}  // namespace nvfuser
