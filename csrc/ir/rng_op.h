// nvFuser's random ops: uniform, normal, rand_like and randn_like. Values
// come from a counter-based generator (Philox4x32-10), so each element is
// a pure function of (seed, offset, the op's stream index, the element's
// row-major linear index, the dtype): any kernel, the CPU path and any
// segmentation compute the same bits (docs/rng.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace nvfuser {

enum class RngOpType { Uniform, Normal };
const char* toString(RngOpType t);

// Inputs, in order: the tensor whose shape the output takes (rand_like and
// randn_like only, and only until concretization, which replaces it by
// its sizes), the two parameters (uniform: minval, maxval; normal: mean,
// std), then rng_seed and rng_offset when given. Without them the runtime
// draws a seed and an offset per execute: concretization makes them two
// scalar inputs of the concrete fusion. `index` is the op's stream (by
// default the number of random ops defined before it in the fusion), so
// two random ops of one fusion never share counters.
class RngOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Rng;
  RngOp(RngOpType op, Val* out, std::vector<Val*> inputs,
        std::vector<int64_t> shape, bool like, bool seeded, int64_t index)
      : Expr(kType, std::move(inputs), {out}),
        op_(op),
        shape_(std::move(shape)),
        like_(like),
        seeded_(seeded),
        index_(index) {}
  RngOpType op() const { return op_; }
  // rand_like / randn_like: input 0 is the tensor giving the shape.
  bool isLike() const { return like_; }
  bool hasSeed() const { return seeded_; }
  // 0: minval or mean; 1: maxval or std.
  Val* param(size_t i) const { return input((like_ ? 1 : 0) + i); }
  Val* seed() const { return seeded_ ? input(like_ ? 3 : 2) : nullptr; }
  Val* offset() const { return seeded_ ? input(like_ ? 4 : 3) : nullptr; }
  // The output's sizes (shape form only).
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t index() const { return index_; }
  std::string opName() const override;
  std::string attributesToString() const override;

 private:
  RngOpType op_;
  std::vector<int64_t> shape_;
  bool like_;
  bool seeded_;
  int64_t index_;
};

}  // namespace nvfuser
